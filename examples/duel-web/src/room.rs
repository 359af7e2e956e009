//! The duel in a room: one paddle per tab, two browsers, one match over
//! WebRTC data channels or the relay of the duel's own `duel serve`
//! (docs/rooms.md). [`DuelRoom`] tells tickwise-web's generic room match
//! the duel's keys, catch-up rule, drawing and state fields; one
//! [`room_page!`](tickwise_web::room_page) call writes the JavaScript class
//! that the shared lobby script (`web/src/room.js`) drives
//! (`page/room-main.js` draws it).

use serde_json::{Value, json};
use tickwise::{Alpha, Button, CatchUpPolicy};
use tickwise_example_duel::session::DEMO_POLICY;
use tickwise_example_duel::{DOWN, Duel, DuelConfig, DuelFrame, SMASH, Side, UP};
use tickwise_web::room::RoomSim;
// The derive wasm-bindgen writes names its crate `wasm_bindgen`.
use tickwise_web::wasm_bindgen;

/// The button a `KeyboardEvent.code` presses for this tab's paddle, on
/// either side: `W` / `↑` up, `S` / `↓` down, `D` / `←` / `→` / Space smash
/// (each tab is one player: both hands' keys move the same paddle).
#[must_use]
pub fn room_button(code: &str) -> Option<Button> {
    match code {
        "KeyW" | "ArrowUp" => Some(UP),
        "KeyS" | "ArrowDown" => Some(DOWN),
        "KeyD" | "ArrowLeft" | "ArrowRight" | "Space" => Some(SMASH),
        _ => None,
    }
}

/// The duel in a room. See the [module docs](self).
#[derive(Debug)]
pub struct DuelRoom;

impl RoomSim for DuelRoom {
    type Sim = Duel;
    const CHECKPOINT_EVERY: u64 = crate::CHECKPOINT_EVERY;

    fn button_for_key(code: &str) -> Option<Button> {
        room_button(code)
    }

    /// The single-player page's rule.
    fn catch_up_policy(_config: &DuelConfig) -> CatchUpPolicy {
        DEMO_POLICY
    }

    /// `[ballX, ballY, leftY, rightY]` in field units, interpolated in
    /// integers ([`DuelFrame::interpolate`]).
    fn draw(prev: &DuelFrame, curr: &DuelFrame, alpha: Alpha, out: &mut Vec<f32>) {
        let f = DuelFrame::interpolate(prev, curr, alpha);
        // Field units are at most 10 000: exact in an f32.
        #[allow(clippy::cast_precision_loss, reason = "small integers")]
        out.extend([f.ball[0], f.ball[1], f.paddles[0], f.paddles[1]].map(|v| v as f32));
    }

    /// `width`, `height`, `paddleInset`, `paddleHalf`, `winScore` of the
    /// room's config.
    fn draw_info(config: &DuelConfig) -> Value {
        let (w, h) = config.field();
        let (inset, half) = config.paddle();
        json!({
            "width": w,
            "height": h,
            "paddleInset": inset,
            "paddleHalf": half,
            "winScore": config.win_score(),
        })
    }

    /// `ball`, `paddles` (left, right), `score`, `charged`, `winner`
    /// (`"left"`, `"right"` or `null`).
    fn state_json(d: &Duel) -> Value {
        json!({
            "ball": d.ball(),
            "paddles": d.paddles(),
            "score": d.score(),
            "charged": d.charged(),
            "winner": d.winner().map(|s| match s {
                Side::Left => "left",
                Side::Right => "right",
            }),
        })
    }
}

tickwise_web::room_page! {
    /// One tab's duel match in a room, for JavaScript: `new
    /// RoomMatch(welcomeJson, ws, relayOnly)` (see [`DuelRoom`]).
    pub struct DuelRoomMatch(DuelRoom) as RoomMatch;
}
