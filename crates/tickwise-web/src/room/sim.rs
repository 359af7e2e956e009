//! What a room page needs of a sim beyond [`CatalogSim`]: its keys, its
//! catch-up rule, its drawing and its own state fields.

use serde_json::Value;
use tickwise::{Alpha, Button, Capture, CatchUpPolicy, TickInput};
use tickwise_catalog::CatalogSim;

/// The sim's drawable snapshot.
pub type SnapshotOf<G> = <<G as RoomSim>::Sim as Capture>::Snapshot;
/// The sim's parsed config.
pub type ConfigOf<G> = <<G as RoomSim>::Sim as CatalogSim>::Config;

/// A sim a room page plays, one player per tab.
///
/// Implemented by a marker type of the game's page crate (the orphan rule
/// forbids implementing it on the sim's own type there):
/// `struct DuelRoom; impl RoomSim for DuelRoom { type Sim = Duel; ... }`,
/// then one [`room_page!`](crate::room_page) call writes the JavaScript
/// class. The catalog entry ([`CatalogSim`]) gives the rest: the config
/// parser, the initial state, the clock, the replay header and, through
/// [`CatalogSim::snapshot_codec`], the rejoin (a sim without a codec plays
/// rooms, but a tab that was away past `disconnectAfter` cannot take its
/// seat back).
pub trait RoomSim {
    /// The sim. Its input is the kernel's [`TickInput`]: the tab's
    /// keyboard fills it through an input buffer.
    type Sim: CatalogSim<Input = TickInput> + Capture + core::fmt::Debug;

    /// Replay checkpoint interval, in ticks (about a second is usual).
    const CHECKPOINT_EVERY: u64;

    /// The button a `KeyboardEvent.code` presses for this tab's player
    /// (`None`: the page leaves the key to the browser). The same keys for
    /// every seat: each tab is one player on its own keyboard.
    fn button_for_key(code: &str) -> Option<Button>;

    /// How the loop catches up after a pause (the sim's own rule, as its
    /// single-player page uses).
    fn catch_up_policy(config: &ConfigOf<Self>) -> CatchUpPolicy;

    /// Writes what to draw, blended between the last two ticks at `alpha`,
    /// into `out` (the page's JavaScript knows the layout; it is cleared
    /// first by the implementation).
    fn draw(prev: &SnapshotOf<Self>, curr: &SnapshotOf<Self>, alpha: Alpha, out: &mut Vec<f32>);

    /// Sizes the page's drawing needs, as a JSON value (`drawInfo()`).
    fn draw_info(config: &ConfigOf<Self>) -> Value;

    /// The sim's own fields for the test API's state (a JSON object merged
    /// into it; anything else is ignored). The default adds none.
    fn state_json(sim: &Self::Sim) -> Value {
        let _ = sim;
        Value::Null
    }
}
