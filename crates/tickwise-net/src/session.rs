//! The session core: inputs, prediction, rollback, confirmation, checks.
//!
//! A [`Session`] is driven by the game's fixed ticks: call
//! [`Session::tick`] once per tick of the game's `FixedLoop` with the local
//! player's input for that tick and a [`Transport`]. The session
//!
//! 1. reads every waiting datagram (bad ones are dropped and counted);
//! 2. files the local input `input_delay` ticks ahead;
//! 3. if a remote input that arrived differs from what was predicted,
//!    restores the snapshot of that tick and re-simulates up to the present;
//! 4. confirms every state whose inputs are now all known: only those are
//!    checksummed, recorded, exchanged and compared;
//! 5. runs the next tick on predicted inputs, unless the prediction window
//!    is full (a stall) or this peer is ahead of the others (a time-sync wait);
//! 6. sends its inputs, acks and confirmed checksums.
//!
//! Snapshots are the sim's own `Clone`: saving is `slot.clone_from(&sim)`
//! and restoring is `sim.clone_from(&slot)`, into a ring of `window + 2`
//! slots filled once. A sim whose `clone_from` reuses its buffers (the
//! horde's does) makes saving allocation-free; see `docs/netplay.md`.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use tickwise::replay::ByteReader;
use tickwise::{Replay, ReplayError, ReplayHeader, ReplayInput, ReplayParts, Run, Sim};

mod rejoin;
mod watch;

pub(crate) use rejoin::Serve;
pub use rejoin::SnapshotCodec;

use crate::auth::Auth;
use crate::config::{
    ANCHORS, CHECK_HISTORY, ConfigError, FIRST_SPECTATOR_SLOT, INPUT_RING, MAX_PLAYERS,
    MAX_SEQ_JUMP, SPECTATOR_BUFFER, SessionConfig,
};
use crate::probe::Probe;
use crate::transport::{RECV_BUFFER, Transport};
use crate::wire::{
    Body, Buf, DepartureMsg, Envelope, FieldsMsg, InputsMsg, KIND_DEPARTURE, KIND_FIELDS,
    KIND_GOODBYE, KIND_INPUTS, KIND_SPECTATE, MAX_CHECKS_PER_PACKET, MAX_FIELDS_PER_PACKET,
    MAX_INPUTS_PER_PACKET, MAX_PACKET, MAX_UNSEALED, WATCH_BEHIND, WATCH_SILENT, WireError, decode,
    write_envelope,
};

/// Times a player tells a spectator it dropped it (and once more for each
/// datagram the spectator sends afterwards, at most once a tick).
const DROP_NOTICES: u8 = 8;

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
    /// of ticks the sender cannot have confirmed, a sequence number more
    /// than [`MAX_SEQ_JUMP`] past the last).
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
    /// Calls to [`Session::tick`].
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
    /// match goes on, see [`Session::departed`]); the variant is kept for
    /// front ends that report it.
    Disconnected {
        /// The silent player.
        peer: u8,
        /// The local tick count when it was declared gone.
        at_local_tick: u64,
    },
    /// This peer left the match ([`Session::leave`]).
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

/// What one call to [`Session::tick`] did.
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

/// Errors of [`Session`] operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// A setting is out of range.
    Config(ConfigError),
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

impl From<ConfigError> for SessionError {
    fn from(e: ConfigError) -> SessionError {
        SessionError::Config(e)
    }
}

impl From<ReplayError> for SessionError {
    fn from(e: ReplayError) -> SessionError {
        SessionError::Replay(e)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    Empty,
    Predicted,
    Confirmed,
}

#[derive(Clone, Debug)]
struct InputSlot<I> {
    tick: u64,
    state: SlotState,
    input: I,
}

#[derive(Clone, Debug, Default)]
struct Peer {
    acked: u64,
    last_seq: Option<u64>,
    last_heard: u64,
    remote_tick: u64,
    ping_echo: u64,
    rtt: u64,
    adv16: i64,
    checks_they_have: u64,
    checks_we_have: u64,
    last_compared: u64,
    fields_resend: u8,
}

/// Answers a settled peer gives to departure messages of one player.
const DEPARTURE_REPLIES: u8 = 8;

/// A player declared gone, while the remaining players agree on its last
/// tick with real input (docs/netplay.md, "Leaving").
#[derive(Clone, Copy, Debug, Default)]
struct Away {
    /// The largest `held` heard of, ours included: the agreed end once
    /// every remaining player has been heard.
    end: u64,
    /// Remaining players whose departure message arrived (bit per slot).
    heard: u8,
    /// Remaining players that said they settled (bit per slot).
    done: u8,
    /// Remaining players whose departure message awaits one answer (so a
    /// peer that settled and stopped sending still tells one that did not
    /// hear it), at most [`DEPARTURE_REPLIES`] times each (two settled
    /// peers would otherwise answer each other for good).
    reply: u8,
    /// Answers left per player.
    replies: [u8; MAX_PLAYERS as usize],
    /// Each remaining player's `held`, as last heard.
    held: [u64; MAX_PLAYERS as usize],
    /// Agreed: from tick `end` on this player's input is the absent input.
    settled: bool,
}

#[derive(Clone, Debug, Default)]
struct SpectatorLink {
    active: bool,
    acked: u64,
    last_seq: Option<u64>,
    last_heard: u64,
    error: Option<u64>,
    /// A spectator process admitted over the wire: its epoch, and when.
    epoch: Option<u64>,
    admitted_at: u64,
    /// Its snapshot, while it loads (no inputs are sent until it acks one).
    loading: Option<Serve>,
    /// Why it was dropped (a watch reply code and its two values), and how
    /// many more times to say so.
    dropped: Option<(u8, u64, u64)>,
    notices: u8,
}

/// Live recording of the confirmed run, checkpoints every `every` ticks.
#[derive(Clone, Debug)]
struct LiveRecord<I> {
    header: ReplayHeader,
    /// Each player's confirmed inputs, in slot order.
    runs: Vec<Vec<Run<I>>>,
    names: Vec<&'static str>,
    sums: Vec<u64>,
    fields: Vec<u32>,
}

/// Whether `seq` jumps more than [`MAX_SEQ_JUMP`] past `last` (the first
/// datagram of a sender counts from 0).
const fn seq_jump(last: Option<u64>, seq: u64) -> bool {
    let base = match last {
        Some(l) => l,
        None => 0,
    };
    seq > base.saturating_add(MAX_SEQ_JUMP)
}

fn find<I>(inputs: &[Vec<InputSlot<I>>], player: usize, t: u64) -> Option<&InputSlot<I>> {
    inputs
        .get(player)
        .and_then(|r| r.get(ring(t, INPUT_RING)))
        .filter(|s| s.tick == t && s.state != SlotState::Empty)
}

#[allow(
    clippy::cast_possible_truncation,
    reason = "ring indices are taken modulo small sizes"
)]
const fn ring(t: u64, n: usize) -> usize {
    (t % n as u64) as usize
}

/// A rollback (or lockstep) session for one local player.
///
/// `S` is the sim; it takes one input per player each tick
/// ([`Sim::players`] must equal the session's players), so every player's
/// input reaches the step in its own slot. Inputs travel in their replay
/// encoding ([`ReplayInput`]), so the wire and the replay agree on what an
/// input is.
#[derive(Debug)]
pub struct Session<S: Sim> {
    cfg: SessionConfig,
    sim: S,
    snaps: Vec<Option<(u64, S)>>,
    inputs: Vec<Vec<InputSlot<S::Input>>>,
    known: [u64; MAX_PLAYERS as usize],
    local_last: S::Input,
    current: u64,
    probed: u64,
    first_mis: Option<u64>,
    peers: [Peer; MAX_PLAYERS as usize],
    away: [Option<Away>; MAX_PLAYERS as usize],
    /// Per slot, the epoch of the process that last took it back.
    rejoin_epoch: [Option<u64>; MAX_PLAYERS as usize],
    /// Per slot, the ticks `[from, until)` it was away before it rejoined.
    gap: [Option<(u64, u64)>; MAX_PLAYERS as usize],
    /// The rejoin this peer serves as donor.
    serving: Option<Serve>,
    /// While a rejoin at this tick is being announced, this peer sends no
    /// input for it or later (so no peer can confirm it before it knows).
    gate: Option<u64>,
    /// The sim's snapshot encoding and the largest snapshot served
    /// ([`Session::enable_rejoin`]).
    snap_encode: Option<(SnapshotCodec<S>, usize)>,
    /// Per donor slot, a rejoin notice to acknowledge: the player and tick.
    notice_acks: [Option<(u8, u64)>; MAX_PLAYERS as usize],
    /// A spectator slot to bind the last unknown source to (a watch
    /// request admitted), done by `poll` through the transport.
    pending_admit: Option<u8>,
    /// A watch reply to a spectator that has no slot (or its slot): where
    /// (`None`: the last unknown source), epoch, code, values.
    pending_reply: Option<(Option<u8>, u64, u8, u64, u64)>,
    spectators: Vec<SpectatorLink>,
    spec_buf: Vec<S::Input>,
    probe: Probe,
    nfields: usize,
    hist_tick: Vec<u64>,
    hist_sum: Vec<u64>,
    hist_fields: Vec<u64>,
    pending: Vec<Vec<(u64, u64)>>,
    anchors: Vec<Option<(u64, S)>>,
    frozen: bool,
    desync: Option<Desync>,
    desync_hashes: Vec<(&'static str, u64)>,
    record: Option<LiveRecord<S::Input>>,
    merged: Vec<S::Input>,
    enc: Vec<u8>,
    out: Buf,
    rbuf: Vec<u8>,
    /// The MAC key and session id derived from `cfg.key`.
    auth: Auth,
    seq: u64,
    ended: Option<SessionEnd>,
    stats: SessionStats,
}

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    /// A session starting from `sim` at tick 0.
    ///
    /// # Errors
    ///
    /// [`SessionError::Config`] for a setting out of range.
    pub fn new(sim: S, cfg: SessionConfig) -> Result<Session<S>, SessionError> {
        Session::resume_from(sim, 0, cfg)
    }

    /// A session whose state `sim` is the confirmed state at `tick` (a
    /// player rejoining from a checkpoint: every peer must hold the inputs
    /// from `tick` on).
    ///
    /// # Errors
    ///
    /// [`SessionError::Config`] for a setting out of range.
    pub fn resume_from(sim: S, tick: u64, cfg: SessionConfig) -> Result<Session<S>, SessionError> {
        cfg.validate()?;
        if sim.players() != usize::from(cfg.players) {
            return Err(SessionError::Config(ConfigError::SimPlayers {
                session: cfg.players,
                sim: sim.players(),
            }));
        }
        let mut probe = Probe::new();
        probe.take(&sim);
        let nfields = probe.hashes().len().min(MAX_FIELDS_PER_PACKET);
        let players = usize::from(cfg.players);
        let empty = InputSlot {
            tick: u64::MAX,
            state: SlotState::Empty,
            input: S::Input::default(),
        };
        let mut s = Session {
            snaps: (0..cfg.window as usize + 2).map(|_| None).collect(),
            inputs: (0..players)
                .map(|_| vec![empty.clone(); INPUT_RING])
                .collect(),
            known: [tick; MAX_PLAYERS as usize],
            local_last: S::Input::default(),
            current: tick,
            probed: tick,
            first_mis: None,
            peers: core::array::from_fn(|_| Peer::default()),
            away: [None; MAX_PLAYERS as usize],
            rejoin_epoch: [None; MAX_PLAYERS as usize],
            gap: [None; MAX_PLAYERS as usize],
            serving: None,
            gate: None,
            snap_encode: None,
            notice_acks: [None; MAX_PLAYERS as usize],
            pending_admit: None,
            pending_reply: None,
            spectators: (0..cfg.spectators)
                .map(|_| SpectatorLink::default())
                .collect(),
            spec_buf: if cfg.spectators > 0 {
                vec![S::Input::default(); SPECTATOR_BUFFER * players]
            } else {
                Vec::new()
            },
            probe,
            nfields,
            hist_tick: vec![u64::MAX; CHECK_HISTORY],
            hist_sum: vec![0; CHECK_HISTORY],
            hist_fields: vec![0; CHECK_HISTORY * nfields],
            pending: (0..players)
                .map(|_| vec![(u64::MAX, 0); CHECK_HISTORY])
                .collect(),
            anchors: (0..ANCHORS).map(|_| None).collect(),
            frozen: false,
            desync: None,
            desync_hashes: Vec::new(),
            record: None,
            merged: vec![S::Input::default(); players],
            enc: Vec::with_capacity(MAX_PACKET),
            out: Buf::new(),
            rbuf: vec![0; RECV_BUFFER],
            auth: Auth::new(&cfg.key),
            seq: 0,
            ended: None,
            stats: SessionStats::default(),
            cfg,
            sim,
        };
        for p in &mut s.peers {
            p.acked = tick;
        }
        // The local player's first `input_delay` ticks have the default input.
        let local = usize::from(cfg.local);
        for t in tick..tick + u64::from(cfg.input_delay) {
            s.set_input(local, t, S::Input::default(), SlotState::Confirmed);
        }
        s.known[local] = tick + u64::from(cfg.input_delay);
        s.keep_anchor(tick);
        Ok(s)
    }

    /// Records the confirmed run as a replay with `header` (its `ticks` and
    /// `input_kind` are set here), a checkpoint every
    /// `header.checkpoint_every` ticks. Call before the first tick. The
    /// recording grows with the session (it is the replay).
    ///
    /// # Errors
    ///
    /// [`SessionError::Replay`] for a zero checkpoint interval.
    pub fn start_recording(&mut self, mut header: ReplayHeader) -> Result<(), SessionError> {
        if header.checkpoint_every == 0 {
            return Err(SessionError::Replay(ReplayError::LengthOutOfRange {
                what: "checkpoint interval",
                declared: 0,
                min: 1,
                max: u64::MAX,
            }));
        }
        header.ticks = 0;
        header.input_kind = S::Input::KIND;
        header.players = self.cfg.players;
        self.record = Some(LiveRecord {
            header,
            runs: (0..self.cfg.players).map(|_| Vec::new()).collect(),
            names: self.probe_names(),
            sums: Vec::new(),
            fields: Vec::new(),
        });
        Ok(())
    }

    fn probe_names(&mut self) -> Vec<&'static str> {
        self.probe.take(&self.sim);
        self.probe.names().to_vec()
    }

    /// The settings.
    #[must_use]
    pub const fn config(&self) -> &SessionConfig {
        &self.cfg
    }

    /// The current (possibly predicted) state, for rendering.
    #[must_use]
    pub const fn sim(&self) -> &S {
        &self.sim
    }

    /// The next tick to simulate.
    #[must_use]
    pub const fn current_tick(&self) -> u64 {
        self.current
    }

    /// The newest confirmed state's tick: every input before it is known
    /// and its state has been checksummed and recorded.
    #[must_use]
    pub const fn confirmed_tick(&self) -> u64 {
        self.probed
    }

    /// Counters.
    #[must_use]
    pub const fn stats(&self) -> &SessionStats {
        &self.stats
    }

    /// The first desync seen, if any.
    #[must_use]
    pub const fn desync(&self) -> Option<&Desync> {
        self.desync.as_ref()
    }

    /// Why the session ended, if it did.
    #[must_use]
    pub const fn ended(&self) -> Option<SessionEnd> {
        self.ended
    }

    /// The estimated round trip to `peer`, in local ticks.
    #[must_use]
    pub fn rtt_ticks(&self, peer: u8) -> u64 {
        self.peers.get(usize::from(peer)).map_or(0, |p| p.rtt)
    }

    /// Changes the local input delay from the next tick on. Raising it
    /// repeats the last input to fill the gap; lowering it drops the next
    /// inputs until the schedule has caught up. Either way every tick gets
    /// exactly one local input, sent once and never changed.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InputDelay`] over the limit.
    pub const fn set_input_delay(&mut self, delay: u32) -> Result<(), ConfigError> {
        if delay > crate::config::MAX_INPUT_DELAY {
            return Err(ConfigError::InputDelay { found: delay });
        }
        self.cfg.input_delay = delay;
        Ok(())
    }

    /// Ends the match at `tick` (a game's "end of round"), in a session
    /// started without a stop tick or with a later one: from then on it
    /// simulates up to `tick` only and keeps exchanging datagrams so that
    /// every peer confirms it; [`Session::is_finished`] says when this one
    /// has. Every peer must be given the same tick (the match's end is part
    /// of the game, agreed like any other rule), or their final confirmed
    /// states differ.
    ///
    /// # Errors
    ///
    /// [`SessionError::StopBehind`] when this peer already simulated past
    /// `tick` (its states beyond it were predictions, and a session never
    /// un-simulates); nothing changes then.
    pub const fn set_stop_at(&mut self, tick: u64) -> Result<(), SessionError> {
        if tick < self.current {
            return Err(SessionError::StopBehind {
                stop: tick,
                current: self.current,
            });
        }
        self.cfg.stop_at = Some(tick);
        Ok(())
    }

    /// Whether the session reached its stop tick and confirmed it.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.cfg
            .stop_at
            .is_some_and(|s| self.current >= s && self.probed >= s)
    }

    /// The oldest local input still needed: not yet confirmed, or not yet
    /// acknowledged by a peer.
    fn oldest_local(&self) -> u64 {
        let mut o = self.probed;
        for p in 0..self.cfg.players {
            if p != self.cfg.local && self.away[usize::from(p)].is_none() {
                o = o.min(self.peers[usize::from(p)].acked);
            }
        }
        o
    }

    fn set_input(&mut self, player: usize, t: u64, input: S::Input, state: SlotState) {
        if let Some(slot) = self
            .inputs
            .get_mut(player)
            .and_then(|r| r.get_mut(ring(t, INPUT_RING)))
        {
            slot.tick = t;
            slot.state = state;
            slot.input = input;
        }
    }

    fn slot(&self, player: usize, t: u64) -> Option<&InputSlot<S::Input>> {
        find(&self.inputs, player, t)
    }

    fn min_known(&self) -> u64 {
        self.known[..usize::from(self.cfg.players)]
            .iter()
            .zip(&self.away)
            .filter(|(_, a)| !a.is_some_and(|a| a.settled))
            .map(|(k, _)| *k)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// From this tick on, player `p`'s input is the absent input: it left
    /// and the remaining players agreed on its last tick.
    fn absent_from(&self, p: usize) -> Option<u64> {
        self.away
            .get(p)
            .copied()
            .flatten()
            .filter(|a| a.settled)
            .map(|a| a.end)
    }

    /// Whether player `p`'s input at tick `t` is the absent input: it left
    /// before `t` (agreed), or `t` is in the ticks it was away before it
    /// rejoined.
    fn absent(&self, p: usize, t: u64) -> bool {
        self.absent_from(p).is_some_and(|e| t >= e)
            || self
                .gap
                .get(p)
                .copied()
                .flatten()
                .is_some_and(|(from, until)| from <= t && t < until)
    }

    /// The first tick from which player `p` (who left) plays the absent
    /// input, once the remaining players agreed on it.
    #[must_use]
    pub fn departed(&self, p: u8) -> Option<u64> {
        self.absent_from(usize::from(p))
    }

    /// Whether player `p` has been declared gone (it may still be waiting
    /// for the agreement on its last tick).
    #[must_use]
    pub fn is_away(&self, p: u8) -> bool {
        self.away.get(usize::from(p)).is_some_and(Option::is_some)
    }

    /// Leaves the match: says goodbye to every other player (one datagram
    /// each; the silence timeout covers a lost one) and ends this session
    /// ([`SessionEnd::Left`]). The others go on without this player.
    pub fn leave(&mut self, transport: &mut dyn Transport) {
        if self.ended.is_some() {
            return;
        }
        for p in 0..self.cfg.players {
            if p == self.cfg.local || self.away[usize::from(p)].is_some() {
                continue;
            }
            let env = self.env();
            write_envelope(&mut self.out, KIND_GOODBYE, &env);
            if self.out.seal(&self.auth) {
                transport.send(p, self.out.bytes());
                self.stats.sent += 1;
            }
        }
        self.ended = Some(SessionEnd::Left {
            at_local_tick: self.stats.local_ticks,
        });
    }

    /// The remaining players other than this one and `p` (bit per slot).
    fn remaining_except(&self, p: usize) -> u8 {
        let mut m = 0u8;
        for q in 0..usize::from(self.cfg.players) {
            if q != p && q != usize::from(self.cfg.local) && self.away[q].is_none() {
                m |= 1 << q;
            }
        }
        m
    }

    /// Declares player `p` gone: its inputs stop counting at what this
    /// peer holds now, and the agreement on its last tick starts.
    fn declare_away(&mut self, p: usize) {
        if p == usize::from(self.cfg.local) || p >= usize::from(self.cfg.players) {
            return;
        }
        if self.away[p].is_some() {
            return;
        }
        self.away[p] = Some(Away {
            end: self.known[p],
            replies: [DEPARTURE_REPLIES; MAX_PLAYERS as usize],
            ..Away::default()
        });
        // Another player's agreement may have been waiting for p.
        for q in 0..usize::from(self.cfg.players) {
            self.try_settle(q);
        }
    }

    /// Settles the agreement on `p`'s last tick once every remaining player
    /// has been heard and every input up to the agreed end is held.
    fn try_settle(&mut self, p: usize) {
        let rem = self.remaining_except(p);
        let known = self.known[p];
        let Some(a) = self.away.get_mut(p).and_then(Option::as_mut) else {
            return;
        };
        if a.settled || a.heard & rem != rem || known < a.end {
            return;
        }
        a.settled = true;
        let end = a.end;
        // Ticks from `end` on were predicted with the leaver's last input;
        // they are run again with the absent input.
        if end < self.current {
            self.first_mis = Some(self.first_mis.map_or(end, |f| f.min(end)));
        }
    }

    /// Runs one of the game's ticks (see the module docs).
    pub fn tick(&mut self, local_input: &S::Input, transport: &mut dyn Transport) -> TickOutcome {
        self.stats.local_ticks += 1;
        self.poll(transport);
        self.check_timeouts();
        if let Some(end) = self.ended {
            return TickOutcome::Ended(end);
        }
        self.add_local(local_input);
        self.rollback();
        self.confirm();
        let outcome = if self.cfg.stop_at.is_some_and(|s| self.current >= s) {
            TickOutcome::Stopped
        } else if self.current >= self.min_known() + u64::from(self.cfg.window) {
            self.stats.stalls += 1;
            TickOutcome::Stalled
        } else if self.should_wait() {
            self.stats.sync_waits += 1;
            TickOutcome::SyncWait
        } else {
            self.step_tick();
            self.confirm();
            TickOutcome::Advanced
        };
        self.send_all(transport);
        outcome
    }

    fn add_local(&mut self, input: &S::Input) {
        let me = usize::from(self.cfg.local);
        let target = self.current + u64::from(self.cfg.input_delay);
        let limit = self.oldest_local() + INPUT_RING as u64;
        while self.known[me] < target && self.known[me] < limit {
            let t = self.known[me];
            self.set_input(me, t, self.local_last.clone(), SlotState::Confirmed);
            self.known[me] += 1;
        }
        if self.known[me] == target && target < limit {
            self.set_input(me, target, input.clone(), SlotState::Confirmed);
            self.local_last.clone_from(input);
            self.known[me] += 1;
        } else if self.known[me] > target {
            self.stats.inputs_dropped += 1;
        }
    }

    /// Fills `self.merged` for tick `t`: known inputs, or the last known one.
    fn gather(&mut self, t: u64) {
        for p in 0..usize::from(self.cfg.players) {
            if self.absent(p, t) {
                self.merged[p] = S::Input::default();
                continue;
            }
            let known = self.known[p];
            if t < known {
                if let Some(s) = self.slot(p, t) {
                    let input = s.input.clone();
                    self.merged[p] = input;
                }
            } else {
                let last = if known == 0 {
                    None
                } else {
                    self.slot(p, known - 1).map(|s| s.input.clone())
                };
                let predicted = last.unwrap_or_default();
                self.set_input(p, t, predicted.clone(), SlotState::Predicted);
                self.merged[p] = predicted;
            }
        }
    }

    fn step_tick(&mut self) {
        let t = self.current;
        if self.cfg.window > 0 {
            let i = ring(t, self.snaps.len());
            match &mut self.snaps[i] {
                Some((tick, snap)) => {
                    *tick = t;
                    snap.clone_from(&self.sim);
                }
                slot @ None => *slot = Some((t, self.sim.clone())),
            }
        }
        self.gather(t);
        self.sim.step(&self.merged);
        self.current += 1;
    }

    fn rollback(&mut self) {
        let Some(t) = self.first_mis.take() else {
            return;
        };
        if t >= self.current {
            return;
        }
        let i = ring(t, self.snaps.len());
        let Some((tick, snap)) = &self.snaps[i] else {
            return;
        };
        if *tick != t {
            return;
        }
        self.sim.clone_from(snap);
        let depth = self.current - t;
        let end = self.current;
        self.current = t;
        self.stats.rollbacks += 1;
        self.stats.max_rollback = self.stats.max_rollback.max(depth);
        self.stats.resimulated += depth;
        while self.current < end {
            self.step_tick();
        }
    }

    fn should_wait(&self) -> bool {
        if !self.stats.local_ticks.is_multiple_of(3) {
            return false;
        }
        let mut ahead = i64::MIN;
        for p in 0..self.cfg.players {
            if p != self.cfg.local && self.away[usize::from(p)].is_none() {
                ahead = ahead.max(self.peers[usize::from(p)].adv16);
            }
        }
        ahead >= 2 * 16
    }

    /// Confirms every state whose inputs are all known.
    fn confirm(&mut self) {
        let c = self.min_known().min(self.current);
        while self.probed < c {
            let s = self.probed + 1;
            let t = s - 1;
            // Tick t's confirmed input, for the replay and spectators.
            for p in 0..usize::from(self.cfg.players) {
                if self.absent(p, t) {
                    self.merged[p] = S::Input::default();
                } else if let Some(slot) = self.slot(p, t) {
                    let input = slot.input.clone();
                    self.merged[p] = input;
                }
            }
            if self.cfg.spectators > 0 {
                let n = usize::from(self.cfg.players);
                let base = ring(t, SPECTATOR_BUFFER) * n;
                for p in 0..n {
                    self.spec_buf[base + p].clone_from(&self.merged[p]);
                }
            }
            let record_due = self
                .record
                .as_ref()
                .map(|r| s.is_multiple_of(r.header.checkpoint_every));
            if let Some(r) = &mut self.record {
                for (runs, input) in r.runs.iter_mut().zip(&self.merged) {
                    match runs.last_mut() {
                        Some(run) if run.input == *input => run.len += 1,
                        _ => runs.push(Run {
                            len: 1,
                            input: input.clone(),
                        }),
                    }
                }
                r.header.ticks = s;
            }
            let check_due = s.is_multiple_of(self.cfg.check_every);
            let anchor_due = s.is_multiple_of(self.cfg.anchor_every);
            // The state is always there (the ring covers the window); if it
            // ever were not, nothing is stored, so a gap shows up as an
            // error when the replay is built, never as a wrong checksum.
            let wanted = check_due || record_due == Some(true) || anchor_due;
            if wanted && !self.probe_state(s) {
                self.stats.missing_states += 1;
            } else if wanted {
                if record_due == Some(true)
                    && let Some(r) = &mut self.record
                {
                    r.sums.push(self.probe.checksum());
                    #[allow(clippy::cast_possible_truncation, reason = "the low half")]
                    r.fields
                        .extend(self.probe.hashes().iter().map(|&h| h as u32));
                }
                if check_due {
                    self.store_check(s);
                }
                if anchor_due {
                    self.keep_anchor(s);
                }
            }
            self.probed = s;
            self.snapshot_if_joining(s);
        }
    }

    /// The confirmed state `s` (the live sim or a snapshot).
    fn state(&self, s: u64) -> Option<&S> {
        if s == self.current {
            return Some(&self.sim);
        }
        match self.snaps.get(ring(s, self.snaps.len().max(1))) {
            Some(Some((t, snap))) if *t == s => Some(snap),
            _ => None,
        }
    }

    fn probe_state(&mut self, s: u64) -> bool {
        let Self {
            probe,
            sim,
            snaps,
            current,
            ..
        } = self;
        if s == *current {
            probe.take(sim);
            return true;
        }
        if let Some(Some((t, snap))) = snaps.get(ring(s, snaps.len().max(1)))
            && *t == s
        {
            probe.take(snap);
            return true;
        }
        false
    }

    fn keep_anchor(&mut self, s: u64) {
        if self.frozen {
            return;
        }
        let Self {
            anchors,
            sim,
            snaps,
            current,
            ..
        } = self;
        let src = if s == *current {
            Some(&*sim)
        } else {
            match snaps.get(ring(s, snaps.len().max(1))) {
                Some(Some((t, snap))) if *t == s => Some(snap),
                _ => None,
            }
        };
        let Some(src) = src else { return };
        let i = ring(s / self.cfg.anchor_every, ANCHORS);
        match &mut anchors[i] {
            Some((t, a)) => {
                *t = s;
                a.clone_from(src);
            }
            slot @ None => *slot = Some((s, src.clone())),
        }
    }

    fn hist_index(&self, s: u64) -> usize {
        ring(s / self.cfg.check_every, CHECK_HISTORY)
    }

    fn store_check(&mut self, s: u64) {
        let i = self.hist_index(s);
        let sum = self.probe.checksum();
        self.hist_tick[i] = s;
        self.hist_sum[i] = sum;
        let n = self.nfields;
        for (k, dst) in self.hist_fields[i * n..(i + 1) * n].iter_mut().enumerate() {
            *dst = self.probe.hashes().get(k).copied().unwrap_or(0);
        }
        for p in 0..usize::from(self.cfg.players) {
            if let Some(&(t, remote)) = self.pending[p].get(i)
                && t == s
            {
                self.compare(p, s, sum, remote);
            }
        }
    }

    #[allow(clippy::cast_possible_truncation, reason = "player slots are below 4")]
    fn compare(&mut self, p: usize, s: u64, local: u64, remote: u64) {
        // A checksum rides in several datagrams; compare each tick once.
        if s <= self.peers[p].last_compared {
            return;
        }
        self.peers[p].last_compared = s;
        self.stats.checks_compared += 1;
        if local == remote {
            return;
        }
        self.stats.desyncs += 1;
        if self.desync.is_none() {
            self.desync = Some(Desync {
                tick: s,
                peer: p as u8,
                local,
                remote,
                fields: None,
            });
            self.frozen = true;
            self.desync_hashes = self.field_hashes_at(s).unwrap_or_default();
            for q in &mut self.peers {
                q.fields_resend = 8;
            }
        }
    }

    fn receive_check(&mut self, p: usize, t: u64, remote: u64) {
        if t == 0 || !t.is_multiple_of(self.cfg.check_every) {
            self.stats.drops.malformed += 1;
            return;
        }
        let peer = &mut self.peers[p];
        peer.checks_we_have = peer.checks_we_have.max(t);
        if t <= self.probed {
            let i = self.hist_index(t);
            if self.hist_tick[i] == t {
                let local = self.hist_sum[i];
                self.compare(p, t, local, remote);
            } else {
                self.stats.checks_too_old += 1;
            }
        } else if t > self
            .probed
            .saturating_add((CHECK_HISTORY as u64).saturating_mul(self.cfg.check_every))
        {
            self.stats.drops.far_future += 1;
        } else {
            let i = self.hist_index(t);
            self.pending[p][i] = (t, remote);
        }
    }

    fn receive_fields(&mut self, p: usize, m: &FieldsMsg<'_>) {
        let Some(d) = &self.desync else { return };
        if d.tick != m.tick || usize::from(d.peer) != p || d.fields.is_some() {
            return;
        }
        let i = self.hist_index(m.tick);
        if self.hist_tick[i] != m.tick {
            return;
        }
        let n = self.nfields;
        let local = &self.hist_fields[i * n..(i + 1) * n];
        let names = self.probe.names();
        let mut differ = Vec::new();
        let mut remote_n = 0;
        for (k, h) in m.iter().enumerate() {
            remote_n += 1;
            if local.get(k) != Some(&h) {
                differ.push(names.get(k).copied().unwrap_or("?"));
            }
        }
        if remote_n != n {
            differ.push("(field count)");
        }
        if let Some(d) = &mut self.desync {
            d.fields = Some(differ);
        }
    }

    fn check_timeouts(&mut self) {
        let now = self.stats.local_ticks;
        for p in 0..usize::from(self.cfg.players) {
            if p == usize::from(self.cfg.local) || self.away[p].is_some() {
                continue;
            }
            if now.saturating_sub(self.peers[p].last_heard) > self.cfg.disconnect_after {
                self.declare_away(p);
            }
        }
        for s in &mut self.spectators {
            if s.active && now.saturating_sub(s.last_heard) > self.cfg.disconnect_after {
                s.active = false;
                s.loading = None;
                if s.epoch.is_some() {
                    s.dropped = Some((WATCH_SILENT, self.cfg.disconnect_after, 0));
                    s.notices = DROP_NOTICES;
                }
            }
        }
    }

    fn poll(&mut self, transport: &mut dyn Transport) {
        let mut buf = core::mem::take(&mut self.rbuf);
        while let Some(d) = transport.recv(&mut buf) {
            let len = d.len.min(buf.len());
            if d.len > MAX_PACKET {
                self.stats.received += 1;
                self.stats.drops.oversized += 1;
                continue;
            }
            self.handle_datagram(d.from, &buf[..len]);
            self.admit_spectator(transport);
        }
        self.rbuf = buf;
    }

    /// Handles one datagram from `from` (its slot as the transport knows
    /// it). Public so tests and other transports can feed bytes directly;
    /// any bytes are safe: bad ones are dropped and counted.
    pub fn handle_datagram(&mut self, from: Option<u8>, bytes: &[u8]) {
        self.stats.received += 1;
        let decoded = decode(bytes, &self.auth, |r: &mut ByteReader<'_>| {
            S::Input::decode(r).is_ok()
        });
        let (env, body) = match decoded {
            Ok(x) => x,
            Err(e) => {
                self.stats.drops.count(&e);
                return;
            }
        };
        if let Body::Watch { epoch } = body {
            // Checked by MAC and epoch: the spectator has no slot yet.
            self.receive_watch(from, env.sender, epoch);
            return;
        }
        if from != Some(env.sender) {
            self.stats.drops.unknown_peer += 1;
            return;
        }
        let now = self.stats.local_ticks;
        let sender = env.sender;
        if sender >= FIRST_SPECTATOR_SLOT {
            self.receive_from_spectator(sender, &env, &body);
            return;
        }
        if sender >= self.cfg.players || sender == self.cfg.local {
            self.stats.drops.unknown_peer += 1;
            return;
        }
        let p = usize::from(sender);
        if let Body::Rejoin { epoch } = body {
            // Epoch-checked, not sequence-checked: a new process for the
            // slot numbers its datagrams from 1 again.
            self.receive_rejoin(p, epoch);
            return;
        }
        if self.away[p].is_some() {
            self.stats.drops.departed += 1;
            return;
        }
        if self.peers[p].last_seq.is_some_and(|l| env.seq <= l) {
            self.stats.drops.stale += 1;
            return;
        }
        if seq_jump(self.peers[p].last_seq, env.seq) {
            self.stats.drops.far_future += 1;
            return;
        }
        match body {
            Body::Inputs(m) => {
                if !self.inputs_plausible(p, &m) {
                    self.stats.drops.far_future += 1;
                    return;
                }
                let peer = &mut self.peers[p];
                peer.last_seq = Some(env.seq);
                peer.last_heard = now;
                self.receive_inputs(p, &m);
                self.rejoiner_playing(p);
            }
            Body::Fields(m) => {
                let peer = &mut self.peers[p];
                peer.last_seq = Some(env.seq);
                peer.last_heard = now;
                self.receive_fields(p, &m);
            }
            Body::Goodbye => {
                self.peers[p].last_seq = Some(env.seq);
                self.declare_away(p);
            }
            Body::Departure(m) => {
                if !self.departure_plausible(p, &m) {
                    self.stats.drops.far_future += 1;
                    return;
                }
                let peer = &mut self.peers[p];
                peer.last_seq = Some(env.seq);
                peer.last_heard = now;
                self.receive_departure(p, &m);
            }
            Body::Notice {
                player,
                epoch,
                join,
            } => {
                self.peers[p].last_seq = Some(env.seq);
                self.peers[p].last_heard = now;
                self.receive_notice(p, player, epoch, join);
            }
            Body::NoticeAck { player, join } => {
                self.peers[p].last_seq = Some(env.seq);
                self.peers[p].last_heard = now;
                self.receive_notice_ack(p, player, join);
            }
            Body::ChunkAck { epoch, next, have } => {
                self.peers[p].last_seq = Some(env.seq);
                self.peers[p].last_heard = now;
                self.receive_chunk_ack(p, epoch, next, have);
            }
            Body::Rejoin { .. } | Body::Chunk(_) | Body::Refuse { .. } => {
                self.stats.drops.unknown_peer += 1;
            }
            Body::Spectate(_)
            | Body::SpectatorAck { .. }
            | Body::Watch { .. }
            | Body::WatchReply(_) => {
                self.stats.drops.unknown_peer += 1;
            }
        }
    }

    /// A departure about another player of the session whose ticks this
    /// session can hold (an end past the input ring could never be reached).
    fn departure_plausible(&self, q: usize, m: &DepartureMsg<'_>) -> bool {
        let p = usize::from(m.leaver);
        p < usize::from(self.cfg.players)
            && p != q
            && m.held <= m.end
            && m.end <= self.probed.saturating_add(INPUT_RING as u64)
    }

    fn receive_departure(&mut self, q: usize, m: &DepartureMsg<'_>) {
        let p = usize::from(m.leaver);
        if self.gap[p].is_some_and(|(_, until)| m.end < until) && self.away[p].is_none() {
            // About the leave before its rejoin: settled and done with.
            return;
        }
        if p == usize::from(self.cfg.local) {
            // The others think this peer left: it cannot take its slot back
            // without rejoining, so there is nothing to do with it here.
            return;
        }
        self.declare_away(p);
        let Some(a) = self.away[p].as_mut() else {
            return;
        };
        a.heard |= 1 << q;
        if a.replies[q] > 0 {
            a.replies[q] -= 1;
            a.reply |= 1 << q;
        }
        a.held[q] = a.held[q].max(m.held);
        if !a.settled {
            a.end = a.end.max(m.end);
        }
        if m.settled {
            a.done |= 1 << q;
        }
        let end = a.end;
        let settled = a.settled;
        if !settled {
            let mut r = ByteReader::new(m.inputs);
            for k in 0..u64::from(m.count) {
                let Ok(input) = S::Input::decode(&mut r) else {
                    break;
                };
                let t = m.start + k;
                if t != self.known[p] {
                    continue;
                }
                if t >= end || t >= self.probed + INPUT_RING as u64 {
                    break;
                }
                if let Some(slot) = self.slot(p, t)
                    && slot.state == SlotState::Predicted
                    && slot.input != input
                {
                    self.stats.mispredictions += 1;
                    self.first_mis = Some(self.first_mis.map_or(t, |f| f.min(t)));
                }
                self.set_input(p, t, input, SlotState::Confirmed);
                self.known[p] += 1;
            }
        }
        self.try_settle(p);
    }

    fn inputs_plausible(&self, p: usize, m: &InputsMsg<'_>) -> bool {
        let me = usize::from(self.cfg.local);
        // A rejoined player holds everything before its join tick.
        let joined = self.gap[p].map_or(0, |(_, until)| until);
        m.ack <= self.known[me].max(joined)
            && m.start <= self.known[p].saturating_add(INPUT_RING as u64)
            && m.pong <= self.stats.local_ticks
    }

    fn receive_inputs(&mut self, p: usize, m: &InputsMsg<'_>) {
        let now = self.stats.local_ticks;
        {
            let peer = &mut self.peers[p];
            peer.acked = peer.acked.max(m.ack);
            // The newest ping, not the largest ever seen: datagrams are
            // taken in sequence order, so for a working peer the two are
            // the same, and a wrong one is echoed once, not for good.
            peer.ping_echo = m.ping;
            if m.pong > 0 {
                peer.rtt = now - m.pong;
            }
            peer.remote_tick = m.sim_tick;
            peer.checks_they_have = peer.checks_they_have.max(m.checks_upto);
            let est = m.sim_tick.saturating_add(peer.rtt / 2);
            let adv = i64::try_from(self.current)
                .unwrap_or(i64::MAX)
                .saturating_sub(i64::try_from(est).unwrap_or(i64::MAX))
                .clamp(-1000, 1000);
            peer.adv16 = (peer.adv16 * 15 + adv * 16) / 16;
        }
        let mut r = ByteReader::new(m.inputs);
        for k in 0..u64::from(m.count) {
            let Ok(input) = S::Input::decode(&mut r) else {
                return;
            };
            let t = m.start + k;
            if t != self.known[p] {
                continue;
            }
            if t >= self.probed + INPUT_RING as u64 {
                // Room frees up as ticks are confirmed; the sender resends.
                break;
            }
            if let Some(slot) = self
                .inputs
                .get(p)
                .and_then(|ring_| ring_.get(ring(t, INPUT_RING)))
                && slot.tick == t
                && slot.state == SlotState::Predicted
                && slot.input != input
            {
                self.stats.mispredictions += 1;
                self.first_mis = Some(self.first_mis.map_or(t, |f| f.min(t)));
            }
            self.set_input(p, t, input, SlotState::Confirmed);
            self.known[p] += 1;
        }
        for (t, sum) in m.checks.iter() {
            // A peer has confirmed tick t only if it holds every one of our
            // inputs below t, which is what its ack says: a checksum of a
            // later tick is a claim it cannot make, never compared.
            if t > m.ack {
                self.stats.drops.far_future += 1;
                continue;
            }
            self.receive_check(p, t, sum);
        }
    }

    fn env(&mut self) -> Envelope {
        self.seq += 1;
        Envelope {
            session: self.auth.session_id(),
            sender: self.cfg.local,
            seq: self.seq,
        }
    }

    fn send_all(&mut self, transport: &mut dyn Transport) {
        for p in 0..self.cfg.players {
            if p == self.cfg.local || self.away[usize::from(p)].is_some() {
                continue;
            }
            self.send_inputs(p, transport);
            if self.peers[usize::from(p)].fields_resend > 0 {
                self.peers[usize::from(p)].fields_resend -= 1;
                self.send_fields(p, transport);
            }
        }
        for k in 0..self.spectators.len() {
            self.send_to_spectator(k, transport);
        }
        self.send_rejoin(transport);
        for p in 0..self.cfg.players {
            let Some(a) = self.away[usize::from(p)] else {
                continue;
            };
            let rem = self.remaining_except(usize::from(p));
            for q in 0..self.cfg.players {
                let bit = 1 << q;
                let quiet = a.settled && a.done & bit != 0 && a.reply & bit == 0;
                if rem & bit != 0 && !quiet {
                    self.send_departure(p, q, transport);
                }
            }
            if let Some(a) = self.away[usize::from(p)].as_mut() {
                a.reply = 0;
            }
        }
    }

    /// Tells remaining player `q` what this peer knows of leaver `p`, with
    /// the leaver's inputs `q` is missing.
    fn send_departure(&mut self, p: u8, q: u8, transport: &mut dyn Transport) {
        let Some(a) = self.away[usize::from(p)] else {
            return;
        };
        let pi = usize::from(p);
        let env = self.env();
        let held = self.known[pi];
        // Relay only once q said what it holds.
        let start = if a.heard & (1 << q) != 0 {
            a.held[usize::from(q)]
        } else {
            held
        };
        let Self {
            out, inputs, enc, ..
        } = self;
        write_envelope(out, KIND_DEPARTURE, &env);
        out.push(p);
        out.push(u8::from(a.settled));
        out.varint(held);
        out.varint(a.end);
        out.varint(start);
        let count_at = out.len();
        out.push(0);
        let mut count = 0u8;
        let mut t = start;
        while t < held && usize::from(count) < MAX_INPUTS_PER_PACKET {
            let Some(slot) = find(inputs, pi, t).filter(|s| s.state == SlotState::Confirmed) else {
                break;
            };
            enc.clear();
            slot.input.encode(enc);
            if out.len() + enc.len() > MAX_UNSEALED {
                break;
            }
            out.extend(enc);
            count += 1;
            t += 1;
        }
        out.set(count_at, count);
        if out.seal(&self.auth) {
            transport.send(q, out.bytes());
            self.stats.sent += 1;
        }
    }

    fn send_inputs(&mut self, p: u8, transport: &mut dyn Transport) {
        let env = self.env();
        let me = usize::from(self.cfg.local);
        let pi = usize::from(p);
        let (start, ping_echo, checks_we_have, have) = {
            let peer = &self.peers[pi];
            (
                peer.acked,
                peer.ping_echo,
                peer.checks_we_have,
                peer.checks_they_have,
            )
        };
        let upto = self.known[me].min(self.gate.unwrap_or(u64::MAX));
        let Self {
            out,
            inputs,
            enc,
            known,
            hist_tick,
            hist_sum,
            ..
        } = self;
        write_envelope(out, KIND_INPUTS, &env);
        out.varint(known[pi]);
        out.varint(self.stats.local_ticks);
        out.varint(ping_echo);
        out.varint(self.current);
        out.varint(checks_we_have);
        out.varint(start);
        let count_at = out.len();
        out.push(0);
        // Inputs, as many as fit while leaving room for the checks.
        let budget = MAX_UNSEALED - 1 - MAX_CHECKS_PER_PACKET * 18;
        let mut count = 0u8;
        let mut t = start;
        while t < upto && usize::from(count) < MAX_INPUTS_PER_PACKET {
            let Some(slot) = find(inputs, me, t) else {
                break;
            };
            enc.clear();
            slot.input.encode(enc);
            if out.len() + enc.len() > budget {
                break;
            }
            out.extend(enc);
            count += 1;
            t += 1;
        }
        out.set(count_at, count);
        // Checksums the peer does not have yet, oldest first.
        let k = self.cfg.check_every;
        let lo = self
            .probed
            .saturating_sub((CHECK_HISTORY as u64).saturating_sub(1).saturating_mul(k));
        // The newest checks the peer has not acknowledged: new ones go out
        // at once and each rides in several consecutive datagrams, so a
        // lost datagram costs nothing and a slow ack never holds them back.
        let recent = (self.probed / k)
            .saturating_sub(MAX_CHECKS_PER_PACKET as u64 - 1)
            .saturating_mul(k);
        // `have` is the peer's word (any u64): saturate, so that a claim
        // past every check sent means none is sent, never an overflow.
        let mut s = (have / k)
            .saturating_add(1)
            .saturating_mul(k)
            .max(lo)
            .max(recent)
            .div_ceil(k)
            .saturating_mul(k);
        if s == 0 {
            s = k;
        }
        let n_at = out.len();
        out.push(0);
        let mut n = 0u8;
        while s <= self.probed && usize::from(n) < MAX_CHECKS_PER_PACKET {
            let i = ring(s / k, CHECK_HISTORY);
            if hist_tick[i] == s {
                out.varint(s);
                out.extend(&hist_sum[i].to_le_bytes());
                n += 1;
            }
            s += k;
        }
        out.set(n_at, n);
        if out.seal(&self.auth) {
            transport.send(p, out.bytes());
            self.stats.sent += 1;
        }
    }

    fn send_fields(&mut self, p: u8, transport: &mut dyn Transport) {
        let Some(tick) = self.desync.as_ref().map(|d| d.tick) else {
            return;
        };
        let i = self.hist_index(tick);
        if self.hist_tick[i] != tick {
            return;
        }
        let env = self.env();
        let mut out = core::mem::take(&mut self.out);
        write_envelope(&mut out, KIND_FIELDS, &env);
        out.varint(tick);
        let n = self.nfields;
        #[allow(clippy::cast_possible_truncation, reason = "at most 56 fields")]
        out.push(n as u8);
        for h in &self.hist_fields[i * n..(i + 1) * n] {
            out.extend(&h.to_le_bytes());
        }
        if out.seal(&self.auth) {
            transport.send(p, out.bytes());
            self.stats.sent += 1;
        }
        self.out = out;
    }

    fn send_spectator(&mut self, k: usize, transport: &mut dyn Transport) {
        let Some(link) = self.spectators.get(k) else {
            return;
        };
        if !link.active || link.error.is_some() {
            return;
        }
        let oldest = self.probed.saturating_sub(SPECTATOR_BUFFER as u64);
        if link.acked < oldest {
            let needs = link.acked;
            let probed = self.probed;
            if let Some(l) = self.spectators.get_mut(k) {
                l.error = Some(needs);
                l.active = false;
                l.loading = None;
                if l.epoch.is_some() {
                    l.dropped = Some((WATCH_BEHIND, needs, probed));
                    l.notices = DROP_NOTICES;
                }
            }
            return;
        }
        let start = link.acked;
        let env = self.env();
        let players = usize::from(self.cfg.players);
        let mut out = core::mem::take(&mut self.out);
        write_envelope(&mut out, KIND_SPECTATE, &env);
        out.varint(start);
        let count_at = out.len();
        out.push(0);
        out.push(self.cfg.players);
        let mut count = 0u8;
        let mut t = start;
        while t < self.probed && usize::from(count) < MAX_INPUTS_PER_PACKET {
            let base = ring(t, SPECTATOR_BUFFER) * players;
            let mark = out.len();
            for p in 0..players {
                self.enc.clear();
                self.spec_buf[base + p].encode(&mut self.enc);
                out.extend(&self.enc);
            }
            if out.overflowed() {
                out.truncate(mark);
                break;
            }
            count += 1;
            t += 1;
        }
        out.set(count_at, count);
        if out.seal(&self.auth) {
            #[allow(clippy::cast_possible_truncation, reason = "at most 8 spectators")]
            transport.send(FIRST_SPECTATOR_SLOT + k as u8, out.bytes());
            self.stats.sent += 1;
        }
        self.out = out;
    }

    /// The newest forensic checkpoint: a confirmed state and its tick.
    /// Spectators and rejoining players start from it.
    #[must_use]
    pub fn latest_checkpoint(&self) -> Option<(u64, &S)> {
        self.anchors
            .iter()
            .flatten()
            .max_by_key(|(t, _)| *t)
            .map(|(t, s)| (*t, s))
    }

    /// After a desync: the newest kept confirmed snapshot from before the
    /// desync tick (snapshots stop rotating at the first desync, so it is
    /// still there when the report comes in).
    #[must_use]
    pub fn snapshot_before_desync(&self) -> Option<(u64, &S)> {
        let d = self.desync.as_ref()?;
        self.anchors
            .iter()
            .flatten()
            .filter(|(t, _)| *t < d.tick)
            .max_by_key(|(t, _)| *t)
            .map(|(t, s)| (*t, s))
    }

    /// The local per-field hashes (names and hashes) of checked confirmed
    /// tick `tick`, while it is in the history (the first desync's tick:
    /// always).
    #[must_use]
    pub fn field_hashes_at(&self, tick: u64) -> Option<Vec<(&'static str, u64)>> {
        let i = self.hist_index(tick);
        if self.hist_tick.get(i) != Some(&tick) {
            // The first desync's hashes are kept for good.
            return self
                .desync
                .as_ref()
                .filter(|d| d.tick == tick && !self.desync_hashes.is_empty())
                .map(|_| self.desync_hashes.clone());
        }
        let n = self.nfields;
        let names = self.probe.names();
        Some(
            self.hist_fields[i * n..(i + 1) * n]
                .iter()
                .enumerate()
                .map(|(k, &h)| (names.get(k).copied().unwrap_or("?"), h))
                .collect(),
        )
    }

    /// Starts feeding spectator `slot` (4, 5, ...) from tick `from` (a
    /// checkpoint's tick; the spectator holds that state).
    ///
    /// # Errors
    ///
    /// [`SessionError::NoSuchSpectator`], or
    /// [`SessionError::SpectatorTooFarBehind`] when `from` is no longer buffered.
    pub fn add_spectator(&mut self, slot: u8, from: u64) -> Result<(), SessionError> {
        let oldest = self.probed.saturating_sub(SPECTATOR_BUFFER as u64);
        let now = self.stats.local_ticks;
        let k = usize::from(slot.wrapping_sub(FIRST_SPECTATOR_SLOT));
        let link = self
            .spectators
            .get_mut(k)
            .filter(|_| slot >= FIRST_SPECTATOR_SLOT)
            .ok_or(SessionError::NoSuchSpectator { slot })?;
        if from < oldest || from > self.probed {
            return Err(SessionError::SpectatorTooFarBehind {
                slot,
                needs: from,
                oldest,
            });
        }
        *link = SpectatorLink {
            active: true,
            acked: from,
            last_seq: None,
            last_heard: now,
            ..SpectatorLink::default()
        };
        Ok(())
    }

    /// A spectator this host had to drop, and the tick it needed.
    ///
    /// # Errors
    ///
    /// [`SessionError::SpectatorTooFarBehind`] for a spectator that fell
    /// out of the buffer.
    pub fn spectator_status(&self, slot: u8) -> Result<(), SessionError> {
        let k = usize::from(slot.wrapping_sub(FIRST_SPECTATOR_SLOT));
        match self.spectators.get(k) {
            None => Err(SessionError::NoSuchSpectator { slot }),
            Some(l) => match l.error {
                Some(needs) => Err(SessionError::SpectatorTooFarBehind {
                    slot,
                    needs,
                    oldest: self.probed.saturating_sub(SPECTATOR_BUFFER as u64),
                }),
                None => Ok(()),
            },
        }
    }

    /// The checksum of the newest confirmed state.
    #[must_use]
    pub fn confirmed_checksum(&self) -> Option<u64> {
        self.state(self.probed).map(Sim::checksum)
    }

    /// The replay of the confirmed run so far: the confirmed inputs, this
    /// peer's own checkpoints of its confirmed states, and the newest
    /// confirmed state as the final state.
    ///
    /// # Errors
    ///
    /// [`SessionError::NotRecording`], or [`SessionError::Replay`] if the
    /// sim's field list changed during the run.
    pub fn replay(&self) -> Result<Replay<S::Input>, SessionError> {
        let r = self.record.as_ref().ok_or(SessionError::NotRecording)?;
        let state = self.state(self.probed).ok_or(SessionError::NotRecording)?;
        let mut probe = Probe::new();
        probe.take(state);
        let every = r.header.checkpoint_every;
        let count = usize::try_from(r.header.ticks / every).unwrap_or(usize::MAX);
        let nf = r.names.len();
        #[allow(clippy::cast_possible_truncation, reason = "the low half")]
        let parts = ReplayParts {
            header: r.header.clone(),
            runs: r.runs.clone(),
            // A netplay session runs whole ticks only: its sim never hears of
            // dropped host time, so there are no host events to record.
            host_events: Vec::new(),
            field_names: r.names.iter().map(|n| (*n).into()).collect(),
            checkpoint_checksums: r.sums.iter().copied().take(count).collect(),
            checkpoint_fields: r.fields.iter().copied().take(count * nf).collect(),
            final_checksum: probe.checksum(),
            final_fields: probe.hashes().iter().map(|&h| h as u32).collect(),
            final_digest: state.digest(),
        };
        Ok(Replay::from_parts(parts)?)
    }
}
