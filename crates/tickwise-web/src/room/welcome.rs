//! The room's `welcome` message, read as docs/rooms.md defines it, and why
//! a room match could not start.

use serde_json::Value;
use tickwise_catalog::{CatalogError, SimInfo};
use tickwise_net::{SessionConfig, SessionError, SessionKey};

use super::MAX_CONFIG_BYTES;

/// Why a room match could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoomPageError {
    /// The `welcome` message is not what docs/rooms.md says.
    Welcome {
        /// The field, or `"json"` for text that is not a JSON object.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The room is for a sim this page does not run, or another version.
    Sim {
        /// The room's sim id.
        id: String,
        /// The room's version.
        version: u64,
        /// The sim this page plays.
        ours_id: &'static str,
        /// Its version.
        ours: u32,
    },
    /// The room's config does not build the sim (the sim's message).
    Config(String),
    /// The match has started and this sim has no snapshot codec
    /// ([`tickwise_catalog::CatalogSim::snapshot_codec`]), so a seat cannot
    /// be taken back.
    NoRejoin {
        /// The sim's id.
        sim: &'static str,
    },
    /// The catalog refused the config as a replay header.
    Catalog(CatalogError),
    /// The session refused its settings.
    Session(SessionError),
}

impl std::fmt::Display for RoomPageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoomPageError::Welcome { field, problem } => {
                write!(f, "room welcome: `{field}` {problem}")
            }
            RoomPageError::Sim {
                id,
                version,
                ours_id,
                ours,
            } => write!(
                f,
                "the room is for sim `{id}` version {version}; this page plays `{ours_id}` version {ours}"
            ),
            RoomPageError::NoRejoin { sim } => write!(
                f,
                "the match has started and sim `{sim}` has no snapshot codec: a seat cannot be taken back"
            ),
            RoomPageError::Config(e) => write!(f, "room config: {e}"),
            RoomPageError::Catalog(e) => write!(f, "room replay header: {e}"),
            RoomPageError::Session(e) => write!(f, "room session: {e}"),
        }
    }
}

impl std::error::Error for RoomPageError {}

impl From<SessionError> for RoomPageError {
    fn from(e: SessionError) -> RoomPageError {
        RoomPageError::Session(e)
    }
}

/// The room's `welcome` message: what this tab plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Welcome {
    /// This tab's seat (player slot).
    pub slot: u8,
    /// Player seats.
    pub players: u8,
    /// The config every member runs.
    pub config: String,
    /// The match's session key.
    pub key: SessionKey,
    /// The stop tick.
    pub ticks: u64,
    /// Checksum exchange interval.
    pub check_every: u64,
    /// Ticks of silence after which a player has left.
    pub disconnect_after: u64,
    /// Whether the match is running (this tab takes its seat back).
    pub started: bool,
}

pub(super) fn bad(field: &'static str, problem: impl Into<String>) -> RoomPageError {
    RoomPageError::Welcome {
        field,
        problem: problem.into(),
    }
}

fn uint(v: &Value, field: &'static str, min: u64, max: u64) -> Result<u64, RoomPageError> {
    let n = v
        .get(field)
        .ok_or_else(|| bad(field, "is missing"))?
        .as_u64()
        .ok_or_else(|| bad(field, "is not a whole number"))?;
    if n < min || n > max {
        return Err(bad(field, format!("is {n}, not in {min}..={max}")));
    }
    Ok(n)
}

impl Welcome {
    /// Reads a `welcome` message for a page that plays `ours` (unknown
    /// fields are ignored, as the protocol asks of clients).
    ///
    /// # Errors
    ///
    /// [`RoomPageError::Welcome`] naming the first bad field;
    /// [`RoomPageError::Sim`] for a room of another sim or version.
    pub fn parse(text: &str, ours: SimInfo) -> Result<Welcome, RoomPageError> {
        let v: Value = serde_json::from_str(text).map_err(|e| bad("json", e.to_string()))?;
        if !v.is_object() {
            return Err(bad("json", "is not an object"));
        }
        if v.get("t").and_then(Value::as_str) != Some("welcome") {
            return Err(bad("t", "is not \"welcome\""));
        }
        if v.get("role").and_then(Value::as_str) != Some("player") {
            return Err(bad(
                "role",
                "is not \"player\" (this page plays, it does not watch)",
            ));
        }
        let id = v.get("sim").and_then(Value::as_str).unwrap_or_default();
        let version = v.get("version").and_then(Value::as_u64).unwrap_or(0);
        if id != ours.id || version != u64::from(ours.version) {
            return Err(RoomPageError::Sim {
                id: id.into(),
                version,
                ours_id: ours.id,
                ours: ours.version,
            });
        }
        let players = uint(&v, "players", 2, 4)?;
        let slot = uint(&v, "slot", 0, players - 1)?;
        let config = v
            .get("config")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("config", "is not a string"))?;
        if config.len() > MAX_CONFIG_BYTES {
            return Err(bad(
                "config",
                format!("is {} bytes, over {MAX_CONFIG_BYTES}", config.len()),
            ));
        }
        let key = v
            .get("sessionKey")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("sessionKey", "is not a string"))?;
        let key = SessionKey::from_hex(key).map_err(|e| bad("sessionKey", e.to_string()))?;
        #[allow(clippy::cast_possible_truncation, reason = "checked above: at most 4")]
        Ok(Welcome {
            slot: slot as u8,
            players: players as u8,
            config: config.into(),
            key,
            ticks: uint(&v, "ticks", 1, 10_000_000)?,
            check_every: uint(&v, "checkEvery", 1, u64::MAX)?,
            disconnect_after: uint(&v, "disconnectAfter", 1, u64::MAX)?,
            started: v
                .get("started")
                .and_then(Value::as_bool)
                .ok_or_else(|| bad("started", "is not a boolean"))?,
        })
    }

    /// The session settings for this tab (input delay and window are the
    /// session's defaults: each player picks its own).
    #[must_use]
    pub const fn session_config(&self) -> SessionConfig {
        let mut sc = SessionConfig::new(self.players, self.slot, self.key);
        sc.stop_at = Some(self.ticks);
        sc.check_every = self.check_every;
        sc.disconnect_after = self.disconnect_after;
        sc
    }
}
