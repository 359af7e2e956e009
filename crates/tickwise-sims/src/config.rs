//! Strict JSON config reading: every bad value is an error that names its key.
//!
//! Configs are the seeds' flat JSON objects of integers (`"stepMs": 16`).
//! Unknown keys (such as `note`) are allowed; missing keys, wrong types,
//! non-integers and out-of-range values are refused with the key's name.

use alloc::borrow::ToOwned;
use alloc::string::{String, ToString};
use core::fmt;

use serde_json::{Map, Value};

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
            ConfigError::Inconsistent { key, message } => {
                write!(f, "config key `{key}`: {message}")
            }
        }
    }
}

impl core::error::Error for ConfigError {}

/// A parsed JSON object with typed, range-checked accessors.
#[derive(Clone, Debug)]
pub struct ConfigObject {
    map: Map<String, Value>,
}

impl ConfigObject {
    /// Parses `bytes` as a JSON object.
    ///
    /// # Errors
    ///
    /// [`ConfigError::TooLarge`], [`ConfigError::Syntax`] or [`ConfigError::NotAnObject`].
    pub fn parse(bytes: &[u8]) -> Result<ConfigObject, ConfigError> {
        if bytes.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge { bytes: bytes.len() });
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| ConfigError::Syntax {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        match value {
            Value::Object(map) => Ok(ConfigObject { map }),
            _ => Err(ConfigError::NotAnObject),
        }
    }

    /// Whether `key` is present.
    #[must_use]
    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn get(&self, key: &str) -> Result<&Value, ConfigError> {
        self.map.get(key).ok_or_else(|| ConfigError::Missing {
            key: key.to_owned(),
        })
    }

    fn integer(&self, key: &str) -> Result<i128, ConfigError> {
        let v = self.get(key)?;
        let wrong = || ConfigError::WrongType {
            key: key.to_owned(),
            expected: "an integer",
            found: v.to_string(),
        };
        match v {
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .ok_or_else(wrong),
            _ => Err(wrong()),
        }
    }

    /// An integer in `lo..=hi`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Missing`], [`ConfigError::WrongType`] or [`ConfigError::OutOfRange`].
    pub fn int_in(&self, key: &str, lo: i128, hi: i128) -> Result<i128, ConfigError> {
        let v = self.integer(key)?;
        if v < lo || v > hi {
            return Err(ConfigError::OutOfRange {
                key: key.to_owned(),
                expected: alloc::format!("{lo}..={hi}"),
                found: v.to_string(),
            });
        }
        Ok(v)
    }

    /// A `u64` in `lo..=hi`.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::int_in`].
    pub fn u64_in(&self, key: &str, lo: u64, hi: u64) -> Result<u64, ConfigError> {
        let v = self.int_in(key, i128::from(lo), i128::from(hi))?;
        u64::try_from(v).map_err(|_| unreachable_range(key))
    }

    /// A `u32` in `lo..=hi`.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::int_in`].
    pub fn u32_in(&self, key: &str, lo: u32, hi: u32) -> Result<u32, ConfigError> {
        let v = self.int_in(key, i128::from(lo), i128::from(hi))?;
        u32::try_from(v).map_err(|_| unreachable_range(key))
    }

    /// An `i64` in `lo..=hi`.
    ///
    /// # Errors
    ///
    /// As [`ConfigObject::int_in`].
    pub fn i64_in(&self, key: &str, lo: i64, hi: i64) -> Result<i64, ConfigError> {
        let v = self.int_in(key, i128::from(lo), i128::from(hi))?;
        i64::try_from(v).map_err(|_| unreachable_range(key))
    }

    /// A string, when present.
    ///
    /// # Errors
    ///
    /// [`ConfigError::WrongType`] when present but not a string.
    pub fn optional_str(&self, key: &str) -> Result<Option<&str>, ConfigError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(ConfigError::WrongType {
                key: key.to_owned(),
                expected: "a string",
                found: v.to_string(),
            }),
        }
    }
}

fn unreachable_range(key: &str) -> ConfigError {
    // int_in already bounded the value to the target type's range.
    ConfigError::OutOfRange {
        key: key.to_owned(),
        expected: "the type's range".to_owned(),
        found: "?".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_key() {
        let c = ConfigObject::parse(br#"{"a": 1.5, "b": "x", "c": -3, "d": 7}"#).unwrap();
        assert!(
            matches!(c.u64_in("a", 0, 9), Err(ConfigError::WrongType { key, .. }) if key == "a")
        );
        assert!(
            matches!(c.u64_in("b", 0, 9), Err(ConfigError::WrongType { key, .. }) if key == "b")
        );
        assert!(
            matches!(c.u64_in("c", 1, 9), Err(ConfigError::OutOfRange { key, .. }) if key == "c")
        );
        assert!(matches!(c.u64_in("zz", 1, 9), Err(ConfigError::Missing { key }) if key == "zz"));
        assert_eq!(c.u64_in("d", 1, 9), Ok(7));
        let msg = c.u64_in("c", 1, 9).unwrap_err().to_string();
        assert!(
            msg.contains("`c`") && msg.contains("1..=9") && msg.contains("-3"),
            "{msg}"
        );
    }

    #[test]
    fn syntax_and_shape_errors() {
        assert!(matches!(
            ConfigObject::parse(b"{\"a\": }"),
            Err(ConfigError::Syntax { line: 1, .. })
        ));
        assert_eq!(
            ConfigObject::parse(b"[1]").unwrap_err(),
            ConfigError::NotAnObject
        );
        let big = alloc::vec![b' '; MAX_CONFIG_BYTES + 1];
        assert!(matches!(
            ConfigObject::parse(&big),
            Err(ConfigError::TooLarge { .. })
        ));
    }
}
