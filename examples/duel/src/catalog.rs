//! The duel in the catalog: what the replay tools need beyond [`Sim`].
//!
//! With this one impl, `Catalog::empty().with::<Duel>()` gives the duel's
//! own tool binary (`src/bin/duel.rs`) `record`, `verify`, `compare`,
//! `sync-test` and `budget`, and [`tickwise_catalog::replay_header`] fills a
//! live session's replay header.
//!
//! [`Sim`]: tickwise::Sim

use serde_json::Value;
use tickwise::{AXES, Buttons, ClockConfig, Pcg32, TickInput};
use tickwise_catalog::CatalogSim;

use crate::{ConfigError, DEFAULT_CONFIG, Duel, DuelConfig, ID, VERSION};

/// The button bits the duel reads: buttons 0 to 5 (see [`crate::Key`]).
pub const BUTTON_BITS: u64 = 0x3f;

impl CatalogSim for Duel {
    const ID: &'static str = ID;
    const VERSION: u32 = VERSION;
    const DEFAULT_CONFIG: &'static [u8] = DEFAULT_CONFIG;
    type Config = DuelConfig;
    type ConfigError = ConfigError;

    fn parse_config(bytes: &[u8]) -> Result<DuelConfig, ConfigError> {
        DuelConfig::parse(bytes)
    }

    fn build(config: &DuelConfig) -> Duel {
        Duel::new(config)
    }

    fn seed(config: &DuelConfig) -> u64 {
        config.seed()
    }

    fn clock_config(config: &DuelConfig) -> ClockConfig {
        config.clock_config()
    }

    /// A tick moves two paddles and one ball whatever the config: one unit.
    fn work_per_tick(_config: &DuelConfig) -> u64 {
        1
    }

    /// The two bots ([`crate::scripted_input`]).
    fn scripted_input(tick: u64) -> TickInput {
        crate::scripted_input(tick)
    }

    /// Random buttons and sticks ([`crate::random_input`]).
    fn random_input(rng: &mut Pcg32) -> TickInput {
        crate::random_input(rng)
    }

    /// [`json_input`].
    fn json_input(value: &Value) -> Result<TickInput, String> {
        json_input(value)
    }
}

/// One element of an inputs file: an object with the optional keys `held`,
/// `pressed` and `released` (bit sets of the six buttons, integers in
/// `0..=63`) and `axes` (up to four integers in `-32768..=32767`; the duel
/// reads the first two). A missing key means no buttons, or sticks at rest.
///
/// Strict like the config: another key, or a bit of a button the duel does
/// not have, is refused rather than ignored, so a typo cannot silently mean
/// "no input".
///
/// ```
/// use tickwise_catalog::serde_json::json;
/// use tickwise_example_duel::{Key, json_input};
///
/// let input = json_input(&json!({"held": 1, "pressed": 5, "axes": [0, -300]}))?;
/// assert!(input.is_held(Key::LeftUp.button()));
/// assert!(input.was_pressed(Key::LeftSmash.button()));
/// assert_eq!(input.axes, [0, -300, 0, 0]);
/// let typo = json_input(&json!({"hold": 1})).unwrap_err();
/// assert!(typo.ends_with("(not \"hold\")"), "{typo}");
/// # Ok::<(), String>(())
/// ```
///
/// # Errors
///
/// What the element should have been, naming the offending key; the
/// catalog reports it as `inputs[N] must be ..., found ...`.
pub fn json_input(value: &Value) -> Result<TickInput, String> {
    const SHAPE: &str = "an object with optional keys held, pressed, released \
        (integers 0..=63: bits of buttons 0 to 5) and axes (up to 4 integers in -32768..=32767)";
    let obj = value.as_object().ok_or_else(|| SHAPE.to_string())?;
    let mut input = TickInput::default();
    for (key, v) in obj {
        let bits = || {
            v.as_u64()
                .filter(|b| b & !BUTTON_BITS == 0)
                .map(Buttons::from_bits)
                .ok_or_else(|| {
                    format!(
                        "an object whose {key:?} is an integer in 0..=63 (bits of buttons 0 to 5)"
                    )
                })
        };
        match key.as_str() {
            "held" => input.held = bits()?,
            "pressed" => input.pressed = bits()?,
            "released" => input.released = bits()?,
            "axes" => {
                let bad =
                    || "an object whose \"axes\" is up to 4 integers in -32768..=32767".to_string();
                let arr = v.as_array().filter(|a| a.len() <= AXES).ok_or_else(bad)?;
                for (slot, a) in input.axes.iter_mut().zip(arr) {
                    *slot = a
                        .as_i64()
                        .and_then(|x| i16::try_from(x).ok())
                        .ok_or_else(bad)?;
                }
            }
            _ => {
                return Err(format!(
                    "an object with only the keys held, pressed, released and axes (not {key:?})"
                ));
            }
        }
    }
    Ok(input)
}
