//! Converts hd-idle's command line (`HD_IDLE_OPTS`) into a lull
//! configuration: `lull daemon --from-hd-idle "-i 0 -a sda -i 300"`.
//!
//! An admin replacing hd-idle has its options in `/etc/default/hd-idle`;
//! this module turns them into the `[[disk]]` tables that make lull spin
//! the same disks down after the same idle times, with comments saying
//! where lull differs and what to try next (the learning network `auto`,
//! a drive preset). Two hd-idles are in use: the C original (Christian
//! Müller's 1.05, Debian's `hd-idle` package, which Ubuntu takes: options `-a`,
//! `-i`, `-l`, `-t`, `-d`, `-h`) and the Go port (Andoni del Olmo's 1.21,
//! from its own releases), whose options are a superset (`-I` as
//! documented in its `debian/hd-idle.default`). Both are converted; where
//! they differ on the same options (an `-a` without its own `-i`), the Go
//! port's meaning is written and a warning says what the C one does:
//!
//! | hd-idle | lull |
//! |---|---|
//! | `-a NAME` | a `[[disk]]` with `device = NAME` (kernel name or `/dev/…` link) |
//! | `-i N` | `network = "timer(Ns)"`; `-i 0`: no entry (lull touches only the disks its config names) |
//! | `-i N` before any `-a` | every other SCSI disk (`sd…`): globs that leave out the named disks |
//! | `-c ata` / `-c scsi` | `backend = "sgio"` (ATA PASS-THROUGH 16, then 12, then SCSI START STOP UNIT) |
//! | no `-c` | no `backend`: lull's default `auto` probes the transport and leaves a device that takes none (a loop device, NVMe) alone |
//! | `-p N` | `0` (a plain stop) and `3`: lull's START STOP UNIT with the STANDBY power condition; another power condition with `-c scsi` is not sent by lull: the entry is written commented out |
//! | `-s 0\|1` | nothing: lull re-resolves links at every poll |
//! | `-l FILE` | nothing: lull logs to stderr (the journal) and exports metrics |
//! | `-I` | `power_check`: lull sees disks woken without counted I/O |
//! | `-d` | `LULL_LOG=debug` |
//! | `-spinupscript S`, `-spindownscript S` | the `on_spinup` and `on_spindown` hooks, running `/bin/bash S DISK` as hd-idle does |
//!
//! hd-idle's default entry covers every disk it is not told about; a lull
//! entry must not overlap another (`--check` refuses two entries for one
//! disk), so "every other disk" becomes a few globs built from the named
//! disks' kernel names ([`other_disk_globs`]). A named `/dev/disk/…` link
//! is resolved when converting to find its kernel name; when it does not
//! resolve, the default entries are written commented out with the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::hd_idle::*;

/// The converted configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    /// The TOML text, with comments.
    pub toml: String,
    /// What the admin must look at (also in the text as comments).
    pub warnings: Vec<String>,
}

/// Converts hd-idle's options into a lull configuration, resolving named
/// `/dev/…` links on this machine to find their kernel names.
pub fn convert(text: &str) -> Result<Conversion, HdIdleError> {
    convert_with(text, &kernel_name_now)
}

/// What `--from-hd-idle ARG` converts: hd-idle's options, or, when `arg`
/// names a file (`/etc/default/hd-idle`), the options its `HD_IDLE_OPTS`
/// line sets ([`options_in_defaults_file`]).
pub fn convert_arg(arg: &str) -> Result<Conversion, HdIdleError> {
    let path = Path::new(arg.trim());
    if arg.trim_start().starts_with('-') || !path.is_file() {
        return convert(arg);
    }
    let text = std::fs::read_to_string(path).map_err(|e| HdIdleError::DefaultsFile {
        path: path.display().to_string(),
        why: format!("cannot read it: {e}"),
    })?;
    let opts = options_in_defaults_file(&text).ok_or_else(|| HdIdleError::DefaultsFile {
        path: path.display().to_string(),
        why: "no HD_IDLE_OPTS= line (hd-idle's defaults file sets its options there); give the options themselves".into(),
    })?;
    convert(&opts)
}

/// [`convert`] with a given link resolver (`/dev/disk/by-id/x` → `sdb`), so
/// tests need no real disks.
pub fn convert_with(
    text: &str,
    resolve_link: &dyn Fn(&str) -> Option<String>,
) -> Result<Conversion, HdIdleError> {
    let o = parse(text)?;
    Ok(render(&o, resolve_link))
}

/// Quotes `s` as a TOML basic string.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[derive(Default)]
struct Trie {
    end: bool,
    kids: BTreeMap<char, Trie>,
}

/// Globs that together match every whole SCSI disk name (`sd` and one or
/// more letters) except those in `excluded`, each such name matched by
/// exactly one glob: hd-idle's default entry ("every disk not named with
/// `-a`") in a form lull's `--check` accepts beside the named entries.
/// Names in `excluded` that are not `sd` + letters are ignored (no glob
/// here matches them).
pub fn other_disk_globs<'a>(excluded: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut root = Trie::default();
    let mut any = false;
    for k in excluded {
        let Some(rest) = sd_suffix(k) else { continue };
        any = true;
        let mut n = &mut root;
        for c in rest.chars() {
            n = n.kids.entry(c).or_default();
        }
        n.end = true;
    }
    if !any {
        return vec!["sd*".to_string()];
    }
    let mut out = Vec::new();
    fn class(cs: &[char]) -> String {
        match cs {
            [c] => c.to_string(),
            _ => format!("[{}]", cs.iter().collect::<String>()),
        }
    }
    fn walk(n: &Trie, prefix: &str, out: &mut Vec<String>) {
        if !prefix.is_empty() && !n.end {
            out.push(format!("sd{prefix}"));
        }
        if n.kids.is_empty() {
            // Only the root can get here without being excluded itself,
            // and the caller handled an empty set.
            out.push(format!("sd{prefix}?*"));
            return;
        }
        let letters: Vec<char> = n.kids.keys().copied().collect();
        out.push(format!(
            "sd{prefix}[!{}]*",
            letters.iter().collect::<String>()
        ));
        let leaves: Vec<char> = n
            .kids
            .iter()
            .filter(|(_, k)| k.end && k.kids.is_empty())
            .map(|(c, _)| *c)
            .collect();
        if !leaves.is_empty() {
            out.push(format!("sd{prefix}{}?*", class(&leaves)));
        }
        for (c, k) in &n.kids {
            if !(k.end && k.kids.is_empty()) {
                walk(k, &format!("{prefix}{c}"), out);
            }
        }
    }
    walk(&root, "", &mut out);
    out
}

/// Writes `# text` lines, wrapped near 78 columns.
fn comment(out: &mut String, text: &str) {
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() + 1 + word.len() > 78 && line.len() > 1 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
}

fn disk_block(
    out: &mut String,
    device: &str,
    s: &Settings,
    origin: &str,
    note: Option<&str>,
    commented: bool,
) {
    let mut body = String::new();
    let n = s.idle_s;
    let _ = writeln!(body, "[[disk]]");
    let _ = writeln!(body, "device = {}", quote(device));
    let _ = writeln!(body, "task = \"standby\"");
    let mut key = |k: String, c: String| {
        let _ = writeln!(body, "{k:<28} # {c}");
    };
    key(format!("network = \"timer({n}s)\""), format!("-i {n}"));
    key("# network = \"auto\"".into(), "see above".into());
    // Only a value the configuration takes.
    let compare = crate::config::COMPARE_TIMEOUT_MIN..=crate::config::COMPARE_TIMEOUT_MAX;
    if compare.contains(&lull_core::time::Nanos::from_secs(n)) {
        key(
            format!("compare_timeout = \"{n}s\""),
            format!("-i {n}, for lull status to compare with"),
        );
    }
    match s.command {
        Some(c) => key("backend = \"sgio\"".into(), format!("-c {}", c.flag())),
        None => key(
            "# backend = \"sgio\"".into(),
            "no -c: lull probes (see above)".into(),
        ),
    }
    key(
        format!(
            "max_spindowns_per_day = {}",
            crate::config::DEFAULT_SPINDOWNS_PER_DAY
        ),
        if n < 86_400 {
            format!(
                "hd-idle has no cap: up to {} a day at this timeout",
                86_400 / n.max(1)
            )
        } else {
            "hd-idle has no cap (at this timeout, at most one a day)".into()
        },
    );
    key("# preset = \"wd-red-plus\"".into(), "see above".into());
    comment(out, origin);
    if let Some(n) = note {
        comment(out, n);
    }
    for l in body.lines() {
        if commented {
            out.push_str("# ");
        }
        out.push_str(l);
        out.push('\n');
    }
    out.push('\n');
}

/// The comment before the first `[[disk]]`: what each key of the entries
/// does and how it differs from hd-idle.
fn keys_note(out: &mut String, o: &HdIdleOptions) {
    comment(
        out,
        "Each [[disk]] below reproduces an hd-idle setting. network = \"timer(Ns)\" is hd-idle's fixed timeout: spin down after N s without I/O. Better: network = \"auto\", lull's learning network (the daemon's default where it is built in; `lull components` lists it), adapts the timeout to each disk's idle periods; on workloads with structure it spends less energy than the best fixed timeout (docs/results.md).",
    );
    // The settings of the entries written: the default one's and the
    // named disks', each unless its idle time is 0 (no entry).
    let written: Vec<&Settings> = std::iter::once(&o.default)
        .chain(o.disks.iter().map(|d| &d.settings))
        .filter(|s| s.idle_s != 0)
        .collect();
    let given = |c| written.iter().any(|s| s.command == Some(c));
    if written.iter().any(|s| s.command.is_none()) {
        comment(
            out,
            "Without -c, hd-idle sends SCSI START STOP UNIT by SG_IO to whatever device it is given. lull's default backend, auto, first probes without waking the disk which command reaches it (ATA PASS-THROUGH through libata and USB bridges, SCSI on a SAS disk, else hdparm), logs the transport it found, and leaves alone a device that takes none (a loop device, NVMe, a virtual disk) rather than fail a spin-down at every idle period. backend = \"sgio\" sends the commands without the probe, as hd-idle -c does.",
        );
    }
    if given(CommandType::Ata) || given(CommandType::Scsi) {
        sgio_note(out, &given);
    }
    comment(
        out,
        "compare_timeout keeps hd-idle's timeout: once a disk runs auto, `lull status` and the metrics show what this timeout would have saved on the disk's own activity beside what lull saved. max_spindowns_per_day is lull's wear budget, which hd-idle does not have: raise it if a spin-down must never be held back. preset names the drive's power model: its break-even time B (for auto and B-relative timeouts such as timer(4B)) and the energy estimate in the metrics.",
    );
    out.push('\n');
}

/// The comment on `backend = "sgio"`, for the `-c` given.
fn sgio_note(out: &mut String, given: &dyn Fn(CommandType) -> bool) {
    let mut b = String::from("backend = \"sgio\" spins down by SG_IO:");
    if given(CommandType::Ata) {
        b.push_str(" for -c ata, ATA STANDBY IMMEDIATE by ATA PASS-THROUGH (the 16-byte command, then the 12-byte one older USB bridges need), as hd-idle does;");
    }
    if given(CommandType::Scsi) {
        b.push_str(" for -c scsi, lull tries ATA STANDBY IMMEDIATE by ATA PASS-THROUGH first (USB bridges translate it) and then SCSI START STOP UNIT with the STANDBY power condition (hd-idle -c scsi sends power condition 0, a plain stop, after which a SAS disk does not start again on access; from STANDBY it spins up at the next I/O);");
    }
    b.push_str(" a command the device refuses as illegal moves on to the next.");
    comment(out, &b);
}

/// ` -c TYPE` when `-c` was given, else nothing.
fn command_text(s: &Settings) -> String {
    s.command
        .map(|c| format!(" -c {}", c.flag()))
        .unwrap_or_default()
}

fn origin_of(d: &NamedDisk) -> String {
    let s = &d.settings;
    let mut t = format!("-a {} -i {}{}", d.name, s.idle_s, command_text(s));
    if s.power_condition != 0 {
        let _ = write!(t, " -p {}", s.power_condition);
    }
    t
}

const POWER_CONDITION_NOTE: &str = "lull's SCSI path sends START STOP UNIT with the STANDBY power condition (3) only, and hd-idle's -p asks for another one (1 ACTIVE, 2 IDLE, 7 LU_CONTROL, Ah FORCE_IDLE_0, Bh FORCE_STANDBY_0, …), which lull does not send. The entry is left commented out: enabled, it spins the disk down to standby instead; or keep hd-idle for this disk.";

fn render(o: &HdIdleOptions, resolve_link: &dyn Fn(&str) -> Option<String>) -> Conversion {
    let mut out = String::new();
    let mut warnings = Vec::new();
    let _ = writeln!(
        out,
        "# lull configuration converted from hd-idle's options by `lull daemon --from-hd-idle`:"
    );
    let words: Vec<String> = o
        .words
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(char::is_whitespace) {
                format!("'{w}'")
            } else {
                w.clone()
            }
        })
        .collect();
    let _ = writeln!(
        out,
        "#   hd-idle {}",
        if words.is_empty() {
            "(no options)".to_string()
        } else {
            words.join(" ")
        }
    );
    comment(
        &mut out,
        "Check it with `lulld --config FILE --check` (or `lull daemon --config FILE --check`) before starting lull, and stop hd-idle first: two daemons spinning the same disks down count each other's spin-ups as wake-ups.",
    );
    comment(
        &mut out,
        "Timing: hd-idle reads /proc/diskstats every tenth of its shortest idle time (the Go port at least every 60 s), in whole seconds, so its spin-downs come up to that interval late; so do lull's at the poll below, within a poll of the timeout.",
    );
    if let Some(p) = o.symlink_policy {
        comment(
            &mut out,
            &format!(
                "-s {p}: lull always follows links: a /dev/disk/… device is re-resolved at every poll, so a disk that is re-plugged or appears late is found (what hd-idle's -s 1 does), and a link that moves is followed (which hd-idle never does)."
            ),
        );
    }
    if let Some(l) = &o.log_file {
        comment(
            &mut out,
            &format!(
                "-l {l}: lull writes no log file of its own: it logs every spin-down and spin-up, with what woke the disk, to stderr (the journal under systemd: `journalctl -u lull`), and exports the counts as Prometheus metrics (see [metrics]). No log write can wake a disk."
            ),
        );
    }
    if o.debug {
        comment(
            &mut out,
            "-d: set LULL_LOG=debug in the daemon's environment (`systemctl edit lull`: [Service] Environment=LULL_LOG=debug).",
        );
    }
    out.push('\n');
    let _ = writeln!(out, "state_file = \"/var/lib/lull/state.json\"");
    comment(
        &mut out,
        "No `poll`: lull reads /proc/diskstats every tenth of its disks' shortest timeout (within 1 s and 1 min), as hd-idle does: a disk with hd-idle's default 10 minutes is read once a minute, which costs about a twelfth of reading it every second. `auto` has a shorter time scale and gets a 1 s poll. Set `poll` to read more often; `--check` says what it is.",
    );
    if o.ignore_spin_down_detection {
        comment(
            &mut out,
            "-I: hd-idle sends the spin-down command again, every idle time, to a disk it believes already spun down, because undetected activity (SMART queries) may have spun it up. lull instead reads the power state of its standby disks with CHECK POWER MODE, which never wakes a disk, every `power_check` (with every transport but `hdparm`), and logs and counts a disk found spinning without counted I/O (`lull_foreign_spinups_total`); it spins such a disk down again after its next idle period, not while it stays idle.",
        );
        let _ = writeln!(out, "power_check = \"60s\"");
        warnings.push("-I has no exact lull equivalent: a disk woken without counted I/O is detected (power_check) but spun down again only after its next idle period".to_string());
    }
    for (flag, script, key, when) in [
        (
            "-spinupscript",
            &o.spinup_script,
            "on_spinup",
            "when a disk it spun down is busy again; lull's `on_spinup` hook runs when a disk in standby is found spinning (I/O showed up, or CHECK POWER MODE says active)",
        ),
        (
            "-spindownscript",
            &o.spindown_script,
            "on_spindown",
            "just before it spins a disk down; lull's `on_spindown` hook runs just after each spin-down attempt, with its outcome in LULL_RESULT (ok, already or failed)",
        ),
    ] {
        let Some(script) = script else { continue };
        comment(
            &mut out,
            &format!(
                "{flag} {script}: hd-idle runs `/bin/bash {script} DISK` {when}. The same script, given the disk's name (LULL_DISK: its `device` as written, or the kernel name a glob matched); see docs/daemon.md, \"Event hooks\". Unlike hd-idle, lull waits at most `hook_timeout` (10 s) for it."
            ),
        );
        let argv = [
            "/bin/sh",
            "-c",
            "exec /bin/bash \"$0\" \"$LULL_DISK\"",
            script.as_str(),
        ];
        let argv: Vec<String> = argv.iter().map(|a| quote(a)).collect();
        let _ = writeln!(out, "{key} = [{}]", argv.join(", "));
    }
    out.push('\n');
    let _ = writeln!(out, "[metrics]");
    let _ = writeln!(
        out,
        "# textfile = \"/var/lib/prometheus/node-exporter/lull.prom\"   # for node_exporter's textfile collector"
    );
    let _ = writeln!(
        out,
        "# listen = \"127.0.0.1:9733\"                                  # GET /metrics"
    );
    out.push('\n');

    keys_note(&mut out, o);
    // Named disks, first one wins as in hd-idle.
    let mut seen = BTreeSet::new();
    let mut kernels: Vec<String> = Vec::new();
    let mut unresolved: Vec<String> = Vec::new();
    for d in &o.disks {
        if !seen.insert(d.name.clone()) {
            comment(
                &mut out,
                &format!(
                    "{}: named again; hd-idle uses the first -a {} and so does this file",
                    origin_of(d),
                    d.name
                ),
            );
            out.push('\n');
            continue;
        }
        let kernel = if d.name.starts_with('/') {
            resolve_link(&d.name).or_else(|| {
                let p = Path::new(&d.name);
                (p.parent() == Some(Path::new("/dev")))
                    .then(|| p.file_name().map(|f| f.to_string_lossy().into_owned()))
                    .flatten()
            })
        } else {
            Some(d.name.clone())
        };
        let mut note = None::<String>;
        // What the entry names: the device, or the whole disk of a
        // partition (which lull refuses: it acts on whole disks).
        let mut device = d.name.clone();
        // hd-idle reads only the lines of `sd` disks: an entry naming
        // anything else never spun a disk down.
        let whole = kernel.as_deref().map(whole_disk);
        let unwatched = whole.filter(|w| sd_suffix(w).is_none()).map(str::to_string);
        match (&kernel, whole) {
            (Some(k), Some(whole)) => {
                if whole != k {
                    let named = if d.name == *k {
                        k.to_string()
                    } else {
                        format!("{} ({k} now)", d.name)
                    };
                    let w = format!(
                        "-a {named} names a partition; hd-idle watches its disk {whole}, and lull acts on whole disks only: the entry names {whole} (better, its /dev/disk/by-id/ link, which follows the drive: `ls -l /dev/disk/by-id/ | grep -w {whole}`)"
                    );
                    warnings.push(w.clone());
                    note = Some(w);
                    device = whole.to_string();
                }
                kernels.push(whole.to_string());
            }
            _ => unresolved.push(d.name.clone()),
        }
        if !d.own_idle && d.settings.idle_s != HD_IDLE_DEFAULT_IDLE_S && o.go_port_option.is_none()
        {
            let w = format!(
                "-a {} has no -i of its own: the Go port of hd-idle (1.21) gives the disk the default's {} s, as this file does; Debian's hd-idle package (the C original, 1.05, whose `hd-idle -h` lists no -c) gives it 600 s. If that is the hd-idle you run, {}",
                d.name,
                d.settings.idle_s,
                if d.settings.idle_s == 0 {
                    "add an entry for this disk with network = \"timer(600s)\""
                } else {
                    "write network = \"timer(600s)\" and compare_timeout = \"600s\" in its entry"
                }
            );
            comment(&mut out, &w);
            warnings.push(w);
        }
        if d.settings.idle_s == 0 {
            comment(
                &mut out,
                &format!(
                    "{}: never spun down. lull touches no disk its configuration does not name, so it has no entry.",
                    origin_of(d)
                ),
            );
            out.push('\n');
            continue;
        }
        let power_condition = d.settings.needs_power_condition();
        if power_condition {
            warnings.push(format!(
                "{}: left commented out: lull sends only the STANDBY power condition",
                origin_of(d)
            ));
        }
        let mut notes: Vec<String> = note.into_iter().collect();
        if let Some(w) = &unwatched {
            let what = if d.name == *w || d.name.strip_prefix("/dev/") == Some(w.as_str()) {
                format!("-a {}", d.name)
            } else {
                format!("-a {} ({w})", d.name)
            };
            let text = format!(
                "{what} is not an sd disk: hd-idle reads only the diskstats lines of sd disks, so this entry never spun anything down; it is left commented out (enable it to have lull spin {w} down)"
            );
            warnings.push(text.clone());
            notes.push(text);
        }
        if power_condition {
            notes.push(POWER_CONDITION_NOTE.to_string());
        }
        let commented = power_condition || unwatched.is_some();
        let note = (!notes.is_empty()).then(|| notes.join(". "));
        disk_block(
            &mut out,
            &device,
            &d.settings,
            &origin_of(d),
            note.as_deref(),
            commented,
        );
    }

    // The default entry.
    let def = &o.default;
    let def_origin = format!(
        "-i {}{}{} before any -a",
        def.idle_s,
        command_text(def),
        if def.power_condition != 0 {
            format!(" -p {}", def.power_condition)
        } else {
            String::new()
        }
    );
    if def.idle_s == 0 {
        comment(
            &mut out,
            &format!(
                "hd-idle's default entry ({def_origin}): disks not named with -a are never spun down. lull touches only the disks this file names, so there is no entry for them."
            ),
        );
    } else {
        let globs = other_disk_globs(kernels.iter().map(String::as_str));
        let mut why = format!(
            "hd-idle's default entry ({def_origin}): every other SCSI disk (sd…). lull allows one entry per disk, so these globs match every sd disk except the ones named above (globs match whole disks, never partitions)."
        );
        let mut commented = false;
        if !unresolved.is_empty() {
            commented = true;
            let w = format!(
                "{} did not resolve to a disk here, so the entries for every other disk cannot leave it out: they are commented out. Convert on the machine whose disks these are, or list the other disks by name",
                unresolved.join(", ")
            );
            why.push(' ');
            why.push_str(&w);
            why.push('.');
            warnings.push(w);
        } else if o.disks.iter().any(|d| d.name.starts_with("/dev/disk/")) {
            why.push_str(" Links were resolved when converting: if the kernel names move, `--check` refuses the overlap instead of guessing.");
        }
        if def.needs_power_condition() {
            commented = true;
            why.push(' ');
            why.push_str(POWER_CONDITION_NOTE);
            warnings.push(format!(
                "the default entry ({def_origin}) is left commented out: lull sends only the STANDBY power condition"
            ));
        }
        comment(&mut out, &why);
        out.push('\n');
        for g in globs {
            disk_block(&mut out, &g, def, "every other disk:", None, commented);
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    Conversion {
        toml: out,
        warnings,
    }
}

#[cfg(test)]
mod tests;
