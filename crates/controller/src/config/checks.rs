//! Checks of single values: TOML errors placed on their line, listen
//! addresses, network specs (and their time scale), command paths and the
//! permissions of what root would run.

use super::*;

pub(super) fn toml_error(cx: &Ctx<'_>, e: &toml::de::Error) -> ConfigError {
    let line = e.span().map(|s| cx.line(&s));
    // Name the key written on the offending line, if it is `key = value`.
    let key = line.and_then(|l| {
        let text = cx.text.lines().nth(l - 1)?;
        let (k, _) = text.split_once('=')?;
        let k = k.trim().trim_matches('"');
        (!k.is_empty() && !k.starts_with('[') && !k.starts_with('#'))
            .then(|| format!("{}{k}", table_prefix(cx.text, l)))
    });
    let raw = e.message().trim();
    // `[disk]` where `[[disk]]` is meant: serde says only "invalid type:
    // map, expected a sequence".
    let header = line.and_then(|l| {
        let t = cx.text.lines().nth(l - 1)?.trim();
        let name = t.strip_prefix('[')?.strip_suffix(']')?;
        (!name.starts_with('[') && raw.contains("expected a sequence"))
            .then(|| name.trim().to_string())
    });
    if let Some(name) = header {
        return ConfigError {
            file: cx.path.to_path_buf(),
            line,
            key: Some(name.clone()),
            message: format!(
                "`[{name}]` makes one table, where `{name}` takes a list of them: write `[[{name}]]` (one such header per entry)"
            ),
        };
    }
    let message = key
        .as_deref()
        .and_then(|k| wrong_type(k, raw))
        .unwrap_or_else(|| {
            let hint =
                misplaced_hint(key.as_deref(), raw).unwrap_or_else(|| unknown_field_hint(raw));
            format!("{raw}{hint}")
        });
    ConfigError {
        file: cx.path.to_path_buf(),
        line,
        key,
        message,
    }
}

/// How many errors after the first [`raw_errors`] names at most.
const MORE_ERRORS: usize = 9;

/// The file's TOML errors ([`toml_error`]), several at once: the line of
/// each is set aside (a comment) and the file read again, so that an
/// admin sees every misspelt key and mistyped value of a hand-written
/// file in one run rather than one a run. serde meets keys in its own
/// order (a table's keys sorted), so the errors are sorted by line, and
/// the first in the file is the one returned, the others listed under
/// it, up to [`MORE_ERRORS`]. Only a `key = value` line is set aside;
/// setting one aside that a table needs makes a "missing field" error of
/// its own, where the reading stops.
pub(super) fn raw_errors(cx: &Ctx<'_>, first: &toml::de::Error) -> ConfigError {
    let mut errs = vec![toml_error(cx, first)];
    let mut text = cx.text.to_string();
    while errs.len() <= MORE_ERRORS {
        let last = errs.last().expect("one at least");
        let Some(l) = last.line else { break };
        let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let Some(line) = lines.get_mut(l - 1) else {
            break;
        };
        // Only a `key = value` line on its own: anything else (a value
        // over several lines, a table header) is not set aside.
        if !line.contains('=') || line.trim_start().starts_with('[') {
            break;
        }
        *line = format!("# {line}");
        text = lines.join("\n");
        let again = Ctx {
            path: cx.path,
            text: &text,
        };
        match toml::from_str::<RawConfig>(&text) {
            Ok(_) => break,
            Err(e) => {
                let next = toml_error(&again, &e);
                if next.line.is_none()
                    || errs.iter().any(|x| x.line == next.line)
                    || next.message.starts_with("missing field")
                {
                    break;
                }
                errs.push(next);
            }
        }
    }
    errs.sort_by_key(|e| e.line);
    let mut err = errs.remove(0);
    if !errs.is_empty() {
        let more: Vec<String> = errs.iter().map(ToString::to_string).collect();
        err.message.push_str(&format!(
            "\n{} more error{} further on:\n{}",
            more.len(),
            if more.len() == 1 { "" } else { "s" },
            more.join("\n")
        ));
    }
    err
}

/// The keys only the top level takes: written under a `[[disk]]` or
/// `[metrics]` header, TOML puts them in that table.
pub(super) const TOP_LEVEL_ONLY: &[&str] = &[
    "state_file",
    "poll",
    "state_interval",
    "power_check",
    "diskstats",
    "sysfs",
    "hook_timeout",
    "activity_log",
    "activity_dir",
    "activity_retention",
    "activity_max_mb",
    "hdparm",
];

/// The keys only `[metrics]` takes.
pub(super) const METRICS_ONLY: &[&str] = &["textfile", "listen"];

/// The keys only a `[[disk]]` table takes (`job` as its `[[disk.job]]`
/// tables): at the top level they are a disk's keys written without the
/// disk's header.
pub(super) const DISK_ONLY: &[&str] = &[
    "device",
    "network",
    "task",
    "policy",
    "preset",
    "backend",
    "max_spindowns_per_day",
    "compare_timeout",
    "command",
    "interval",
    "job",
    "best_effort",
    "assume_idle",
];

/// Where an unknown key `key` (`disk[0].hdparm`) belongs, when it is
/// another table's: a top-level key written after a table header (every
/// key after `[[disk]]` or `[metrics]` is that table's, the most common
/// TOML mistake in a daemon's file), a `[metrics]` key in a disk, or a
/// disk's key (or `[[job]]`) at the top level. Said
/// instead of the closest of the table's own keys, which misleads there
/// (`poll` under `[[disk]]` is not `policy`).
fn misplaced_hint(key: Option<&str>, raw: &str) -> Option<String> {
    let (name, _) = unknown_field(raw)?;
    let Some((table, _)) = key.unwrap_or(name).rsplit_once('.') else {
        // At the top level: a disk's key without its header.
        return DISK_ONLY.contains(&name).then(|| {
            if name == "job" {
                "; jobs belong to a disk: write `[[disk.job]]` tables after the keys of their `[[disk]]` (its `task = \"jobs\"`)".to_string()
            } else {
                format!(
                    "; `{name}` is a disk's key: write it under a `[[disk]]` header, one such header per disk"
                )
            }
        });
    };
    let header = if table == "metrics" {
        "[metrics]".to_string()
    } else if table.starts_with("disk[") && !table.contains('.') {
        "[[disk]]".to_string()
    } else {
        return None;
    };
    if TOP_LEVEL_ONLY.contains(&name) {
        Some(format!(
            "; `{name}` is a top-level key, and TOML puts every key after a table header in that table (here `{header}`): move it above the first table header"
        ))
    } else if METRICS_ONLY.contains(&name) && table != "metrics" {
        Some(format!(
            "; `{name}` belongs in `[metrics]`: a `[metrics]` header on a line of its own, before the first `[[disk]]` or after the last disk's keys, then `{name} = …`"
        ))
    } else {
        None
    }
}

/// "; did you mean `network`?" after serde's "unknown field `netwrok`,
/// expected one of `device`, `network`, …", for the closest of the keys
/// it lists; nothing when none is close or the message is another.
fn unknown_field_hint(raw: &str) -> String {
    let Some((name, known)) = unknown_field(raw) else {
        return String::new();
    };
    let known: Vec<&str> = known.split('`').skip(1).step_by(2).collect();
    lull_core::suggest::did_you_mean(name, known)
}

/// The key serde's "unknown field `X`, expected …" names, and the rest
/// of the message (the keys it lists); `None` for any other message.
fn unknown_field(raw: &str) -> Option<(&str, &str)> {
    raw.strip_prefix("unknown field `")?.split_once('`')
}

/// What key `key` (`poll`, `disk[0].command`, `metrics.listen`) accepts,
/// and an example: for a value of the wrong type, serde names Rust types
/// (`expected struct RawMetrics`, `expected i64`); this says it in the
/// file's terms instead.
fn accepts(key: &str) -> Option<(&'static str, String)> {
    let last = key.rsplit('.').next().unwrap_or(key);
    let last = last.split('[').next().unwrap_or(last);
    // `{key}` in an example is the key itself: a hook's example under its
    // own name (`on_spinup = "echo hi"` was told `command = [...]`).
    let (what, example) = match last {
        "state_file" => ("a path", "state_file = \"/var/lib/lull/state.json\""),
        "diskstats" => ("a path", "diskstats = \"/proc/diskstats\""),
        "sysfs" => ("a path", "sysfs = \"/sys\""),
        "activity_dir" => ("a path", "activity_dir = \"/var/lib/lull/activity\""),
        "textfile" => (
            "a path",
            "textfile = \"/var/lib/prometheus/node-exporter/lull.prom\"",
        ),
        "hdparm" => ("an absolute path", "hdparm = \"/usr/sbin/hdparm\""),
        "poll" | "state_interval" | "power_check" | "hook_timeout" | "activity_retention"
        | "interval" | "assume_idle" | "compare_timeout" => (
            "a duration with its unit",
            "\"1s\", \"500ms\", \"10m\" or \"7d\"",
        ),
        "metrics" => (
            "a table",
            "[metrics] on a line of its own, then listen = \"127.0.0.1:9733\" or textfile = \"/var/lib/prometheus/node-exporter/lull.prom\"",
        ),
        "listen" => ("an address or a port", "listen = \"127.0.0.1:9733\""),
        "activity_log" => ("true or false", "activity_log = false"),
        "activity_max_mb" => ("a whole number of megabytes", "activity_max_mb = 64"),
        "max_spindowns_per_day" => ("a whole number", "max_spindowns_per_day = 24"),
        "best_effort" => ("a number between 0 and 1", "best_effort = 0.5"),
        "command" => (
            "a program and its arguments, as a list of strings",
            "command = [\"/usr/sbin/fstrim\", \"-v\", \"/srv\"]",
        ),
        "on_spindown" | "on_spinup" | "on_wake" | "on_task_start" | "on_task_stop" => (
            "a program and its arguments, as a list of strings",
            "{key} = [\"/usr/bin/logger\", \"-t\", \"lull\", \"{key}\"]",
        ),
        "disk" => (
            "tables, one per disk",
            "[[disk]] on a line of its own, then device = \"sdb\"",
        ),
        "job" => (
            "tables, one per job",
            "[[disk.job]] on a line of its own, then name = \"scrub\"",
        ),
        "device" => (
            "a kernel name, a /dev path or a glob",
            "device = \"/dev/disk/by-id/ata-WDC_WD40EFRX-X\"",
        ),
        "network" => (
            "a detector network spec",
            "network = \"auto\" (or \"timer(2B)\")",
        ),
        "task" => ("one of standby, flush, command, jobs", "task = \"standby\""),
        "policy" => ("a stop policy", "policy = \"earlier-of\""),
        "preset" => (
            "a drive preset, optionally with overrides",
            "preset = \"wd-red-plus\"",
        ),
        "backend" => (
            "one of auto, ata16, ata12, scsi, sgio, hdparm",
            "backend = \"auto\"",
        ),
        "name" => ("a string", "name = \"scrub\""),
        "reserve" => ("a reservation", "reserve = \"5m/hour\""),
        _ => return None,
    };
    Some((what, example.replace("{key}", last)))
}

/// A wrong-type message in the file's terms (`None`: not a type error, or
/// an unknown key, whose message is already about the key).
fn wrong_type(key: &str, raw: &str) -> Option<String> {
    let found = raw.strip_prefix("invalid type: ")?;
    let found = found.split(", expected").next().unwrap_or(found);
    let found = match found {
        "sequence" => "a list".to_string(),
        "map" => "a table".to_string(),
        f => {
            let article = |w: &str| {
                if w.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                }
            };
            match f.split_once(' ') {
                Some((kind, value)) => format!("{} {kind} {value}", article(kind)),
                None => format!("{} {f}", article(f)),
            }
        }
    };
    let (what, example) = accepts(key)?;
    Some(format!("takes {what}, not {found}: e.g. {example}"))
}

/// The key prefix of the table line `line` (1-based) is in: `disk[2].`
/// inside the third `[[disk]]`, `metrics.` inside `[metrics]`, nothing at
/// the top level.
pub(super) fn table_prefix(text: &str, line: usize) -> String {
    let mut prefix = String::new();
    let mut disks = 0;
    let mut jobs = 0;
    for l in text.lines().take(line.saturating_sub(1)) {
        let l = l.trim();
        let header = l.split('#').next().unwrap_or("").trim();
        if header.starts_with("[[") {
            let name = header.trim_matches(['[', ']']).trim();
            if name == "disk" {
                prefix = format!("disk[{disks}].");
                disks += 1;
                jobs = 0;
            } else if name == "disk.job" {
                prefix = format!("disk[{}].job[{jobs}].", disks.max(1) - 1);
                jobs += 1;
            } else {
                prefix = format!("{name}.");
            }
        } else if header.starts_with('[') {
            prefix = format!("{}.", header.trim_matches(['[', ']']).trim());
        }
    }
    prefix
}

pub(super) fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.trim().trim_start_matches(':').parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    s.trim().parse::<SocketAddr>().map_err(|_| {
        format!("{s:?} is not an address: write a port (9733, bound to 127.0.0.1) or ADDRESS:PORT")
    })
}

/// Parses and builds a network spec, refusing offline components; returns
/// the network's time scale: the idle length below which it decides
/// nothing and learns nothing ([`lull_core::component::Detector::quiet_below`] of the fresh
/// network: a timer's timeout, `share`'s shortest expert, `auto`'s
/// decision delay; zero when it watches every event).
pub fn check_network(text: &str, registry: &Registry) -> Result<Nanos, String> {
    let spec = NetworkSpec::parse(text, Some(registry)).map_err(|e| e.to_string())?;
    let network = spec.build_online(registry).map_err(|e| e.to_string())?;
    Ok(lull_core::component::Detector::quiet_below(&network))
}

pub(super) fn check_command(argv: &[String]) -> Result<(), String> {
    let Some(prog) = argv.first() else {
        return Err("must name a program: [\"/path/to/program\", \"arg\", …]".into());
    };
    let p = Path::new(prog);
    if !p.is_absolute() {
        return Err(format!(
            "the program must be an absolute path (no PATH search, no shell): {prog:?}"
        ));
    }
    let meta = std::fs::metadata(p).map_err(|e| format!("{prog}: {e}"))?;
    if !meta.is_file() || meta.mode() & 0o111 == 0 {
        return Err(format!("{prog}: not an executable file"));
    }
    if running_as_root() {
        check_not_writable_by_others(p).map_err(|m| format!("refusing the program: {m}"))?;
    }
    Ok(())
}

/// Whether the daemon runs as root (and so must not trust files others can
/// change).
///
/// The effective uid comes from `/proc/self/status` (its `Uid:` line:
/// real, effective, saved, file system), as `geteuid` would give it:
/// this crate links no libc binding. Without `/proc` (where the daemon
/// cannot run: it reads `/proc/diskstats`) it answers yes, the stricter
/// choice.
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").map_or(true, |s| effective_uid(&s) == Some(0))
}

/// The effective uid in a `/proc/PID/status` text.
fn effective_uid(status: &str) -> Option<u32> {
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `path` and every directory above it must be owned by root and not
/// writable by group or others (a sticky directory such as `/tmp` is fine:
/// others cannot replace what root owns in it).
pub fn check_not_writable_by_others(path: &Path) -> Result<(), String> {
    let path = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut cur = Some(path.as_path());
    while let Some(p) = cur {
        let m = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let sticky_dir = m.is_dir() && m.mode() & 0o1000 != 0;
        if m.uid() != 0 {
            return Err(format!(
                "{} is owned by uid {}, not root",
                p.display(),
                m.uid()
            ));
        }
        if !sticky_dir && (m.mode() & 0o002 != 0 || (m.mode() & 0o020 != 0 && m.gid() != 0)) {
            return Err(format!(
                "{} is writable by users other than root (mode {:o})",
                p.display(),
                m.mode() & 0o7777
            ));
        }
        cur = p.parent();
    }
    Ok(())
}
