//! The island prototype page's model: the resume rules' prototype controls (docs/background.md) over our kernel.
//!
//! [`IslandPage`] is a [`WebLoop`] over the island world with the same
//! embedded configs as `tickwise script` (`config/island_loop.json` and
//! `config/island_lifecycle.json`, compiled in: one config, every consumer),
//! the loop built by the same [`island_loop`] and the same 100 000
//! scripted inputs, so a timeline run through the page ends on the digest
//! the CLI prints. The page adds only what is the island's own: the scene
//! stack (`menu`, `game`) and the numbers the canvas draws.
//!
//! The scene stack follows the loop's tick lazily: before any push, pop or
//! dump it is given the ticks run since it last looked, which is exactly what
//! running it after every call would do (only the active scene accrues ticks,
//! and only push and pop change which one is active). So every path that
//! steps the loop, real-time frames and the platform adapter included, counts.
//!
//! The session is recorded from tick 0 (and again from each reset) under the
//! catalog's island header, so `replay()` is a file `tickwise verify`
//! re-simulates to the page's digest. Time scale: the page keeps the
//! config's step cap (8 steps of 16 ms); [`fast_forward_cap`] shows it
//! covers a 60 Hz display frame at the fastest speed the page offers.
//!
//! Everything here is plain Rust, tested natively; the `Island` class for
//! JavaScript is written by [`crate::wasm_page!`].

use serde_json::Value;
use tickwise::{Nanos, ReplayError, SceneStack, Speed, StepLength, TickInputs};
use tickwise_catalog::CatalogError;
use tickwise_config::ConfigError;
use tickwise_sims::island::{
    IslandConfig, IslandWorld, LifecycleConfig, island_loop, scripted_inputs,
};
use wasm_bindgen::prelude::wasm_bindgen;

use crate::bindings::num;
use crate::page::WebPage;
use crate::web_loop::WebLoop;

/// `config/island_loop.json`, compiled in.
pub const ISLAND_LOOP_JSON: &[u8] = tickwise_sims::ISLAND_LOOP_JSON;
/// `config/island_lifecycle.json`, compiled in.
pub const ISLAND_LIFECYCLE_JSON: &[u8] = tickwise_sims::ISLAND_LIFECYCLE_JSON;
/// Scripted inputs for ticks `0..INPUT_TICKS`, as `tickwise script` uses by default.
pub const INPUT_TICKS: usize = 100_000;
/// A checkpoint every 60 ticks (about a second) in the recorded replay: a
/// divergence is located to within a second, for 40 bytes a checkpoint.
pub const CHECKPOINT_EVERY: u64 = 60;
/// The speeds the page's selector offers, `(p, q)`: ¼×, ½×, 1×, 2×, 4×.
pub const SPEEDS: [(u32, u32); 5] = [(1, 4), (1, 2), (1, 1), (2, 1), (4, 1)];

/// The step cap a display frame of `frame` needs so that it never drops
/// time at the fastest of [`SPEEDS`] ([`Speed::step_cap_for`]). The page
/// keeps the config's cap (the `tickwise script` parity depends on it);
/// this is what the docs and tests compare it with.
#[must_use]
pub fn fast_forward_cap(step: StepLength, frame: Nanos) -> u64 {
    SPEEDS
        .iter()
        .filter_map(|&(p, q)| Speed::new(p, q).ok())
        .map(|s| s.step_cap_for(step, frame))
        .max()
        .unwrap_or(0)
}

/// Why the island page could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IslandPageError {
    /// A config was refused.
    Config(ConfigError),
    /// The catalog refused the loop config as a replay header.
    Catalog(CatalogError),
    /// The recording could not start.
    Recording(ReplayError),
}

impl std::fmt::Display for IslandPageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IslandPageError::Config(e) => write!(f, "island config: {e}"),
            IslandPageError::Catalog(e) => write!(f, "island replay header: {e}"),
            IslandPageError::Recording(e) => write!(f, "island recording: {e}"),
        }
    }
}

impl std::error::Error for IslandPageError {}

impl From<ConfigError> for IslandPageError {
    fn from(e: ConfigError) -> IslandPageError {
        IslandPageError::Config(e)
    }
}

/// The island's loop inside the adapter.
pub type IslandLoop = WebLoop<IslandWorld, TickInputs<i32>>;

/// What the canvas draws: the world's state as numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IslandView {
    /// Horizontal position.
    pub pos_x: i64,
    /// Vertical position.
    pub pos_y: i64,
    /// Horizontal velocity.
    pub vel_x: i64,
    /// Vertical velocity.
    pub vel_y: i64,
    /// Score.
    pub score: u64,
    /// Steps run.
    pub tick: u64,
    /// Whether the lifecycle is running.
    pub running: bool,
}

/// The island page's model. See the [module docs](self).
#[derive(Debug)]
pub struct IslandPage {
    /// The loop config's bytes: they go into the replay header.
    loop_json: Vec<u8>,
    cfg: IslandConfig,
    lc: LifecycleConfig,
    web: IslandLoop,
    scenes: SceneStack,
    /// The loop's tick when the scene stack was last given its ticks.
    scenes_at: u64,
}

fn start_scenes() -> SceneStack {
    let mut scenes = SceneStack::new();
    for name in ["menu", "game"] {
        // Both names are valid and the stack is empty: this cannot fail.
        let _ = scenes.push(name);
    }
    scenes
}

impl IslandPage {
    /// A fresh page on the compiled-in configs: tick 0, scenes `menu`,
    /// `game`, recording.
    ///
    /// # Errors
    ///
    /// An [`IslandPageError`] if the compiled-in configs are invalid (a build
    /// defect that the crate's tests catch).
    pub fn new() -> Result<IslandPage, IslandPageError> {
        IslandPage::with_configs(ISLAND_LOOP_JSON, ISLAND_LIFECYCLE_JSON)
    }

    /// A fresh page on the given config files' bytes.
    ///
    /// # Errors
    ///
    /// An [`IslandPageError`] naming the offending key.
    pub fn with_configs(
        loop_json: &[u8],
        lifecycle_json: &[u8],
    ) -> Result<IslandPage, IslandPageError> {
        let cfg = IslandConfig::from_json(loop_json)?;
        let lc = LifecycleConfig::from_json(lifecycle_json)?;
        IslandPage::with_parsed(loop_json.to_vec(), cfg, lc)
    }

    fn with_parsed(
        loop_json: Vec<u8>,
        cfg: IslandConfig,
        lc: LifecycleConfig,
    ) -> Result<IslandPage, IslandPageError> {
        let lp = island_loop(&cfg, &lc, scripted_inputs(INPUT_TICKS))?;
        let header = tickwise_catalog::replay_header::<IslandWorld>(&loop_json, CHECKPOINT_EVERY)
            .map_err(IslandPageError::Catalog)?;
        let web = WebLoop::recording(lp, header).map_err(IslandPageError::Recording)?;
        Ok(IslandPage {
            loop_json,
            cfg,
            lc,
            web,
            scenes: start_scenes(),
            scenes_at: 0,
        })
    }

    /// The adapter (read-only).
    #[must_use]
    pub const fn web(&self) -> &IslandLoop {
        &self.web
    }

    /// The adapter: frames, visibility, pause and resume, the test API.
    pub const fn web_mut(&mut self) -> &mut IslandLoop {
        &mut self.web
    }

    /// The configured step in ms (`stepFrames`' default frame).
    #[must_use]
    pub const fn step_ms(&self) -> u64 {
        self.cfg.step_ms
    }

    /// Gives the scene stack the ticks run since it last looked.
    fn sync_scenes(&mut self) {
        let now = self.web.tick();
        self.scenes.run_ticks(now - self.scenes_at);
        self.scenes_at = now;
    }

    /// Pushes a scene; `false` for an invalid name or a full stack.
    pub fn push_scene(&mut self, name: &str) -> bool {
        self.sync_scenes();
        self.scenes.push(name).is_ok()
    }

    /// Pops a scene; `false` on an empty stack.
    pub fn pop_scene(&mut self) -> bool {
        self.sync_scenes();
        self.scenes.pop().is_ok()
    }

    /// The scene stack dump, e.g. `menu=paused,game=active`, up to the
    /// loop's current tick.
    #[must_use]
    pub fn scenes(&self) -> SceneStack {
        let mut s = self.scenes.clone();
        s.run_ticks(self.web.tick() - self.scenes_at);
        s
    }

    /// What the canvas draws.
    #[must_use]
    pub fn view(&self) -> IslandView {
        let w = self.web.sim();
        IslandView {
            pos_x: w.pos_x(),
            pos_y: w.pos_y(),
            vel_x: w.vel_x(),
            vel_y: w.vel_y(),
            score: w.score(),
            tick: self.web.tick(),
            running: self.web.state() == tickwise::AppState::Running,
        }
    }
}

impl WebPage for IslandPage {
    type Sim = IslandWorld;
    type Inputs = TickInputs<i32>;
    type Error = IslandPageError;

    fn create() -> Result<IslandPage, IslandPageError> {
        IslandPage::new()
    }

    fn web_loop(&self) -> &IslandLoop {
        &self.web
    }

    fn web_loop_mut(&mut self) -> &mut IslandLoop {
        &mut self.web
    }

    /// The adapter's state plus `scenes`, `stepMs` and `rejectedFrames` (the
    /// island's name for `rejectedTimes`, kept for its test API).
    fn state_json(&self) -> Value {
        let mut m = self.web.state_json();
        m.insert("scenes".into(), self.scenes().to_string().into());
        m.insert("stepMs".into(), self.cfg.step_ms.into());
        m.insert(
            "rejectedFrames".into(),
            self.web.host_clock().rejected().into(),
        );
        Value::Object(m)
    }

    /// Back to the fresh state (configs kept), recording from tick 0 again.
    fn reset(&mut self) -> Result<(), IslandPageError> {
        *self = IslandPage::with_parsed(self.loop_json.clone(), self.cfg, self.lc)?;
        Ok(())
    }
}

crate::wasm_page! {
    /// The island prototype page's model for JavaScript: `new Island()` (see
    /// [`IslandPage`]; the common methods are [`crate::page`]'s).
    pub struct IslandHandle(IslandPage) as Island;
}

#[wasm_bindgen(js_class = Island)]
impl IslandHandle {
    /// Pushes a scene; `false` when refused.
    #[wasm_bindgen(js_name = pushScene)]
    pub fn push_scene(&mut self, name: &str) -> bool {
        self.page_mut().push_scene(name)
    }

    /// Pops a scene; `false` on an empty stack.
    #[wasm_bindgen(js_name = popScene)]
    pub fn pop_scene(&mut self) -> bool {
        self.page_mut().pop_scene()
    }

    /// What the canvas draws: `[posX, posY, velX, velY, score, tick, running]`.
    pub fn view(&self) -> Box<[f64]> {
        let v = self.page().view();
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
        num(self.page().step_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::{ResumeOutcome, VisibilityOutcome};

    fn page() -> IslandPage {
        IslandPage::new().expect("the compiled-in configs are valid")
    }

    fn state(p: &IslandPage) -> Value {
        p.state_json()
    }

    /// `stepFrames`: the tick after `n` frames of `ms`.
    fn frames(p: &mut IslandPage, n: u32, ms: Option<u32>) -> u64 {
        p.web_mut()
            .step_frames(f64::from(n), ms.map(f64::from))
            .expect("valid arguments");
        p.web().tick()
    }

    fn resume_after(p: &mut IslandPage, ms: f64) -> ResumeOutcome {
        p.web_mut().resume_after(ms).expect("valid ms").clone()
    }

    fn frame(p: &mut IslandPage, ms: f64) -> u32 {
        p.web_mut().frame_at(ms).expect("a good timestamp").steps
    }

    /// elapsed, wanted, caught up, carried, dropped.
    fn numbers(r: &ResumeOutcome) -> [u64; 5] {
        r.summary.numbers().map(|(_, v)| v)
    }

    #[test]
    fn resume_rules_timeline_numbers() {
        // The prototype's timeline: 100 frames of 16 ms, pause, 5 s away
        // (312 steps owed at 16 ms, 300 allowed, 200 ms dropped), pause, an
        // hour away (225 000 owed, 300 run), then the scene pushes and pops.
        let mut p = page();
        assert_eq!(state(&p)["scenes"], "menu=paused,game=active");
        assert_eq!(frames(&mut p, 100, Some(16)), 100);
        assert!(p.web_mut().pause_now());
        assert_eq!(state(&p)["state"], "paused");
        let r = resume_after(&mut p, 5000.0);
        assert!(r.summary.ok);
        assert_eq!(numbers(&r), [5000, 312, 300, 0, 200]);
        assert_eq!(p.web().tick(), 400);
        assert!(p.web_mut().pause_now());
        let r = resume_after(&mut p, 3_600_000.0);
        assert_eq!(
            (r.summary.wanted_steps, r.summary.catch_up_steps),
            (225_000, 300)
        );
        assert_eq!(p.web().tick(), 700);
        assert_eq!(state(&p)["state"], "running");
        assert!(p.push_scene("popup"));
        assert_eq!(state(&p)["scenes"], "menu=paused,game=paused,popup=active");
        assert!(p.pop_scene());
        assert_eq!(state(&p)["scenes"], "menu=paused,game=active");
        assert!(p.pop_scene() && p.pop_scene());
        assert_eq!(state(&p)["scenes"], "");
        assert!(!p.pop_scene(), "a fourth pop is refused");
    }

    #[test]
    fn hundred_frames_reach_the_golden_digest() {
        let mut p = page();
        assert_eq!(frames(&mut p, 100, None), 100);
        assert_eq!(state(&p)["digest"], "100|-131|5050|18|100|323|3492529440|0");
    }

    #[test]
    fn refused_resume_reports_ok_false_and_zeros() {
        let mut p = page();
        let r = resume_after(&mut p, 10.0);
        assert!(!r.summary.ok);
        assert_eq!(numbers(&r), [0; 5]);
        let j = r.to_json();
        let mut keys: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "carriedMs",
                "catchUpSteps",
                "digest",
                "droppedMs",
                "elapsedMs",
                "ok",
                "wantedSteps"
            ]
        );
    }

    #[test]
    fn bad_arguments_are_errors_and_run_nothing() {
        let mut p = page();
        let w = p.web_mut();
        assert!(w.step_frames(-1.0, None).is_err());
        assert!(w.step_frames(10.0, Some(16.5)).is_err());
        assert!(w.step_frames(f64::NAN, None).is_err());
        assert!(w.step_frames(1e8, None).is_err());
        assert!(w.advance(1e9).is_err());
        assert!(w.pause_now());
        assert!(w.resume_after(-5.0).is_err());
        assert_eq!(
            state(&p)["state"],
            "paused",
            "a refused argument changes nothing"
        );
        assert_eq!(p.web().tick(), 0);
        assert!(!p.push_scene("a=b"));
    }

    #[test]
    fn reset_returns_to_the_fresh_state() {
        let mut p = page();
        let fresh = state(&p);
        frames(&mut p, 7, Some(33));
        p.web_mut().pause_now();
        resume_after(&mut p, 100.0);
        p.push_scene("x");
        p.web_mut().frame_at(f64::NAN).unwrap_err();
        p.reset().unwrap();
        assert_eq!(state(&p), fresh);
    }

    #[test]
    fn real_time_frames_follow_browser_time() {
        let mut p = page();
        // First frame anchors (zero-length), then 16.5 ms frames: the
        // accumulator gives floor(total / 16) steps over 10 frames = 165 ms.
        assert_eq!(frame(&mut p, 1234.5), 0);
        let steps: u32 = (1..=10)
            .map(|k| frame(&mut p, 1234.5 + 16.5 * f64::from(k)))
            .sum();
        assert_eq!(steps, 10); // 165 / 16 = 10 rem 5
        assert_eq!(state(&p)["accumulator"], 5);
        // A NaN frame is ignored and counted; time resumes from the last good frame.
        assert!(p.web_mut().frame_at(f64::NAN).is_err());
        assert_eq!(frame(&mut p, 1234.5 + 165.0 + 11.0), 1); // 5 + 11 = 16
        assert_eq!(state(&p)["rejectedFrames"], 1);
        // A backwards frame is a zero-length frame, counted by the loop.
        assert_eq!(frame(&mut p, 1000.0), 0);
        assert_eq!(state(&p)["backwardsFrames"], 1);
        // The active scene accrued every real-time step: pushing a popup and
        // popping it leaves `game` active with 11 ticks (not visible in the
        // dump, but in the scene itself).
        assert_eq!(
            p.scenes().active().map(tickwise::Scene::active_ticks),
            Some(11)
        );
    }

    #[test]
    fn synthetic_moves_reanchor_the_browser_clock() {
        let mut p = page();
        frame(&mut p, 500.0);
        frames(&mut p, 100, None); // host clock +1600 ms, no real time
        // The next real frame is pinned to the new host time: no double count.
        assert_eq!(frame(&mut p, 516.0), 0);
        assert_eq!(frame(&mut p, 532.0), 1);
        assert_eq!(p.web().tick(), 101);
    }

    #[test]
    fn hidden_for_an_hour_resumes_capped_through_the_platform_adapter() {
        let mut p = page();
        frame(&mut p, 0.0);
        frame(&mut p, 1600.0); // capped at 8 steps per frame
        assert_eq!(p.web().tick(), 8);
        let w = p.web_mut();
        assert_eq!(
            w.visibility(true, 1600.0),
            Ok(VisibilityOutcome::Backgrounded)
        );
        assert_eq!(state(&p)["state"], "background");
        let w = p.web_mut();
        assert_eq!(w.visibility(true, 1700.0), Ok(VisibilityOutcome::Ignored));
        let out = w.visibility(false, 1600.0 + 3_600_000.0).unwrap();
        let VisibilityOutcome::Resumed(r) = out else {
            panic!("expected a resume, got {out:?}");
        };
        // 3 600 000 ms / 16 = 225 000 wanted; cap 300; dropped 3 600 000 - 4 800.
        assert_eq!(numbers(&r), [3_600_000, 225_000, 300, 0, 3_595_200]);
        assert_eq!(p.web().tick(), 308);
        assert_eq!(p.web().last_resume(), Some(&r));
        assert_eq!(state(&p)["lastResume"]["catchUpSteps"], 300);
        // A blink shorter than minCatchUpMs (32) is jitter: nothing runs.
        let w = p.web_mut();
        w.visibility(true, 3_601_600.0).unwrap();
        let VisibilityOutcome::Resumed(r) = w.visibility(false, 3_601_620.0).unwrap() else {
            panic!("expected a resume");
        };
        assert_eq!(numbers(&r)[1..], [1, 0, 0, 20]);
        // The catch-up ran the active scene's time too.
        assert_eq!(
            p.scenes().active().map(tickwise::Scene::active_ticks),
            Some(308)
        );
    }

    /// `tickwise verify`'s check on the page's replay: the built-in catalog
    /// re-simulates it; returns the verified final digest.
    fn verified_digest(p: &IslandPage) -> String {
        let bytes = p.web().replay_bytes().expect("the page records");
        let limits = tickwise::ReplayLimits::DEFAULT;
        let report = tickwise_catalog::Catalog::builtin()
            .verify(&bytes, &limits)
            .expect("a readable replay");
        match report.verdict {
            tickwise::ReplayVerdict::Match { digest } => digest,
            other => panic!("the page's replay did not verify: {other:?}"),
        }
    }

    #[test]
    fn the_live_session_verifies_with_cap_hits_speeds_hides_and_resets() {
        let mut p = page();
        assert_eq!(state(&p)["recording"], true);
        frame(&mut p, 0.0);
        frame(&mut p, 40.0);
        // A 1 600 ms frame: 100 steps owed, 8 run, the rest dropped (the
        // island counts it in droppedMs, the last digest field).
        frame(&mut p, 1640.0);
        assert_eq!(p.web().tick(), 10);
        assert!(p.web_mut().set_speed(1.0, 4.0));
        frame(&mut p, 1704.0); // 16 ms of sim time: one step
        assert!(p.web_mut().set_speed(4.0, 1.0));
        frame(&mut p, 1720.0); // 64 ms: four steps
        assert_eq!(p.web().tick(), 15);
        p.web_mut().visibility(true, 1730.0).unwrap();
        // Hidden an hour at 4x: capped at 300 catch-up steps, the rest dropped.
        p.web_mut().visibility(false, 3_601_730.0).unwrap();
        assert!(p.web_mut().pause_now());
        resume_after(&mut p, 6000.0);
        assert!(p.web_mut().set_speed(1.0, 1.0));
        frames(&mut p, 7, Some(29));
        let digest = p.web().digest();
        assert!(
            !digest.ends_with("|0"),
            "time was dropped and the island counted it: {digest}"
        );
        assert_eq!(verified_digest(&p), digest);
        // replay() is non-destructive: the session goes on and verifies again.
        frame(&mut p, 3_610_000.0);
        assert_eq!(verified_digest(&p), p.web().digest());
        // A reset records a new session from tick 0.
        p.reset().unwrap();
        assert_eq!(verified_digest(&p), p.web().digest());
        frames(&mut p, 100, None);
        assert_eq!(verified_digest(&p), "100|-131|5050|18|100|323|3492529440|0");
    }

    #[test]
    fn the_config_cap_covers_a_60_hz_frame_at_the_fastest_speed() {
        let step = StepLength::from_millis(16).unwrap();
        // 4x of a 60 Hz frame (16 666 667 ns) is 66.7 ms of sim time: 4 whole
        // steps, plus 2 for what the accumulator and a resume may carry = 6.
        let frame_60 = Nanos::from_nanos(16_666_667);
        assert_eq!(fast_forward_cap(step, frame_60), 6);
        let cap = u64::from(page().cfg.clock_config().max_steps_per_frame().get());
        assert_eq!(cap, 8);
        assert!(fast_forward_cap(step, frame_60) <= cap);
        // A 30 Hz frame at 4x (133.3 ms: 8 steps + 2) needs 10: at 4x on a
        // 30 Hz display the cap drops time, and the replay records it.
        assert_eq!(fast_forward_cap(step, Nanos::from_nanos(33_333_334)), 10);
    }

    #[test]
    fn a_players_pause_survives_hide_and_show() {
        let mut p = page();
        frame(&mut p, 0.0);
        let w = p.web_mut();
        assert!(w.pause_now());
        assert_eq!(w.visibility(true, 100.0), Ok(VisibilityOutcome::Ignored));
        assert_eq!(w.visibility(false, 5000.0), Ok(VisibilityOutcome::Ignored));
        assert_eq!(state(&p)["state"], "paused");
        assert!(p.web_mut().visibility(false, f64::NAN).is_err());
    }
}
