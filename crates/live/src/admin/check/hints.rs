//! Hints on names and timeouts: a kernel name that a reboot can give
//! another drive, and a timer far shorter than the drive's break-even
//! time.

use lull_core::registry::Registry;
use lull_core::time::Nanos;

use crate::config::{DiskConfig, TaskConfig};
use crate::diskstats::parse;
use crate::source::Sample;

/// The hint for an entry that names a disk by its kernel name (`sdb`,
/// `/dev/sdb`), which the kernel hands out in the order it finds disks:
/// after a reboot or a replug it can name another drive, which would get
/// this entry's task and budget. The by-id link of the drive `kernel` is
/// now, from `links` (name, kernel name), preferring a transport's name
/// (`ata-`, `scsi-`, `usb-`, `nvme-`) to a `wwn-`; `None` for a glob, a
/// link, or a drive without one (a loop device).
pub(crate) fn stable_name_hint(
    device: &str,
    kernel: &str,
    links: &[(String, String)],
) -> Option<String> {
    let name = device.strip_prefix("/dev/").unwrap_or(device);
    let kernel_named = name == kernel && !name.contains('/');
    if !kernel_named || crate::devices::is_glob(device) {
        return None;
    }
    let mut ours: Vec<&str> = links
        .iter()
        .filter(|(_, k)| k == kernel)
        .map(|(n, _)| n.as_str())
        .collect();
    ours.sort_by_key(|n| (n.starts_with("wwn-"), n.len(), *n));
    let link = ours.first()?;
    Some(format!(
        "`{device}` is a kernel name, which the kernel hands out in the order it finds disks: after a reboot or a replug it can name another drive, which would get this entry; /dev/disk/by-id/{link} names this drive"
    ))
}

/// When a new controller of the standby disk `d`, polled every `poll`,
/// orders its first standby in a quiet stretch after a burst of reads:
/// the network's acting timeout as the daemon acts on it (up to a poll
/// late), measured by driving the daemon's own controller over simulated
/// diskstats, not by reading the spec. `None` when it orders none within
/// four break-even times, or for another task.
pub(crate) fn first_standby(registry: &Registry, d: &DiskConfig, poll: Nanos) -> Option<Nanos> {
    use crate::controller::{Context, DiskController, NoWitness, Now, Order, Output, Settings};
    use crate::source::Family;
    if !matches!(d.task, TaskConfig::Standby { .. }) || poll == Nanos::ZERO {
        return None;
    }
    let family = Family {
        disk: "sdx".into(),
        partitions: vec![],
        holders: vec![],
    };
    let settings = Settings {
        power_check: Nanos::ZERO,
        dry_run: false,
        clock: Nanos::ZERO,
        poll,
        max_poll: poll,
        boot_id: None,
    };
    let mut ctl = DiskController::new(
        registry,
        d,
        "sdx",
        "sdx",
        family,
        1,
        Default::default(),
        settings,
        Nanos::ZERO,
    )
    .ok()?;
    let line = |reads: u64| format!("   8 0 sdx {reads} 0 {} 0 0 0 0 0 0 0 0\n", reads * 8);
    // Reads at the first three polls, then nothing.
    let busy = Nanos(poll.0 * 3);
    let until = busy + Nanos(d.breakeven().0.saturating_mul(4)) + Nanos(poll.0 * 2);
    let mut now = Nanos::ZERO;
    let mut next_poll = Nanos::ZERO;
    let mut out = Vec::new();
    while now <= until {
        let reads = 10 * (now.0 / poll.0).min(3);
        let sample = Sample::new(parse(&line(reads)).ok()?);
        let at = Now {
            mono: now,
            unix: now.0 / 1_000_000_000,
        };
        out.clear();
        let mut cx = Context {
            registry,
            witness: &mut NoWitness,
        };
        ctl.on_poll(at, &sample, false, &mut cx, &mut out);
        let ordered = out.iter().any(|o| {
            matches!(
                o,
                Output::Order {
                    job: None,
                    order: Order::Start { .. }
                }
            )
        });
        if ordered {
            return Some(now.saturating_sub(busy));
        }
        if now >= next_poll {
            next_poll = now + poll;
        }
        now = ctl
            .next_deadline()
            .filter(|&t| t > now)
            .map_or(next_poll, |t| t.min(next_poll));
    }
    None
}

/// The warning for a standby disk whose network spins it down, from the
/// start of a quiet stretch, in under half its break-even time `B` and
/// learns nothing that could change that (a timer converted from hd-idle's
/// `-i 10`, a unit mistake): every idle period between that timeout and
/// `B` costs more energy than it saves, and a spin-up's wear. A learning
/// network (`auto`) adapts its timeout, so it is not judged by its first.
///
/// The timeout is the network's, measured at a poll no longer than the
/// one a derived default would take: under a `poll` longer than the
/// timeout the first standby comes at the poll that shows the burst's
/// last reads, which measured 0 s, so `timer(2B)` under a 10-minute poll
/// was warned of as spinning down "0ns into a quiet stretch" (the long
/// poll has a warning of its own, [`Config::poll_warning`]).
pub(crate) fn short_timeout(registry: &Registry, d: &DiskConfig, poll: Nanos) -> Option<String> {
    let poll = poll.min(crate::config::derived_poll(std::slice::from_ref(d)));
    if d.left_alone.is_some() || d.power().is_none() {
        return None;
    }
    let mut parts = Vec::new();
    let network = crate::controller::build_network(registry, d).ok()?;
    lull_core::component::Detector::save_parts(&network, Nanos::ZERO, &mut parts);
    if parts.iter().any(Option::is_some) {
        return None;
    }
    let t = first_standby(registry, d, poll)?;
    (t.0.saturating_mul(2) < d.breakeven().0).then(|| {
        format!(
            "network `{}` spins the drive down {} into a quiet stretch, under half its break-even time B = {}: a spin-down in an idle period between {} and {} costs more energy than it saves, and a spin-up's wear; a timer of at least B (`timer(B)`) or `auto` avoids that",
            d.network,
            t.approx(),
            d.breakeven().approx(),
            t.approx(),
            d.breakeven().approx(),
        )
    })
}
