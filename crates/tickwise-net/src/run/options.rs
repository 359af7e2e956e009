//! The settings of a run, shared by both drivers, the session settings
//! they derive for each peer, and the checks made before anything starts.

use crate::auth::SessionKey;
use crate::config::{MAX_PLAYERS, SessionConfig};

use super::error::RunError;

/// The settings shared by [`run_local`](super::run_local) and [`run_peer`](super::run_peer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Players, 2 to 4.
    pub players: u8,
    /// Ticks to simulate and confirm.
    pub ticks: u64,
    /// Local input delay of every peer.
    pub input_delay: u32,
    /// Prediction window (0: lockstep).
    pub window: u32,
    /// Checksums are exchanged every this many confirmed ticks.
    pub check_every: u64,
    /// Replay checkpoint interval.
    pub checkpoint_every: u64,
    /// The session key (every peer must be given the same one).
    pub key: SessionKey,
    /// Makes player 1's sim non-deterministic at this tick.
    pub inject_desync_at: Option<u64>,
    /// Silent-peer timeout in ticks.
    pub disconnect_after: u64,
    /// Rounds (ticks of network time) to run before giving up on confirming
    /// every tick; `None`: twice `ticks` plus 20 s at 60 Hz. A session whose
    /// window plus input delay is below the one-way latency in ticks advances
    /// only `window + input_delay` ticks per latency (it waits for remote
    /// inputs), so a slow network needs a larger limit to finish.
    pub max_rounds: Option<u64>,
    /// Per player slot, the tick at which that player leaves the match in
    /// [`run_local`](super::run_local) (it says goodbye and stops; the
    /// others go on).
    pub leave_at: [Option<u64>; MAX_PLAYERS as usize],
    /// Per player slot, the match tick (the slowest remaining player's) at
    /// which a player who left starts a new process for its slot and
    /// rejoins ([`run_local_rejoin`](super::run_local_rejoin) only; it
    /// needs the sim's snapshot).
    pub rejoin_at: [Option<u64>; MAX_PLAYERS as usize],
    /// Spectator processes each player of [`run_peer`](super::run_peer)
    /// admits over the wire (its cap, at most [`crate::MAX_SPECTATORS`];
    /// 0: none).
    pub spectators: u8,
}

impl RunOptions {
    /// Defaults for a session with key `key`: delay 2, window 8, every
    /// tick checked, a checkpoint every 60 ticks, 5 s (300 ticks) of
    /// silence is a leave.
    #[must_use]
    pub const fn new(players: u8, ticks: u64, key: SessionKey) -> RunOptions {
        RunOptions {
            players,
            ticks,
            input_delay: 2,
            window: 8,
            check_every: 1,
            checkpoint_every: 60,
            key,
            inject_desync_at: None,
            disconnect_after: 300,
            max_rounds: None,
            leave_at: [None; MAX_PLAYERS as usize],
            rejoin_at: [None; MAX_PLAYERS as usize],
            spectators: 0,
        }
    }

    /// The round limit [`run_local`](super::run_local) applies:
    /// [`RunOptions::max_rounds`] or its default.
    #[must_use]
    pub const fn round_limit(&self) -> u64 {
        match self.max_rounds {
            Some(n) => n,
            None => self.ticks.saturating_mul(2).saturating_add(20 * 60),
        }
    }

    pub(super) fn session(&self, local: u8, spectators: u8) -> SessionConfig {
        SessionConfig {
            players: self.players,
            local,
            input_delay: self.input_delay,
            window: self.window,
            check_every: self.check_every,
            key: self.key,
            disconnect_after: self.disconnect_after,
            stop_at: Some(self.ticks),
            spectators,
            anchor_every: 64,
        }
    }

    pub(super) fn check(&self) -> Result<(), RunError> {
        if self.inject_desync_at == Some(0) {
            return Err(RunError::InjectAtZero);
        }
        self.session(0, 0).validate()?;
        Ok(())
    }
}

/// The largest snapshot a rejoin in
/// [`run_local_rejoin`](super::run_local_rejoin) sends: 16 MiB.
pub const MAX_REJOIN_SNAPSHOT: usize = 16 << 20;
