//! What can go wrong, with the facts a caller needs to explain it.
//!
//! Messages state the limit or the fault, never a command-line flag: the
//! catalog has no idea which front end is calling it. The `tickwise` CLI adds
//! its flag hints on top.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use tickwise::ReplayError;

use crate::units::seconds;

/// Why an inputs file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputsError {
    /// The file is larger than [`MAX_INPUTS_BYTES`](crate::MAX_INPUTS_BYTES).
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The bytes are not JSON.
    NotJson {
        /// The JSON parser's message (with line and column).
        message: String,
    },
    /// The JSON is not an array.
    NotAnArray,
    /// One element is not an input of the sim.
    Element {
        /// Its 0-based index (= the tick it is for).
        index: u64,
        /// What the sim expects, from [`CatalogSim::json_input`](crate::CatalogSim::json_input).
        expected: String,
        /// The element as found, as JSON text (shortened when long).
        found: String,
        /// The player whose array holds it, in a file of one array per
        /// player (`None` in a one-player file's flat form).
        player: Option<usize>,
    },
    /// A file of one array per player holds another number of arrays than
    /// the sim takes players.
    Players {
        /// Arrays in the file.
        found: usize,
        /// Players the sim takes.
        expected: usize,
    },
}

impl fmt::Display for InputsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputsError::TooLarge { bytes, limit } => write!(
                f,
                "inputs file is {bytes} bytes, above the limit of {limit}"
            ),
            InputsError::NotJson { message } => write!(f, "inputs are not valid JSON: {message}"),
            InputsError::NotAnArray => f.write_str(
                "inputs must be a JSON array of one array per player, one element per tick \
                 (a one-player sim also takes a flat array)",
            ),
            InputsError::Element {
                index,
                expected,
                found,
                player: None,
            } => write!(f, "inputs[{index}] must be {expected}, found {found}"),
            InputsError::Element {
                index,
                expected,
                found,
                player: Some(p),
            } => write!(
                f,
                "inputs[{p}][{index}] (player {p}, tick {index}) must be {expected}, found {found}"
            ),
            InputsError::Players { found, expected } => write!(
                f,
                "the inputs file holds {found} player arrays but the sim takes {expected} players"
            ),
        }
    }
}

impl core::error::Error for InputsError {}

/// Why the catalog could not do what was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogError {
    /// The sim under this config takes another number of players, and its
    /// player count cannot be set ([`CatalogSim::config_for_players`](crate::CatalogSim::config_for_players)).
    Players {
        /// The sim id.
        sim: &'static str,
        /// Players the sim takes under the config.
        takes: usize,
        /// Players asked for.
        asked: usize,
    },
    /// A rejoin was asked for and the sim has no snapshot encoding
    /// ([`CatalogSim::snapshot_codec`](crate::CatalogSim::snapshot_codec)).
    NoSnapshot {
        /// The sim id.
        sim: &'static str,
    },
    /// No sim is registered under this id.
    UnknownSim {
        /// The id asked for.
        id: String,
        /// The ids the catalog does have, in registration order.
        known: Vec<&'static str>,
    },
    /// The replay was recorded by another version of the sim. This is not
    /// a forgery: the file may be fine, this build just runs other rules.
    VersionMismatch {
        /// The sim id.
        id: String,
        /// The version in the replay.
        found: u32,
        /// The version this catalog runs.
        supported: u32,
    },
    /// The replay file is malformed or over a reader limit.
    Replay(ReplayError),
    /// A config (given, or embedded in a replay) was refused by its sim.
    Config {
        /// The sim whose parser refused it.
        sim: &'static str,
        /// The sim's message.
        message: String,
    },
    /// The replay's header seed is not the seed its config states.
    SeedMismatch {
        /// The header's seed.
        stored: u64,
        /// The config's seed.
        config: u64,
    },
    /// An inputs file was refused.
    Inputs(InputsError),
    /// Running the sim would cost more than the work limit (checked before
    /// anything runs; units: see [`crate::limits`]).
    TooMuchWork {
        /// Ticks (sim steps) the run would take: a replay's declared ticks,
        /// or every step of a run, re-simulated ones included.
        ticks: u64,
        /// Work units per tick under its config.
        per_tick: u64,
        /// The limit ([`ReplayLimits::max_work`](tickwise::ReplayLimits) or
        /// [`RunLimits::max_work`](crate::RunLimits)).
        limit: u64,
    },
    /// A run would hold more state snapshots in memory than the limit
    /// (a sync test's ring of `rollback + 1` states).
    TooMuchMemory {
        /// Snapshots held at once.
        snapshots: u64,
        /// Estimated bytes per snapshot
        /// ([`CatalogSim::state_bytes`](crate::CatalogSim::state_bytes)).
        bytes_each: u64,
        /// The limit ([`RunLimits::max_snapshot_bytes`](crate::RunLimits)).
        limit: u64,
    },
    /// A recording would make a replay file larger than a verifier with the
    /// given limits reads; refused before running.
    ReplayTooLarge {
        /// Checkpoints the replay would hold.
        checkpoints: u64,
        /// Bytes per checkpoint (a checksum and one hash per state field).
        bytes_each: u64,
        /// The file size limit ([`ReplayLimits::max_file_bytes`](tickwise::ReplayLimits)).
        limit: u64,
    },
    /// A netplay run was refused (a setting out of range).
    Net(tickwise_net::RunError),
    /// Two replays of different sims cannot be compared.
    DifferentSims {
        /// The first replay's sim id.
        a: String,
        /// The second's.
        b: String,
    },
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogError::NoSnapshot { sim } => write!(
                f,
                "{sim} has no snapshot encoding (SnapshotBytes), so a player cannot rejoin its matches"
            ),
            CatalogError::Players { sim, takes, asked } => write!(
                f,
                "{sim} takes {takes} player{} under this config, not {asked}{}",
                if *takes == 1 { "" } else { "s" },
                if *takes == 1 && *asked > 1 {
                    " (it is a one-player sim)"
                } else {
                    ""
                }
            ),
            CatalogError::UnknownSim { id, known } => {
                write!(f, "unknown sim id {id:?} (known: ")?;
                if known.is_empty() {
                    f.write_str("none")?;
                }
                for (i, k) in known.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(k)?;
                }
                f.write_str(")")
            }
            CatalogError::VersionMismatch {
                id,
                found,
                supported,
            } => write!(
                f,
                "replay was recorded by {id} version {found}; this build runs version {supported}"
            ),
            CatalogError::Replay(e) => write!(f, "{e}"),
            CatalogError::Config { sim, message } => write!(f, "invalid {sim} config: {message}"),
            CatalogError::SeedMismatch { stored, config } => write!(
                f,
                "replay header says seed {stored} but its config says {config}"
            ),
            CatalogError::Inputs(e) => write!(f, "{e}"),
            CatalogError::TooMuchWork {
                ticks,
                per_tick,
                limit,
            } => {
                let total = ticks.saturating_mul(*per_tick);
                write!(
                    f,
                    "running {ticks} ticks at {per_tick} work units each ({total} units, about {} s on the reference machine) exceeds the work limit of {limit} (about {} s)",
                    seconds(total),
                    seconds(*limit)
                )
            }
            CatalogError::TooMuchMemory {
                snapshots,
                bytes_each,
                limit,
            } => write!(
                f,
                "{snapshots} state snapshots of about {bytes_each} bytes each ({} bytes) exceed the snapshot memory limit of {limit} bytes",
                snapshots.saturating_mul(*bytes_each)
            ),
            CatalogError::ReplayTooLarge {
                checkpoints,
                bytes_each,
                limit,
            } => write!(
                f,
                "the replay would be more than {} bytes ({checkpoints} checkpoints of {bytes_each} bytes), above the file size limit of {limit} a verifier with the same limits accepts",
                checkpoints.saturating_mul(*bytes_each)
            ),
            CatalogError::DifferentSims { a, b } => {
                write!(f, "cannot compare a {a} replay with a {b} replay")
            }
            CatalogError::Net(e) => write!(f, "netplay: {e}"),
        }
    }
}

/// The wrapping variants are transparent: their text is the inner error's
/// text, so `source` skips to the inner error's own source (a reporter that
/// prints the whole chain then shows each message once).
impl core::error::Error for CatalogError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            CatalogError::Replay(e) => e.source(),
            CatalogError::Inputs(e) => e.source(),
            _ => None,
        }
    }
}

impl From<ReplayError> for CatalogError {
    fn from(e: ReplayError) -> Self {
        CatalogError::Replay(e)
    }
}

impl From<tickwise_net::RunError> for CatalogError {
    fn from(e: tickwise_net::RunError) -> Self {
        CatalogError::Net(e)
    }
}

impl From<InputsError> for CatalogError {
    fn from(e: InputsError) -> Self {
        CatalogError::Inputs(e)
    }
}
