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

use crate::{ConfigError, DEFAULT_CONFIG, Duel, DuelConfig, ID, Side, VERSION};

/// The button bits of one player's input: buttons 0 to 2 ([`crate::UP`],
/// [`crate::DOWN`], [`crate::SMASH`]).
pub const BUTTON_BITS: u64 = 0x7;

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

    /// The left bot ([`crate::scripted_input`]); in a run of both players,
    /// each gets its own bot ([`CatalogSim::scripted_player_input`]).
    fn scripted_input(tick: u64) -> TickInput {
        crate::scripted_input(Side::Left, tick)
    }

    /// Player 0 the left bot, player 1 the right bot.
    fn scripted_player_input(player: usize, tick: u64) -> TickInput {
        let side = if player == 1 { Side::Right } else { Side::Left };
        crate::scripted_input(side, tick)
    }

    /// Random buttons and a random stick, one player's ([`crate::random_input`]).
    fn random_input(rng: &mut Pcg32) -> TickInput {
        crate::random_input(rng)
    }

    /// [`json_input`].
    fn json_input(value: &Value) -> Result<TickInput, String> {
        json_input(value)
    }

    /// The duel's [`tickwise::SnapshotBytes`], so a player can rejoin a
    /// netplay match.
    fn snapshot_codec() -> Option<tickwise_catalog::tickwise_net::SnapshotCodec<Self>> {
        Some(tickwise_catalog::tickwise_net::SnapshotCodec::new())
    }
}

/// One element of an inputs file (one player's input of one tick; the file
/// holds one array per player, player 0's first): an object with the
/// optional keys `held`, `pressed` and `released` (bit sets of the player's
/// three buttons, integers in `0..=7`: 1 up, 2 down, 4 smash) and `axes`
/// (up to four integers in `-32768..=32767`; the duel reads the first). A
/// missing key means no buttons, or the stick at rest.
///
/// Strict like the config: another key, or a bit of a button the duel does
/// not have, is refused rather than ignored, so a typo cannot silently mean
/// "no input".
///
/// ```
/// use tickwise_catalog::serde_json::json;
/// use tickwise_example_duel::{SMASH, UP, json_input};
///
/// let input = json_input(&json!({"held": 1, "pressed": 5, "axes": [-300]}))?;
/// assert!(input.is_held(UP));
/// assert!(input.was_pressed(SMASH));
/// assert_eq!(input.axes, [-300, 0, 0, 0]);
/// assert!(json_input(&json!({"held": 8})).is_err()); // no button 3
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
        (integers 0..=7: bits of buttons 0 to 2) and axes (up to 4 integers in -32768..=32767)";
    let obj = value.as_object().ok_or_else(|| SHAPE.to_string())?;
    let mut input = TickInput::default();
    for (key, v) in obj {
        let bits = || {
            v.as_u64()
                .filter(|b| b & !BUTTON_BITS == 0)
                .map(Buttons::from_bits)
                .ok_or_else(|| {
                    format!(
                        "an object whose {key:?} is an integer in 0..=7 (bits of buttons 0 to 2)"
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
