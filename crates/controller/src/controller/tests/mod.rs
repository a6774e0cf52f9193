//! The controller's decisions, driven by hand: samples, reports and time
//! in, orders, hooks and state out, with no daemon, clock or device.

use lull_core::time::Nanos;

use super::*;
use crate::config::Config;
use crate::diskstats::parse;
use crate::drive::PowerState;
use crate::task::Intent;

mod commands;
mod presence;
mod restarts;
mod standby;

const UNIX0: u64 = 1_800_000_000;

/// The kernel's boot id the tests' daemon runs in.
const BOOT: u128 = 0x1b2e_87f4_a0c3_4d5e_9f61_0a2b_3c4d_5e6f;

/// The one `[[disk]]` of `disk` (TOML) named `sdb`, and its family.
fn sdb(disk: &str, registry: &Registry) -> (DiskConfig, Family) {
    let text = format!("[[disk]]\ndevice = \"sdb\"\n{disk}");
    let cfg = Config::parse(std::path::Path::new("lull.toml"), &text, registry).unwrap();
    let family = Family {
        disk: "sdb".into(),
        partitions: vec![],
        holders: vec![],
    };
    (cfg.disks[0].clone(), family)
}

/// A controller for the one `[[disk]]` of `disk` (TOML) named `sdb`, and
/// its registry.
fn controller(disk: &str) -> (DiskController, Registry) {
    let registry = crate::default_registry();
    let (cfg, family) = sdb(disk, &registry);
    let c = fresh(&registry, &cfg, family, Nanos::ZERO);
    (c, registry)
}

/// A controller for `cfg` named `sdb`, from the state `st`, at time 0.
fn with_state(
    registry: &Registry,
    cfg: &DiskConfig,
    family: Family,
    st: DiskState,
    settings: Settings,
) -> DiskController {
    DiskController::new(
        registry,
        cfg,
        "sdb",
        "sdb",
        family,
        1,
        st,
        settings,
        Nanos::ZERO,
    )
    .unwrap()
}

/// A controller for `cfg` with no state yet, power checks every
/// `power_check` (zero: none), polled every second.
fn fresh(
    registry: &Registry,
    cfg: &DiskConfig,
    family: Family,
    power_check: Nanos,
) -> DiskController {
    with_state(
        registry,
        cfg,
        family,
        DiskState::default(),
        settings(power_check),
    )
}

/// A real daemon's settings in the tests' boot: power checks every
/// `power_check` (zero: none), polled every second, the trace clock at 0.
fn settings(power_check: Nanos) -> Settings {
    Settings {
        power_check,
        dry_run: false,
        clock: Nanos::ZERO,
        poll: Nanos::from_secs(1),
        max_poll: Nanos::from_secs(1),
        boot_id: Some(BOOT),
    }
}

fn at(s: u64) -> Now {
    Now {
        mono: Nanos::from_secs(s),
        unix: UNIX0 + s,
    }
}

/// What the actor reports at second `s` (of this controller's
/// generation; no wake witness): the controller's outputs.
fn report(c: &mut DiskController, s: u64, outcome: Outcome) -> Vec<Output> {
    let mut out = Vec::new();
    c.on_outcome(at(s), outcome, true, &mut NoWitness, &mut out);
    out
}

/// Drives `c` second by second from `from` to `to` (exclusive) with
/// `ios(s)` completed operations at second `s`; returns every output with
/// its second.
fn run(
    c: &mut DiskController,
    registry: &Registry,
    from: u64,
    to: u64,
    ios: impl Fn(u64) -> u64,
) -> Vec<(u64, Output)> {
    drive(c, registry, from, to, |s| {
        let n = ios(s);
        format!("8 16 sdb {n} 0 {} 0 0 0 0 0 0 0 0\n", n * 8)
    })
}

/// Polls `c` second by second from `from` to `to` (exclusive) with the
/// diskstats text `diskstats(s)`; returns every output with its second.
fn drive(
    c: &mut DiskController,
    registry: &Registry,
    from: u64,
    to: u64,
    diskstats: impl Fn(u64) -> String,
) -> Vec<(u64, Output)> {
    drive_at(c, registry, from..to, at, diskstats)
}

/// [`drive`] at the instants `now(s)` (another run's clocks).
fn drive_at(
    c: &mut DiskController,
    registry: &Registry,
    seconds: std::ops::Range<u64>,
    now: impl Fn(u64) -> Now,
    diskstats: impl Fn(u64) -> String,
) -> Vec<(u64, Output)> {
    let mut all = Vec::new();
    for s in seconds {
        let sample = Sample::new(parse(&diskstats(s)).unwrap());
        let mut out = Vec::new();
        let mut cx = Context {
            registry,
            witness: &mut NoWitness,
        };
        c.on_poll(now(s), &sample, false, &mut cx, &mut out);
        all.extend(out.into_iter().map(|o| (s, o)));
    }
    all
}

fn standby_orders(outs: &[(u64, Output)]) -> Vec<u64> {
    outs.iter()
        .filter(|(_, o)| {
            matches!(
                o,
                Output::Order {
                    job: None,
                    order: Order::Start { .. }
                }
            )
        })
        .map(|(s, _)| *s)
        .collect()
}

/// Busy until second 5 (20 operations a second), then quiet.
fn busy_then_quiet(s: u64) -> u64 {
    20 * s.min(5)
}

/// A witness that sees `hd-idle` (pid 652) spinning disk `sdb` down, and
/// counts the questions.
#[derive(Default)]
struct HdIdleBeside(Vec<String>);

impl WakeWitness for HdIdleBeside {
    fn snapshot(&mut self) -> Snapshot {
        Snapshot::default()
    }
    fn attribute(&mut self, _: Snapshot, _: &[(u32, u32)], _: u64) -> crate::wakeup::Attribution {
        crate::wakeup::Attribution::default()
    }
    fn spinners(&mut self, kernel: &str) -> Vec<Spinner> {
        self.0.push(kernel.to_string());
        (kernel == "sdb")
            .then(|| Spinner {
                name: "hd-idle".into(),
                pid: 652,
                warning: "hd-idle (pid 652) spins down sdb (after 6s) too".into(),
            })
            .into_iter()
            .collect()
    }
}
