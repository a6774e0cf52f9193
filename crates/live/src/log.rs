//! The daemon's log: one line per event on stderr, and nothing that can
//! stop the daemon.
//!
//! Why not `tracing-subscriber`'s formatter or `eprintln!`: a log pipe
//! breaks (a `tee` dies, journald restarts), and then a write to stderr
//! fails with `EPIPE`. `eprintln!` panics on that error, which killed the
//! daemon. Here every line is written with one `write` whose error is
//! dropped: a lost log line is better than a lost daemon. (Rust starts
//! programs with SIGPIPE ignored, so the failed write is an error, not a
//! signal; child processes get the default disposition back.)
//!
//! Under systemd the lines carry syslog priority prefixes (`<3>` error,
//! `<4>` warning, `<6>` info, `<7>` debug), which journald strips and
//! stores as the entry's priority, so `journalctl -u lull -p err` finds the
//! errors. They are used when `$JOURNAL_STREAM` names the file stderr is
//! (how systemd says stderr goes to the journal), or always with
//! `LULL_LOG_FORMAT=journal`; `LULL_LOG_FORMAT=plain` forces timestamped
//! lines.

use std::fmt::Write as _;
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// How lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `<3>message`: journald reads the priority; it adds its own time.
    Journal,
    /// `2026-11-23T17:06:05.502Z ERROR message`.
    Plain,
}

/// Parses a `LULL_LOG` level: `off`, `error`, `warn`, `info`, `debug`,
/// `trace` (any case).
pub fn parse_level(s: &str) -> Result<LevelFilter, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "off" => Ok(LevelFilter::OFF),
        "error" => Ok(LevelFilter::ERROR),
        "warn" | "warning" => Ok(LevelFilter::WARN),
        "info" => Ok(LevelFilter::INFO),
        "debug" => Ok(LevelFilter::DEBUG),
        "trace" => Ok(LevelFilter::TRACE),
        _ => Err(format!(
            "LULL_LOG={s:?} is not a log level (off, error, warn, info, debug, trace)"
        )),
    }
}

/// Parses `LULL_LOG_FORMAT`: `journal`, `plain`, or empty for automatic.
pub fn parse_format(s: &str) -> Result<Option<Format>, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "" | "auto" => Ok(None),
        "journal" => Ok(Some(Format::Journal)),
        "plain" => Ok(Some(Format::Plain)),
        _ => Err(format!(
            "LULL_LOG_FORMAT={s:?} is not a log format (auto, journal, plain)"
        )),
    }
}

/// Whether stderr is the journal stream systemd announced in
/// `$JOURNAL_STREAM` (`DEVICE:INODE` of the stream).
pub fn stderr_is_journal() -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let Some(want) = std::env::var_os("JOURNAL_STREAM") else {
        return false;
    };
    let Some((dev, ino)) = want.to_str().and_then(|s| s.split_once(':')) else {
        return false;
    };
    let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() else {
        return false;
    };
    let Ok(meta) = std::fs::File::from(fd).metadata() else {
        return false;
    };
    dev.parse() == Ok(meta.dev()) && ino.parse() == Ok(meta.ino())
}

/// The syslog priority of a level.
pub fn priority(level: Level) -> u8 {
    match level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        Level::DEBUG | Level::TRACE => 7,
    }
}

/// A [`Subscriber`] writing one line per event to stderr, ignoring write
/// errors. Spans are not used by the daemon and are ignored.
#[derive(Debug)]
pub struct Logger {
    max: LevelFilter,
    format: Format,
}

impl Logger {
    /// A logger for events at `max` or more severe.
    pub fn new(max: LevelFilter, format: Format) -> Self {
        Logger { max, format }
    }

    /// The line for an event (with its newline).
    pub fn line(&self, level: Level, message: &str) -> String {
        let mut s = String::with_capacity(message.len() + 40);
        match self.format {
            Format::Journal => {
                let _ = write!(s, "<{}>", priority(level));
            }
            Format::Plain => {
                let _ = write!(
                    s,
                    "{} {:>5} ",
                    humantime::format_rfc3339_millis(std::time::SystemTime::now()),
                    level
                );
            }
        }
        // One event, one line: a message with newlines (a command's
        // output) must not forge entries.
        for (i, part) in message.split('\n').enumerate() {
            if i > 0 {
                s.push_str(" \\n ");
            }
            s.push_str(part);
        }
        s.push('\n');
        s
    }
}

struct Message(String);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.insert_str(0, &format!("{value:?}"));
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for Logger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        self.max >= *metadata.level()
    }
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.max)
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        let line = self.line(*event.metadata().level(), &m.0);
        // One write per line, error dropped: see the module docs.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Sets up the daemon's log from `LULL_LOG` (level, default `info`) and
/// `LULL_LOG_FORMAT` (see the module docs). An invalid value is an error
/// naming it, so a typo does not silently hide the debug output it asked
/// for.
pub fn init_logging() -> Result<(), String> {
    let level = match std::env::var("LULL_LOG") {
        Ok(v) if !v.trim().is_empty() => parse_level(&v)?,
        _ => LevelFilter::INFO,
    };
    let format = parse_format(&std::env::var("LULL_LOG_FORMAT").unwrap_or_default())?.unwrap_or(
        if stderr_is_journal() {
            Format::Journal
        } else {
            Format::Plain
        },
    );
    // A second call (tests) keeps the first logger.
    let _ = tracing::subscriber::set_global_default(Logger::new(level, format));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_typos_are_errors() {
        assert_eq!(parse_level("debug"), Ok(LevelFilter::DEBUG));
        assert_eq!(parse_level(" WARN "), Ok(LevelFilter::WARN));
        let e = parse_level("verbose").unwrap_err();
        assert!(e.contains("verbose") && e.contains("trace"), "{e}");
        assert_eq!(parse_format("journal"), Ok(Some(Format::Journal)));
        assert!(parse_format("json").is_err());
    }

    #[test]
    fn journal_lines_carry_the_priority() {
        let l = Logger::new(LevelFilter::INFO, Format::Journal);
        assert_eq!(
            l.line(Level::ERROR, "disk sda: boom"),
            "<3>disk sda: boom\n"
        );
        assert_eq!(l.line(Level::WARN, "w"), "<4>w\n");
        assert_eq!(l.line(Level::INFO, "a\nb"), "<6>a \\n b\n");
        let p = Logger::new(LevelFilter::INFO, Format::Plain).line(Level::WARN, "x");
        assert!(p.ends_with("Z  WARN x\n"), "{p:?}");
    }
}
