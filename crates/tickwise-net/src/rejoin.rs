//! Rejoin, the rejoining player's side: a [`Rejoiner`] asks every player for
//! its slot back, loads the chunked snapshot the donor sends, checks it,
//! and becomes a [`Session`] at the join tick (docs/netplay.md, "Rejoining").

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use tickwise::codec::Reader;
use tickwise::{ReplayInput, Sim, SnapshotError};

use crate::auth::Auth;
use crate::config::{MAX_PLAYERS, SessionConfig};
use crate::session::{Drops, Session, SessionError, SnapshotCodec};
use crate::transport::{RECV_BUFFER, Transport, drain};
use crate::wire::{
    Body, Buf, CHUNK_BYTES, ChunkMsg, Envelope, KIND_CHUNK_ACK, KIND_REJOIN, decode, write_envelope,
};

/// Why a rejoin failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RejoinError {
    /// The donor's sim has no snapshot encoding.
    NoSnapshotEncoding,
    /// The snapshot is larger than the limit (the donor's or this one's).
    TooLarge {
        /// Its size in bytes.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The snapshot's bytes could not be read into the sim.
    Snapshot(SnapshotError),
    /// The payload around the sim's bytes is malformed.
    Payload {
        /// What is wrong.
        what: &'static str,
    },
    /// The state read back does not have the donor's checksum.
    Checksum {
        /// The donor's.
        expected: u64,
        /// The state's.
        found: u64,
    },
    /// The session could not be made.
    Session(SessionError),
}

impl fmt::Display for RejoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejoinError::NoSnapshotEncoding => f.write_str(
                "rejoin refused: the sim has no snapshot encoding (it does not implement SnapshotBytes)",
            ),
            RejoinError::TooLarge { bytes, limit } => write!(
                f,
                "rejoin refused: the snapshot is {bytes} bytes, over the limit of {limit}"
            ),
            RejoinError::Snapshot(e) => write!(f, "rejoin: {e}"),
            RejoinError::Payload { what } => write!(f, "rejoin: malformed snapshot payload: {what}"),
            RejoinError::Checksum { expected, found } => write!(
                f,
                "rejoin: the loaded state's checksum is {found:016x}, the donor's {expected:016x}"
            ),
            RejoinError::Session(e) => write!(f, "rejoin: {e}"),
        }
    }
}

impl core::error::Error for RejoinError {}

/// Where a rejoin is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejoinProgress {
    /// Asking; no snapshot chunk yet.
    Asking,
    /// Loading the snapshot.
    Loading {
        /// Bytes received.
        received: u64,
        /// The snapshot's size.
        total: u64,
    },
    /// In the match again from this tick: take the session with
    /// [`Rejoiner::take_session`].
    Joined {
        /// The join tick.
        tick: u64,
    },
}

/// A snapshot being received in chunks (a rejoiner's, or a spectator's).
#[derive(Debug)]
pub(crate) struct Incoming {
    pub(crate) donor: u8,
    pub(crate) join: u64,
    pub(crate) total: u64,
    pub(crate) checksum: u64,
    pub(crate) buf: Vec<u8>,
    have: Vec<bool>,
    next: u64,
    pub(crate) received: u64,
}

impl Incoming {
    /// Files chunk `m` from `donor` into `slot`, starting a new snapshot
    /// when it is of another one (allocated once at its declared size,
    /// checked against `max_bytes` first); a chunk of the wrong length or
    /// index is dropped and counted.
    ///
    /// # Errors
    ///
    /// [`RejoinError::TooLarge`] for a snapshot over `max_bytes`.
    pub(crate) fn receive(
        slot: &mut Option<Incoming>,
        donor: u8,
        m: &ChunkMsg<'_>,
        max_bytes: usize,
        drops: &mut Drops,
    ) -> Result<(), RejoinError> {
        let same = slot.as_ref().is_some_and(|i| {
            (i.donor, i.join, i.total, i.checksum) == (donor, m.join, m.total, m.checksum)
        });
        if !same {
            if m.total > max_bytes as u64 {
                return Err(RejoinError::TooLarge {
                    bytes: m.total,
                    limit: max_bytes as u64,
                });
            }
            if m.total == 0 {
                drops.malformed += 1;
                return Ok(());
            }
            let total = usize::try_from(m.total).unwrap_or(usize::MAX);
            let chunks = total.div_ceil(CHUNK_BYTES);
            *slot = Some(Incoming {
                donor,
                join: m.join,
                total: m.total,
                checksum: m.checksum,
                buf: vec![0; total],
                have: vec![false; chunks],
                next: 0,
                received: 0,
            });
        }
        let Some(inc) = slot.as_mut() else {
            return Ok(());
        };
        let Ok(i) = usize::try_from(m.index) else {
            drops.far_future += 1;
            return Ok(());
        };
        let lo = i.saturating_mul(CHUNK_BYTES);
        let hi = inc.buf.len().min(lo.saturating_add(CHUNK_BYTES));
        if i >= inc.have.len() || hi.saturating_sub(lo) != m.data.len() {
            drops.malformed += 1;
            return Ok(());
        }
        if !inc.have[i] {
            inc.have[i] = true;
            inc.buf[lo..hi].copy_from_slice(m.data);
            inc.received += m.data.len() as u64;
        }
        while inc
            .have
            .get(usize::try_from(inc.next).unwrap_or(usize::MAX))
            .copied()
            .unwrap_or(false)
        {
            inc.next += 1;
        }
        Ok(())
    }

    /// Every chunk is in.
    pub(crate) fn complete(&self) -> bool {
        self.next * CHUNK_BYTES as u64 >= self.total
    }

    /// The ack: every chunk below `next` held, and the 64-chunk bitmap past it.
    pub(crate) fn ack(&self) -> (u64, u64) {
        let mut have = 0u64;
        for b in 0..64u64 {
            let k = usize::try_from(self.next + 1 + b).unwrap_or(usize::MAX);
            if self.have.get(k).copied().unwrap_or(false) {
                have |= 1 << b;
            }
        }
        (self.next, have)
    }
}

/// The players absent for good (slot, absent-from tick), from a payload.
pub(crate) type Absent = Vec<(u8, u64)>;

/// Reads the payload header around the sim's bytes (the player count, the
/// players absent for good) and returns them with the sim's bytes.
///
/// # Errors
///
/// [`RejoinError::Payload`] when it is malformed or of another player count.
pub(crate) fn read_payload(
    buf: &[u8],
    players: u8,
    local: Option<u8>,
) -> Result<(Absent, &[u8]), RejoinError> {
    let bad = |what| RejoinError::Payload { what };
    let mut r = Reader::new(buf);
    let n_players = r.u8("players").map_err(|_| bad("player count"))?;
    if n_players != players {
        return Err(bad("player count"));
    }
    let n = r.u8("absent").map_err(|_| bad("absent count"))?;
    if n > players {
        return Err(bad("absent count"));
    }
    let mut absent = Vec::new();
    for _ in 0..n {
        let p = r.u8("player").map_err(|_| bad("absent player"))?;
        let from = r.varint("from").map_err(|_| bad("absent tick"))?;
        if p >= players || Some(p) == local {
            return Err(bad("absent player"));
        }
        absent.push((p, from));
    }
    let rest = r.take(r.remaining(), "state").map_err(|_| bad("state"))?;
    Ok((absent, rest))
}

/// A player process taking its slot back in a running match. Tick it from
/// the game's loop until it reports [`RejoinProgress::Joined`], then drive
/// the [`Session`] it gives.
#[derive(Debug)]
pub struct Rejoiner<S: Sim> {
    sim: Option<S>,
    cfg: SessionConfig,
    codec: SnapshotCodec<S>,
    epoch: u64,
    max_bytes: usize,
    auth: Auth,
    seq: u64,
    last_seq: [Option<u64>; MAX_PLAYERS as usize],
    incoming: Option<Incoming>,
    session: Option<Session<S>>,
    joined: Option<u64>,
    loaded: u64,
    out: Buf,
    rbuf: Vec<u8>,
    drops: Drops,
}

impl<S: Sim + Clone> Rejoiner<S>
where
    S::Input: ReplayInput,
{
    /// A rejoin of slot `cfg.local`: `sim` is built from the match's config
    /// (its state is replaced by the snapshot), `epoch` a number this
    /// process picked at random (a new one per process), `max_bytes` the
    /// largest snapshot accepted.
    ///
    /// # Errors
    ///
    /// [`SessionError::Config`] for a setting out of range.
    pub fn new(
        sim: S,
        cfg: SessionConfig,
        codec: SnapshotCodec<S>,
        epoch: u64,
        max_bytes: usize,
    ) -> Result<Rejoiner<S>, SessionError> {
        cfg.validate()?;
        Ok(Rejoiner {
            sim: Some(sim),
            auth: Auth::new(&cfg.key),
            cfg,
            codec,
            epoch,
            max_bytes,
            seq: 0,
            last_seq: [None; MAX_PLAYERS as usize],
            incoming: None,
            session: None,
            joined: None,
            loaded: 0,
            out: Buf::new(),
            rbuf: vec![0; RECV_BUFFER],
            drops: Drops::default(),
        })
    }

    /// Datagrams dropped so far, by reason.
    #[must_use]
    pub const fn drops(&self) -> &Drops {
        &self.drops
    }

    /// The size of the snapshot loaded (or being loaded), in bytes.
    #[must_use]
    pub const fn snapshot_bytes(&self) -> u64 {
        self.loaded
    }

    /// The session, once joined (once).
    pub fn take_session(&mut self) -> Option<Session<S>> {
        self.session.take()
    }

    /// One tick: reads datagrams, asks for the slot, acknowledges chunks.
    ///
    /// # Errors
    ///
    /// A [`RejoinError`]: refused, too large, or a snapshot that does not
    /// load or check. The rejoiner is done then (start a new one to retry).
    pub fn tick(&mut self, transport: &mut dyn Transport) -> Result<RejoinProgress, RejoinError> {
        if let Some(tick) = self.joined {
            return Ok(RejoinProgress::Joined { tick });
        }
        let mut buf = core::mem::take(&mut self.rbuf);
        let (oversized, result) = drain(transport, &mut buf, |from, bytes| {
            self.handle_datagram(from, bytes)
        });
        self.rbuf = buf;
        self.drops.oversized += oversized;
        result?;
        if self.incoming.as_ref().is_some_and(Incoming::complete) {
            return self.finish();
        }
        self.send(transport);
        Ok(match &self.incoming {
            None => RejoinProgress::Asking,
            Some(i) => RejoinProgress::Loading {
                received: i.received,
                total: i.total,
            },
        })
    }

    /// Handles one datagram from `from` (its slot as the transport knows
    /// it); any bytes are safe: bad ones are dropped and counted, and the
    /// snapshot buffer is never larger than the limit.
    ///
    /// # Errors
    ///
    /// A refusal from the donor, or a snapshot over the limit.
    pub fn handle_datagram(&mut self, from: Option<u8>, bytes: &[u8]) -> Result<(), RejoinError> {
        let decoded = decode(bytes, &self.auth, |r: &mut Reader<'_>| {
            S::Input::decode(r).is_ok()
        });
        let (env, body) = match decoded {
            Ok(x) => x,
            Err(e) => {
                self.drops.count(&e);
                return Ok(());
            }
        };
        let sender = usize::from(env.sender);
        if from != Some(env.sender)
            || env.sender >= self.cfg.players
            || env.sender == self.cfg.local
        {
            self.drops.unknown_peer += 1;
            return Ok(());
        }
        if self.last_seq[sender].is_some_and(|l| env.seq <= l) {
            self.drops.stale += 1;
            return Ok(());
        }
        self.last_seq[sender] = Some(env.seq);
        match body {
            Body::Chunk(m) if m.epoch == self.epoch => self.receive_chunk(env.sender, &m),
            Body::Refuse {
                epoch,
                reason,
                bytes,
                limit,
            } if epoch == self.epoch => Err(if reason == 1 {
                RejoinError::NoSnapshotEncoding
            } else {
                RejoinError::TooLarge { bytes, limit }
            }),
            // Inputs and the rest are for a session, which this is not yet.
            _ => Ok(()),
        }
    }

    fn receive_chunk(&mut self, donor: u8, m: &ChunkMsg<'_>) -> Result<(), RejoinError> {
        Incoming::receive(
            &mut self.incoming,
            donor,
            m,
            self.max_bytes,
            &mut self.drops,
        )?;
        if let Some(i) = &self.incoming {
            self.loaded = i.total;
        }
        Ok(())
    }

    fn env(&mut self) -> Envelope {
        self.seq += 1;
        Envelope {
            session: self.auth.session_id(),
            sender: self.cfg.local,
            seq: self.seq,
        }
    }

    fn send(&mut self, transport: &mut dyn Transport) {
        for p in 0..self.cfg.players {
            if p == self.cfg.local {
                continue;
            }
            let env = self.env();
            write_envelope(&mut self.out, KIND_REJOIN, &env);
            self.out.extend(&self.epoch.to_le_bytes());
            if self.out.seal(&self.auth) {
                transport.send(p, self.out.bytes());
            }
        }
        let Some((donor, (next, have))) = self.incoming.as_ref().map(|i| (i.donor, i.ack())) else {
            return;
        };
        let env = self.env();
        write_envelope(&mut self.out, KIND_CHUNK_ACK, &env);
        self.out.extend(&self.epoch.to_le_bytes());
        self.out.varint(next);
        self.out.extend(&have.to_le_bytes());
        if self.out.seal(&self.auth) {
            transport.send(donor, self.out.bytes());
        }
    }

    fn finish(&mut self) -> Result<RejoinProgress, RejoinError> {
        let Some(inc) = self.incoming.take() else {
            return Ok(RejoinProgress::Asking);
        };
        let (absent, rest) = read_payload(&inc.buf, self.cfg.players, Some(self.cfg.local))?;
        let mut sim = self
            .sim
            .take()
            .ok_or(RejoinError::Payload { what: "state" })?;
        self.codec
            .read(&mut sim, rest)
            .map_err(RejoinError::Snapshot)?;
        let found = sim.checksum();
        if found != inc.checksum {
            return Err(RejoinError::Checksum {
                expected: inc.checksum,
                found,
            });
        }
        let mut session =
            Session::resume_from(sim, inc.join, self.cfg).map_err(RejoinError::Session)?;
        session.adopt_rejoin(&absent, self.seq);
        self.session = Some(session);
        self.joined = Some(inc.join);
        Ok(RejoinProgress::Joined { tick: inc.join })
    }
}
