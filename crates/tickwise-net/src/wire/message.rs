//! The decoded messages: the [`Envelope`] every datagram starts with and
//! the [`Body`] of each kind. Bodies borrow their variable-length parts
//! (inputs, hashes, checksums, snapshot bytes) from the datagram, so
//! decoding never allocates.

use tickwise::codec::Reader;

/// The fixed part of every message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// The session id (derived from the key both sides were given).
    pub session: u64,
    /// The sender's slot.
    pub sender: u8,
    /// The sender's sequence number.
    pub seq: u64,
}

/// A decoded message body. Input bytes are borrowed from the datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// A player's inputs, acks, time-sync data and confirmed checksums.
    Inputs(InputsMsg<'a>),
    /// Per-field hashes of one confirmed tick, sent after a checksum mismatch.
    Fields(FieldsMsg<'a>),
    /// Confirmed inputs of all players, host to spectator.
    Spectate(SpectateMsg<'a>),
    /// A spectator's ack.
    SpectatorAck {
        /// The spectator has every tick below this one.
        ack: u64,
    },
    /// A remaining player's view of a player who left, and the leaver's
    /// inputs relayed to the peers that miss them.
    Departure(DepartureMsg<'a>),
    /// The sender leaves the match (it sends nothing after this).
    Goodbye,
    /// A player process asks to take its slot back.
    Rejoin {
        /// The rejoining process's epoch (a fresh random number per process).
        epoch: u64,
    },
    /// The donor tells a remaining player that `player` plays again from
    /// tick `join` (it was absent since it left).
    Notice {
        /// The rejoining player.
        player: u8,
        /// Its process's epoch.
        epoch: u64,
        /// The first tick with its input again.
        join: u64,
    },
    /// A remaining player has applied a notice.
    NoticeAck {
        /// The rejoining player.
        player: u8,
        /// The tick from the notice.
        join: u64,
    },
    /// One chunk of the confirmed state at `join`, donor to rejoiner.
    Chunk(ChunkMsg<'a>),
    /// The rejoiner holds every chunk below `next`, and chunk `next + 1 + i`
    /// for each bit `i` set in `have`.
    ChunkAck {
        /// The rejoining process's epoch.
        epoch: u64,
        /// See above.
        next: u64,
        /// See above.
        have: u64,
    },
    /// The donor cannot serve a rejoin.
    Refuse {
        /// The rejoining process's epoch.
        epoch: u64,
        /// 1: the sim has no snapshot encoding; 2: its snapshot is over the limit.
        reason: u8,
        /// Reason 2: the snapshot's size in bytes; else 0.
        bytes: u64,
        /// Reason 2: the limit; else 0.
        limit: u64,
    },
    /// A spectator process asks a player to be fed the match (sent with
    /// sender byte [`UNASSIGNED_SLOT`](crate::wire::UNASSIGNED_SLOT)).
    Watch {
        /// The spectator process's epoch (a fresh random number per process).
        epoch: u64,
    },
    /// A player's answer to a spectator: admitted, refused or dropped.
    WatchReply(WatchReplyMsg),
}

/// Body of kind 14, player to spectator:
///
/// ```text
/// epoch  u64 LE  the spectator process's epoch
/// code   u8      0 admitted, 1 full, 2 no snapshot encoding, 3 snapshot over
///                the limit, 4 dropped: too far behind, 5 dropped: silent
/// slot   u8      code 0: the spectator's slot (4..=11); else 0
/// a      varint  0: the snapshot's tick; 1: the cap; 3: the snapshot's size;
///                4: the tick the spectator needs; 5: the timeout in ticks
/// b      varint  0: the ticks a spectator may fall behind; 3: the limit;
///                4: the player's confirmed tick; else 0
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchReplyMsg {
    /// See the layout.
    pub epoch: u64,
    /// See the layout.
    pub code: u8,
    /// See the layout.
    pub slot: u8,
    /// See the layout.
    pub a: u64,
    /// See the layout.
    pub b: u64,
}

/// [`WatchReplyMsg::code`]: admitted.
pub const WATCH_ADMITTED: u8 = 0;
/// [`WatchReplyMsg::code`]: the player serves its cap of spectators.
pub const WATCH_FULL: u8 = 1;
/// [`WatchReplyMsg::code`]: the sim has no snapshot encoding.
pub const WATCH_NO_SNAPSHOT: u8 = 2;
/// [`WatchReplyMsg::code`]: the snapshot is over the player's limit.
pub const WATCH_TOO_LARGE: u8 = 3;
/// [`WatchReplyMsg::code`]: dropped, too far behind the confirmed tick.
pub const WATCH_BEHIND: u8 = 4;
/// [`WatchReplyMsg::code`]: dropped, silent past the timeout.
pub const WATCH_SILENT: u8 = 5;

/// Body of kind 10:
///
/// ```text
/// epoch    u64 LE  the rejoining process's epoch
/// join     varint  the snapshot's tick (the rejoiner plays from it)
/// total    varint  the snapshot's length in bytes
/// checksum u64 LE  the checksum of the sim state it holds
/// index    varint  the chunk's number (its bytes start at index × 400)
/// data     ...     the rest of the datagram: 400 bytes, or the remainder for the last chunk
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkMsg<'a> {
    /// See the layout.
    pub epoch: u64,
    /// See the layout.
    pub join: u64,
    /// See the layout.
    pub total: u64,
    /// See the layout.
    pub checksum: u64,
    /// See the layout.
    pub index: u64,
    /// See the layout.
    pub data: &'a [u8],
}

/// Body of kind 5, sent by a remaining player to each other remaining
/// player while the leaver's last tick is being agreed (docs/netplay.md,
/// "Leaving").
///
/// ```text
/// leaver   u8      the player who left (0..=3)
/// settled  u8      1: the sender has agreed on `end` and holds every input below it; 0 otherwise
/// held     varint  the sender holds the leaver's inputs for ticks < held
/// end      varint  the largest `held` the sender has heard of (its own included)
/// start    varint  first tick of the relayed inputs below
/// count    u8      0..=64 of the leaver's inputs, in the sim's replay input encoding
/// inputs   ...
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepartureMsg<'a> {
    /// See the layout.
    pub leaver: u8,
    /// See the layout.
    pub settled: bool,
    /// See the layout.
    pub held: u64,
    /// See the layout.
    pub end: u64,
    /// See the layout.
    pub start: u64,
    /// See the layout.
    pub count: u8,
    /// The encoded inputs (decoded lazily by the session).
    pub inputs: &'a [u8],
}

/// Body of kind 1.
///
/// ```text
/// ack      varint  the sender holds the receiver's inputs for ticks < ack
/// ping     varint  the sender's local tick counter when sent
/// pong     varint  the latest ping the sender received from the receiver
/// sim_tick varint  the sender's next tick to simulate
/// checks_upto varint  the sender holds the receiver's checksums up to this tick
/// start    varint  first tick of the inputs below
/// count    u8      0..=64 inputs, each in the sim's replay input encoding
/// inputs   ...
/// nchecks  u8      0..=8
/// checks   nchecks × (tick varint, checksum u64 LE)
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputsMsg<'a> {
    /// See the layout.
    pub ack: u64,
    /// See the layout.
    pub ping: u64,
    /// See the layout.
    pub pong: u64,
    /// See the layout.
    pub sim_tick: u64,
    /// See the layout.
    pub checks_upto: u64,
    /// See the layout.
    pub start: u64,
    /// See the layout.
    pub count: u8,
    /// The encoded inputs (decoded lazily by the session).
    pub inputs: &'a [u8],
    /// The checksums: `nchecks × 16`-byte records, already validated.
    pub checks: Checks<'a>,
}

/// Body of kind 2: `tick varint, n u8 (≤ 56), n × hash u64 LE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldsMsg<'a> {
    /// The confirmed tick the hashes describe.
    pub tick: u64,
    /// `n × 8` bytes of hashes.
    pub hashes: &'a [u8],
}

impl FieldsMsg<'_> {
    /// The hashes.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.hashes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
    }
}

/// Body of kind 3: `start varint, count u8 (≤ 64), players u8 (2..=4),
/// count × players inputs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpectateMsg<'a> {
    /// First tick.
    pub start: u64,
    /// Ticks carried.
    pub count: u8,
    /// Players per tick.
    pub players: u8,
    /// The encoded inputs, tick-major.
    pub inputs: &'a [u8],
}

/// Validated checksum records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checks<'a> {
    pub(super) raw: &'a [u8],
    pub(super) n: u8,
}

impl<'a> Checks<'a> {
    /// The `(tick, checksum)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        let mut r = Reader::new(self.raw);
        (0..self.n).map_while(move |_| {
            let t = r.varint("tick").ok()?;
            let c = r.u64_le("checksum").ok()?;
            Some((t, c))
        })
    }
}
