//! `lull components`: the catalogue.

use std::io::Write;

use super::{CliError, Format};

/// Flags of `lull components`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let registry = lull::registry();
    let list = registry.list();
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        Format::Json => {
            let items: Vec<serde_json::Value> = list
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
                    })
                })
                .collect();
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
            }
            Ok(())
        })(),
    };
    written.map_err(CliError::runtime)
}
