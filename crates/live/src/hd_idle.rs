//! hd-idle's command line (`HD_IDLE_OPTS`) as hd-idle reads it: which
//! disks it spins down, after how long, with which command. The daemon
//! reads a running hd-idle's options to say which disks it shares with
//! lull ([`crate::preflight::spinners`]); the converter to a lull
//! configuration builds on them ([`crate::admin::from_hd_idle`]).

use std::path::Path;

/// hd-idle's default idle time (10 minutes), used when no `-i` comes before
/// the first `-a`.
pub const HD_IDLE_DEFAULT_IDLE_S: u64 = 600;

/// The spin-down command hd-idle is told to use (`-c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandType {
    /// `-c scsi` (hd-idle's default): SCSI START STOP UNIT.
    Scsi,
    /// `-c ata`: ATA STANDBY through SCSI/ATA translation.
    Ata,
}

impl CommandType {
    pub(crate) fn flag(self) -> &'static str {
        match self {
            CommandType::Scsi => "scsi",
            CommandType::Ata => "ata",
        }
    }
}

/// The settings hd-idle keeps per disk and as its default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `-i`: seconds without I/O before spin-down; 0 never spins down.
    pub idle_s: u64,
    /// `-c`; `None` when not given, where hd-idle sends SCSI START STOP
    /// UNIT (as `-c scsi`) and the conversion leaves lull's `backend` at
    /// its default, `auto`, which probes the disk's transport.
    pub command: Option<CommandType>,
    /// `-p`: the power condition of SCSI START STOP UNIT (0-15).
    pub power_condition: u8,
}

impl Settings {
    /// Whether hd-idle would send a SCSI power condition lull does not
    /// send: `-c scsi` with `-p` other than 0 (a plain stop, which lull
    /// replaces by STANDBY, the condition a disk wakes from at the next
    /// I/O) and 3 (STANDBY itself). With `-c ata`, hd-idle ignores `-p`.
    pub fn needs_power_condition(&self) -> bool {
        self.command_type() == CommandType::Scsi && !matches!(self.power_condition, 0 | 3)
    }

    /// The command hd-idle sends: `-c`, or `scsi` when not given.
    pub fn command_type(&self) -> CommandType {
        self.command.unwrap_or(CommandType::Scsi)
    }
}

/// A disk named with `-a` and the settings that followed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedDisk {
    /// The name as given: a kernel name (`sda`) or a `/dev/…` path.
    pub name: String,
    /// Its settings.
    pub settings: Settings,
    /// Whether an `-i` of its own followed this `-a`. Without one, the two
    /// hd-idles differ: the Go port gives the disk the default entry's
    /// idle time, the C original (Debian's package, 1.05) 600 s.
    pub own_idle: bool,
}

/// hd-idle's options, parsed as hd-idle parses them: `-i`, `-c` and `-p`
/// apply to the disk named by the last `-a`, or before any `-a` to the
/// default entry (which a later `-a` copies).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HdIdleOptions {
    /// The words as given (after removing `HD_IDLE_OPTS=` and `hd-idle`).
    pub words: Vec<String>,
    /// The default entry: every disk not named with `-a`.
    pub default: Settings,
    /// The disks named with `-a`, in order.
    pub disks: Vec<NamedDisk>,
    /// `-s`: 0 resolve links once, 1 retry at run time.
    pub symlink_policy: Option<u8>,
    /// `-l`: hd-idle's spin-up log file.
    pub log_file: Option<String>,
    /// `-I`: send the spin-down command again even to a disk hd-idle
    /// believes already spun down (for disks woken by activity the kernel
    /// does not count, such as SMART queries).
    pub ignore_spin_down_detection: bool,
    /// `-d`: debug output.
    pub debug: bool,
    /// `-spinupscript`: a script hd-idle runs (`/bin/bash SCRIPT DISK`)
    /// when a disk it spun down is busy again.
    pub spinup_script: Option<String>,
    /// `-spindownscript`: a script hd-idle runs (`/bin/bash SCRIPT DISK`)
    /// just before it spins a disk down.
    pub spindown_script: Option<String>,
    /// The first option given that only the Go port has (`-c`, `-p`, `-s`,
    /// `-I`, `-spinupscript`, `-spindownscript`): the C original refuses
    /// them, so these options are the Go port's.
    pub go_port_option: Option<String>,
}

/// Why the options cannot be converted. Every variant names the option.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HdIdleError {
    /// An option hd-idle does not have.
    #[error(
        "unknown hd-idle option {0:?} (known: -a NAME, -i SECONDS, -c ata|scsi, -p 0-15, -s 0|1, -l FILE, -I, -d, -spinupscript PATH, -spindownscript PATH)"
    )]
    UnknownFlag(String),
    /// An option without its value.
    #[error("hd-idle option {flag} needs {what}")]
    MissingValue {
        /// The option.
        flag: String,
        /// What it takes.
        what: &'static str,
    },
    /// An option whose value hd-idle would refuse, or lull cannot take.
    #[error("hd-idle option {flag} {value:?}: {why}")]
    BadValue {
        /// The option.
        flag: String,
        /// Its value.
        value: String,
        /// What is wrong.
        why: String,
    },
    /// An hd-idle option with no lull equivalent that cannot be dropped
    /// without changing what happens to the disks.
    #[error("hd-idle option {flag}: {why}")]
    Unsupported {
        /// The option.
        flag: String,
        /// Why, and what to do instead.
        why: &'static str,
    },
    /// A shell variable among the options (`HD_IDLE_OPTS="$HD_IDLE_OPTS
    /// -a sdc"` in the defaults file): read as written, not expanded.
    #[error(
        "{0:?} is a shell variable, which lull reads as written, not as the shell would expand it: give the options the shell leaves, e.g. lulld --from-hd-idle \"$(. /etc/default/hd-idle; echo \"$HD_IDLE_OPTS\")\""
    )]
    ShellVariable(String),
    /// A quote that is not closed.
    #[error("the hd-idle options have an unclosed {0} quote")]
    Quote(char),
    /// hd-idle's defaults file (`/etc/default/hd-idle`), given instead of
    /// the options, could not be read or sets no `HD_IDLE_OPTS`.
    #[error("{path}: {why}")]
    DefaultsFile {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
}

impl HdIdleError {
    /// The option at fault, if one is.
    pub fn flag(&self) -> Option<&str> {
        match self {
            HdIdleError::UnknownFlag(f) | HdIdleError::ShellVariable(f) => Some(f),
            HdIdleError::MissingValue { flag, .. }
            | HdIdleError::BadValue { flag, .. }
            | HdIdleError::Unsupported { flag, .. } => Some(flag),
            HdIdleError::Quote(_) | HdIdleError::DefaultsFile { .. } => None,
        }
    }
}

/// Splits `text` into words as a shell would (blanks separate words;
/// single quotes, double quotes and backslashes quote).
pub fn split_words(text: &str) -> Result<Vec<String>, HdIdleError> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err(HdIdleError::Quote('\'')),
                    }
                }
            }
            '"' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err(HdIdleError::Quote('"')),
                        },
                        Some(c) => w.push(c),
                        None => return Err(HdIdleError::Quote('"')),
                    }
                }
            }
            '\\' => {
                let w = cur.get_or_insert_with(String::new);
                if let Some(c) = chars.next() {
                    w.push(c);
                }
            }
            c => cur.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(cur);
    Ok(words)
}

/// Parses hd-idle's options. Accepts the bare options (`-i 0 -a sda -i
/// 300`), the line from `/etc/default/hd-idle` (`HD_IDLE_OPTS="…"`), or a
/// command line starting with `hd-idle`.
pub fn parse(text: &str) -> Result<HdIdleOptions, HdIdleError> {
    parse_words(split_words(text)?)
}

/// [`parse`] of words already split: a running hd-idle's arguments
/// (`/proc/PID/cmdline`), for instance.
pub fn parse_words(mut words: Vec<String>) -> Result<HdIdleOptions, HdIdleError> {
    if let Some(rest) = words
        .first()
        .and_then(|w| w.strip_prefix("HD_IDLE_OPTS="))
        .map(str::to_string)
    {
        let mut inner = split_words(&rest)?;
        inner.extend(words.drain(1..));
        words = inner;
    }
    if words
        .first()
        .is_some_and(|w| Path::new(w).file_name().is_some_and(|f| f == "hd-idle"))
    {
        words.remove(0);
    }
    let mut o = HdIdleOptions {
        words: words.clone(),
        default: Settings {
            idle_s: HD_IDLE_DEFAULT_IDLE_S,
            command: None,
            power_condition: 0,
        },
        disks: Vec::new(),
        symlink_policy: None,
        log_file: None,
        ignore_spin_down_detection: false,
        debug: false,
        spinup_script: None,
        spindown_script: None,
        go_port_option: None,
    };
    let mut it = words.iter();
    // hd-idle takes the next word as the value unless it starts with '-'.
    let value = |it: &mut std::slice::Iter<'_, String>, flag: &str, what: &'static str| match it
        .clone()
        .next()
    {
        Some(v) if !v.starts_with('-') => {
            it.next();
            Ok(v.clone())
        }
        _ => Err(HdIdleError::MissingValue {
            flag: flag.to_string(),
            what,
        }),
    };
    let bad = |flag: &str, value: &str, why: &str| HdIdleError::BadValue {
        flag: flag.to_string(),
        value: value.to_string(),
        why: why.to_string(),
    };
    while let Some(flag) = it.next() {
        if matches!(
            flag.as_str(),
            "-c" | "-p" | "-s" | "-I" | "-spinupscript" | "-spindownscript"
        ) && o.go_port_option.is_none()
        {
            o.go_port_option = Some(flag.clone());
        }
        match flag.as_str() {
            "-a" => {
                let name = value(&mut it, flag, "a disk name (sda, /dev/disk/by-id/…)")?;
                if name.contains('/') && !name.starts_with("/dev/") {
                    return Err(bad(
                        flag,
                        &name,
                        "lull names disks by kernel name or by a path under /dev/",
                    ));
                }
                if name.starts_with("/dev/") && name.len() == "/dev/".len() {
                    return Err(bad(flag, &name, "names no disk"));
                }
                o.disks.push(NamedDisk {
                    name,
                    settings: o.default,
                    own_idle: false,
                });
            }
            "-i" => {
                let v = value(&mut it, flag, "an idle time in seconds")?;
                let s: u64 = v
                    .parse()
                    .map_err(|_| bad(flag, &v, "must be a whole number of seconds"))?;
                set(&mut o, |x| x.idle_s = s);
                if let Some(d) = o.disks.last_mut() {
                    d.own_idle = true;
                }
            }
            "-c" => {
                let v = value(&mut it, flag, "a command type: ata or scsi")?;
                let c = match v.as_str() {
                    "ata" => CommandType::Ata,
                    "scsi" => CommandType::Scsi,
                    _ => return Err(bad(flag, &v, "must be ata or scsi")),
                };
                set(&mut o, |s| s.command = Some(c));
            }
            "-p" => {
                let v = value(&mut it, flag, "a power condition from 0 to 15")?;
                let p = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                    Some(hex) => u8::from_str_radix(hex, 16),
                    None => v.parse::<u8>(),
                }
                .ok()
                .filter(|p| *p <= 15)
                .ok_or_else(|| bad(flag, &v, "must be a power condition from 0 to 15"))?;
                set(&mut o, |s| s.power_condition = p);
            }
            "-s" => {
                let v = value(&mut it, flag, "a symlink policy: 0 or 1")?;
                o.symlink_policy = Some(match v.as_str() {
                    "0" => 0,
                    "1" => 1,
                    _ => return Err(bad(flag, &v, "must be 0 or 1")),
                });
            }
            "-l" => o.log_file = Some(value(&mut it, flag, "a log file")?),
            "-I" => o.ignore_spin_down_detection = true,
            "-d" => o.debug = true,
            "-t" | "-T" => {
                return Err(HdIdleError::Unsupported {
                    flag: flag.clone(),
                    why: "spins one disk down (or tests it) and exits: not a daemon setting; drop it (lull's daemon has no one-shot mode)",
                });
            }
            "-h" if o.words.len() == 1 => {
                return Err(HdIdleError::Unsupported {
                    flag: flag.clone(),
                    why: "HD_IDLE_OPTS=\"-h\" is Debian's default, which keeps hd-idle off: it prints its usage and exits, so it spins no disk down and there is nothing to convert. Start from lull's annotated /etc/lull.toml (contrib/lull.toml), or give the options hd-idle was meant to run with",
                });
            }
            "-h" => {
                return Err(HdIdleError::Unsupported {
                    flag: flag.clone(),
                    why: "prints hd-idle's help: not a setting; drop it",
                });
            }
            "-spinupscript" | "-spindownscript" => {
                let v = value(&mut it, flag, "the script's absolute path")?;
                if !v.starts_with('/') {
                    return Err(bad(
                        flag,
                        &v,
                        "must be an absolute path, as hd-idle requires",
                    ));
                }
                if flag == "-spinupscript" {
                    o.spinup_script = Some(v);
                } else {
                    o.spindown_script = Some(v);
                }
            }
            other if other.starts_with('$') => {
                return Err(HdIdleError::ShellVariable(other.to_string()));
            }
            other => return Err(HdIdleError::UnknownFlag(other.to_string())),
        }
    }
    Ok(o)
}

impl HdIdleOptions {
    /// After how many idle seconds an hd-idle run with these options spins
    /// down the disk now named `kernel` (0: never): the settings of the
    /// `-a` entry naming it (its kernel name, `/dev/` and it, or a link
    /// that `resolve` turns into it, as hd-idle resolves it), else the
    /// default entry's for a whole SCSI disk (`sd` and letters, the disks
    /// hd-idle watches) and 0 for any other disk, named or not (hd-idle
    /// reads only the lines of `sd` disks). An `-a` without its own `-i`
    /// under a default of 0 is never spun down by the Go port but after
    /// 600 s by the C original: unless an option only the Go port has says
    /// which runs, 600 (on the side of warning).
    pub fn idle_for(&self, kernel: &str, resolve: &dyn Fn(&str) -> Option<String>) -> u64 {
        // Both hd-idles read only the lines of `sd` disks, whatever `-a`
        // names.
        if sd_suffix(kernel).is_none() {
            return 0;
        }
        let names = |d: &&NamedDisk| {
            d.name == kernel
                || d.name.strip_prefix("/dev/") == Some(kernel)
                || resolve(&d.name).is_some_and(|k| whole_disk(&k) == kernel)
        };
        match self.disks.iter().find(names) {
            Some(d) if !d.own_idle && d.settings.idle_s == 0 && self.go_port_option.is_none() => {
                HD_IDLE_DEFAULT_IDLE_S
            }
            Some(d) => d.settings.idle_s,
            None => self.default.idle_s,
        }
    }
}

/// Applies `f` to the settings `-i`/`-c`/`-p` address now: the last named
/// disk's, or the default's before any `-a`.
fn set(o: &mut HdIdleOptions, f: impl FnOnce(&mut Settings)) {
    match o.disks.last_mut() {
        Some(d) => f(&mut d.settings),
        None => f(&mut o.default),
    }
}

/// The `HD_IDLE_OPTS=…` assignment of hd-idle's defaults file, as the
/// shell that sources it would leave it: the last one that is not a
/// comment (`export` allowed). `None` if there is none.
pub fn options_in_defaults_file(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim_start)
        .map(|l| l.strip_prefix("export ").map_or(l, str::trim_start))
        .rfind(|l| l.starts_with("HD_IDLE_OPTS="))
        .map(|l| l.trim_end().to_string())
}

/// The kernel name a `/dev/…` path points to now, if it resolves to a node
/// directly under `/dev`.
pub fn kernel_name_now(path: &str) -> Option<String> {
    crate::devices::kernel_name(Path::new(path))
}

/// `sd` followed by letters only: a whole SCSI disk's kernel name.
pub(crate) fn sd_suffix(kernel: &str) -> Option<&str> {
    let rest = kernel.strip_prefix("sd")?;
    (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_lowercase())).then_some(rest)
}

/// The whole disk of a kernel name: `sdb1` → `sdb` (hd-idle drops the
/// partition number of a link to a partition); other names unchanged.
pub(crate) fn whole_disk(kernel: &str) -> &str {
    let t = kernel.trim_end_matches(|c: char| c.is_ascii_digit());
    if sd_suffix(t).is_some() { t } else { kernel }
}
