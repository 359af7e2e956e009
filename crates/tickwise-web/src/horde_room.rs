//! The horde's room page: [`HordeRoom`] tells the generic room match
//! ([`crate::room`]) the horde's keys, catch-up rule, drawing and hero
//! fields, and [`RoomMatch`] is its JavaScript class (`web/src/room.html`).

use serde_json::{Value, json};
use tickwise::{Alpha, Button, CatchUpPolicy};
use tickwise_sims::horde::{HordeConfig, HordeSnapshot, HordeWorld};

use crate::horde::{blend_into, button_for_key, draw_info_json};
use crate::room::RoomSim;
use crate::wasm_bindgen;

/// The horde in a room: co-op, one hero per tab (arrow keys or WASD).
#[derive(Debug)]
pub struct HordeRoom;

impl RoomSim for HordeRoom {
    type Sim = HordeWorld;
    /// One second at 30 Hz.
    const CHECKPOINT_EVERY: u64 = 30;

    fn button_for_key(code: &str) -> Option<Button> {
        button_for_key(code)
    }

    fn catch_up_policy(config: &HordeConfig) -> CatchUpPolicy {
        config.catch_up_policy()
    }

    /// Positions in px ([`blend_into`]).
    fn draw(prev: &HordeSnapshot, curr: &HordeSnapshot, alpha: Alpha, out: &mut Vec<f32>) {
        blend_into(prev, curr, alpha.as_f32(), out);
    }

    fn draw_info(config: &HordeConfig) -> Value {
        serde_json::from_str(&draw_info_json(config)).unwrap_or(Value::Null)
    }

    /// `heroes`: `[{x, y, hp}]`, slot order.
    fn state_json(world: &HordeWorld) -> Value {
        let heroes: Value = world
            .heroes()
            .iter()
            .map(|h| json!({ "x": h.x, "y": h.y, "hp": h.hp }))
            .collect();
        json!({ "heroes": heroes })
    }
}

crate::room_page! {
    /// One tab's horde match in a room, for JavaScript: `new
    /// RoomMatch(welcomeJson, ws, relayOnly)`.
    pub struct RoomMatch(HordeRoom) as RoomMatch;
}
