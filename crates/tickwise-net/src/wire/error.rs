//! Why a datagram was dropped: [`WireError`], one variant per reason the
//! session counts separately.

use super::limits::{MAX_PACKET, WIRE_VERSION};

/// Why a datagram was dropped before it reached the session's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Longer than [`MAX_PACKET`].
    Oversized {
        /// Its length.
        len: usize,
    },
    /// Not our magic, cut short, a bad varint or count, or trailing bytes.
    Malformed {
        /// The part that could not be read.
        what: &'static str,
    },
    /// Another wire version.
    Version {
        /// The version byte found.
        found: u8,
    },
    /// A kind byte this version does not define.
    UnknownKind {
        /// The kind byte.
        kind: u8,
    },
    /// Another session's id (another match, or another key).
    WrongSession {
        /// The id found.
        found: u64,
    },
    /// The MAC does not match: forged, corrupted, or sealed with another key.
    Unauthenticated,
}

impl core::fmt::Display for WireError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            WireError::Oversized { len } => {
                write!(
                    f,
                    "datagram of {len} bytes is over the {MAX_PACKET}-byte limit"
                )
            }
            WireError::Malformed { what } => write!(f, "malformed datagram: bad {what}"),
            WireError::Version { found } => write!(
                f,
                "wire version {found} is not supported (this build speaks version {WIRE_VERSION})"
            ),
            WireError::UnknownKind { kind } => write!(f, "unknown message kind {kind}"),
            WireError::WrongSession { found } => {
                write!(f, "datagram of another session (id {found:016x})")
            }
            WireError::Unauthenticated => f.write_str(
                "datagram failed authentication (its MAC does not match this session's key)",
            ),
        }
    }
}

impl core::error::Error for WireError {}

/// Maps a reader error to [`WireError::Malformed`] naming `what`.
pub(super) fn malformed(what: &'static str) -> impl Fn(tickwise::codec::DecodeError) -> WireError {
    move |_| WireError::Malformed { what }
}
