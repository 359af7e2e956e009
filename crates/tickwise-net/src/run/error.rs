//! Why a run could not be carried out: [`RunError`], which wraps the
//! session's, the settings' and a rejoin's errors so a front end has one
//! error type per run.

use crate::config::SessionConfigError;
use crate::rejoin::RejoinError;
use crate::session::SessionError;

/// Why a run could not be carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// A session setting is out of range.
    Config(SessionConfigError),
    /// A session operation failed.
    Session(SessionError),
    /// The desync injection tick must be at least 1 (tick 0 is the initial state).
    InjectAtZero,
    /// A player could not rejoin.
    Rejoin(RejoinError),
    /// A rejoining peer got no snapshot before its deadline.
    RejoinTimeout,
    /// Not one input stream per player.
    Inputs {
        /// Streams given.
        given: usize,
        /// Players in the session.
        players: u8,
    },
}

impl core::fmt::Display for RunError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RunError::Config(e) => write!(f, "{e}"),
            RunError::Session(e) => write!(f, "{e}"),
            RunError::Rejoin(e) => write!(f, "{e}"),
            RunError::RejoinTimeout => f.write_str(
                "rejoin: no snapshot arrived before the deadline (is the match still running, with the same key?)",
            ),
            RunError::InjectAtZero => f.write_str(
                "desync injection tick must be at least 1 (tick 0 is the initial state)",
            ),
            RunError::Inputs { given, players } => write!(
                f,
                "{given} input streams for {players} players: every player needs exactly one"
            ),
        }
    }
}

impl core::error::Error for RunError {}

impl From<SessionConfigError> for RunError {
    fn from(e: SessionConfigError) -> RunError {
        RunError::Config(e)
    }
}

impl From<SessionError> for RunError {
    fn from(e: SessionError) -> RunError {
        RunError::Session(e)
    }
}
