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
    ConfigError {
        file: cx.path.to_path_buf(),
        line,
        key,
        message: e.message().trim().to_string(),
    }
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
    for n in &spec.nodes {
        let names: Vec<&str> = match &n.kind {
            NodeKind::Predictor { start, duration } => std::iter::once(start.name.as_str())
                .chain(duration.iter().map(|d| d.name.as_str()))
                .collect(),
            NodeKind::Skeptic { skeptic, .. } => vec![skeptic.name.as_str()],
        };
        for name in names {
            if registry.info(name).is_some_and(|i| i.offline) {
                return Err(format!(
                    "`{name}` is an offline component (it needs to know the future) and cannot run live"
                ));
            }
        }
    }
    let network = spec.build(registry).map_err(|e| e.to_string())?;
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
pub fn running_as_root() -> bool {
    nix::unistd::geteuid().is_root()
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
