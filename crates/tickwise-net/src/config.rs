//! Session settings and their limits.

use core::fmt;

use crate::auth::SessionKey;

/// The fewest players in a session.
pub const MIN_PLAYERS: u8 = 2;
/// The most players in a session.
pub const MAX_PLAYERS: u8 = 4;
/// The largest prediction window (ticks run ahead of the confirmed inputs).
pub const MAX_WINDOW: u32 = 32;
/// The largest local input delay.
pub const MAX_INPUT_DELAY: u32 = 16;
/// The most spectators one host serves.
pub const MAX_SPECTATORS: u8 = 8;
/// The first spectator slot (players are `0..MAX_PLAYERS`).
pub const FIRST_SPECTATOR_SLOT: u8 = MAX_PLAYERS;
/// Ticks of inputs kept per player. The window logic keeps every peer
/// within `2 × (window + delay) + 2` ticks of the oldest input still
/// needed, so 128 leaves room at the largest settings.
pub const INPUT_RING: usize = 128;
/// Confirmed checked states whose checksums and field hashes are kept.
pub const CHECK_HISTORY: usize = 128;
/// Confirmed ticks kept for spectators (all players' inputs per tick).
pub const SPECTATOR_BUFFER: usize = 256;
/// The largest step a peer's sequence number may take from one accepted
/// datagram to the next. A legitimate peer sends under 100 datagrams per
/// tick (inputs, a field-hash message and a departure message to each of 3
/// players, as a rejoin's donor 2 notices and 8 snapshot chunks, and to
/// each of 8 spectators its inputs or, while it loads, a welcome and 8
/// chunks) and has left after `disconnect_after` silent ticks, so a gap of
/// 2^20 means over 10 000 ticks (almost 3 minutes at 60 Hz) of datagrams
/// all lost; a larger jump is a bug of the sender and is dropped as
/// `far_future`, so it can never make every later datagram look stale.
pub const MAX_SEQ_JUMP: u64 = 1 << 20;
/// Forensic snapshots of confirmed states kept (one every
/// [`SessionConfig::anchor_every`] ticks).
pub const ANCHORS: usize = 4;

/// What a session is configured with. [`SessionConfig::new`] gives the
/// defaults (input delay 2, window 8, every confirmed tick checked) for a
/// session key; there is no default key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// Players, 2 to 4.
    pub players: u8,
    /// The local player's slot.
    pub local: u8,
    /// Ticks between a local input being given and the tick it applies to.
    pub input_delay: u32,
    /// Prediction window: how many ticks may run on predicted inputs; 0 is
    /// lockstep (a tick runs only when every input for it is known).
    pub window: u32,
    /// Checksums are exchanged for confirmed states whose tick is a multiple
    /// of this (1: every confirmed tick).
    pub check_every: u64,
    /// The session's secret key, the same on every peer and spectator:
    /// every datagram is authenticated with it, and the session id on the
    /// wire is derived from it ([`crate::Auth`]).
    pub key: SessionKey,
    /// A peer not heard from for more than this many local ticks has
    /// left: the others agree on its last tick and go on with its absent
    /// input (docs/netplay.md, "Leaving").
    pub disconnect_after: u64,
    /// The session stops simulating at this tick (it keeps talking so the
    /// others can confirm it too).
    pub stop_at: Option<u64>,
    /// Spectators this player feeds at most (slots 4, 5, ...): added with
    /// [`crate::Session::add_spectator`] in one process, or admitted over
    /// the wire when a spectator process asks ([`crate::Watcher`]).
    pub spectators: u8,
    /// A forensic snapshot of the confirmed state is kept every this many
    /// ticks (the last [`ANCHORS`] of them); spectators join from it too.
    pub anchor_every: u64,
}

impl SessionConfig {
    /// The defaults for `players` players with the local one in `local`,
    /// authenticated with `key`.
    #[must_use]
    pub const fn new(players: u8, local: u8, key: SessionKey) -> SessionConfig {
        SessionConfig {
            players,
            local,
            input_delay: 2,
            window: 8,
            check_every: 1,
            key,
            disconnect_after: 300,
            stop_at: None,
            spectators: 0,
            anchor_every: 64,
        }
    }

    /// Checks every limit.
    ///
    /// # Errors
    ///
    /// The first [`SessionConfigError`] found.
    pub const fn validate(&self) -> Result<(), SessionConfigError> {
        if self.players < MIN_PLAYERS || self.players > MAX_PLAYERS {
            return Err(SessionConfigError::Players {
                found: self.players,
            });
        }
        if self.local >= self.players {
            return Err(SessionConfigError::LocalSlot {
                slot: self.local,
                players: self.players,
            });
        }
        if self.window > MAX_WINDOW {
            return Err(SessionConfigError::Window { found: self.window });
        }
        if self.input_delay > MAX_INPUT_DELAY {
            return Err(SessionConfigError::InputDelay {
                found: self.input_delay,
            });
        }
        if self.check_every == 0 {
            return Err(SessionConfigError::Zero {
                what: "check interval",
            });
        }
        if self.anchor_every == 0 {
            return Err(SessionConfigError::Zero {
                what: "anchor interval",
            });
        }
        if self.disconnect_after == 0 {
            return Err(SessionConfigError::Zero {
                what: "disconnect timeout",
            });
        }
        if self.spectators > MAX_SPECTATORS {
            return Err(SessionConfigError::Spectators {
                found: self.spectators,
            });
        }
        Ok(())
    }
}

/// A [`SessionConfig`] setting out of range (named for what it validates,
/// apart from `tickwise_config::ConfigError`, which is about config files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionConfigError {
    /// Players outside 2..=4.
    Players {
        /// The count asked for.
        found: u8,
    },
    /// The local slot is not a player.
    LocalSlot {
        /// The slot.
        slot: u8,
        /// Players in the session.
        players: u8,
    },
    /// Window over [`MAX_WINDOW`].
    Window {
        /// The window asked for.
        found: u32,
    },
    /// Input delay over [`MAX_INPUT_DELAY`].
    InputDelay {
        /// The delay asked for.
        found: u32,
    },
    /// Spectators over [`MAX_SPECTATORS`].
    Spectators {
        /// The count asked for.
        found: u8,
    },
    /// An interval or timeout of zero.
    Zero {
        /// Which one.
        what: &'static str,
    },
    /// The sim takes another number of players than the session has.
    SimPlayers {
        /// Players in the session.
        session: u8,
        /// Players the sim takes ([`tickwise::Sim::players`]).
        sim: usize,
    },
}

impl fmt::Display for SessionConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionConfigError::Players { found } => write!(
                f,
                "{found} players: a session has {MIN_PLAYERS} to {MAX_PLAYERS}"
            ),
            SessionConfigError::LocalSlot { slot, players } => write!(
                f,
                "local slot {slot} is not a player of a {players}-player session (slots 0..{players})"
            ),
            SessionConfigError::Window { found } => write!(
                f,
                "prediction window {found} is over the limit of {MAX_WINDOW} ticks"
            ),
            SessionConfigError::InputDelay { found } => write!(
                f,
                "input delay {found} is over the limit of {MAX_INPUT_DELAY} ticks"
            ),
            SessionConfigError::Spectators { found } => write!(
                f,
                "{found} spectators is over the limit of {MAX_SPECTATORS}"
            ),
            SessionConfigError::Zero { what } => write!(f, "the {what} must be at least 1"),
            SessionConfigError::SimPlayers { session, sim } => write!(
                f,
                "the session has {session} players but the sim takes {sim} (a sim's player \
                 count comes from its config; every player needs a slot of its own)"
            ),
        }
    }
}

impl core::error::Error for SessionConfigError {}
