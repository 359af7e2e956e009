//! # tickwise-net
//!
//! Rollback and lockstep netplay for any tickwise sim, designed around the
//! failures users of GGRS-style libraries keep reporting:
//!
//! * **Checksums only on confirmed ticks.** A state is checksummed once
//!   every input before it is known, after any rollback; predicted and
//!   pre-rollback states are never compared, so a late input can never
//!   cause a false desync.
//! * **Forensics survive the report.** On the first mismatch the session
//!   freezes its kept confirmed snapshots, keeps the per-field hashes of
//!   the checked ticks, trades field hashes with the peer and names the
//!   fields; [`run_local`] writes a bundle of two replays and a report
//!   that `tickwise verify` and `tickwise compare` read.
//! * **Specified hashing.** Checksums are the kernel's FNV-1a 64 over the
//!   sim's named fields, never a randomly seeded hasher.
//! * **Input delay changeable at runtime** ([`Session::set_input_delay`]).
//! * **No panics, bounded memory.** Every buffer is a ring sized by the
//!   settings; every datagram is decoded without panicking and dropped
//!   with a counted reason when it is malformed, oversized, stale, from an
//!   unknown peer or session, or claims far-future ticks.
//! * **Authenticated datagrams.** Every datagram ends with a 16-byte MAC
//!   (keyed BLAKE3) under the session's 128-bit [`SessionKey`]; one that
//!   fails is dropped as `unauthenticated` before any field of it is used.
//!
//! The core ([`Session`], [`Spectator`], the wire format, [`SimNetwork`])
//! is `no_std` + `alloc` and does no I/O: the game calls
//! [`Session::tick`] from its fixed loop ([`NetGame`] makes a session a
//! [`tickwise::Sim`] so a [`tickwise::FixedLoop`] drives it) and hands it
//! a [`Transport`]. Snapshots are the sim's `Clone` (`clone_from` into
//! preallocated slots): no extra trait, and every catalog sim is already
//! `Clone`.
//!
//! ```
//! use tickwise::{Nanos, Pcg32, ReplayHeader, Sim, TickInput};
//! use tickwise_net::{NetworkConfig, RunOptions, SessionKey, random_inputs, run_local};
//! use tickwise_sims::horde::{HordeConfig, HordeWorld};
//!
//! // The co-op horde with two heroes: each peer owns one hero's inputs.
//! let cfg = HordeConfig::from_json(tickwise_sims::HORDE_JSON)?
//!     .with_enemies(40)?.with_players(2)?;
//! let header = ReplayHeader { sim_id: "horde".into(), sim_version: 3,
//!     config: tickwise_sims::HORDE_JSON.to_vec(),
//!     seed: cfg.seed(), ticks: 0, checkpoint_every: 60, input_kind: 0, players: 2 };
//! // Two players, 100 ms round trip, 5 % loss, no input delay: rollbacks happen.
//! // The key comes from the game's lobby (the same on both peers).
//! let key = SessionKey::from_bytes(*b"a lobby's key 16");
//! let mut opts = RunOptions::new(2, 300, key);
//! opts.input_delay = 0;
//! let net = NetworkConfig { latency: Nanos::from_millis(50), loss_ppm: 50_000, seed: 7,
//!                           ..NetworkConfig::PERFECT };
//! fn walk(rng: &mut Pcg32) -> TickInput {
//!     let mut t = TickInput::default();
//!     t.axes[0] = i16::try_from(rng.range_i32(-32767, 32767)).unwrap_or(0);
//!     t
//! }
//! let inputs = vec![random_inputs(1, 0, walk), random_inputs(1, 1, walk)];
//! let run = run_local(&HordeWorld::new(&cfg), &header, inputs, &opts, net, 0,
//!                     Nanos::from_millis(33), &mut || 0)?;
//! assert!(run.finished && run.checksums_agree && run.desync.is_none());
//! assert!(run.peers.iter().all(|p| p.confirmed_tick == 300 && p.stats.rollbacks > 0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_arithmetic)]

extern crate alloc;

mod auth;
mod config;
mod game;
mod rejoin;
mod run;
mod session;
mod spectator;
mod transport;
#[cfg(feature = "std")]
mod udp;
mod watch;
pub mod wire;

pub use auth::{Auth, KeyError, KeyHex, MAC_LEN, SessionKey};
pub use config::{
    ANCHORS, CHECK_HISTORY, FIRST_SPECTATOR_SLOT, INPUT_RING, MAX_INPUT_DELAY, MAX_PLAYERS,
    MAX_SEQ_JUMP, MAX_SPECTATORS, MAX_WINDOW, MIN_PLAYERS, SPECTATOR_BUFFER, SessionConfig,
    SessionConfigError,
};
pub use game::{Injected, NetGame};
pub use rejoin::{RejoinError, RejoinProgress, Rejoiner};
pub use run::{
    BundleFile, Finding, HostClock, LocalRun, MAX_REJOIN_SNAPSHOT, PeerRejoin, PeerReport, PeerRun,
    PlayerInput, RunError, RunOptions, SpectatorReport, random_inputs, run_local, run_local_rejoin,
    run_peer,
};
pub use session::{
    Desync, Drops, Session, SessionEnd, SessionError, SessionStats, SnapshotCodec, TickOutcome,
};
pub use spectator::Spectator;
pub use transport::{
    Datagram, LinkStats, MAX_SLOTS, NetworkConfig, Port, RECV_BUFFER, SimNetwork, Transport,
};
#[cfg(feature = "std")]
pub use udp::UdpTransport;
pub use watch::{
    SPECTATOR_CATCH_UP, SpectatorRun, WatchError, WatchProgress, Watcher, run_spectator,
};
