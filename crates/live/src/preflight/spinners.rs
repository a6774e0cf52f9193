//! Other programs that spin disks down on a timeout of their own
//! (hd-idle and kin): which run now, and which of lull's disks they may
//! spin down too.

use lull_core::time::Nanos;
use lull_tasks::drive::DriveFacts;

use crate::config::{Config, TaskConfig};
use crate::controller::Spinner;
use crate::devices::Resolved;
use crate::process;

/// The programs that spin disks down on their own timeout
/// ([`process::SPIN_DOWN_DAEMONS`]) and run now, each with its warning,
/// when they may spin down a disk of `cfg` that lull is to spin down
/// (`found`: the disks each entry resolves to now). For hd-idle its
/// command line tells which disks it spins down and after how long
/// ([`competition`]): it is warned of only for those it shares with lull,
/// by name. For another program, or an hd-idle whose command line cannot
/// be read, the warning says that it may.
pub fn competing_spin_down(cfg: &Config, found: &[Vec<Resolved>]) -> Vec<Spinner> {
    let kernels = spun_down_disks(cfg, found);
    if kernels.is_empty() {
        return Vec::new();
    }
    spinners_of(&kernels)
}

/// The programs running now that spin disks down on a timeout of their own
/// ([`process::SPIN_DOWN_DAEMONS`]) and may spin down one of `kernels`,
/// each with its warning ([`competition`]). What the daemon's witness
/// answers when a drive is found asleep that lull did not spin down
/// ([`crate::controller::WakeWitness::spinners`]), and what the start
/// warns of.
pub fn spinners_of(kernels: &[&str]) -> Vec<Spinner> {
    process::running_named(process::SPIN_DOWN_DAEMONS)
        .into_iter()
        .filter_map(|(pid, name)| {
            // An empty command line is a process in the middle of its
            // exec (renamed already, its arguments not yet readable): not
            // hd-idle with no options, but one whose are unknown.
            let args = (name == "hd-idle")
                .then(|| process::cmdline(pid))
                .flatten()
                .filter(|c| !c.is_empty())
                .map(|c| c.into_iter().skip(1).collect());
            let warning = competition(&name, pid, args, kernels, &crate::hd_idle::kernel_name_now)?;
            Some(Spinner { name, pid, warning })
        })
        .collect()
}

/// The disks of `cfg` (`found`: the disks each entry resolves to now)
/// that lull spins down: those of `standby` entries, but not those it
/// leaves alone ([`crate::config::DiskConfig::leaves_alone`]: a solid-state disk, an
/// empty card-reader slot). Told from sysfs alone (the kernel's rotational
/// flag and the size), which never reaches a drive: a drive the daemon
/// finds to be solid-state only by asking it (a USB SSD the kernel calls
/// rotational) is counted, on the side of warning.
pub fn spun_down_disks<'a>(cfg: &Config, found: &'a [Vec<Resolved>]) -> Vec<&'a str> {
    cfg.disks
        .iter()
        .zip(found)
        .filter(|(d, _)| matches!(d.task, TaskConfig::Standby { .. }))
        .flat_map(|(d, f)| f.iter().map(move |r| (d, r.kernel.as_str())))
        .filter(|(d, k)| {
            let facts = DriveFacts {
                rotational: crate::identify::sysfs_rotational(&cfg.sysfs, k),
                ..DriveFacts::default()
            };
            let sectors = crate::identify::sysfs_sectors(&cfg.sysfs, k);
            d.leaves_alone(Some(&facts), sectors).is_none()
        })
        .map(|(_, k)| k)
        .collect()
}

/// The warning for the spin-down program `name` (pid `pid`) run with the
/// arguments `args` (if known), beside lull spinning down the disks
/// `kernels`; `None` when its arguments show it spins none of them down.
pub fn competition(
    name: &str,
    pid: u32,
    args: Option<Vec<String>>,
    kernels: &[&str],
    resolve: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    // `-i 0 -a DISK` is hd-idle's own way to leave one disk alone.
    let keep = if name == "hd-idle" {
        ", or `-i 0 -a DISK` in its options"
    } else {
        ", or its own setting that leaves a disk alone"
    };
    let advice = format!(
        "a disk both spin down goes down at whichever timeout comes first, and what lull learns and the savings it reports assume that it alone spins its disks down; stop {name} for the disks lull spins down (`systemctl disable --now {name}`{keep}), or run `lulld --dry-run` beside it to compare"
    );
    let options = args.and_then(|a| crate::hd_idle::parse_words(a).ok());
    let Some(o) = options else {
        return Some(format!(
            "{name} (pid {pid}) is running and may spin down the disks lull does: {advice}"
        ));
    };
    let shared: Vec<String> = kernels
        .iter()
        .filter_map(|&k| {
            let idle = o.idle_for(k, resolve);
            (idle > 0).then(|| format!("{k} (after {})", Nanos::from_secs(idle).approx()))
        })
        .collect();
    (!shared.is_empty()).then(|| {
        format!(
            "{name} (pid {pid}, options `{}`) spins down {} too: {advice}",
            o.words.join(" "),
            shared.join(", ")
        )
    })
}
