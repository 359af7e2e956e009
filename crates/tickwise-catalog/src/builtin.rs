//! The built-in sims, registered exactly as a game registers its own: one
//! `impl CatalogSim` per sim, using only public API of the sims crate.
//!
//! | id | version | input | config (embedded default) | seed | work units per tick |
//! |---|---|---|---|---|---|
//! | `island` | 1 | `i32` | `config/island_loop.json` | the config's `seed` | [`ISLAND_TICK_UNITS`] |
//! | `horde` | 3 | [`TickInput`] | `config/horde.json` | the config's `seed` | [`HORDE_TICK_UNITS`] + per enemy, see [`HORDE_ENEMY_UNITS`] |

use alloc::string::{String, ToString};

use serde_json::Value;
use tickwise::{AXES, ClockConfig, Pcg32, TickInput};
use tickwise_config::ConfigError;
use tickwise_sims::horde::{self, HordeConfig, HordeWorld, STICK_MAX};
use tickwise_sims::island::{self, IslandConfig, IslandWorld};

use crate::sim::CatalogSim;
use crate::tick_input_json::TickInputJson;

// Calibration (docs/limits.md has the measurements and the commands): one
// work unit is about one ns of CPU on the reference machine. Rounded up, so
// a limit is reached a little early rather than late.

/// Work units per island tick: verifying a replay with random inputs runs
/// about 26–30 million island ticks per second on one reference core
/// (about 35 ns a tick, of which the step itself is about 3 ns; the rest is
/// decoding inputs and hashing checkpoints).
pub const ISLAND_TICK_UNITS: u64 = 40;
/// Work units per horde tick whatever its size (input, player, attack,
/// waves, the grid's reset).
pub const HORDE_TICK_UNITS: u64 = 500;
/// Work units per enemy per tick while the horde's arrays fit in the cache
/// (300 enemies: about 16.7 µs a tick, 56 ns an enemy).
pub const HORDE_ENEMY_UNITS: u64 = 55;
/// Enemies charged at [`HORDE_ENEMY_UNITS`]; past them the arrays outgrow
/// the cache and each enemy costs [`HORDE_ENEMY_UNITS_UNCACHED`].
pub const HORDE_CACHED_ENEMIES: u64 = 4096;
/// Work units per enemy past [`HORDE_CACHED_ENEMIES`] (100 000 enemies:
/// about 11.7–14 ms a tick; 1 000 000: about 144 ms).
pub const HORDE_ENEMY_UNITS_UNCACHED: u64 = 140;
/// Bytes of horde state per enemy in a copy of the world (a snapshot): its
/// arrays (position and id 12, velocity 8, hit points 4, crowd 2) and its
/// slot index 4. A copy leaves out the scratch (the double buffer, the
/// separation sums and the grid), which every step rebuilds.
pub const HORDE_STATE_BYTES_PER_ENEMY: u64 = 26 + 4;
/// An allowance for the horde's own table in a copy: the speed by crowding,
/// 8 bytes for each of at most 1001 crowd counts (the separation kernel's
/// table is shared between copies).
pub const HORDE_TABLE_BYTES: u64 = 8 * 1024;

impl CatalogSim for IslandWorld {
    const ID: &'static str = "island";
    const VERSION: u32 = 1;
    const DEFAULT_CONFIG: &'static [u8] = tickwise_sims::ISLAND_LOOP_JSON;
    type Config = IslandConfig;
    type ConfigError = ConfigError;

    fn parse_config(bytes: &[u8]) -> Result<IslandConfig, ConfigError> {
        IslandConfig::from_json(bytes)
    }

    fn build(config: &IslandConfig) -> IslandWorld {
        IslandWorld::new(config)
    }

    fn seed(config: &IslandConfig) -> u64 {
        u64::from(config.seed)
    }

    fn clock_config(config: &IslandConfig) -> ClockConfig {
        config.clock_config()
    }

    /// Every island tick costs the same: [`ISLAND_TICK_UNITS`].
    fn work_per_tick(_config: &IslandConfig) -> u64 {
        ISLAND_TICK_UNITS
    }

    /// Twenty ticks right, twenty ticks left ([`island::scripted_input`]).
    fn scripted_input(tick: u64) -> i32 {
        island::scripted_input(tick)
    }

    /// `-1`, `0` or `1`: `next_u32() % 3 - 1`.
    fn random_input(rng: &mut Pcg32) -> i32 {
        i32::try_from(rng.next_u32() % 3).unwrap_or(0) - 1
    }

    fn json_input(value: &Value) -> Result<i32, String> {
        value
            .as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| "an integer in the i32 range".to_string())
    }
}

impl CatalogSim for HordeWorld {
    const ID: &'static str = "horde";
    const VERSION: u32 = 3;
    const DEFAULT_CONFIG: &'static [u8] = tickwise_sims::HORDE_JSON;
    type Config = HordeConfig;

    fn snapshot_codec() -> Option<tickwise_net::SnapshotCodec<Self>> {
        Some(tickwise_net::SnapshotCodec::new())
    }
    type ConfigError = ConfigError;

    fn parse_config(bytes: &[u8]) -> Result<HordeConfig, ConfigError> {
        HordeConfig::from_json(bytes)
    }

    /// The config's `players` key set to `players` (one hero each).
    fn config_for_players(config: &[u8], players: usize) -> Option<alloc::vec::Vec<u8>> {
        crate::json_with_count(config, "players", players)
    }

    fn build(config: &HordeConfig) -> HordeWorld {
        HordeWorld::new(config)
    }

    fn seed(config: &HordeConfig) -> u64 {
        config.seed()
    }

    fn clock_config(config: &HordeConfig) -> ClockConfig {
        config.clock_config()
    }

    /// A tick's cost grows with the horde, faster once its arrays outgrow
    /// the cache: [`HORDE_TICK_UNITS`], plus [`HORDE_ENEMY_UNITS`] for each of
    /// the first [`HORDE_CACHED_ENEMIES`] enemies and
    /// [`HORDE_ENEMY_UNITS_UNCACHED`] for each one after that.
    fn work_per_tick(config: &HordeConfig) -> u64 {
        let n = u64::from(config.enemies());
        let cached = n.min(HORDE_CACHED_ENEMIES);
        HORDE_TICK_UNITS + cached * HORDE_ENEMY_UNITS + (n - cached) * HORDE_ENEMY_UNITS_UNCACHED
    }

    /// The world value, [`HORDE_STATE_BYTES_PER_ENEMY`] per enemy and a small
    /// allowance for the speed table: what a copy (a snapshot) holds. The
    /// scratch (grid, double buffer, sums) is not part of a copy.
    fn state_bytes(config: &HordeConfig) -> u64 {
        core::mem::size_of::<HordeWorld>() as u64
            + u64::from(config.enemies()) * HORDE_STATE_BYTES_PER_ENEMY
            + HORDE_TABLE_BYTES
    }

    /// The square walk ([`horde::scripted_input`]): right, down, left, up,
    /// 90 ticks each.
    fn scripted_input(tick: u64) -> TickInput {
        horde::scripted_input(tick)
    }

    /// A random stick: each of axes 0 and 1 uniform in `-32767..=32767`
    /// (`next_u32() % 65535 - 32767`), no buttons.
    fn random_input(rng: &mut Pcg32) -> TickInput {
        let mut axis = || {
            let v = i32::try_from(rng.next_u32() % 65_535).unwrap_or(0) - STICK_MAX;
            i16::try_from(v).unwrap_or(0)
        };
        let (x, y) = (axis(), axis());
        let mut axes = [0i16; AXES];
        axes[0] = x;
        axes[1] = y;
        TickInput {
            axes,
            ..TickInput::default()
        }
    }

    /// An object with optional `held`, `pressed`, `released` (button bit
    /// sets as integers) and `axes` (up to 4 integers in the `i16` range).
    /// Any buttons and the four axes, by the library's strict reader
    /// ([`TickInputJson::ALL`]).
    fn json_input(value: &Value) -> Result<TickInput, String> {
        TickInputJson::ALL.read(value)
    }

    /// Until the initial horde can have reached the player.
    fn settle_ticks(config: &HordeConfig) -> u64 {
        config.settle_ticks()
    }

    fn max_catch_up_steps(config: &HordeConfig) -> Option<u64> {
        Some(config.max_catch_up_steps())
    }
}
