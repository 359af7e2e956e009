//! The create request (`POST /v1/rooms`), parsed and range-checked.

use core::fmt;

use serde::Deserialize;
use tickwise_net::{MAX_PLAYERS, MAX_SPECTATORS, MIN_PLAYERS};

use crate::protocol::{
    DEFAULT_DISCONNECT_AFTER, DEFAULT_TICKS, MAX_CONFIG_BYTES, MAX_CREATE_BYTES, MAX_TICKS,
    ParseError, invalid,
};

/// The body of `POST /v1/rooms`, as sent (before the server checks the
/// sim against its catalog).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateRequest {
    /// The sim id.
    pub sim: String,
    /// The sim version the client expects (checked when given).
    #[serde(default)]
    pub version: Option<u32>,
    /// The sim's config text (`None`: its built-in config).
    #[serde(default)]
    pub config: Option<String>,
    /// Player seats.
    pub players: u8,
    /// Spectator seats.
    #[serde(default)]
    pub spectators: u8,
    /// The match's length in ticks.
    #[serde(default = "default_ticks")]
    pub ticks: u64,
    /// Checksum interval.
    #[serde(default = "one")]
    pub check_every: u64,
    /// Silence limit in ticks.
    #[serde(default = "default_disconnect_after")]
    pub disconnect_after: u64,
}

const fn default_ticks() -> u64 {
    DEFAULT_TICKS
}
const fn one() -> u64 {
    1
}
const fn default_disconnect_after() -> u64 {
    DEFAULT_DISCONNECT_AFTER
}

/// Why a create request was refused (a `400`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CreateError {
    /// The body is over [`MAX_CREATE_BYTES`].
    TooBig {
        /// Its length.
        len: usize,
    },
    /// Not the JSON object of docs/rooms.md.
    Invalid {
        /// serde's description.
        detail: String,
    },
    /// A field out of its range.
    Range {
        /// The field.
        field: &'static str,
        /// The value found.
        found: u64,
        /// The smallest allowed.
        min: u64,
        /// The largest allowed.
        max: u64,
    },
    /// The config is over [`MAX_CONFIG_BYTES`].
    ConfigTooBig {
        /// Its length.
        len: usize,
    },
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateError::TooBig { len } => write!(
                f,
                "a room request of {len} bytes is over the limit of {MAX_CREATE_BYTES} bytes"
            ),
            CreateError::Invalid { detail } => write!(f, "not a room request: {detail}"),
            CreateError::Range {
                field,
                found,
                min,
                max,
            } => write!(f, "{field} is {found}; it must be {min} to {max}"),
            CreateError::ConfigTooBig { len } => write!(
                f,
                "a config of {len} bytes is over the limit of {MAX_CONFIG_BYTES} bytes"
            ),
        }
    }
}

impl core::error::Error for CreateError {}

impl CreateRequest {
    /// Parses and range-checks a create body.
    ///
    /// # Errors
    ///
    /// A [`CreateError`] naming the field.
    pub fn parse(body: &[u8]) -> Result<CreateRequest, CreateError> {
        if body.len() > MAX_CREATE_BYTES {
            return Err(CreateError::TooBig { len: body.len() });
        }
        let r: CreateRequest = serde_json::from_slice(body).map_err(|e| CreateError::Invalid {
            detail: match invalid(e) {
                ParseError::Invalid { detail } => detail,
                ParseError::TooBig { .. } => String::new(),
            },
        })?;
        let range = |field, found: u64, min, max| {
            if found < min || found > max {
                Err(CreateError::Range {
                    field,
                    found,
                    min,
                    max,
                })
            } else {
                Ok(())
            }
        };
        range(
            "players",
            u64::from(r.players),
            u64::from(MIN_PLAYERS),
            u64::from(MAX_PLAYERS),
        )?;
        range(
            "spectators",
            u64::from(r.spectators),
            0,
            u64::from(MAX_SPECTATORS),
        )?;
        range("ticks", r.ticks, 1, MAX_TICKS)?;
        range("checkEvery", r.check_every, 1, MAX_TICKS)?;
        range("disconnectAfter", r.disconnect_after, 1, MAX_TICKS)?;
        if let Some(c) = &r.config
            && c.len() > MAX_CONFIG_BYTES
        {
            return Err(CreateError::ConfigTooBig { len: c.len() });
        }
        Ok(r)
    }
}
