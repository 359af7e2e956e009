//! The built-in sims, registered exactly as a game registers its own: one
//! `impl CatalogSim` per sim, using only public API of the sims crate.
//!
//! | id | version | input | config (embedded default) | seed |
//! |---|---|---|---|---|
//! | `island` | 1 | `i32` | `config/island_loop.json` | the config's `seed` |
//! | `horde` | 1 | [`TickInput`] | `config/horde.json` | the config's `seed` |

use alloc::string::{String, ToString};

use serde_json::Value;
use tickwise::{AXES, Buttons, ClockConfig, Pcg32, TickInput};
use tickwise_sims::ConfigError;
use tickwise_sims::horde::{self, HordeConfig, HordeWorld, STICK_MAX};
use tickwise_sims::island::{self, IslandConfig, IslandWorld};

use crate::sim::CatalogSim;

impl CatalogSim for IslandWorld {
    const ID: &'static str = "island";
    const VERSION: u32 = 1;
    const DEFAULT_CONFIG: &'static [u8] = include_bytes!("../../../config/island_loop.json");
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

    /// Every island step costs the same: one unit.
    fn work_per_tick(_config: &IslandConfig) -> u64 {
        1
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
    const VERSION: u32 = 2;
    const DEFAULT_CONFIG: &'static [u8] = include_bytes!("../../../config/horde.json");
    type Config = HordeConfig;
    type ConfigError = ConfigError;

    fn parse_config(bytes: &[u8]) -> Result<HordeConfig, ConfigError> {
        HordeConfig::from_json(bytes)
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

    /// A tick's cost grows with the horde: one unit plus one per enemy.
    fn work_per_tick(config: &HordeConfig) -> u64 {
        1 + u64::from(config.enemies())
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
    fn json_input(value: &Value) -> Result<TickInput, String> {
        const EXPECTED: &str = "an object with optional keys held, pressed, released (integers 0..2^64) and axes (up to 4 integers in -32768..=32767)";
        let obj = value.as_object().ok_or_else(|| EXPECTED.to_string())?;
        let mut input = TickInput::default();
        for (key, v) in obj {
            match key.as_str() {
                "held" | "pressed" | "released" => {
                    let bits = Buttons::from_bits(v.as_u64().ok_or_else(|| EXPECTED.to_string())?);
                    match key.as_str() {
                        "held" => input.held = bits,
                        "pressed" => input.pressed = bits,
                        _ => input.released = bits,
                    }
                }
                "axes" => {
                    let arr = v
                        .as_array()
                        .filter(|a| a.len() <= AXES)
                        .ok_or_else(|| EXPECTED.to_string())?;
                    for (slot, a) in input.axes.iter_mut().zip(arr) {
                        *slot = a
                            .as_i64()
                            .and_then(|x| i16::try_from(x).ok())
                            .ok_or_else(|| EXPECTED.to_string())?;
                    }
                }
                _ => return Err(EXPECTED.to_string()),
            }
        }
        Ok(input)
    }

    /// Until the initial horde can have reached the player.
    fn settle_ticks(config: &HordeConfig) -> u64 {
        config.settle_ticks()
    }

    fn max_catch_up_steps(config: &HordeConfig) -> Option<u64> {
        Some(config.max_catch_up_steps())
    }
}
