//! The trait a game implements once for its sim, and what the catalog knows
//! about a registered sim.

use alloc::string::String;

use serde_json::Value;
use tickwise::{ClockConfig, Pcg32, ReplayInput, Sim};

/// A sim the catalog can record, verify, compare, sync-test and time.
///
/// Everything the tools need beyond [`Sim`] itself: the identity a replay
/// stores (so a verifier can pick the right code), how to turn config bytes
/// into an initial state, and three ways to make inputs without a player
/// (a fixed script, a seeded random stream, a JSON file).
///
/// The config is stored in every replay as the exact bytes it was parsed
/// from, so a verifier rebuilds the same initial state without any file of
/// its own. Bump [`VERSION`](CatalogSim::VERSION) whenever the step changes a
/// result: replays of the old version are then refused as
/// [`CatalogError::VersionMismatch`](crate::CatalogError::VersionMismatch)
/// instead of being reported as forgeries.
pub trait CatalogSim: Sim<Input: ReplayInput> + Clone + 'static {
    /// The id stored in replays and accepted by `--sim`: 1 to 64 ASCII
    /// letters, digits, `_`, `-` or `.` (the replay format's name rule).
    const ID: &'static str;
    /// The version stored in replays.
    const VERSION: u32;
    /// The config used when none is given (embed it with `include_bytes!`
    /// so the tools run from any directory).
    const DEFAULT_CONFIG: &'static [u8];

    /// The parsed, validated config.
    type Config;
    /// Why config bytes were refused; its text is shown to the user.
    type ConfigError: core::fmt::Display;

    /// Parses and validates config bytes.
    ///
    /// # Errors
    ///
    /// The sim's own error, ideally naming the offending key.
    fn parse_config(bytes: &[u8]) -> Result<Self::Config, Self::ConfigError>;

    /// The initial state.
    fn build(config: &Self::Config) -> Self;

    /// The seed the config states; stored in the replay header and checked
    /// against the embedded config when verifying.
    fn seed(config: &Self::Config) -> u64;

    /// How a live loop should step this sim (step length, caps).
    fn clock_config(config: &Self::Config) -> ClockConfig;

    /// What one tick costs under `config`, in calibrated work units: about
    /// one unit per nanosecond of CPU on the reference machine
    /// ([`crate::limits`]), so that one work limit means about the same time
    /// for every sim. Every operation that runs the sim checks
    /// ticks × this against its limit before running
    /// ([`ReplayLimits::max_work`](tickwise::ReplayLimits),
    /// [`RunLimits::max_work`](crate::RunLimits)), which stops a small file
    /// that declares an enormous world from buying hours of CPU.
    ///
    /// Calibrate it from a measurement: `tickwise budget --sim ID` prints
    /// the median cost of a tick in ns on the machine it runs on; scale by
    /// that machine's speed relative to the reference (`docs/limits.md` has
    /// the reference figures of the built-in sims). When the cost grows with
    /// the config (entities), state it as a fixed part plus a part per
    /// entity. Overestimating is safe (a limit is reached sooner);
    /// underestimating lets a run take longer than the limit suggests.
    fn work_per_tick(config: &Self::Config) -> u64;

    /// About how many bytes one copy of the state built from `config` takes
    /// (the value plus the heap it owns): a sync test holds `rollback + 1`
    /// copies, and refuses a run whose copies would pass
    /// [`RunLimits::max_snapshot_bytes`](crate::RunLimits) before allocating
    /// any. Defaults to `size_of::<Self>()`, which is right for a sim
    /// without heap memory; override it when the state owns vectors.
    fn state_bytes(config: &Self::Config) -> u64 {
        let _ = config;
        core::mem::size_of::<Self>() as u64
    }

    /// The sim's snapshot encoding, so that a player can rejoin a netplay
    /// match (`netplay --rejoin`); `None` (the default) refuses rejoins.
    /// A sim implementing [`tickwise::SnapshotBytes`] returns
    /// `Some(tickwise_net::SnapshotCodec::new())`.
    fn snapshot_codec() -> Option<tickwise_net::SnapshotCodec<Self>> {
        None
    }

    /// `config` changed to build a sim of `players` players (1 to
    /// [`tickwise::MAX_PLAYERS`]), for `record --players N` and netplay;
    /// `None` when the sim's player count cannot be set that way (then only
    /// the count its config gives is accepted). The default is `None`. A
    /// sim whose config is a JSON object with a player-count key can return
    /// [`crate::json_with_count`]`(config, "players", players)`.
    fn config_for_players(config: &[u8], players: usize) -> Option<alloc::vec::Vec<u8>> {
        let _ = (config, players);
        None
    }

    /// The sim's scripted input for `tick`: a fixed, documented pattern used
    /// when no inputs are given (`--inputs scripted`).
    fn scripted_input(tick: u64) -> Self::Input;

    /// Player `player`'s scripted input for `tick` (`--inputs scripted` in a
    /// run of several players): a sim whose players need different scripts
    /// (the duel's two bots, one per paddle) overrides it. The default is
    /// [`CatalogSim::scripted_input`] for every player.
    fn scripted_player_input(player: usize, tick: u64) -> Self::Input {
        let _ = player;
        Self::scripted_input(tick)
    }

    /// One input drawn from `rng` (`--inputs random:SEED`).
    fn random_input(rng: &mut Pcg32) -> Self::Input;

    /// One element of an inputs file.
    ///
    /// # Errors
    ///
    /// What the element should have been, e.g. "an integer in the i32 range".
    fn json_input(value: &Value) -> Result<Self::Input, String>;

    /// Ticks to run before timing a tick's cost (`budget`), so the
    /// measurement sees the sim's steady state rather than its empty start.
    /// Defaults to 0.
    fn settle_ticks(config: &Self::Config) -> u64 {
        let _ = config;
        0
    }

    /// The most ticks one resume may catch up under this config, if the sim
    /// has such a setting; `budget` times a burst of that many ticks.
    /// Defaults to `None` (no burst timed unless asked for).
    fn max_catch_up_steps(config: &Self::Config) -> Option<u64> {
        let _ = config;
        None
    }
}

/// A registered sim's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimInfo {
    /// The id stored in replays ([`CatalogSim::ID`]).
    pub id: &'static str,
    /// The version stored in replays ([`CatalogSim::VERSION`]).
    pub version: u32,
    /// The default config ([`CatalogSim::DEFAULT_CONFIG`]).
    pub default_config: &'static [u8],
}

impl SimInfo {
    /// The identity of `S`.
    #[must_use]
    pub const fn of<S: CatalogSim>() -> SimInfo {
        SimInfo {
            id: S::ID,
            version: S::VERSION,
            default_config: S::DEFAULT_CONFIG,
        }
    }
}

/// `config` (a JSON object) with `key` set to `value`, written back as
/// compact JSON (keys in sorted order); `None` when `config` is not a JSON
/// object. A helper for [`CatalogSim::config_for_players`].
#[must_use]
pub fn json_with_count(config: &[u8], key: &str, value: usize) -> Option<alloc::vec::Vec<u8>> {
    let mut v: Value = serde_json::from_slice(config).ok()?;
    v.as_object_mut()?
        .insert(key.into(), Value::from(value as u64));
    serde_json::to_vec(&v).ok()
}
