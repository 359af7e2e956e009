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

use tickwise::{ReplayInput, Sim};

mod checks;
mod error;
mod inputs;
mod io;
mod leave;
mod record;
mod rejoin;
mod report;
mod rollback;
mod spectators;
mod watch;

pub use error::SessionError;
pub(crate) use rejoin::Serve;
pub use rejoin::SnapshotCodec;
pub use report::{Desync, Drops, SessionEnd, SessionStats, TickOutcome};

use inputs::{InputSlot, SlotState};
use io::{Peer, seq_jump};
use leave::Away;
use record::LiveRecord;
use spectators::SpectatorLink;

use crate::auth::Auth;
use crate::config::{
    ANCHORS, CHECK_HISTORY, INPUT_RING, MAX_PLAYERS, SPECTATOR_BUFFER, SessionConfig,
    SessionConfigError,
};
use crate::transport::{RECV_BUFFER, Transport};
use crate::wire::{Buf, MAX_FIELDS_PER_PACKET, MAX_PACKET};
use tickwise::StateHasher;

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
    probe: StateHasher,
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
    /// player rejoining from a snapshot: every peer must hold the inputs
    /// from `tick` on).
    ///
    /// # Errors
    ///
    /// [`SessionError::Config`] for a setting out of range.
    pub fn resume_from(sim: S, tick: u64, cfg: SessionConfig) -> Result<Session<S>, SessionError> {
        cfg.validate()?;
        if sim.players() != usize::from(cfg.players) {
            return Err(SessionError::Config(SessionConfigError::SimPlayers {
                session: cfg.players,
                sim: sim.players(),
            }));
        }
        let mut probe = StateHasher::new();
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
    /// [`SessionConfigError::InputDelay`] over the limit.
    pub const fn set_input_delay(&mut self, delay: u32) -> Result<(), SessionConfigError> {
        if delay > crate::config::MAX_INPUT_DELAY {
            return Err(SessionConfigError::InputDelay { found: delay });
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

    /// The checksum of the newest confirmed state.
    #[must_use]
    pub fn confirmed_checksum(&self) -> Option<u64> {
        self.state(self.probed).map(Sim::checksum)
    }
}
