//! # The duel's page
//!
//! The duel example game in the browser, on the generic adapter of
//! `tickwise-web`: a game's page crate in full. It owns a
//! [`WebLoop`] over the duel, implements [`WebPage`], and writes its
//! JavaScript class `Duel` with one [`wasm_page!`] call plus the duel's own
//! methods (keys, drawing). The sim crate knows nothing of the web.
//!
//! * **Input:** two players share the keyboard. The duel is a two-player
//!   sim, so the loop holds one [`InputBuffer`] per player
//!   ([`PlayerSources`]); a `KeyboardEvent.code` with its `timeStamp` goes
//!   into its player's buffer only ([`Key::side`]) and lands on the tick
//!   whose window contains it, so a smash tap shorter than a tick still
//!   charges that player's paddle.
//! * **Drawing:** a [`Presenter`] keeps the last two ticks the sim ran
//!   (frames, and the catch-up after a hide or a pause too) and
//!   [`DuelFrame::interpolate`] blends them in integers.
//! * **Recording:** the session is recorded from tick 0 (and from each
//!   reset): `replay()` is a replay file of sim `duel`, version 2 (one input
//!   stream per player), with the default config, which the duel's own tool
//!   binary verifies.
//!
//! Keys: left paddle `W` / `S`, smash `D`; right paddle `↑` / `↓`, smash `←`.
//!
//! With its `room` feature (on by default) the crate also exports the
//! duel's **room page** (`DuelRoom`, JavaScript class `RoomMatch`): one paddle per tab, in a room of the
//! duel's own `duel serve`, driven by the shared lobby script
//! `web/src/room.js` (`page/room-main.js` is the duel's part: drawing).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use serde_json::{Value, json};
use tickwise::{
    Button, FixedLoop, FrameReport, InputBuffer, InputSource as _, PlayerSources, Presenter,
    ReplayError, TimeError,
};
use tickwise_example_duel::session::DEMO_POLICY;
use tickwise_example_duel::{ConfigError, DEFAULT_CONFIG, Duel, DuelConfig, DuelFrame, Key, Side};
use tickwise_web::lifecycle::{ResumeOutcome, VisibilityOutcome};
// wasm-bindgen's generated code names the crate `wasm_bindgen`: this makes
// the adapter's copy that crate here (no dependency of our own to keep in step).
use tickwise_web::keys::Keys;
use tickwise_web::wasm_bindgen;
use tickwise_web::wasm_bindgen::prelude::wasm_bindgen;
use tickwise_web::{WebLoop, WebPage, wasm_page};

#[cfg(feature = "room")]
mod room;
#[cfg(feature = "room")]
pub use room::{DuelRoom, DuelRoomMatch, room_button};

/// A checkpoint every 60 ticks (about a second at 62.5 Hz) in the replay.
pub const CHECKPOINT_EVERY: u64 = 60;

/// The key a `KeyboardEvent.code` is: W/S/D for the left player, the arrow
/// keys up/down/left for the right one.
#[must_use]
pub fn key_for_code(code: &str) -> Option<Key> {
    match code {
        "KeyW" => Some(Key::LeftUp),
        "KeyS" => Some(Key::LeftDown),
        "KeyD" => Some(Key::LeftSmash),
        "ArrowUp" => Some(Key::RightUp),
        "ArrowDown" => Some(Key::RightDown),
        "ArrowLeft" => Some(Key::RightSmash),
        _ => None,
    }
}

/// The button a `KeyboardEvent.code` presses in the left player's input.
fn left_button(code: &str) -> Option<Button> {
    key_for_code(code)
        .filter(|k| k.side() == Side::Left)
        .map(Key::button)
}

/// The button a `KeyboardEvent.code` presses in the right player's input.
fn right_button(code: &str) -> Option<Button> {
    key_for_code(code)
        .filter(|k| k.side() == Side::Right)
        .map(Key::button)
}

/// Both players' input buffers, player 0 (left) first.
pub type Players = PlayerSources<InputBuffer>;

/// Why the page could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DuelPageError {
    /// The compiled-in config was refused (a build defect the tests catch).
    Config(ConfigError),
    /// The replay header could not be built (the catalog's message).
    Header(String),
    /// The recording could not start.
    Recording(ReplayError),
}

impl core::fmt::Display for DuelPageError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DuelPageError::Config(e) => e.fmt(f),
            DuelPageError::Header(e) => write!(f, "duel replay header: {e}"),
            DuelPageError::Recording(e) => write!(f, "duel recording: {e}"),
        }
    }
}

impl core::error::Error for DuelPageError {}

/// The duel's loop inside the adapter.
pub type DuelLoop = WebLoop<Duel, Players>;

/// The page model. See the [crate docs](crate).
#[derive(Debug)]
pub struct DuelPage {
    cfg: DuelConfig,
    web: DuelLoop,
    presenter: Presenter<DuelFrame>,
    /// Each player's bindings, slot order.
    keys: [Keys; 2],
}

impl DuelPage {
    /// A fresh page on the default config, recording.
    ///
    /// # Errors
    ///
    /// [`DuelPageError`] if the compiled-in config is refused.
    pub fn new() -> Result<DuelPage, DuelPageError> {
        let cfg = DuelConfig::parse(DEFAULT_CONFIG).map_err(DuelPageError::Config)?;
        let lp = FixedLoop::new(
            Duel::new(&cfg),
            PlayerSources::new(vec![InputBuffer::new(), InputBuffer::new()]),
            cfg.clock_config(),
            DEMO_POLICY,
        );
        let presenter = Presenter::new(lp.sim());
        // The header a verifier needs (id, version, config bytes, seed),
        // from the catalog entry the duel's own tool binary uses.
        let header = tickwise_catalog::replay_header::<Duel>(DEFAULT_CONFIG, CHECKPOINT_EVERY)
            .map_err(|e| DuelPageError::Header(e.to_string()))?;
        let web = WebLoop::recording(lp, header).map_err(DuelPageError::Recording)?;
        Ok(DuelPage {
            cfg,
            web,
            presenter,
            keys: [Keys::new(left_button), Keys::new(right_button)],
        })
    }

    /// The adapter (read-only).
    #[must_use]
    pub const fn web(&self) -> &DuelLoop {
        &self.web
    }

    /// A key went down or up at browser time `ms` (the event's `timeStamp`).
    /// Returns whether the page binds the key.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (ignored and counted).
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> Result<bool, TimeError> {
        let Some(p) = key_for_code(code).map(|k| k.side().index()) else {
            return Ok(false);
        };
        let at = self.web.host_time_at(ms)?;
        let Some(buffer) = self.web.inputs_mut().get_mut(p) else {
            return Ok(false);
        };
        Ok(self.keys[p].key(buffer, code, down, at))
    }

    /// Releases every held key (the window lost focus: the key-ups will
    /// not come).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp.
    pub fn release_all(&mut self, ms: f64) -> Result<(), TimeError> {
        let at = self.web.host_time_at(ms)?;
        self.web.inputs_mut().release_all(at);
        Ok(())
    }

    /// What to draw now: the last two ticks blended with the clock's alpha.
    #[must_use]
    pub fn drawn(&self) -> DuelFrame {
        let p = &self.presenter;
        DuelFrame::interpolate(p.previous(), p.current(), p.alpha())
    }

    /// The presenter (its snapshots are the last two ticks run).
    #[must_use]
    pub const fn presenter(&self) -> &Presenter<DuelFrame> {
        &self.presenter
    }
}

impl WebPage for DuelPage {
    type Sim = Duel;
    type Inputs = Players;
    type Error = DuelPageError;

    fn create() -> Result<DuelPage, DuelPageError> {
        DuelPage::new()
    }

    fn web_loop(&self) -> &DuelLoop {
        &self.web
    }

    fn web_loop_mut(&mut self) -> &mut DuelLoop {
        &mut self.web
    }

    fn frame_at(&mut self, ms: f64) -> Result<FrameReport, TimeError> {
        self.web.frame_at_presenting(ms, &mut self.presenter)
    }

    fn visibility(&mut self, hidden: bool, ms: f64) -> Result<VisibilityOutcome, TimeError> {
        self.web
            .visibility_presenting(hidden, ms, &mut self.presenter)
    }

    fn pause_at(&mut self, ms: f64) -> Result<bool, TimeError> {
        self.web.pause_at_presenting(ms, &mut self.presenter)
    }

    fn resume_at(&mut self, ms: f64) -> Result<ResumeOutcome, TimeError> {
        self.web
            .resume_at_presenting(ms, &mut self.presenter)
            .cloned()
    }

    /// The adapter's state plus the duel's: `ball`, `velocity`, `paddles`,
    /// `score`, `charged`, `winner` (`"left"`, `"right"` or `null`), and
    /// the input buffers' `lateEvents`, `pendingEvents`, `refusedEvents`
    /// (both players' summed).
    fn state_json(&self) -> Value {
        let mut m = self.web.state_json();
        let d = self.web.sim();
        let inputs = self.web.fixed_loop().inputs();
        let winner = d.winner().map(|s| match s {
            tickwise_example_duel::Side::Left => "left",
            tickwise_example_duel::Side::Right => "right",
        });
        let extra = json!({
            "ball": d.ball(),
            "velocity": d.velocity(),
            "paddles": d.paddles(),
            "score": d.score(),
            "charged": d.charged(),
            "winner": winner,
            "lateEvents": (0..2).filter_map(|p| inputs.get(p)).map(InputBuffer::late_events).sum::<u64>(),
            "pendingEvents": (0..2).filter_map(|p| inputs.get(p)).map(InputBuffer::pending).sum::<usize>(),
            "refusedEvents": self.keys.iter().map(Keys::refused).sum::<u64>(),
        });
        if let Value::Object(extra) = extra {
            m.extend(extra);
        }
        Value::Object(m)
    }
}

wasm_page! {
    /// The duel page for JavaScript: `new Duel()` (see [`DuelPage`]).
    pub struct DuelHandle(DuelPage) as Duel;
}

#[wasm_bindgen(js_class = Duel, wasm_bindgen = tickwise_web::wasm_bindgen)]
impl DuelHandle {
    /// A key event (`KeyboardEvent.code`, down or up, its `timeStamp`);
    /// returns whether the page binds the key (it then prevents the default).
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> bool {
        let _ = self.page_mut().key(code, down, ms);
        key_for_code(code).is_some()
    }

    /// Releases every held key at browser time `ms`.
    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&mut self, ms: f64) {
        let _ = self.page_mut().release_all(ms);
    }

    /// What to draw, interpolated: `[ballX, ballY, leftPaddleY, rightPaddleY]`
    /// in field units.
    pub fn drawn(&self) -> Box<[f64]> {
        let f = self.page().drawn();
        [f.ball[0], f.ball[1], f.paddles[0], f.paddles[1]]
            .map(f64::from)
            .into()
    }

    /// Sizes for drawing, JSON: `width`, `height`, `paddleInset`,
    /// `paddleHalf`, `winScore` (from the compiled-in config).
    #[wasm_bindgen(js_name = drawInfo)]
    pub fn draw_info(&self) -> String {
        let cfg: Value = serde_json::from_slice(DEFAULT_CONFIG).unwrap_or(Value::Null);
        let (w, h) = self.page().cfg.field();
        json!({
            "width": w,
            "height": h,
            "paddleInset": cfg["paddleInset"],
            "paddleHalf": cfg["paddleHalf"],
            "winScore": self.page().cfg.win_score(),
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests;
