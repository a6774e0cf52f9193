//! `lull components`: the catalogue: components with their parameters,
//! named networks, idle tasks and their modifiers, device presets with
//! their break-even time `B`, and the built-in workloads.

use std::io::Write;

use lull_blktrace_replay::replay::TASKS;
use lull_blktrace_replay::synth;
use lull_tasks::device::ServiceModel;
use lull_tasks::power::PowerModel;

use super::{CliError, Format};

/// Flags of `lull components`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// What each idle task does and where its break-even time comes from.
fn task_summary(name: &str) -> &'static str {
    match name {
        "none" => {
            "no task: the paper's internal measures (declared against actual idle time); B from --device as for spindown"
        }
        "spindown" => {
            "spin the disk down (SPEC §4.2): energy, spin-ups, delayed operations; B = the power preset's break-even"
        }
        "writeback" => {
            "flush a write-back cache in idle time (reads first, elevator order, coalescing, small forced steps): queue bytes, forced flushes; B = the service model's random 8 KiB access"
        }
        "writeback-paper" => {
            "writeback with the paper's FIFO policy (§4.3): whole-queue forced flushes, no read priority; B as for writeback"
        }
        "cleaning" => {
            "background work (log cleaning) in idle time: cycles, interrupted cycles; B as for writeback"
        }
        _ => "",
    }
}

/// Task modifiers: `(suffix, applies to, summary)`.
const MODIFIERS: &[(&str, &str, &str)] = &[(
    "+manners",
    "writeback, cleaning",
    "regulated by MS Manners: the task suspends itself when it slows the foreground (writeback+manners, cleaning+manners)",
)];

/// A device preset of either kind.
struct Preset {
    name: &'static str,
    /// `power` (spindown, none) or `service` (writeback, cleaning).
    kind: &'static str,
    breakeven_s: f64,
    summary: String,
}

/// A gauge unit in words, for the listing.
fn unit_name(u: lull_core::registry::GaugeUnit) -> &'static str {
    use lull_core::registry::GaugeUnit;
    match u {
        GaugeUnit::Seconds => "seconds",
        GaugeUnit::Ratio => "share, shown in %",
        GaugeUnit::Times => "times",
        GaugeUnit::Count => "count",
        GaugeUnit::Number => "number",
    }
}

fn presets() -> Vec<Preset> {
    let power = lull_tasks::power::PRESETS.iter().filter_map(|&name| {
        PowerModel::preset(name).map(|m| Preset {
            name,
            kind: "power",
            breakeven_s: m.break_even_s(),
            summary: format!(
                "p_active={} W, p_sleep={} W, p_spinup={} W, t_spinup={} s, t_spindown={} s",
                m.p_active, m.p_sleep, m.p_spinup, m.t_spinup, m.t_spindown
            ),
        })
    });
    let service = lull_tasks::device::PRESETS.iter().filter_map(|&name| {
        ServiceModel::preset(name).map(|m| Preset {
            name,
            kind: "service",
            breakeven_s: m.break_even().as_secs_f64(),
            summary: m.to_string(),
        })
    });
    power.chain(service).collect()
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let registry = lull::registry();
    let list = registry.list();
    let networks = registry.networks();
    let presets = presets();
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        Format::Json => {
            let mut items: Vec<serde_json::Value> = list
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "name": c.name,
                        "role": c.role.name(),
                        "description": c.summary,
                        "source": c.source,
                        "offline": c.offline,
                        "inputs": c.inputs.map(|a| a.to_string()),
                        "parameters": c.params.iter().map(|p| serde_json::json!({
                            "name": p.name,
                            "type": p.kind,
                            "unit": p.unit,
                            "default": p.default,
                            "required": p.default.is_none(),
                            "description": p.doc,
                        })).collect::<Vec<_>>(),
                        "gauges": c.gauges.iter().map(|g| serde_json::json!({
                            "name": g.name,
                            "label": g.label,
                            "unit": g.unit,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            items.extend(networks.iter().map(|n| {
                serde_json::json!({"name": n.name, "role": "network", "description": n.summary})
            }));
            items.extend(TASKS.iter().map(
                |t| serde_json::json!({"name": t, "role": "task", "description": task_summary(t)}),
            ));
            items.extend(MODIFIERS.iter().map(|(m, to, s)| {
                serde_json::json!({"name": m, "role": "task-modifier", "applies_to": to, "description": s})
            }));
            items.extend(presets.iter().map(|p| {
                serde_json::json!({
                    "name": p.name,
                    "role": format!("{}-preset", p.kind),
                    "breakeven_s": p.breakeven_s,
                    "description": p.summary,
                })
            }));
            items.extend(synth::WORKLOADS.iter().map(|w| {
                serde_json::json!({
                    "name": w.name,
                    "role": "workload",
                    "structured": w.is_structured(),
                    "description": w.summary,
                })
            }));
            writeln!(out, "{}", serde_json::Value::Array(items))
        }
        Format::Text => (|| {
            let mut role = None;
            for c in &list {
                if role != Some(c.role) {
                    role = Some(c.role);
                    writeln!(out, "\n{}s:", c.role)?;
                }
                let params: Vec<String> = c
                    .params
                    .iter()
                    .map(|p| match p.default {
                        Some(d) => format!("{}={d}", p.name),
                        None => p.name.to_string(),
                    })
                    .collect();
                let sig = format!("{}({})", c.name, params.join(", "));
                writeln!(out, "  {sig:<48} {}", c.summary)?;
                for p in c.params {
                    let unit = if p.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", p.unit)
                    };
                    writeln!(out, "      {}{unit}: {}", p.name, p.doc)?;
                }
                if !c.gauges.is_empty() {
                    let shown: Vec<String> = c
                        .gauges
                        .iter()
                        .map(|g| format!("{} ({}, {})", g.name, g.label, unit_name(g.unit)))
                        .collect();
                    writeln!(out, "      gauges: {}", shown.join("; "))?;
                }
            }
            writeln!(out, "\nnamed networks (use the name as the whole spec):")?;
            if networks.is_empty() {
                writeln!(out, "  (none in this build)")?;
            }
            for n in &networks {
                writeln!(out, "  {:<20} {}", n.name, n.summary)?;
            }
            writeln!(out, "\nidle tasks (--task):")?;
            for t in TASKS {
                writeln!(out, "  {t:<20} {}", task_summary(t))?;
            }
            writeln!(out, "\ntask modifiers (TASK+MODIFIER):")?;
            for (m, to, s) in MODIFIERS {
                writeln!(out, "  {m:<20} for {to}: {s}")?;
            }
            writeln!(
                out,
                "\ndevice presets (--device; B is the break-even time):"
            )?;
            for p in &presets {
                let b = if p.breakeven_s >= 1.0 {
                    format!("{:.1} s", p.breakeven_s)
                } else {
                    format!("{:.2} ms", p.breakeven_s * 1e3)
                };
                writeln!(
                    out,
                    "  {:<20} {:<8} B = {b:<9} {}",
                    p.name, p.kind, p.summary
                )?;
            }
            writeln!(
                out,
                "  (power presets model the drive for spindown and none, service presets for writeback and cleaning)"
            )?;
            writeln!(out, "\nbuilt-in workloads (--workload):")?;
            for w in synth::WORKLOADS {
                writeln!(out, "  {:<20} {}", w.name, w.summary)?;
            }
            Ok(())
        })(),
    };
    written.map_err(CliError::runtime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_has_a_summary() {
        for t in TASKS {
            assert!(!task_summary(t).is_empty(), "task {t} has no summary");
        }
    }
}
