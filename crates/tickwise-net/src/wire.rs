//! The wire format: one versioned, compact message per UDP datagram.
//!
//! Layout (every multi-byte fixed field little-endian; `varint` is unsigned
//! LEB128 as in the replay format, at most 10 bytes, canonical):
//!
//! ```text
//! offset size  field
//! 0      2     magic "TN"
//! 2      1     wire version (2)
//! 3      1     kind: 1 inputs, 2 field hashes, 3 spectator inputs, 4 spectator ack,
//!              5 departure (a leaver's last tick), 6 goodbye, 7 rejoin request,
//!              8 rejoin notice, 9 rejoin notice ack, 10 snapshot chunk,
//!              11 snapshot ack, 12 rejoin refused, 13 watch request,
//!              14 watch reply
//! 4      8     session id (u64 LE, derived from the session key)
//! 12     1     sender slot (players 0..=3, spectators 4..)
//! 13     var   sequence number (varint, strictly increasing per sender)
//! ..     body  per kind, see [`Body`]
//! len-16 16    MAC: keyed BLAKE3 of bytes 0..len-16, first 16 bytes
//! ```
//!
//! [`decode`] checks, in order: the length, the magic, the version, the
//! session id, then the MAC ([`crate::Auth`]); only a datagram whose MAC
//! matches is read any further, so no sequence number, ping, ack, input or
//! checksum of a forged datagram is ever used. `docs/netplay.md` lists the
//! body of every kind byte by byte and what the session does with each kind
//! of bad packet. Decoding never panics and never allocates: inputs stay as
//! encoded bytes inside the datagram until the session decodes them one by
//! one with [`tickwise::ReplayInput`].

use tickwise::codec::Reader;

use crate::auth::{Auth, MAC_LEN};

/// The first two bytes of every message.
pub const WIRE_MAGIC: [u8; 2] = *b"TN";
/// The wire version this build speaks.
pub const WIRE_VERSION: u8 = 2;
/// The largest datagram sent or accepted (the safe UDP payload GGRS also
/// uses), MAC included.
pub const MAX_PACKET: usize = 508;
/// The most bytes before the MAC: what a [`Buf`] holds.
pub const MAX_UNSEALED: usize = MAX_PACKET - MAC_LEN;
/// The shortest datagram that can be authentic: the fixed envelope (13
/// bytes), a one-byte sequence number and the MAC.
pub const MIN_PACKET: usize = 14 + MAC_LEN;
/// The most ticks of input one message carries.
pub const MAX_INPUTS_PER_PACKET: usize = 64;
/// The most checksums one message carries.
pub const MAX_CHECKS_PER_PACKET: usize = 8;
/// The most field hashes one message carries.
pub const MAX_FIELDS_PER_PACKET: usize = 56;

/// Message kinds.
pub(crate) const KIND_INPUTS: u8 = 1;
pub(crate) const KIND_FIELDS: u8 = 2;
pub(crate) const KIND_SPECTATE: u8 = 3;
pub(crate) const KIND_SPECTATOR_ACK: u8 = 4;
pub(crate) const KIND_DEPARTURE: u8 = 5;
pub(crate) const KIND_GOODBYE: u8 = 6;
pub(crate) const KIND_REJOIN: u8 = 7;
pub(crate) const KIND_NOTICE: u8 = 8;
pub(crate) const KIND_NOTICE_ACK: u8 = 9;
pub(crate) const KIND_CHUNK: u8 = 10;
pub(crate) const KIND_CHUNK_ACK: u8 = 11;
pub(crate) const KIND_REFUSE: u8 = 12;
pub(crate) const KIND_WATCH: u8 = 13;
pub(crate) const KIND_WATCH_REPLY: u8 = 14;
/// The sender byte of a watch request (kind 13): a spectator process has
/// no slot until a player admits it and says which one in its reply.
pub const UNASSIGNED_SLOT: u8 = 255;
/// Snapshot bytes per chunk (the last chunk of a snapshot may be shorter).
pub const CHUNK_BYTES: usize = 400;

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
    /// sender byte [`UNASSIGNED_SLOT`]).
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
    raw: &'a [u8],
    n: u8,
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

fn put_varint_buf(out: &mut Buf, mut v: u64) {
    loop {
        #[allow(clippy::cast_possible_truncation, reason = "seven bits at a time")]
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A fixed-size datagram buffer: writing past [`MAX_UNSEALED`] sets an
/// overflow flag instead of allocating or panicking; [`Buf::seal`] then
/// appends the MAC in the last [`MAC_LEN`] bytes.
#[derive(Clone, Debug)]
pub struct Buf {
    data: [u8; MAX_PACKET],
    len: usize,
    overflow: bool,
}

impl Default for Buf {
    fn default() -> Buf {
        Buf::new()
    }
}

impl Buf {
    /// An empty buffer.
    #[must_use]
    pub const fn new() -> Buf {
        Buf {
            data: [0; MAX_PACKET],
            len: 0,
            overflow: false,
        }
    }
    /// Empties it.
    pub const fn clear(&mut self) {
        self.len = 0;
        self.overflow = false;
    }
    /// Appends one byte.
    pub fn push(&mut self, b: u8) {
        match self
            .data
            .get_mut(self.len)
            .filter(|_| self.len < MAX_UNSEALED)
        {
            Some(slot) => {
                *slot = b;
                self.len += 1;
            }
            None => self.overflow = true,
        }
    }
    /// Appends bytes.
    pub fn extend(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(b);
        }
    }
    /// Appends a varint.
    pub fn varint(&mut self, v: u64) {
        put_varint_buf(self, v);
    }
    /// The bytes written.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.data.get(..self.len).unwrap_or(&[])
    }
    /// Bytes written.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }
    /// Nothing written.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Cuts back to `len` bytes (to undo a partial write).
    pub const fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.len = len;
        }
        self.overflow = false;
    }
    /// Overwrites the byte at `at` (a count written before its items).
    pub fn set(&mut self, at: usize, b: u8) {
        if at < self.len
            && let Some(slot) = self.data.get_mut(at)
        {
            *slot = b;
        }
    }
    /// Whether a write did not fit.
    #[must_use]
    pub const fn overflowed(&self) -> bool {
        self.overflow
    }
    /// Appends the MAC of everything written (the datagram is then
    /// complete). Returns `false`, writing nothing, when a write overflowed
    /// or the buffer is already sealed.
    pub fn seal(&mut self, auth: &Auth) -> bool {
        if self.overflow || self.len > MAX_UNSEALED {
            return false;
        }
        let tag = auth.tag(self.bytes());
        match self.data.get_mut(self.len..self.len + MAC_LEN) {
            Some(dst) => {
                dst.copy_from_slice(&tag);
                self.len += MAC_LEN;
                true
            }
            None => false,
        }
    }
}

/// Writes the envelope of a message of `kind`.
pub(crate) fn write_envelope(out: &mut Buf, kind: u8, env: &Envelope) {
    out.clear();
    out.extend(&WIRE_MAGIC);
    out.push(WIRE_VERSION);
    out.push(kind);
    out.extend(&env.session.to_le_bytes());
    out.push(env.sender);
    out.varint(env.seq);
}

fn malformed(what: &'static str) -> impl Fn(tickwise::codec::DecodeError) -> WireError {
    move |_| WireError::Malformed { what }
}

/// Checks a datagram's length, magic, version, session id and MAC, and
/// returns the authenticated bytes (without the MAC). Nothing past the
/// session id is looked at before the MAC matches.
///
/// # Errors
///
/// [`WireError::Oversized`], [`WireError::Malformed`] (cut short or
/// another magic), [`WireError::Version`], [`WireError::WrongSession`],
/// [`WireError::Unauthenticated`]; never panics on any bytes.
pub fn open<'a>(bytes: &'a [u8], auth: &Auth) -> Result<&'a [u8], WireError> {
    if bytes.len() > MAX_PACKET {
        return Err(WireError::Oversized { len: bytes.len() });
    }
    let mut r = Reader::new(bytes);
    let magic = r.array::<2>("magic").map_err(malformed("magic"))?;
    if magic != WIRE_MAGIC {
        return Err(WireError::Malformed { what: "magic" });
    }
    let version = r.u8("version").map_err(malformed("version"))?;
    if version != WIRE_VERSION {
        return Err(WireError::Version { found: version });
    }
    if bytes.len() < MIN_PACKET {
        return Err(WireError::Malformed {
            what: "length (cut short)",
        });
    }
    r.u8("kind").map_err(malformed("kind"))?;
    let session = r.u64_le("session").map_err(malformed("session id"))?;
    if session != auth.session_id() {
        return Err(WireError::WrongSession { found: session });
    }
    let (signed, tag) = bytes.split_at(bytes.len() - MAC_LEN);
    if !auth.check(signed, tag) {
        return Err(WireError::Unauthenticated);
    }
    Ok(signed)
}

/// Decodes a datagram: [`open`] (length, magic, version, session id, MAC),
/// then the authenticated bytes. Every count is checked against this
/// version's limits and the whole datagram must be consumed; `input_len`
/// tells how long one encoded input is (the session's input decoder), so
/// the input section is validated here too.
///
/// # Errors
///
/// A [`WireError`]; never panics on any bytes.
pub fn decode<'a>(
    bytes: &'a [u8],
    auth: &Auth,
    input_len: impl FnMut(&mut Reader<'a>) -> bool,
) -> Result<(Envelope, Body<'a>), WireError> {
    decode_opened(open(bytes, auth)?, input_len)
}

/// Decodes the bytes [`open`] returned (a datagram without its MAC).
///
/// # Errors
///
/// [`WireError::Malformed`], [`WireError::UnknownKind`]; never panics.
fn decode_opened<'a>(
    bytes: &'a [u8],
    mut input_len: impl FnMut(&mut Reader<'a>) -> bool,
) -> Result<(Envelope, Body<'a>), WireError> {
    let mut r = Reader::new(bytes);
    r.array::<3>("magic and version")
        .map_err(malformed("magic"))?;
    let kind = r.u8("kind").map_err(malformed("kind"))?;
    let session = r.u64_le("session").map_err(malformed("session id"))?;
    let sender = r.u8("sender").map_err(malformed("sender"))?;
    let seq = r.varint("seq").map_err(malformed("sequence number"))?;
    let env = Envelope {
        session,
        sender,
        seq,
    };
    let body = match kind {
        KIND_INPUTS => {
            let mut v = [0u64; 6];
            for (slot, what) in v.iter_mut().zip([
                "ack",
                "ping",
                "pong",
                "sim tick",
                "checks ack",
                "input start",
            ]) {
                *slot = r.varint(what).map_err(malformed(what))?;
            }
            let count = r.u8("count").map_err(malformed("input count"))?;
            if usize::from(count) > MAX_INPUTS_PER_PACKET {
                return Err(WireError::Malformed {
                    what: "input count",
                });
            }
            let inputs = take_inputs(&mut r, bytes, usize::from(count), &mut input_len)?;
            let n = r.u8("nchecks").map_err(malformed("check count"))?;
            if usize::from(n) > MAX_CHECKS_PER_PACKET {
                return Err(WireError::Malformed {
                    what: "check count",
                });
            }
            let start = pos(&r);
            for _ in 0..n {
                r.varint("tick").map_err(malformed("check tick"))?;
                r.u64_le("checksum").map_err(malformed("checksum"))?;
            }
            let raw = bytes.get(start..pos(&r)).unwrap_or(&[]);
            Body::Inputs(InputsMsg {
                ack: v[0],
                ping: v[1],
                pong: v[2],
                sim_tick: v[3],
                checks_upto: v[4],
                start: v[5],
                count,
                inputs,
                checks: Checks { raw, n },
            })
        }
        KIND_FIELDS => {
            let tick = r.varint("tick").map_err(malformed("tick"))?;
            let n = r.u8("n").map_err(malformed("field count"))?;
            if usize::from(n) > MAX_FIELDS_PER_PACKET {
                return Err(WireError::Malformed {
                    what: "field count",
                });
            }
            let hashes = r
                .take(usize::from(n) * 8, "hashes")
                .map_err(malformed("field hashes"))?;
            Body::Fields(FieldsMsg { tick, hashes })
        }
        KIND_SPECTATE => {
            let start = r.varint("start").map_err(malformed("input start"))?;
            let count = r.u8("count").map_err(malformed("input count"))?;
            let players = r.u8("players").map_err(malformed("player count"))?;
            if usize::from(count) > MAX_INPUTS_PER_PACKET || !(2..=4).contains(&players) {
                return Err(WireError::Malformed {
                    what: "input or player count",
                });
            }
            let inputs = take_inputs(
                &mut r,
                bytes,
                usize::from(count) * usize::from(players),
                &mut input_len,
            )?;
            Body::Spectate(SpectateMsg {
                start,
                count,
                players,
                inputs,
            })
        }
        KIND_SPECTATOR_ACK => Body::SpectatorAck {
            ack: r.varint("ack").map_err(malformed("ack"))?,
        },
        KIND_DEPARTURE => {
            let leaver = r.u8("leaver").map_err(malformed("leaver"))?;
            let flag = r.u8("settled").map_err(malformed("settled flag"))?;
            if leaver >= 4 || flag > 1 {
                return Err(WireError::Malformed {
                    what: "leaver or settled flag",
                });
            }
            let mut v = [0u64; 3];
            for (slot, what) in v.iter_mut().zip(["held", "end", "input start"]) {
                *slot = r.varint(what).map_err(malformed(what))?;
            }
            let count = r.u8("count").map_err(malformed("input count"))?;
            if usize::from(count) > MAX_INPUTS_PER_PACKET {
                return Err(WireError::Malformed {
                    what: "input count",
                });
            }
            let inputs = take_inputs(&mut r, bytes, usize::from(count), &mut input_len)?;
            Body::Departure(DepartureMsg {
                leaver,
                settled: flag == 1,
                held: v[0],
                end: v[1],
                start: v[2],
                count,
                inputs,
            })
        }
        KIND_GOODBYE => Body::Goodbye,
        KIND_REJOIN => Body::Rejoin {
            epoch: r.u64_le("epoch").map_err(malformed("epoch"))?,
        },
        KIND_NOTICE => {
            let player = r.u8("player").map_err(malformed("player"))?;
            let epoch = r.u64_le("epoch").map_err(malformed("epoch"))?;
            let join = r.varint("join").map_err(malformed("join tick"))?;
            Body::Notice {
                player,
                epoch,
                join,
            }
        }
        KIND_NOTICE_ACK => {
            let player = r.u8("player").map_err(malformed("player"))?;
            let join = r.varint("join").map_err(malformed("join tick"))?;
            Body::NoticeAck { player, join }
        }
        KIND_CHUNK => {
            let epoch = r.u64_le("epoch").map_err(malformed("epoch"))?;
            let join = r.varint("join").map_err(malformed("join tick"))?;
            let total = r.varint("total").map_err(malformed("snapshot length"))?;
            let checksum = r.u64_le("checksum").map_err(malformed("checksum"))?;
            let index = r.varint("index").map_err(malformed("chunk index"))?;
            let data = r
                .take(r.remaining(), "data")
                .map_err(malformed("chunk data"))?;
            if data.len() > CHUNK_BYTES {
                return Err(WireError::Malformed {
                    what: "chunk length",
                });
            }
            Body::Chunk(ChunkMsg {
                epoch,
                join,
                total,
                checksum,
                index,
                data,
            })
        }
        KIND_CHUNK_ACK => Body::ChunkAck {
            epoch: r.u64_le("epoch").map_err(malformed("epoch"))?,
            next: r.varint("next").map_err(malformed("chunk ack"))?,
            have: r.u64_le("have").map_err(malformed("chunk bitmap"))?,
        },
        KIND_REFUSE => {
            let epoch = r.u64_le("epoch").map_err(malformed("epoch"))?;
            let reason = r.u8("reason").map_err(malformed("reason"))?;
            if !(1..=2).contains(&reason) {
                return Err(WireError::Malformed { what: "reason" });
            }
            Body::Refuse {
                epoch,
                reason,
                bytes: r.varint("bytes").map_err(malformed("size"))?,
                limit: r.varint("limit").map_err(malformed("limit"))?,
            }
        }
        KIND_WATCH => Body::Watch {
            epoch: r.u64_le("epoch").map_err(malformed("epoch"))?,
        },
        KIND_WATCH_REPLY => {
            let epoch = r.u64_le("epoch").map_err(malformed("epoch"))?;
            let code = r.u8("code").map_err(malformed("reply code"))?;
            let slot = r.u8("slot").map_err(malformed("slot"))?;
            if code > WATCH_SILENT {
                return Err(WireError::Malformed { what: "reply code" });
            }
            Body::WatchReply(WatchReplyMsg {
                epoch,
                code,
                slot,
                a: r.varint("a").map_err(malformed("reply value"))?,
                b: r.varint("b").map_err(malformed("reply value"))?,
            })
        }
        kind => return Err(WireError::UnknownKind { kind }),
    };
    if r.remaining() != 0 {
        return Err(WireError::Malformed {
            what: "trailing bytes",
        });
    }
    Ok((env, body))
}

/// The reader's position from the start of the datagram.
fn pos(r: &Reader<'_>) -> usize {
    usize::try_from(r.offset()).unwrap_or(usize::MAX)
}

fn take_inputs<'a>(
    r: &mut Reader<'a>,
    bytes: &'a [u8],
    n: usize,
    input_len: &mut impl FnMut(&mut Reader<'a>) -> bool,
) -> Result<&'a [u8], WireError> {
    let start = pos(r);
    for _ in 0..n {
        if !input_len(r) {
            return Err(WireError::Malformed { what: "input" });
        }
    }
    Ok(bytes.get(start..pos(r)).unwrap_or(&[]))
}
