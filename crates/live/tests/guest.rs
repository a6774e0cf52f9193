//! lulld through a real kernel's storage stack (issue 28): a Linux guest
//! under QEMU with a SATA disk on AHCI (libata's SAT translation), a SCSI
//! disk on virtio-scsi and a USB mass-storage disk on xHCI, with the SCSI
//! and USB disks unplugged and plugged back through QMP while lulld runs.
//! `scripts/guest-test.sh` builds and boots the guest; these tests run it
//! with the lulld of this build and check what the guest printed. A
//! second scenario runs Debian's hd-idle itself beside lulld configured
//! from hd-idle's options, on the same reads, and sets their decisions
//! side by side; then an hd-idle started after lulld, which lulld finds
//! by the stopped disk it leaves.
//!
//! Without QEMU, busybox-static, kmod, hdparm or hd-idle they are ignored,
//! with the reason (build.rs probes for them); when the guest kernel
//! cannot be fetched they skip at run time, saying why. `.ci/run`
//! installs them all. One guest boots at
//! a time: two TCG guests on a 2-core machine would starve each other's
//! timers, and the hd-idle scenario's gaps are timed.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const LULLD: &str = env!("CARGO_BIN_EXE_lulld");

const SATA: &str = "/dev/disk/by-id/ata-LULL_SATA_DISK_LULLSATA0001";
const SCSI: &str = "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_LULLSCSI0001";
const USB: &str = "/dev/disk/by-id/usb-QEMU_QEMU_HARDDISK_LULLUSB0001-0:0";

/// What the guest printed: its `@@ STEP TEXT` lines, by step, in order.
struct Transcript {
    lines: Vec<(String, String)>,
}

impl Transcript {
    fn read(console: &Path) -> Transcript {
        let text = std::fs::read_to_string(console).expect("the console log");
        let lines = text
            .lines()
            .filter_map(|l| l.strip_prefix("@@ "))
            .map(|l| match l.split_once(' ') {
                Some((step, rest)) => (step.to_string(), rest.to_string()),
                None => (l.to_string(), String::new()),
            })
            .collect();
        Transcript { lines }
    }

    /// The lines of `step`.
    fn step(&self, step: &str) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(s, _)| s == step)
            .map(|(_, t)| t.as_str())
            .collect()
    }

    /// The lines of `step` about `disk` (lulld's messages name it as
    /// `disk KEY`).
    fn about(&self, step: &str, disk: &str) -> Vec<&str> {
        let key = format!("disk {disk}");
        self.step(step)
            .into_iter()
            .filter(|l| l.contains(&key))
            .collect()
    }

    /// The pid a `@@ STEP pid N` line gives.
    fn pid(&self, step: &str) -> &str {
        self.step(step)
            .first()
            .and_then(|l| l.strip_prefix("pid "))
            .unwrap_or_else(|| panic!("no pid in {step}"))
    }

    /// lulld's log lines about `disk` (its messages start `disk KEY`).
    fn log_of(&self, disk: &str) -> Vec<&str> {
        self.about("log", disk)
    }

    /// The JSON that the lines of `step` make.
    fn json(&self, step: &str) -> serde_json::Value {
        let text = self.step(step).join("\n");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{step}: {e}:\n{text}"))
    }
}

/// Index of the first line in `lines` containing `what`, at or after `from`.
fn find(lines: &[&str], what: &str, from: usize) -> Option<usize> {
    lines
        .iter()
        .skip(from)
        .position(|l| l.contains(what))
        .map(|i| i + from)
}

fn count(lines: &[&str], what: &str) -> usize {
    lines.iter().filter(|l| l.contains(what)).count()
}

/// Boots the guest on `scenario` (scripts/guest/SCENARIO.sh) with the
/// lulld of this build and returns what it printed, after checking that
/// it ran to its end with no wait missed; `None` (having said why) when
/// the guest cannot be built here.
fn boot(scenario: &str) -> Option<Transcript> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guest = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(repo.join("scripts/guest-test.sh"))
        .args(["--scenario", scenario, "--out"])
        .arg(out.path())
        .env("LULLD", LULLD)
        .output()
        .expect("scripts/guest-test.sh runs");
    let said = String::from_utf8_lossy(&run.stdout);
    if run.status.code() == Some(77) {
        let why = said
            .lines()
            .find_map(|l| l.strip_prefix("guest-test: skip: "))
            .unwrap_or("the guest cannot be built here");
        lull_testkit::skip(why);
        return None;
    }
    let console = out.path().join("console.log");
    assert!(
        run.status.success(),
        "the guest did not finish its scenario ({}):\n{said}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let t = Transcript::read(&console);
    let missed = t.step("missed");
    assert!(missed.is_empty(), "the guest missed: {missed:?}");
    assert_eq!(t.step("end"), ["0"]);
    assert!(t.step("error").is_empty(), "{:?}", t.step("error"));
    Some(t)
}

#[test]
#[cfg_attr(
    not(has_guest_tools),
    ignore = "needs qemu-system-x86_64, a static busybox, kmod and hdparm (apt-get install qemu-system-x86 busybox-static kmod hdparm)"
)]
fn lulld_in_a_guest_on_sata_scsi_and_usb_disks_with_hotplug() {
    let Some(t) = boot("scenario") else { return };

    // The disks, on their buses, with by-id links named as udev names them.
    let byid: BTreeMap<&str, &str> = t
        .step("byid")
        .into_iter()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?, w.nth(2)?))
        })
        .collect();
    for (disk, bus) in [(SATA, "/ata1/"), (SCSI, "/virtio"), (USB, "/usb")] {
        let name = disk.rsplit('/').next().unwrap();
        let path = byid
            .get(name)
            .unwrap_or_else(|| panic!("no {name}: {byid:?}"));
        assert!(path.contains(bus), "{name} is at {path}, not on {bus}");
    }
    // What lulld identified each drive as (model and rotation from the
    // kernel's INQUIRY and VPD data).
    let check = t.step("check").join("\n");
    assert!(
        check.contains("model \"LULL SATA DISK\", 7200 rpm"),
        "{check}"
    );
    assert!(
        check.contains("model \"QEMU QEMU HARDDISK\", 7200 rpm"),
        "{check}"
    );
    assert_eq!(t.step("check-exit"), ["0"]);
    // What the state and the evidence follow each drive by: the serial
    // number the drive gave through libata, the SCSI layer and the USB
    // bridge.
    for serial in ["LULLSATA0001", "LULLSCSI0001", "LULLUSB0001"] {
        let want = format!("followed by serial \"{serial}\"");
        assert!(check.contains(&want), "{want} in {check}");
    }
    // The USB disk that names none is followed by its enclosure's serial
    // string (QEMU's, from the port; its by-id link names it as udev
    // would) and its size: 64 MiB, 131072 sectors.
    assert_eq!(t.step("noserial-check-exit"), ["0"]);
    let noserial = t.step("noserial");
    let usb_serial = noserial
        .first()
        .and_then(|l| l.strip_prefix("usb-QEMU_QEMU_HARDDISK_"))
        .and_then(|l| l.strip_suffix("-0:0"))
        .unwrap_or_else(|| panic!("the fourth disk's by-id link: {noserial:?}"));
    let check = t.step("noserial-check").join("\n");
    assert!(
        check.contains(&format!(" {usb_serial}, 131072 sectors\""))
            && check.contains("followed by serial \"usb "),
        "{usb_serial}: {check}"
    );
    // The NVMe drive: SG_IO does not reach it, so it is named by its
    // namespace's wwid, and left alone as flash.
    let wwid = t.step("nvme-wwid").join("");
    assert!(!wwid.trim().is_empty(), "the guest's nvme0n1 has a wwid");
    assert!(
        check.contains(&format!("followed by serial \"wwid {}\"", wwid.trim())),
        "{wwid}: {check}"
    );
    let nvme = check
        .split("disk[1]")
        .nth(1)
        .unwrap_or_else(|| panic!("no NVMe disk in {check}"));
    assert!(nvme.contains("left alone: "), "{nvme}");

    // Which transport the probe chose, and why.
    let probe = |disk: &str| -> Vec<String> {
        t.log_of(disk)
            .into_iter()
            .filter(|l| l.contains(": transport "))
            .map(str::to_string)
            .collect()
    };
    let sata = probe(SATA);
    assert_eq!(sata.len(), 1, "{sata:?}");
    assert!(
        sata[0].contains("transport ata16 (answers CHECK POWER MODE by ATA PASS-THROUGH (16)"),
        "{}",
        sata[0]
    );
    for disk in [SCSI, USB] {
        let p = probe(disk);
        // Once at the start, once after the replug.
        assert_eq!(p.len(), 2, "{disk}: {p:?}");
        for l in &p {
            assert!(
                l.contains("transport scsi (answers SCSI REQUEST SENSE; before it: CHECK POWER MODE by ATA PASS-THROUGH (16): status 0x02")
                    && l.contains("ASC/ASCQ 0x20/0x00 (illegal request)"),
                "{disk}: {l}"
            );
        }
    }

    // Standby sent and answered without a kernel error; the read-back
    // finds the emulated drive still active (QEMU models no power states),
    // so power checks stop instead of counting spin-ups that did not
    // happen (the bug this test found first).
    for (disk, cmd) in [
        (SATA, "ATA PASS-THROUGH (16) STANDBY IMMEDIATE"),
        (SCSI, "SCSI START STOP UNIT (power condition STANDBY)"),
        (USB, "SCSI START STOP UNIT (power condition STANDBY)"),
    ] {
        let log = t.log_of(disk);
        let done = format!("in standby ({cmd}; the drive still reports itself active)");
        assert!(count(&log, &done) >= 3, "{disk}: {done} fewer than 3 times");
        assert!(
            count(&log, "power checks are off for this disk") >= 1,
            "{disk}: no warning that power checks are off"
        );
        for bad in ["spun up by something else", "standby failed", "ERROR"] {
            assert_eq!(count(&log, bad), 0, "{disk}: {bad}: {log:#?}");
        }
        // Decisions follow the guest's diskstats: idle → standby after the
        // timer; a read → a wake, attributed.
        assert!(count(&log, "idle, standby (predicted idle until busy)") >= 3);
        assert!(
            count(&log, "busy again after") >= 1 && count(&log, "woken by scenario.sh?") >= 1,
            "{disk}: no wake seen: {log:#?}"
        );
    }

    // Hooks ran for every disk.
    let hooks = t.step("hooks");
    for disk in [SATA, SCSI, USB] {
        for ev in ["spindown", "wake"] {
            assert!(
                hooks.contains(&format!("{ev} {disk}").as_str()),
                "no {ev} hook for {disk}: {hooks:?}"
            );
        }
    }

    // Hotplug: both noticed; nothing decided while they were away (their
    // absence is no idle time: the timer that ran out while they were away
    // once sent a standby to a device node that no longer existed, then
    // was refused one); both back under their by-id links, probed again
    // and spun down again; the SATA disk went on meanwhile.
    let sata_log = t.log_of(SATA);
    for disk in [SCSI, USB] {
        let log = t.log_of(disk);
        let gone = find(&log, ") vanished", 0).unwrap_or_else(|| panic!("{disk}: not seen gone"));
        // Back under its old name ("is back") or another ("is now").
        let back = find(&log, ") is back", gone)
            .into_iter()
            .chain(find(&log, " is now sd", gone))
            .min()
            .unwrap_or_else(|| panic!("{disk}: not seen back: {log:#?}"));
        assert!(
            log[gone..back]
                .iter()
                .all(|l| !l.contains("in standby (") && !l.contains("skip standby")),
            "{disk}: a standby decided while away: {log:#?}"
        );
        let reprobe =
            find(&log, "replugged; its transport is probed again", back).expect("re-probed");
        find(&log, "in standby (", reprobe).expect("spun down after the replug");
    }
    assert!(count(&sata_log, "busy again after") >= 2);
    // The USB disk came back first, under the lowest free kernel name
    // (the SCSI disk's old one): each disk is where its link leads now,
    // and none claimed the other's node meanwhile.
    let again: BTreeMap<&str, &str> = t
        .step("byid-again")
        .into_iter()
        .filter_map(|l| {
            let (name, target) = l.split_once(' ')?;
            Some((name, target.rsplit('/').next()?))
        })
        .collect();
    let state = t.json("state");
    for disk in [SCSI, USB] {
        let name = disk.rsplit('/').next().unwrap();
        let now = again[name];
        assert_eq!(state[disk]["kernel_name"], now, "{disk}");
        for l in t.log_of(disk) {
            if let Some(k) = l
                .strip_suffix(") is back")
                .and_then(|l| l.rsplit('(').next())
            {
                assert_eq!(k, now, "{disk} took another disk's node: {l}");
            }
        }
    }

    // The activity log's sessions name each drive by its serial number's
    // hash, as identification through the guest's kernel found it: what
    // keeps one drive's evidence apart from another's under a key.
    let sessions: Vec<lull_activity::Session> = t
        .step("lact")
        .iter()
        .map(|hex| {
            let bytes: Vec<u8> = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            lull_activity::read::first_session(&bytes)
                .unwrap_or_else(|| panic!("a segment without a session: {hex:.80}"))
        })
        .collect();
    for disk in [SATA, SCSI, USB] {
        let serial = state[disk]["identity"]["serial"]
            .as_str()
            .unwrap_or_else(|| panic!("{disk}: no serial number in {}", state[disk]));
        let id = lull_activity::drive_id(serial);
        let of_disk: Vec<_> = sessions.iter().filter(|s| s.key == disk).collect();
        assert!(!of_disk.is_empty(), "{disk}: no activity log");
        for s in of_disk {
            assert_eq!(s.drive_id, Some(id), "{disk} ({serial}): {s:?}");
        }
    }

    // `lulld status` in the guest shows each disk; its JSON parses.
    assert_eq!(t.step("status-exit"), ["0"]);
    assert_eq!(t.step("status-json-exit"), ["0"]);
    let status = t.step("status").join("\n");
    for disk in [SATA, SCSI, USB] {
        assert!(status.contains(&format!("{disk} (sd")), "{status}");
    }
    assert!(status.contains("spin-downs"), "{status}");
    let js = t.json("status-json");
    assert_eq!(js["disks"].as_array().map(Vec::len), Some(3), "{js}");

    // The state file lulld left: counters and the wear budget kept across
    // the replug, no errors.
    assert_eq!(t.step("lulld-exit"), ["0"]);
    for disk in [SATA, SCSI, USB] {
        let d = &state[disk];
        let spindowns = d["spindowns"].as_u64().unwrap();
        assert!(spindowns >= 3, "{disk}: {spindowns} spin-downs");
        assert_eq!(d["errors"], 0, "{disk}");
        assert_eq!(d["foreign_spinups"], 0, "{disk}");
        let attempts = d["spindown_attempts_unix"].as_array().unwrap().len() as u64;
        assert!(
            attempts >= spindowns,
            "{disk}: {attempts} attempts < {spindowns}"
        );
        assert!(d["wear"]["tokens"].as_f64().unwrap() < 167.0, "{disk}");
    }
    // The kernel saw no failed command, no I/O error, no libata exception
    // (lulld's and hdparm's commands alike).
    for l in t.step("dmesg") {
        for bad in [
            "I/O error",
            "FAILED Result",
            "exception Emask",
            "timing out command",
        ] {
            assert!(!l.contains(bad), "kernel: {l}");
        }
    }
    assert!(
        t.step("dmesg")
            .iter()
            .any(|l| l.contains("Attached SCSI disk")),
        "no dmesg in the transcript"
    );
    // The guest's own diskstats counted the reads (of the three disks
    // lulld watched: not the fourth, which only `--check` saw).
    let unwatched = t
        .step("byid")
        .into_iter()
        .find(|l| l.starts_with(noserial[0]))
        .and_then(|l| l.split_whitespace().nth(1))
        .expect("the fourth disk's kernel name");
    let reads: Vec<u64> = t
        .step("diskstats")
        .iter()
        .filter(|l| l.split_whitespace().nth(2) != Some(unwatched))
        .filter_map(|l| l.split_whitespace().nth(3)?.parse().ok())
        .collect();
    assert_eq!(reads.len(), 3, "{:?}", t.step("diskstats"));
    assert!(reads.iter().all(|&r| r >= 3), "{reads:?}");
}

/// Debian's hd-idle itself (the C original, 1.05) beside lulld, on the
/// same reads (scripts/guest/hd-idle.sh): hd-idle `-i 6` on the SATA
/// disk; on the SCSI disk, lulld configured by `lulld --from-hd-idle`
/// from the same option; each disk named by its by-id link. The converted file must decide as hd-idle
/// decides, idle period by idle period, and what `lull status` says
/// hd-idle's timeout would have done ("your timeout") must be what
/// hd-idle did. Then an hd-idle started after lulld, on a disk that keeps
/// its stopped state (the kernel's `scsi_debug`): lulld must find the
/// disk asleep and name hd-idle.
#[test]
#[cfg_attr(
    not(has_guest_tools),
    ignore = "needs qemu-system-x86_64, a static busybox, kmod and hdparm (apt-get install qemu-system-x86 busybox-static kmod hdparm)"
)]
#[cfg_attr(
    all(has_guest_tools, not(has_hd_idle)),
    ignore = "needs hd-idle (apt-get install hd-idle)"
)]
fn lulld_converted_from_hd_idle_decides_as_hd_idle_beside_it_in_a_guest() {
    let Some(t) = boot("hd-idle") else { return };
    assert_eq!(t.step("convert-exit"), ["0"]);
    assert_eq!(t.step("hd-idle-exit"), ["0"]);
    let toml = t.step("toml").join("\n");
    assert!(toml.contains("network = \"timer(6s)\""), "{toml}");
    assert!(toml.contains("compare_timeout = \"6s\""), "{toml}");
    // Both named by their by-id links: the entry keeps the link.
    assert!(toml.contains(&format!("device = \"{SCSI}\"")), "{toml}");

    // The reads as the guest made them: each gap well clear of the 6 s
    // timeout (TCG kept time), so both daemons must agree on every one.
    let touches: Vec<f64> = t.step("touch").iter().map(|l| l.parse().unwrap()).collect();
    let gaps: Vec<f64> = touches.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|&g| g <= 5.0 || g >= 9.0),
        "the guest did not keep the schedule: {gaps:?}"
    );
    let long: Vec<f64> = gaps.iter().copied().filter(|&g| g >= 9.0).collect();
    assert!(long.len() >= 3, "{gaps:?}");

    // hd-idle's log: a line per spin-up it saw, with how long it had
    // kept the disk stopped (whole seconds).
    let hd_stopped: Vec<f64> = t
        .step("hd-idle")
        .iter()
        .filter_map(|l| l.rsplit_once("stopped: "))
        .map(|(_, s)| s.trim().parse().unwrap())
        .collect();
    // lulld's log: its spin-downs and how long each lasted.
    let log = t.log_of(SCSI);
    let lulld_standby: Vec<f64> = log
        .iter()
        .filter_map(|l| l.split_once("busy again after "))
        .map(|(_, rest)| {
            let text = rest.split(' ').next().unwrap();
            lull_core::time::parse_duration(text)
                .unwrap_or_else(|e| panic!("{text:?}: {e}"))
                .as_secs_f64()
        })
        .collect();
    assert_eq!(
        hd_stopped.len(),
        long.len(),
        "hd-idle spun down {hd_stopped:?} in gaps {gaps:?}"
    );
    assert_eq!(
        lulld_standby.len(),
        long.len(),
        "lulld spun down {lulld_standby:?} in gaps {gaps:?}:\n{log:#?}"
    );
    assert_eq!(count(&log, ": in standby ("), long.len(), "{log:#?}");
    // Period by period, the time each kept its disk down: a long gap less
    // the timeout, to within the two polls (1 s each, each a poll late at
    // the spin-down or the spin-up) and hd-idle's whole seconds (seen: 0
    // to 1 s apart); a daemon with another timeout is several seconds off.
    for ((gap, hd), lulld) in long.iter().zip(&hd_stopped).zip(&lulld_standby) {
        assert!(
            (hd - lulld).abs() <= 3.0,
            "gap {gap:.2} s: hd-idle stopped the disk {hd} s, lulld {lulld} s"
        );
        assert!(
            (gap - 6.0 - lulld).abs() <= 2.0,
            "gap {gap:.2} s: lulld kept it down {lulld} s"
        );
    }

    // In the first long gap, after lulld's spin-down, `lull status`
    // (from the state file: no metrics) reads that standby at once.
    assert_eq!(t.step("mid-status-json-exit"), ["0"]);
    let mid = t.json("mid-status-json");
    assert_eq!(mid["disks"][0]["power"], "standby", "{mid}");
    assert_eq!(mid["disks"][0]["spindowns"], 1, "{mid}");

    // What lulld's status tells the user hd-idle's timeout would have
    // done on this disk is what hd-idle did on its twin.
    assert_eq!(t.step("status-exit"), ["0"]);
    assert_eq!(t.step("status-json-exit"), ["0"]);
    let status = t.step("status").join("\n");
    assert!(status.contains("your timeout (6s)"), "{status}");
    let js = t.json("status-json");
    let disk = &js["disks"][0];
    assert_eq!(disk["spindowns"], long.len(), "{disk}");
    let spinups = |disk: &serde_json::Value, policy: &str| {
        let window = &disk["shadow"]["windows"][0];
        window["policies"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["policy"] == policy))
            .map(|p| p["spinups"].clone())
            .unwrap_or_else(|| panic!("no {policy} in {window}"))
    };
    assert_eq!(spinups(disk, "your-timeout"), hd_stopped.len(), "{disk}");
    assert_eq!(spinups(disk, "lull"), hd_stopped.len(), "{disk}");
    assert_eq!(t.step("lulld-exit"), ["0"]);

    // The documented way to compare before switching: a dry run of the
    // converted file beside hd-idle, on hd-idle's own disk. It says it
    // would have spun down where hd-idle did, and so would "your timeout".
    assert_eq!(t.step("dry-status-json-exit"), ["0"]);
    assert_eq!(t.step("dry-run-exit"), ["0"]);
    let dry = t.json("dry-status-json");
    assert_eq!(dry["dry_run"], true, "{dry}");
    let disk = &dry["disks"][0];
    assert_eq!(spinups(disk, "your-timeout"), hd_stopped.len(), "{disk}");
    assert_eq!(spinups(disk, "lull"), hd_stopped.len(), "{disk}");
    let drylog: Vec<&str> = t.step("drylog");
    assert!(
        drylog.iter().all(|l| !l.contains("hd-idle (pid")),
        "a dry run beside hd-idle does not warn of it: {drylog:#?}"
    );

    // An hd-idle started after lulld, on scsi_debug's disk (which keeps
    // the stopped state hd-idle's STOP UNIT leaves it in): lulld's start
    // could not warn of it. Its power check (REQUEST SENSE through the
    // kernel's SG_IO: NOT READY, INITIALIZING COMMAND REQUIRED) finds the
    // disk in standby, once, and names hd-idle by its pid, in its log
    // and, at once, in `lull status`.
    assert_eq!(t.step("scsi-debug-insmod"), ["0"]);
    assert_eq!(t.step("asleep-hd-idle-exit"), ["0"]);
    let sd = t.step("asleep-disk")[0];
    let hpid = t.pid("asleep-hd-idle");
    let alog = t.about("asleep-log", sd);
    assert_eq!(
        count(&alog, ": transport scsi (answers SCSI REQUEST SENSE"),
        1,
        "{alog:#?}"
    );
    let found = format!("found in standby (spun down by something else: hd-idle (pid {hpid}))");
    // Every later check finds it asleep still: said once, and the checks
    // never woke it.
    assert_eq!(count(&alog, &found), 1, "{alog:#?}");
    assert_eq!(count(&alog, "found in standby"), 1, "{alog:#?}");
    assert_eq!(count(&alog, "spun up by something else"), 0, "{alog:#?}");
    let warning =
        format!("hd-idle (pid {hpid}, options `-i 0 -a {sd} -i 3`) spins down {sd} (after 3s) too");
    assert_eq!(count(&alog, &warning), 1, "{alog:#?}");
    assert_eq!(t.step("asleep-status-exit"), ["0"]);
    let status = t.step("asleep-status");
    assert!(
        find(&status, "power       standby", 0).is_some(),
        "{status:#?}"
    );
    assert!(
        find(&status, &format!("last        {found}"), 0).is_some(),
        "{status:#?}"
    );
    assert_eq!(t.step("asleep-lulld-exit"), ["0"]);

    // lulld restarted while the disk sleeps: the new run knows from the
    // state file that it was in standby when the last run stopped, and
    // neither blames another program for it nor loses the standby.
    let rlog = t.about("restarted-log", sd);
    assert_eq!(
        count(
            &rlog,
            "still in standby, as before the daemon's restart or reload"
        ),
        1,
        "{rlog:#?}"
    );
    assert_eq!(count(&rlog, "found in standby"), 0, "{rlog:#?}");
    assert_eq!(count(&rlog, "spun up by something else"), 0, "{rlog:#?}");
    assert_eq!(t.step("restarted-status-exit"), ["0"]);
    let status = t.step("restarted-status");
    assert!(
        find(&status, "power       standby", 0).is_some(),
        "{status:#?}"
    );
    assert!(
        find(
            &status,
            "last        still in standby, as before the daemon's restart or reload",
            0
        )
        .is_some(),
        "{status:#?}"
    );
    assert_eq!(t.step("restarted-lulld-exit"), ["0"]);

    // Both spinning the disk down, hd-idle first (`-i 3`, started before
    // lulld's `timer(6s)`, no power checks): lulld's start warns of it;
    // its standby asks the power state first, finds the disk asleep and
    // names hd-idle, without warning of it again; it counts no spin-down
    // of its own.
    assert_eq!(t.step("rescan"), ["0"]);
    let hpid = t.pid("compete-hd-idle");
    let clog = t.about("compete-log", sd);
    let already = format!("already in standby: hd-idle (pid {hpid})");
    assert_eq!(count(&clog, &already), 1, "{clog:#?}");
    let warning =
        format!("hd-idle (pid {hpid}, options `-i 0 -a {sd} -i 3`) spins down {sd} (after 3s) too");
    let whole = t.step("compete-log");
    assert_eq!(count(&whole, &warning), 1, "warned of once: {whole:#?}");
    let started = find(&whole, "lull daemon started", 0).expect("the start");
    assert!(
        find(&whole, &warning, 0).is_some_and(|w| w < started),
        "warned of at the start: {whole:#?}"
    );
    assert_eq!(count(&clog, ": in standby ("), 0, "{clog:#?}");
    assert_eq!(t.step("compete-status-exit"), ["0"]);
    let status = t.step("compete-status");
    assert!(
        find(&status, "power       standby", 0).is_some(),
        "{status:#?}"
    );
    assert!(find(&status, "spin-downs  0 ", 0).is_some(), "{status:#?}");
    // The attempt spent a token of the wear budget: the line says why
    // "0 … 1 used" is no contradiction.
    assert!(
        find(
            &status,
            "1 used in 24 h by attempts, which count when the drive was asleep already",
            0
        )
        .is_some(),
        "{status:#?}"
    );
    assert!(
        find(
            &status,
            &format!("last        standby: the drive was {already}"),
            0
        )
        .is_some(),
        "{status:#?}"
    );
    assert_eq!(t.step("compete-lulld-exit"), ["0"]);
}
