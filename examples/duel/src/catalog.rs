//! The duel in the catalog: what the replay tools need beyond [`Sim`].
//!
//! With this one impl, `Catalog::empty().with::<Duel>()` gives the duel's
//! own tool binary (`src/bin/duel.rs`) `record`, `verify`, `compare`,
//! `sync-test` and `budget`, and [`tickwise_catalog::replay_header`] fills a
//! live session's replay header.
//!
//! [`Sim`]: tickwise::Sim

use serde_json::Value;
use tickwise::{AXES, ClockConfig, Pcg32, TickInput};
use tickwise_catalog::{CatalogSim, TickInputJson};

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
    fn snapshot_codec() -> Option<tickwise_catalog::SnapshotCodec<Self>> {
        Some(tickwise_catalog::SnapshotCodec::new())
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
/// "no input" (the catalog's [`TickInputJson`] reader).
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
    INPUT_JSON.read(value)
}

/// The duel's inputs in JSON: buttons 0 to 2 and the kernel's four axes
/// (the duel reads the first), read by the library's strict reader.
pub const INPUT_JSON: TickInputJson = TickInputJson::new(BUTTON_BITS, AXES);
