//! The netplay page's JavaScript face: thin wrappers that turn the model's
//! errors into `JsError`s and its numbers into JS numbers.

use tickwise::{Sim, TickInput};
use tickwise_sims::horde::HordeWorld;
use wasm_bindgen::JsError;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::args::whole;
use crate::base64;
use crate::bindings::{js_err, num};
use crate::horde::{button_for_key, draw_info_json};

use super::*;

/// The netplay page for JavaScript: `new Netplay()`.
#[wasm_bindgen(js_name = Netplay)]
#[derive(Debug)]
pub struct NetplayHandle {
    page: NetplayPage,
    /// `benchSimSteps`' world, kept so its buffers are reused (`clone_from`).
    bench: Option<HordeWorld>,
}

impl NetplayHandle {
    /// The model.
    #[must_use]
    pub const fn page(&self) -> &NetplayPage {
        &self.page
    }
}

#[wasm_bindgen(js_class = Netplay)]
impl NetplayHandle {
    /// A fresh page.
    ///
    /// # Errors
    ///
    /// When the compiled-in config is invalid.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<NetplayHandle, JsError> {
        NetplayPage::new()
            .map(|page| NetplayHandle { page, bench: None })
            .map_err(js_err)
    }

    /// A display frame at browser time `ms`: player 1's ticks run, or
    /// `undefined` for a refused time (ignored and counted).
    #[wasm_bindgen(js_name = frameAt)]
    pub fn frame_at(&mut self, ms: f64) -> Option<u32> {
        self.page
            .frame_at(ms)
            .ok()
            .map(|(a, _)| a.map_or(0, |a| a.steps))
    }

    /// Test API: `n` frames of `ms`; returns player 1's loop tick.
    ///
    /// # Errors
    ///
    /// For numbers out of range (nothing runs).
    #[wasm_bindgen(js_name = stepFrames)]
    pub fn step_frames(&mut self, n: f64, ms: f64) -> Result<f64, JsError> {
        self.page.step_frames(n, ms).map(num).map_err(js_err)
    }

    /// Forgets the browser-clock anchor.
    pub fn reanchor(&mut self) {
        self.page.reanchor();
    }

    /// A key event for player 1; whether the key moves the player.
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> bool {
        let _ = self.page.key(code, down, ms);
        button_for_key(code).is_some()
    }

    /// Releases player 1's held keys at browser time `ms`.
    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&mut self, ms: f64) {
        let _ = self.page.release_all(ms);
    }

    /// Round trip in whole ms.
    ///
    /// # Errors
    ///
    /// Out of range (nothing changes).
    #[wasm_bindgen(js_name = setRtt)]
    pub fn set_rtt(&mut self, ms: f64) -> Result<(), JsError> {
        self.page.set_rtt(ms).map_err(js_err)
    }

    /// Loss in whole percent.
    ///
    /// # Errors
    ///
    /// Out of range (nothing changes).
    #[wasm_bindgen(js_name = setLoss)]
    pub fn set_loss(&mut self, pct: f64) -> Result<(), JsError> {
        self.page.set_loss(pct).map_err(js_err)
    }

    /// Both players' input delay in ticks.
    ///
    /// # Errors
    ///
    /// Out of range (nothing changes).
    #[wasm_bindgen(js_name = setInputDelay)]
    pub fn set_input_delay(&mut self, d: f64) -> Result<(), JsError> {
        self.page.set_input_delay(d).map_err(js_err)
    }

    /// Ends the match at one tick for both players; returns it.
    #[wasm_bindgen(js_name = endMatch)]
    pub fn end_match(&mut self) -> f64 {
        num(self.page.end_match())
    }

    /// The state as JSON text.
    #[wasm_bindgen(js_name = stateJson)]
    pub fn state_json(&self) -> String {
        self.page.state_json().to_string()
    }

    /// Player `p`'s replay of the confirmed inputs, base64; without `p`,
    /// the match's (player 1's, or player 2's once player 1 rejoined).
    ///
    /// # Errors
    ///
    /// For a `p` other than 0 or 1, or a player that has no recording.
    pub fn replay(&self, p: Option<f64>) -> Result<String, JsError> {
        match p {
            Some(p) => self.page.replay_bytes(p),
            None => self.page.match_replay_bytes(),
        }
        .map(|b| base64::encode(&b))
        .map_err(js_err)
    }

    /// The tab was hidden at browser time `ms`: player 1 stops (its keys
    /// are released); player 2 plays on.
    pub fn hide(&mut self, ms: f64) {
        let _ = self.page.hide(ms);
    }

    /// The tab is visible again at browser time `ms`: player 2 catches up
    /// through the time away; player 1 goes on, or rejoins if player 2
    /// declared it gone.
    pub fn show(&mut self, ms: f64) {
        let _ = self.page.show(ms);
    }

    /// Rebuilds the page with this silence timeout, in ticks.
    ///
    /// # Errors
    ///
    /// Out of range (nothing changes).
    #[wasm_bindgen(js_name = setDisconnectAfter)]
    pub fn set_disconnect_after(&mut self, ticks: f64) -> Result<(), JsError> {
        self.page.set_disconnect_after(ticks).map_err(js_err)
    }

    /// Player `p`'s view (0 or 1), interpolated, in px: `[n, hero0X, hero0Y,
    /// hero1X, hero1Y, x0, y0, …]` (the hero count, every hero, the enemies).
    pub fn interpolated(&mut self, p: u32) -> Vec<f32> {
        self.page.interpolated(p as usize).to_vec()
    }

    /// Back to a fresh match with the current settings.
    ///
    /// # Errors
    ///
    /// When the page cannot start again (it is unchanged then).
    pub fn reset(&mut self) -> Result<(), JsError> {
        self.page.reset().map_err(js_err)
    }

    /// Sizes for drawing, JSON (as the horde page's `drawInfo`).
    #[wasm_bindgen(js_name = drawInfo)]
    pub fn draw_info(&self) -> String {
        draw_info_json(self.page.config())
    }

    /// The test API's bench hook: copies player 1's current state into a
    /// world kept for this (its buffers are reused after the first call),
    /// steps it `n` times with an empty input and returns `n` (time it
    /// around the call): the sim step's own cost, to subtract from a frame's.
    ///
    /// # Errors
    ///
    /// For an `n` that is not a whole number up to 1 000 000.
    #[wasm_bindgen(js_name = benchSimSteps)]
    pub fn bench_sim_steps(&mut self, n: f64) -> Result<f64, JsError> {
        let n = whole("n", n, 1_000_000).map_err(js_err)?;
        let now = self.page.session(0).sim();
        let w = match &mut self.bench {
            Some(w) => {
                w.clone_from(now);
                w
            }
            slot @ None => slot.insert(now.clone()),
        };
        let inputs = vec![TickInput::default(); w.players()];
        for _ in 0..n {
            w.step(&inputs);
        }
        Ok(num(n))
    }
}
