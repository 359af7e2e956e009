//! What a session reports: its counters, drops by reason, the first
//! desync, why it ended, and what one tick did.

use alloc::vec::Vec;
use core::fmt;

use crate::wire::WireError;

/// Why datagrams were dropped, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drops {
    /// Cut short, bad magic, varint, count or input, trailing bytes.
    pub malformed: u64,
    /// Longer than the packet limit.
    pub oversized: u64,
    /// Another wire version.
    pub version: u64,
    /// A kind this version does not define.
    pub unknown_kind: u64,
    /// From an address or slot that is not a peer of this session.
    pub unknown_peer: u64,
    /// Another session's id.
    pub wrong_session: u64,
    /// The MAC did not match the session key: forged (a spoofed source
    /// address), corrupted on the way, or sealed with another key. Nothing
    /// in such a datagram is used.
    pub unauthenticated: u64,
    /// A sequence number not above the last one seen from that peer: a
    /// duplicate or an older datagram overtaken by a newer one.
    pub stale: u64,
    /// Claims about ticks this session cannot hold yet (inputs past the
    /// input ring, acks of inputs never sent, checksums too far ahead or
    /// of ticks the sender cannot have confirmed, answers to nothing this
    /// session asked (field hashes, rejoin notice or chunk acknowledgements),
    /// a rejoin notice it cannot apply, a sequence number more
    /// than [`MAX_SEQ_JUMP`](crate::config::MAX_SEQ_JUMP) past the last).
    pub far_future: u64,
    /// From a player this session has declared gone (it left, said
    /// goodbye or was silent past the timeout): its inputs no longer count.
    pub departed: u64,
}

impl Drops {
    /// All drops.
    #[must_use]
    pub const fn total(&self) -> u64 {
        self.malformed
            + self.oversized
            + self.version
            + self.unknown_kind
            + self.unknown_peer
            + self.wrong_session
            + self.unauthenticated
            + self.stale
            + self.far_future
            + self.departed
    }
    /// Counts one datagram refused by the wire layer under `e`'s reason.
    pub const fn count(&mut self, e: &WireError) {
        match e {
            WireError::Oversized { .. } => self.oversized += 1,
            WireError::Malformed { .. } => self.malformed += 1,
            WireError::Version { .. } => self.version += 1,
            WireError::UnknownKind { .. } => self.unknown_kind += 1,
            WireError::WrongSession { .. } => self.wrong_session += 1,
            WireError::Unauthenticated => self.unauthenticated += 1,
        }
    }
    /// Drops for bytes that do not decode (malformed, oversized, version, kind).
    #[must_use]
    pub const fn undecodable(&self) -> u64 {
        self.malformed + self.oversized + self.version + self.unknown_kind
    }
}

/// What a session has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Calls to [`Session::tick`](super::Session::tick).
    pub local_ticks: u64,
    /// Rollbacks (restores of an earlier snapshot).
    pub rollbacks: u64,
    /// The deepest rollback, in ticks.
    pub max_rollback: u64,
    /// Ticks run again after rollbacks.
    pub resimulated: u64,
    /// Remote inputs that differed from their prediction.
    pub mispredictions: u64,
    /// Ticks not run because the prediction window was full.
    pub stalls: u64,
    /// Ticks not run to let slower peers catch up (time sync).
    pub sync_waits: u64,
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received (before any check).
    pub received: u64,
    /// Dropped datagrams, by reason.
    pub drops: Drops,
    /// Checksums compared with a peer's.
    pub checks_compared: u64,
    /// Confirmed ticks whose checksums differed.
    pub desyncs: u64,
    /// Peer checksums that arrived after the local one left the history
    /// (not compared).
    pub checks_too_old: u64,
    /// Local inputs not used: given while stalled, or after the delay was lowered.
    pub inputs_dropped: u64,
    /// Confirmed states that were no longer in the snapshot ring when they
    /// were to be checksummed (0 unless something is wrong).
    pub missing_states: u64,
}

/// A checksum mismatch on a confirmed tick.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desync {
    /// The confirmed state's tick (steps run).
    pub tick: u64,
    /// The peer whose checksum differs.
    pub peer: u8,
    /// Our checksum.
    pub local: u64,
    /// The peer's.
    pub remote: u64,
    /// The differing fields, once the peer's field hashes arrived.
    pub fields: Option<Vec<&'static str>>,
}

impl fmt::Display for Desync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "desync at confirmed tick {} with player {}: checksum {:016x} here, {:016x} there",
            self.tick, self.peer, self.local, self.remote
        )?;
        match &self.fields {
            Some(fs) => write!(f, "; fields differ: {}", fs.join(", ")),
            None => f.write_str("; field hashes not received yet"),
        }
    }
}

/// Why a session stopped for good.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// A peer was silent for longer than the disconnect timeout. Sessions
    /// of this version no longer end for that (a silent peer leaves and the
    /// match goes on, see [`Session::departed`](super::Session::departed)); the variant is kept for
    /// front ends that report it.
    Disconnected {
        /// The silent player.
        peer: u8,
        /// The local tick count when it was declared gone.
        at_local_tick: u64,
    },
    /// This peer left the match ([`Session::leave`](super::Session::leave)).
    Left {
        /// The local tick count when it left.
        at_local_tick: u64,
    },
}

impl fmt::Display for SessionEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionEnd::Disconnected {
                peer,
                at_local_tick,
            } => write!(
                f,
                "player {peer} disconnected (silent past the timeout; local tick {at_local_tick})"
            ),
            SessionEnd::Left { at_local_tick } => {
                write!(f, "left the match (local tick {at_local_tick})")
            }
        }
    }
}

/// What one call to [`Session::tick`](super::Session::tick) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickOutcome {
    /// One tick was simulated.
    Advanced,
    /// The prediction window is full: waiting for remote inputs.
    Stalled,
    /// This peer is ahead of the others and skipped a tick to let them catch up.
    SyncWait,
    /// The session reached its stop tick.
    Stopped,
    /// The session ended.
    Ended(SessionEnd),
}
