//! The errors of [`Session`](super::Session) operations.

use core::fmt;

use tickwise::ReplayError;

use crate::config::{SPECTATOR_BUFFER, SessionConfigError};

/// Errors of [`Session`](super::Session) operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// A setting is out of range.
    Config(SessionConfigError),
    /// The recorded replay could not be built.
    Replay(ReplayError),
    /// A spectator asked to start at a tick this host no longer buffers.
    SpectatorTooFarBehind {
        /// The spectator slot.
        slot: u8,
        /// The tick it needs next.
        needs: u64,
        /// The oldest tick still buffered.
        oldest: u64,
    },
    /// No such spectator slot on this host.
    NoSuchSpectator {
        /// The slot.
        slot: u8,
    },
    /// Recording was not enabled.
    NotRecording,
    /// A stop tick this peer has already simulated past.
    StopBehind {
        /// The stop tick asked for.
        stop: u64,
        /// The next tick this peer simulates.
        current: u64,
    },
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Config(e) => write!(f, "{e}"),
            SessionError::Replay(e) => write!(f, "recording: {e}"),
            SessionError::SpectatorTooFarBehind {
                slot,
                needs,
                oldest,
            } => write!(
                f,
                "spectator {slot} fell too far behind: it needs tick {needs}, the oldest buffered is {oldest} ({SPECTATOR_BUFFER} ticks are kept)"
            ),
            SessionError::NoSuchSpectator { slot } => {
                write!(f, "slot {slot} is not a spectator of this host")
            }
            SessionError::NotRecording => f.write_str("this session was not recording"),
            SessionError::StopBehind { stop, current } => write!(
                f,
                "cannot stop at tick {stop}: this peer already simulated up to tick {current}"
            ),
        }
    }
}

impl core::error::Error for SessionError {}

impl From<SessionConfigError> for SessionError {
    fn from(e: SessionConfigError) -> SessionError {
        SessionError::Config(e)
    }
}

impl From<ReplayError> for SessionError {
    fn from(e: ReplayError) -> SessionError {
        SessionError::Replay(e)
    }
}
