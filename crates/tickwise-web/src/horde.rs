//! The horde page's model: the horde sim at its fixed tick rate (30 Hz in
//! `config/horde.json`), drawn at the display rate with interpolation.
//!
//! * **Time:** each `requestAnimationFrame` timestamp goes through a
//!   [`WebLoop`]'s host clock and becomes a frame of the loop; the loop runs whatever
//!   whole ticks the accumulated time owes, so the sim advances `tickHz` ticks
//!   per second of browser time at 20, 60 or 144 frames per second alike.
//! * **Input:** keyboard events with their own timestamps go into the loop's
//!   [`InputBuffer`], which assigns each to the tick whose window contains it.
//!   A tap shorter than a tick still presses and releases; a frame that runs
//!   two ticks gives each its own input.
//! * **Drawing:** a [`Presenter`] keeps the snapshots before and after each
//!   frame's last tick; [`HordePage::interpolated`] blends them with the
//!   clock's alpha into `f32` pixels. Presentation only: nothing flows back
//!   into the sim, which the presenter can only read.
//!
//! Time, the lifecycle and the test API are the generic [`WebLoop`]'s: a
//! hidden tab goes to the background and resumes with a capped catch-up, as
//! on the island page. Every path that can run ticks outside a frame (hide,
//! show, the player's pause and resume) goes through the presenter, so the
//! drawing after a catch-up blends its last two ticks. The session is
//! recorded from tick 0 under the catalog's horde header (with the page's
//! enemy count and separation interval in the config bytes). The `Horde` class for JavaScript is written by
//! [`crate::wasm_page!`], plus the horde's own methods (keys, drawing).

use serde_json::{Value, json};
use tickwise::{Button, FixedLoop, FrameReport, InputBuffer, Presenter, ReplayError, TimeError};
use tickwise_catalog::CatalogError;
use tickwise_config::ConfigError;
use tickwise_sims::horde::{
    DOWN, HordeConfig, HordeSnapshot, HordeWorld, LEFT, MAX_SEPARATION_TICKS, RIGHT, SUBPX, UP,
};
use wasm_bindgen::JsError;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::args::{ArgError, whole};
use crate::bindings::js_err;
use crate::keys::Keys;
use crate::lifecycle::{ResumeOutcome, VisibilityOutcome};
use crate::page::WebPage;
use crate::web_loop::WebLoop;

/// `config/horde.json`, compiled in.
pub const HORDE_JSON: &[u8] = tickwise_sims::HORDE_JSON;
/// The most enemies the page accepts (`?enemies=`): the scale of the tick-rate budget article's game (hundreds of enemies) and far beyond.
pub const MAX_PAGE_ENEMIES: u64 = 100_000;
/// A checkpoint every 30 ticks (one second at 30 Hz) in the recorded replay.
pub const CHECKPOINT_EVERY: u64 = 30;
/// A slot that moved farther than this between two ticks (in px, per axis)
/// respawned: it is drawn where it is now instead of sliding across the field.
pub const JUMP_PX: i32 = 32;

/// An alpha as `f64` for the readout: an `f32` rounds 0.99999999 up to 1.0.
#[allow(
    clippy::cast_precision_loss,
    reason = "readout only; numerator and denominator are far below 2^53 for real steps"
)]
fn alpha_f64(a: tickwise::Alpha) -> f64 {
    a.numerator() as f64 / a.denominator() as f64
}

/// The button a `KeyboardEvent.code` moves the player with: arrows or WASD.
#[must_use]
pub fn button_for_key(code: &str) -> Option<Button> {
    match code {
        "ArrowUp" | "KeyW" => Some(UP),
        "ArrowDown" | "KeyS" => Some(DOWN),
        "ArrowLeft" | "KeyA" => Some(LEFT),
        "ArrowRight" | "KeyD" => Some(RIGHT),
        _ => None,
    }
}

/// Drawing positions in px between two horde snapshots at `alpha` (0:
/// `prev`, 1: `curr`), into `out`: `[n, hero0X, hero0Y, …, hero(n-1)X,
/// hero(n-1)Y, x0, y0, x1, y1, …]`, the hero count `n`, every hero by
/// player index, then the enemies alive in `curr`. An enemy that was dead
/// in `prev`, or moved more than [`JUMP_PX`] on an axis (it respawned), is
/// drawn where it is now. Presentation only (the horde and netplay pages
/// draw with it).
pub fn blend_into(prev: &HordeSnapshot, curr: &HordeSnapshot, alpha: f32, out: &mut Vec<f32>) {
    let px = |v: i32| v as f32 / SUBPX as f32;
    let jump = JUMP_PX * SUBPX;
    let blend = |p: i32, c: i32| {
        if (c - p).abs() > jump {
            px(c)
        } else {
            px(p) + (px(c) - px(p)) * alpha
        }
    };
    out.clear();
    let heroes = curr.heroes();
    out.push(heroes.len() as f32);
    for (h, c) in heroes.iter().enumerate() {
        // A snapshot never filled (or of another count) has no hero h: draw it where it is.
        let p = prev.heroes().get(h).unwrap_or(c);
        out.push(blend(p.x, c.x));
        out.push(blend(p.y, c.y));
    }
    let same_slots = prev.alive().len() == curr.alive().len();
    for (i, &alive) in curr.alive().iter().enumerate() {
        if !alive {
            continue;
        }
        let (cx, cy) = (curr.enemy_x()[i], curr.enemy_y()[i]);
        if same_slots && prev.alive()[i] {
            out.push(blend(prev.enemy_x()[i], cx));
            out.push(blend(prev.enemy_y()[i], cy));
        } else {
            out.push(px(cx));
            out.push(px(cy));
        }
    }
}

/// Why the page could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HordePageError {
    /// The compiled-in config is invalid, or the enemy count is refused by it.
    Config(ConfigError),
    /// The enemy count is not a whole number up to [`MAX_PAGE_ENEMIES`].
    Arg(ArgError),
    /// The catalog refused the config as a replay header.
    Catalog(CatalogError),
    /// The recording could not start.
    Recording(ReplayError),
}

impl std::fmt::Display for HordePageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HordePageError::Config(e) => write!(f, "horde config: {e}"),
            HordePageError::Arg(e) => e.fmt(f),
            HordePageError::Catalog(e) => write!(f, "horde replay header: {e}"),
            HordePageError::Recording(e) => write!(f, "horde recording: {e}"),
        }
    }
}

impl std::error::Error for HordePageError {}

/// The config bytes of a page with `enemies` enemies and separation every
/// `separation_ticks` ticks (the compiled-in config when both are `None`):
/// what the replay header stores, so a verifier builds the same horde. Only
/// those keys change; the strict reader checks them.
///
/// # Errors
///
/// [`HordePageError`] for a count that is not a whole number up to
/// [`MAX_PAGE_ENEMIES`], or an interval that is not a whole number up to
/// [`MAX_SEPARATION_TICKS`].
pub fn horde_config_bytes(
    enemies: Option<f64>,
    separation_ticks: Option<f64>,
) -> Result<Vec<u8>, HordePageError> {
    let overrides = [
        ("enemies", enemies, MAX_PAGE_ENEMIES),
        (
            "separationTicks",
            separation_ticks,
            u64::from(MAX_SEPARATION_TICKS),
        ),
    ];
    if overrides.iter().all(|(_, value, _)| value.is_none()) {
        return Ok(HORDE_JSON.to_vec());
    }
    let mut v: Value = serde_json::from_slice(HORDE_JSON).map_err(|e| {
        HordePageError::Config(ConfigError::Syntax {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    })?;
    for (key, value, max) in overrides {
        if let Some(n) = value {
            let n = whole(key, n, max).map_err(HordePageError::Arg)?;
            if let Value::Object(m) = &mut v {
                m.insert(key.into(), n.into());
            }
        }
    }
    Ok(v.to_string().into_bytes())
}

/// The horde's loop inside the adapter.
pub type HordeLoop = WebLoop<HordeWorld, InputBuffer>;

/// The horde page's model. See the [module docs](self).
#[derive(Debug)]
pub struct HordePage {
    /// The config's bytes, as recorded in the replay header.
    config_json: Vec<u8>,
    cfg: HordeConfig,
    web: HordeLoop,
    presenter: Presenter<HordeSnapshot>,
    keys: Keys,
    draw: Vec<f32>,
}

impl HordePage {
    /// A fresh page on the compiled-in config, optionally with another enemy
    /// count and separation interval ([`horde_config_bytes`]).
    ///
    /// # Errors
    ///
    /// [`HordePageError`] for an enemy count that is not a whole number in
    /// `1..=`[`MAX_PAGE_ENEMIES`], an interval not in
    /// `1..=`[`MAX_SEPARATION_TICKS`] (or an invalid compiled-in config).
    pub fn new(
        enemies: Option<f64>,
        separation_ticks: Option<f64>,
    ) -> Result<HordePage, HordePageError> {
        HordePage::with_config_bytes(horde_config_bytes(enemies, separation_ticks)?)
    }

    /// A fresh page, recording, on a horde config file's bytes.
    ///
    /// # Errors
    ///
    /// [`HordePageError::Config`] naming the key the reader refused.
    pub fn with_config_bytes(config_json: Vec<u8>) -> Result<HordePage, HordePageError> {
        let cfg = HordeConfig::from_json(&config_json).map_err(HordePageError::Config)?;
        let lp = FixedLoop::new(
            HordeWorld::new(&cfg),
            InputBuffer::new(),
            cfg.clock_config(),
            cfg.catch_up_policy(),
        );
        let header = tickwise_catalog::replay_header::<HordeWorld>(&config_json, CHECKPOINT_EVERY)
            .map_err(HordePageError::Catalog)?;
        let presenter = Presenter::new(lp.sim());
        Ok(HordePage {
            config_json,
            cfg,
            web: WebLoop::recording(lp, header).map_err(HordePageError::Recording)?,
            presenter,
            keys: Keys::new(button_for_key),
            draw: Vec::new(),
        })
    }

    /// The config.
    #[must_use]
    pub const fn config(&self) -> &HordeConfig {
        &self.cfg
    }

    /// The loop (read-only).
    #[must_use]
    pub const fn fixed_loop(&self) -> &FixedLoop<HordeWorld, InputBuffer> {
        self.web.fixed_loop()
    }

    /// A key went down (`down`) or up at browser time `ms` (the event's
    /// `timeStamp`). Returns whether the key moves the player (others are
    /// ignored).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (the event is ignored and counted).
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> Result<bool, TimeError> {
        if !self.keys.binds(code) {
            return Ok(false);
        }
        let at = self.web.host_time_at(ms)?;
        Ok(self.keys.key(self.web.inputs_mut(), code, down, at))
    }

    /// Releases every held movement key at browser time `ms` (window blur,
    /// tab hidden: the key-ups will never come).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp.
    pub fn release_all(&mut self, ms: f64) -> Result<(), TimeError> {
        let at = self.web.host_time_at(ms)?;
        self.web.inputs_mut().release_all(at);
        Ok(())
    }

    /// The interpolation factor of the last frame, for drawing only.
    #[must_use]
    pub fn alpha(&self) -> f32 {
        self.presenter.alpha().as_f32()
    }

    /// Drawing positions in px, blended between the previous and the current
    /// tick with [`HordePage::alpha`]: `[1, playerX, playerY, x0, y0, x1, y1, …]`
    /// (one hero, then the enemies alive now; [`blend_into`]). An enemy that was dead or moved more than
    /// [`JUMP_PX`] (it respawned) is drawn where it is now.
    pub fn interpolated(&mut self) -> &[f32] {
        let a = self.alpha();
        blend_into(
            self.presenter.previous(),
            self.presenter.current(),
            a,
            &mut self.draw,
        );
        &self.draw
    }
}

impl WebPage for HordePage {
    type Sim = HordeWorld;
    type Inputs = InputBuffer;
    type Error = HordePageError;

    fn create() -> Result<HordePage, HordePageError> {
        HordePage::new(None, None)
    }

    fn web_loop(&self) -> &HordeLoop {
        &self.web
    }

    fn web_loop_mut(&mut self) -> &mut HordeLoop {
        &mut self.web
    }

    /// A display frame at browser time `ms`: runs the ticks it owes and
    /// updates the interpolation snapshots.
    fn frame_at(&mut self, ms: f64) -> Result<FrameReport, TimeError> {
        self.web.frame_at_presenting(ms, &mut self.presenter)
    }

    /// Hide or show through the presenter: after a catch-up it holds the
    /// catch-up's last two ticks.
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

    /// The adapter's state plus `alive`, `kills`, `waves`, `playerHp`,
    /// `playerDowns`, `playerX`/`playerY` (px, exact), `alpha`, `tickHz`,
    /// `enemies`, `lateEvents`, `pendingEvents`, `refusedEvents`.
    fn state_json(&self) -> Value {
        let mut m = self.web.state_json();
        let w = self.web.sim();
        let inputs = self.web.fixed_loop().inputs();
        let extra = json!({
            "alive": w.alive(),
            "kills": w.kills(),
            "waves": w.waves(),
            "playerHp": w.player_hp(),
            "playerDowns": w.player_downs(),
            "playerX": f64::from(w.player_x()) / f64::from(SUBPX),
            "playerY": f64::from(w.player_y()) / f64::from(SUBPX),
            "alpha": alpha_f64(self.presenter.alpha()),
            "tickHz": self.cfg.tick_hz(),
            "enemies": self.cfg.enemies(),
            "lateEvents": inputs.late_events(),
            "pendingEvents": inputs.pending(),
            "refusedEvents": self.keys.refused(),
        });
        if let Value::Object(extra) = extra {
            m.extend(extra);
        }
        Value::Object(m)
    }

    /// Back to tick 0 with the same config (enemy count included),
    /// recording from tick 0 again.
    fn reset(&mut self) -> Result<(), HordePageError> {
        *self = HordePage::with_config_bytes(self.config_json.clone())?;
        Ok(())
    }
}

/// Sizes for drawing a horde config, JSON: `fieldWidth`, `fieldHeight`,
/// `playerRadius`, `enemyRadius`, `attackRadius` (px). The horde and
/// netplay pages' `drawInfo`.
pub(crate) fn draw_info_json(c: &HordeConfig) -> String {
    json!({
        "fieldWidth": c.field_width_px(),
        "fieldHeight": c.field_height_px(),
        "playerRadius": c.player_radius_px(),
        "enemyRadius": c.enemy_radius_px(),
        "attackRadius": c.attack_radius_px(),
    })
    .to_string()
}

crate::wasm_page! {
    /// The horde page's model for JavaScript: `new Horde()`,
    /// `Horde.withEnemies(n)` or `Horde.withOptions(enemies, separationTicks)`
    /// (see [`HordePage`]; the common methods are [`crate::page`]'s).
    pub struct HordeHandle(HordePage) as Horde;
}

#[wasm_bindgen(js_class = Horde)]
impl HordeHandle {
    /// A fresh page with `enemies` enemies.
    ///
    /// # Errors
    ///
    /// For an enemy count that is not a whole number in range.
    #[wasm_bindgen(js_name = withEnemies)]
    pub fn with_enemies(enemies: f64) -> Result<HordeHandle, JsError> {
        HordeHandle::with_options(Some(enemies), None)
    }

    /// A fresh page with `enemies` enemies and separation every
    /// `separationTicks` ticks, each the compiled-in config's when
    /// `undefined` (the page's `?enemies=` and `?separationTicks=`).
    ///
    /// # Errors
    ///
    /// For a count or an interval that is not a whole number in range.
    #[wasm_bindgen(js_name = withOptions)]
    pub fn with_options(
        enemies: Option<f64>,
        separation_ticks: Option<f64>,
    ) -> Result<HordeHandle, JsError> {
        HordePage::new(enemies, separation_ticks)
            .map(HordeHandle::from_page)
            .map_err(js_err)
    }

    /// A key event (`KeyboardEvent.code`, down or up, its `timeStamp`).
    /// Returns whether the key moves the player (the page then prevents its
    /// default action). A bad timestamp is ignored and counted.
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> bool {
        let _ = self.page_mut().key(code, down, ms);
        button_for_key(code).is_some()
    }

    /// Releases every held movement key at browser time `ms`.
    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&mut self, ms: f64) {
        let _ = self.page_mut().release_all(ms);
    }

    /// Interpolated drawing positions in px: `[1, playerX, playerY, x0, y0, …]`
    /// (the hero count, the hero, then the enemies).
    pub fn interpolated(&mut self) -> Vec<f32> {
        self.page_mut().interpolated().to_vec()
    }

    /// Sizes for drawing, JSON: `fieldWidth`, `fieldHeight`, `playerRadius`,
    /// `enemyRadius`, `attackRadius` (px).
    #[wasm_bindgen(js_name = drawInfo)]
    pub fn draw_info(&self) -> String {
        draw_info_json(self.page().config())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickwise::Sim as _;

    /// A frame that must be accepted; returns its steps.
    fn frame(p: &mut HordePage, ms: f64) -> u32 {
        p.frame_at(ms).expect("a valid timestamp").steps
    }

    fn page() -> HordePage {
        HordePage::new(Some(200.0), None).expect("valid config")
    }

    /// Frames at `hz` for `secs` seconds of browser time from `t0` ms.
    fn run(p: &mut HordePage, hz: u32, secs: u32, t0: f64) {
        for k in 0..=hz * secs {
            frame(p, t0 + f64::from(k) * 1000.0 / f64::from(hz));
        }
    }

    #[test]
    fn thirty_ticks_per_second_at_any_frame_rate() {
        let mut digests = Vec::new();
        for hz in [20, 60, 144, 7] {
            let mut p = page();
            run(&mut p, hz, 10, 1234.0);
            assert_eq!(p.fixed_loop().tick().get(), 300, "{hz} Hz");
            digests.push(p.fixed_loop().sim().digest());
        }
        assert!(digests.windows(2).all(|w| w[0] == w[1]), "{digests:?}");
    }

    #[test]
    fn key_events_land_on_their_ticks_whatever_the_frame_rate() {
        // Right held from 1000 ms to 2000 ms, plus a 5 ms tap of Up inside one tick.
        let mut digests = Vec::new();
        for hz in [20, 60, 144] {
            let mut p = page();
            frame(&mut p, 0.0);
            let events = [
                (1000.0, "ArrowRight", true),
                (1500.0, "KeyW", true),
                (1505.0, "KeyW", false),
                (2000.0, "ArrowRight", false),
            ];
            let mut next = 0;
            for k in 1..=hz * 3 {
                let t = f64::from(k) * 1000.0 / f64::from(hz);
                // Deliver each event in the frame after it happened, as a browser does.
                while next < events.len() && events[next].0 <= t {
                    let (at, code, down) = events[next];
                    assert_eq!(p.key(code, down, at), Ok(true));
                    next += 1;
                }
                frame(&mut p, t);
            }
            assert_eq!(p.fixed_loop().tick().get(), 90);
            digests.push(p.fixed_loop().sim().digest());
        }
        assert!(digests.windows(2).all(|w| w[0] == w[1]), "{digests:?}");
        // And the keys did something: the player moved right.
        let mut still = page();
        run(&mut still, 60, 3, 0.0);
        assert_ne!(still.fixed_loop().sim().digest(), digests[0]);
    }

    #[test]
    fn player_moves_right_by_speed_per_held_tick() {
        let mut p = page();
        let x0 = p.fixed_loop().sim().player_x();
        frame(&mut p, 0.0);
        assert_eq!(p.key("KeyD", true, 0.0), Ok(true));
        assert_eq!(p.key("Space", true, 0.0), Ok(false));
        run(&mut p, 60, 1, 0.0);
        // 30 ticks right at playerSpeed 768/256 px per tick = 90 px.
        let moved = p.fixed_loop().sim().player_x() - x0;
        assert_eq!(moved, 30 * 768);
    }

    #[test]
    fn interpolation_blends_between_ticks() {
        let mut p = page();
        let x0 = f64::from(p.fixed_loop().sim().player_x()) / 256.0;
        frame(&mut p, 0.0);
        p.key("ArrowRight", true, 0.0).unwrap();
        frame(&mut p, 100.0); // ticks 0, 1, 2 run; alpha 0
        assert_eq!(p.fixed_loop().tick().get(), 3);
        assert_eq!(p.alpha(), 0.0);
        // Drawn one tick behind: at alpha 0 the previous snapshot (after tick
        // 1, two ticks of 3 px right); the current one is 9 px right.
        let x = |p: &mut HordePage| f64::from(p.interpolated()[1]) - x0;
        assert!((x(&mut p) - 6.0).abs() < 1e-3, "{}", x(&mut p));
        frame(&mut p, 100.0 + 50.0 / 3.0); // half a tick: no step
        assert_eq!(p.fixed_loop().tick().get(), 3);
        assert!((p.alpha() - 0.5).abs() < 1e-6, "{}", p.alpha());
        assert!((x(&mut p) - 7.5).abs() < 1e-3, "{}", x(&mut p));
        // The hero count (one hero), the hero, one pair per live enemy.
        assert_eq!(p.interpolated()[0], 1.0);
        assert_eq!(p.interpolated().len(), 1 + 2 + 2 * 200);
    }

    #[test]
    fn hidden_for_an_hour_catches_up_300_ticks() {
        let mut p = page();
        run(&mut p, 60, 1, 0.0);
        assert_eq!(
            p.visibility(true, 1000.0),
            Ok(VisibilityOutcome::Backgrounded)
        );
        let VisibilityOutcome::Resumed(r) = p.visibility(false, 3_601_000.0).unwrap() else {
            panic!("expected a resume");
        };
        // 3 600 s at 30 Hz = 108 000 wanted; capped at 300.
        assert_eq!(
            (r.summary.wanted_steps, r.summary.catch_up_steps),
            (108_000, 300)
        );
        assert_eq!(p.fixed_loop().tick().get(), 330);
    }

    #[test]
    fn config_bytes_carry_the_enemy_count() {
        let bytes = horde_config_bytes(Some(200.0), None).unwrap();
        let parsed = HordeConfig::from_json(&bytes).unwrap();
        let shipped = HordeConfig::from_json(HORDE_JSON).unwrap();
        assert_eq!(parsed, shipped.with_enemies(200).unwrap());
        let bytes = horde_config_bytes(Some(200.0), Some(3.0)).unwrap();
        assert_eq!(
            HordeConfig::from_json(&bytes).unwrap(),
            shipped
                .with_enemies(200)
                .unwrap()
                .with_separation_ticks(3)
                .unwrap()
        );
        let bytes = horde_config_bytes(None, Some(2.0)).unwrap();
        assert_eq!(
            HordeConfig::from_json(&bytes).unwrap(),
            shipped.with_separation_ticks(2).unwrap()
        );
        assert_eq!(horde_config_bytes(None, None).unwrap(), HORDE_JSON);
        assert!(matches!(
            horde_config_bytes(Some(1e6), None),
            Err(HordePageError::Arg(_))
        ));
    }

    /// Re-simulates the first `ticks` recorded inputs on a fresh horde.
    fn state_at(p: &HordePage, ticks: u64) -> HordeSnapshot {
        use tickwise::Capture as _;
        let bytes = p.web.replay_bytes().unwrap();
        let replay = tickwise::Replay::<tickwise::TickInput>::from_bytes(
            &bytes,
            &tickwise::ReplayLimits::DEFAULT,
        )
        .unwrap();
        let mut w = HordeWorld::new(&p.cfg);
        for input in replay.inputs(0).take(usize::try_from(ticks).unwrap()) {
            w.step(core::slice::from_ref(input));
        }
        w.capture()
    }

    #[test]
    fn the_live_session_verifies_and_the_presenter_follows_every_catch_up() {
        let mut p = page();
        frame(&mut p, 0.0);
        p.key("ArrowRight", true, 10.0).unwrap();
        run(&mut p, 60, 1, 0.0);
        // A hitch: 400 ms owes 12 ticks at 30 Hz, the cap runs 8.
        assert!(p.frame_at(1400.0).unwrap().capped);
        // Hidden with the key held: the kernel releases it at hide time.
        assert_eq!(
            p.visibility(true, 1410.0),
            Ok(VisibilityOutcome::Backgrounded)
        );
        let VisibilityOutcome::Resumed(r) = p.visibility(false, 3000.0).unwrap() else {
            panic!("expected a resume");
        };
        assert!(r.summary.catch_up_steps > 1);
        let t = p.fixed_loop().tick().get();
        // The presenter holds the catch-up's last two ticks, computed here
        // independently by re-running the recorded inputs.
        assert_eq!(p.presenter.current(), &state_at(&p, t));
        assert_eq!(p.presenter.previous(), &state_at(&p, t - 1));
        // A player's pause and resume go through the presenter too.
        assert_eq!(p.pause_at(3010.0), Ok(true));
        let r = p.resume_at(4000.0).unwrap();
        assert!(r.summary.catch_up_steps > 1);
        let t = p.fixed_loop().tick().get();
        assert_eq!(p.presenter.previous(), &state_at(&p, t - 1));
        assert_eq!(p.presenter.current(), &state_at(&p, t));
        assert!(p.web_loop_mut().set_speed(2.0, 1.0));
        run(&mut p, 60, 1, 4000.0);
        let bytes = p.web.replay_bytes().unwrap();
        let report = tickwise_catalog::Catalog::builtin()
            .verify(&bytes, &tickwise::ReplayLimits::DEFAULT)
            .unwrap();
        assert_eq!(
            report.verdict,
            tickwise::ReplayVerdict::Match {
                digest: p.fixed_loop().sim().digest()
            }
        );
    }

    #[test]
    fn bad_inputs_are_refused_and_counted() {
        assert!(matches!(
            HordePage::new(Some(0.5), None),
            Err(HordePageError::Arg(_))
        ));
        assert!(matches!(
            HordePage::new(Some(0.0), None),
            Err(HordePageError::Config(_))
        ));
        assert!(HordePage::new(Some(1e6), None).is_err());
        // separationTicks: whole numbers up to 64, and the reader's 1..
        assert!(matches!(
            HordePage::new(None, Some(1.5)),
            Err(HordePageError::Arg(_))
        ));
        assert!(matches!(
            HordePage::new(None, Some(65.0)),
            Err(HordePageError::Arg(_))
        ));
        assert!(matches!(
            HordePage::new(None, Some(0.0)),
            Err(HordePageError::Config(_))
        ));
        let mut p = page();
        assert!(p.frame_at(f64::NAN).is_err());
        assert!(p.key("KeyW", true, -1.0).is_err());
        frame(&mut p, 100.0);
        frame(&mut p, 200.0);
        frame(&mut p, 150.0);
        let s = p.state_json();
        assert_eq!(
            (s["rejectedTimes"].as_u64(), s["backwardsFrames"].as_u64()),
            (Some(2), Some(1))
        );
    }
}
