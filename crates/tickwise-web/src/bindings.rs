//! The JavaScript face of the page models: `#[wasm_bindgen]` wrappers that only
//! convert types. Numbers cross as `f64`, structured results as JSON text (the
//! page parses them), errors as JS `Error`s carrying the Rust message. All
//! behaviour lives in the wrapped models, which are tested natively.

use serde_json::json;
use wasm_bindgen::prelude::*;

use crate::horde::{HordePage, button_for_key};
use crate::island::IslandPage;

fn js_err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

#[allow(
    clippy::cast_precision_loss,
    reason = "ticks stay far below 2^53, where f64 is exact"
)]
const fn num(v: u64) -> f64 {
    v as f64
}

fn rejected_visibility() -> String {
    json!({ "outcome": "rejected", "resume": null }).to_string()
}

/// The island prototype page's model for JavaScript (see [`IslandPage`]).
#[wasm_bindgen(js_name = Island)]
#[derive(Debug)]
pub struct IslandHandle {
    page: IslandPage,
}

#[wasm_bindgen(js_class = Island)]
impl IslandHandle {
    /// A fresh page on the compiled-in configs.
    ///
    /// # Errors
    ///
    /// If the compiled-in configs are invalid.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<IslandHandle, JsError> {
        Ok(IslandHandle {
            page: IslandPage::new().map_err(js_err)?,
        })
    }

    /// `n` frames of `ms` (default: one step); returns the tick.
    ///
    /// # Errors
    ///
    /// For arguments that are not whole numbers in range.
    #[wasm_bindgen(js_name = stepFrames)]
    pub fn step_frames(&mut self, n: f64, ms: Option<f64>) -> Result<f64, JsError> {
        self.page.step_frames(n, ms).map(num).map_err(js_err)
    }

    /// `n` direct steps; returns the tick.
    ///
    /// # Errors
    ///
    /// For an `n` that is not a whole number in range.
    pub fn advance(&mut self, n: f64) -> Result<f64, JsError> {
        self.page.advance(n).map(num).map_err(js_err)
    }

    /// Pauses now; `false` unless running.
    #[wasm_bindgen(js_name = pauseNow)]
    pub fn pause_now(&mut self) -> bool {
        self.page.pause_now()
    }

    /// Goes to the background now; `false` unless running.
    #[wasm_bindgen(js_name = backgroundNow)]
    pub fn background_now(&mut self) -> bool {
        self.page.background_now()
    }

    /// Moves the clock `ms` and resumes; the resume report as JSON.
    ///
    /// # Errors
    ///
    /// For an `ms` that is not a whole number in range.
    #[wasm_bindgen(js_name = resumeAfter)]
    pub fn resume_after(&mut self, ms: f64) -> Result<String, JsError> {
        self.page
            .resume_after(ms)
            .map(|r| r.to_json().to_string())
            .map_err(js_err)
    }

    /// Pushes a scene; `false` when refused.
    #[wasm_bindgen(js_name = pushScene)]
    pub fn push_scene(&mut self, name: &str) -> bool {
        self.page.push_scene(name)
    }

    /// Pops a scene; `false` on an empty stack.
    #[wasm_bindgen(js_name = popScene)]
    pub fn pop_scene(&mut self) -> bool {
        self.page.pop_scene()
    }

    /// Back to the fresh state.
    pub fn reset(&mut self) {
        self.page.reset();
    }

    /// Forgets the browser-clock anchor (real-time mode starting).
    pub fn reanchor(&mut self) {
        self.page.reanchor();
    }

    /// Real-time frame at browser time `ms`; the steps run, or `undefined`
    /// when the timestamp was refused (NaN, infinite, negative: ignored and counted).
    #[wasm_bindgen(js_name = frameAt)]
    pub fn frame_at(&mut self, ms: f64) -> Option<u32> {
        self.page.frame_at(ms).ok()
    }

    /// The platform adapter's entry: hidden or visible at browser time `ms`.
    /// JSON `{"outcome": "ignored"|"backgrounded"|"resumed"|"rejected",
    /// "resume": report|null}`.
    pub fn visibility(&mut self, hidden: bool, ms: f64) -> String {
        self.page
            .visibility(hidden, ms)
            .map_or_else(|_| rejected_visibility(), |o| o.to_json().to_string())
    }

    /// The test API's state (see [`IslandPage::state_json`]) as JSON.
    #[wasm_bindgen(js_name = stateJson)]
    pub fn state_json(&self) -> String {
        self.page.state_json().to_string()
    }

    /// What the canvas draws: `[posX, posY, velX, velY, score, tick, running]`.
    pub fn view(&self) -> Box<[f64]> {
        let v = self.page.view();
        #[allow(
            clippy::cast_precision_loss,
            reason = "presentation only: drawn positions need no exactness"
        )]
        let out = [
            v.pos_x as f64,
            v.pos_y as f64,
            v.vel_x as f64,
            v.vel_y as f64,
            num(v.score),
            num(v.tick),
            if v.running { 1.0 } else { 0.0 },
        ];
        out.into()
    }

    /// The configured step in ms.
    #[wasm_bindgen(js_name = stepMs)]
    pub fn step_ms(&self) -> f64 {
        num(self.page.step_ms())
    }
}

/// The horde page's model for JavaScript (see [`HordePage`]).
#[wasm_bindgen(js_name = Horde)]
#[derive(Debug)]
pub struct HordeHandle {
    page: HordePage,
}

#[wasm_bindgen(js_class = Horde)]
impl HordeHandle {
    /// A fresh page on the compiled-in config, optionally with `enemies` enemies.
    ///
    /// # Errors
    ///
    /// For an enemy count that is not a whole number in range.
    #[wasm_bindgen(constructor)]
    pub fn new(enemies: Option<f64>) -> Result<HordeHandle, JsError> {
        Ok(HordeHandle {
            page: HordePage::new(enemies).map_err(js_err)?,
        })
    }

    /// A display frame at browser time `ms`; the ticks run, or `undefined`
    /// when the timestamp was refused (ignored and counted).
    #[wasm_bindgen(js_name = frameAt)]
    pub fn frame_at(&mut self, ms: f64) -> Option<u32> {
        self.page.frame_at(ms).ok().map(|r| r.steps)
    }

    /// A key event (`KeyboardEvent.code`, down or up, its `timeStamp`).
    /// Returns whether the key moves the player (the page then prevents its
    /// default action). A bad timestamp is ignored and counted.
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> bool {
        let _ = self.page.key(code, down, ms);
        button_for_key(code).is_some()
    }

    /// Releases every held movement key at browser time `ms`.
    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&mut self, ms: f64) {
        let _ = self.page.release_all(ms);
    }

    /// The platform adapter's entry, as [`IslandHandle::visibility`].
    pub fn visibility(&mut self, hidden: bool, ms: f64) -> String {
        self.page
            .visibility(hidden, ms)
            .map_or_else(|_| rejected_visibility(), |o| o.to_json().to_string())
    }

    /// Forgets the browser-clock anchor (real-time mode starting).
    pub fn reanchor(&mut self) {
        self.page.reanchor();
    }

    /// Back to tick 0.
    pub fn reset(&mut self) {
        self.page.reset();
    }

    /// Ticks run so far.
    pub fn tick(&self) -> f64 {
        num(self.page.fixed_loop().tick().get())
    }

    /// Interpolated drawing positions in px: `[playerX, playerY, x0, y0, …]`.
    pub fn interpolated(&mut self) -> Vec<f32> {
        self.page.interpolated().to_vec()
    }

    /// The test API's state as JSON (see [`HordePage::state_json`]).
    #[wasm_bindgen(js_name = stateJson)]
    pub fn state_json(&self) -> String {
        self.page.state_json().to_string()
    }

    /// Sizes for drawing, JSON: `fieldWidth`, `fieldHeight`, `playerRadius`,
    /// `enemyRadius`, `attackRadius` (px).
    #[wasm_bindgen(js_name = drawInfo)]
    pub fn draw_info(&self) -> String {
        let c = self.page.config();
        json!({
            "fieldWidth": c.field_width_px(),
            "fieldHeight": c.field_height_px(),
            "playerRadius": c.player_radius_px(),
            "enemyRadius": c.enemy_radius_px(),
            "attackRadius": c.attack_radius_px(),
        })
        .to_string()
    }
}
