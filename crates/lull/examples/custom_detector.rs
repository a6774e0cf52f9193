//! A user-written start detector and skeptic, registered under new names
//! next to the built-ins and used from a spec string.
//!
//! `cargo run -p lull --example custom_detector`
//!
//! - `quiet-writes(t)`: declares idleness once no *write* has arrived for
//!   `t` and nothing is outstanding (reads are cheap to interrupt, say).
//! - `cap(max; input)`: a filter that shortens predictions to at most `max`.
//!
//! Both take durations, so they are written relative to the drive's
//! break-even time B like the built-ins (`quiet-writes(B)`, `cap(max=2B;
//! …)`): the registry of a [`lull::Setup`] resolves `B` for every
//! component registered in it, the new ones included.

use lull::prelude::*;

/// Fires `t` after the last write, if the device is idle then.
#[derive(Debug)]
pub struct QuietWrites {
    t: Nanos,
    last_write: Option<Nanos>,
    fired: bool,
}

impl StartDetector for QuietWrites {
    fn on_event(&mut self, ev: &Event, _ctx: &Context) -> Option<Start> {
        if ev.is_arrival() && ev.op == Op::Write {
            self.last_write = Some(ev.time);
            self.fired = false;
        }
        None
    }
    fn next_deadline(&self) -> Option<Nanos> {
        match (self.fired, self.last_write) {
            (false, Some(w)) => Some(w + self.t),
            _ => None,
        }
    }
    fn on_deadline(&mut self, ctx: &Context) -> Option<Start> {
        if self.next_deadline().is_some_and(|d| d <= ctx.now) {
            self.fired = true;
            if ctx.is_idle() {
                return Some(Start::now(ctx.now));
            }
        }
        None
    }
}

/// Shortens every prediction to at most `max`.
#[derive(Debug)]
pub struct Cap {
    max: Nanos,
}

impl Skeptic for Cap {
    fn on_input(&mut self, _input: usize, p: &Prediction, _ctx: &Context) -> Option<Prediction> {
        let d = p.duration.map_or(self.max, |d| d.min(self.max));
        Some(Prediction::new(p.start, Some(d)))
    }
}

const QUIET_WRITES: ComponentInfo = ComponentInfo {
    name: "quiet-writes",
    role: Role::StartDetector,
    summary: "declares idleness once no write has arrived for t and nothing is outstanding",
    source: "examples/custom_detector.rs",
    params: &[ParamInfo::required(
        "t",
        ParamKind::Duration,
        "s",
        "quiet time after the last write",
    )],
    inputs: None,
    offline: false,
    gauges: &[],
};

const CAP: ComponentInfo = ComponentInfo {
    name: "cap",
    role: Role::Skeptic,
    summary: "shortens predictions to at most max",
    source: "examples/custom_detector.rs",
    params: &[ParamInfo::required(
        "max",
        ParamKind::Duration,
        "s",
        "longest prediction passed on",
    )],
    inputs: Some(Arity::ONE),
    offline: false,
    gauges: &[],
};

/// The setup for the paper's 2.5-inch drive spinning down (B = 3 s), with
/// the two new kinds registered next to the built-ins.
pub fn setup() -> Setup {
    let mut setup = lull::for_drive("paper-2.5in", Work::Standby).expect("a built-in preset");
    let r = setup.registry_mut();
    r.register(QUIET_WRITES, |p| {
        Ok(Built::Start(Box::new(QuietWrites {
            t: p.positive_duration("t")?,
            last_write: None,
            fired: false,
        })))
    });
    r.register(CAP, |p| {
        Ok(Built::Skeptic(Box::new(Cap {
            max: p.positive_duration("max")?,
        })))
    });
    setup
}

/// What the example measured.
#[derive(Debug)]
pub struct Outcome {
    /// The internal measures of the custom network.
    pub measures: InternalMeasures,
    /// The predictions it made.
    pub predictions: Vec<Prediction>,
    /// The break-even time the network was built with.
    pub break_even: Nanos,
}

/// The network: quiet for B after the last write, predicted to last 20B,
/// capped at 2B.
pub const SPEC: &str = "cap(max=2B; quiet-writes(B) + fixed(20B))";

/// Runs [`SPEC`] over a small trace whose times are multiples of B.
pub fn run() -> Outcome {
    let setup = setup();
    let b = setup.break_even();
    let trace = [
        Request::new(Nanos::ZERO, b / 3, Op::Write, 0, 4096),
        // A read after the write does not restart the write timer; it
        // arrives B/6 after the timer fired and stops the run.
        Request::new(b * 7 / 6, b * 4 / 3, Op::Read, 8, 4096),
        Request::new(b * 7, b * 7 + b / 3, Op::Write, 16, 4096),
        Request::new(b * 14, b * 14 + b / 3, Op::Read, 24, 4096),
    ];
    let network = setup.build_network(SPEC).expect("valid spec");
    let mut engine = Engine::with_policy(network, StopPolicy::EarlierOf, NoTask).with_log();
    let report = replay(&Timeline::from_requests(&trace), &mut engine).expect("replay");
    let predictions = engine
        .log()
        .iter()
        .filter_map(|e| match e {
            LogEntry::Prediction { prediction, .. } => Some(*prediction),
            _ => None,
        })
        .collect();
    Outcome {
        measures: report.internal,
        predictions,
        break_even: b,
    }
}

#[allow(dead_code)]
fn main() {
    let out = run();
    println!("predictions:");
    for p in &out.predictions {
        println!(
            "  start {} for {}",
            p.start,
            p.duration.map_or("until busy".into(), |d| d.to_string())
        );
    }
    println!(
        "efficiency {:.3}, violations {}",
        out.measures.efficiency, out.measures.violations
    );
}
