//! Errors of the trace readers and the replay driver.

use std::path::PathBuf;

use thiserror::Error;

/// A trace that could not be read. Every variant names the file and, where
/// it applies, the line or byte offset at fault.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read.
    ///
    /// The message includes the I/O error, so it is not also returned by
    /// `source()` (a chain printer such as anyhow's `{:#}` would print it
    /// twice).
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// A text record is malformed.
    #[error("{}:{line}: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A binary record is malformed.
    #[error("{}: at byte offset {offset}: {message}", path.display())]
    Offset {
        /// The file.
        path: PathBuf,
        /// Byte offset of the record.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// The file as a whole is not a trace lull can read.
    #[error("{}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl TraceError {
    /// A malformed text line.
    pub fn line(path: impl Into<PathBuf>, line: u64, message: impl Into<String>) -> Self {
        TraceError::Line {
            path: path.into(),
            line,
            message: message.into(),
        }
    }
    /// A malformed binary record.
    pub fn offset(path: impl Into<PathBuf>, offset: u64, message: impl Into<String>) -> Self {
        TraceError::Offset {
            path: path.into(),
            offset,
            message: message.into(),
        }
    }
    /// A file-level problem.
    pub fn format(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        TraceError::Format {
            path: path.into(),
            message: message.into(),
        }
    }
    /// An I/O error.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TraceError::Io {
            path: path.into(),
            error: source,
        }
    }
    /// Whether the input is at fault (exit code 2) rather than the system
    /// (exit code 1): everything but I/O errors other than "not found".
    pub fn is_input_error(&self) -> bool {
        match self {
            TraceError::Io { error, .. } => matches!(
                error.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::InvalidData
                    | std::io::ErrorKind::UnexpectedEof
            ),
            _ => true,
        }
    }
}

/// A replay that could not run.
///
/// Messages include the inner error, which is therefore not also returned
/// by `source()` (a chain printer would print it twice).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The network spec is invalid (names the node or column).
    #[error("network: {0}")]
    Network(lull_core::network::NetworkError),
    /// An option is invalid.
    #[error("{0}")]
    Option(String),
    /// The engine refused the event stream (a bug in a reader or
    /// component).
    #[error("engine: {0}")]
    Engine(lull_core::engine::EngineError),
    /// A network's learned state did not go back into a network built
    /// from the same spec (a bug in a component's save or restore).
    #[error("learned state: {0}")]
    Learned(lull_core::learned::LearnedError),
}

impl From<lull_core::network::NetworkError> for ReplayError {
    fn from(e: lull_core::network::NetworkError) -> Self {
        ReplayError::Network(e)
    }
}

impl From<lull_core::engine::EngineError> for ReplayError {
    fn from(e: lull_core::engine::EngineError) -> Self {
        ReplayError::Engine(e)
    }
}
