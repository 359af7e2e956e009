//! What can be wrong with a config, and the limits every config is read under.

use alloc::string::String;
use core::fmt;

/// Keys every config may hold for free text (a string, ignored).
pub const NOTE_KEYS: [&str; 2] = ["note", "$comment"];

/// The largest config file accepted, in bytes. Configs are a few hundred bytes;
/// anything near this is not a config (and a replay embeds its config, so the
/// bound also limits what a hostile replay can make us parse).
pub const MAX_CONFIG_BYTES: usize = 64 * 1024;

/// A config that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// Not valid JSON.
    Syntax {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// Larger than [`MAX_CONFIG_BYTES`].
    TooLarge {
        /// The size given.
        bytes: usize,
    },
    /// Valid JSON, but not an object.
    NotAnObject,
    /// A required key is absent.
    Missing {
        /// The key.
        key: String,
    },
    /// A key holds the wrong JSON type (a string where a number belongs, a float
    /// where an integer belongs).
    WrongType {
        /// The key.
        key: String,
        /// What was expected, e.g. "an integer".
        expected: &'static str,
        /// The offending value, as JSON.
        found: String,
    },
    /// An integer outside the accepted range.
    OutOfRange {
        /// The key.
        key: String,
        /// The accepted range, e.g. "1..=10000".
        expected: String,
        /// The offending value.
        found: String,
    },
    /// A key appears more than once in the object.
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// A key this config does not have (a typo, or a key of another config).
    UnknownKey {
        /// The key.
        key: String,
        /// The known key it most resembles, if any is close.
        suggestion: Option<&'static str>,
    },
    /// Two values that must agree do not.
    Inconsistent {
        /// The key at fault.
        key: String,
        /// Why.
        message: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Syntax {
                line,
                column,
                message,
            } => {
                write!(
                    f,
                    "config is not valid JSON (line {line}, column {column}): {message}"
                )
            }
            ConfigError::TooLarge { bytes } => {
                write!(
                    f,
                    "config is {bytes} bytes, more than the {MAX_CONFIG_BYTES} accepted"
                )
            }
            ConfigError::NotAnObject => f.write_str("config must be a JSON object"),
            ConfigError::Missing { key } => write!(f, "config key `{key}` is missing"),
            ConfigError::WrongType {
                key,
                expected,
                found,
            } => {
                write!(f, "config key `{key}` must be {expected}, found {found}")
            }
            ConfigError::OutOfRange {
                key,
                expected,
                found,
            } => {
                write!(f, "config key `{key}` must be in {expected}, found {found}")
            }
            ConfigError::DuplicateKey { key } => write!(
                f,
                "config key `{key}` appears more than once (readers disagree on which value counts)"
            ),
            ConfigError::UnknownKey { key, suggestion } => {
                write!(f, "config key `{key}` is not a key of this config")?;
                match suggestion {
                    Some(s) => write!(f, "; did you mean `{s}`?"),
                    None => f.write_str(" (free text goes in `note`)"),
                }
            }
            ConfigError::Inconsistent { key, message } => {
                write!(f, "config key `{key}`: {message}")
            }
        }
    }
}

impl core::error::Error for ConfigError {}
