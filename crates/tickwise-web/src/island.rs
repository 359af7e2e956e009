//! The island prototype page's model: seed 002's controls over our kernel.
//!
//! [`IslandPage`] wraps the same [`IslandSession`] that `tickwise script`
//! drives, with the same embedded configs (`config/island_loop.json` and
//! `config/island_lifecycle.json`, compiled in: one config, every consumer)
//! and the same 100 000 seed-pattern inputs, so a timeline run through the
//! page ends on the digest the CLI prints. On top it adds what a page needs:
//!
//! * argument checking for numbers that arrive as JS `f64`s ([`crate::args`]);
//! * real-time mode: `requestAnimationFrame` timestamps and `visibilitychange`
//!   events mapped onto the loop's host clock by a [`HostClock`];
//! * the last resume report, kept for the readout and the test API.
//!
//! Everything here is plain Rust, tested natively; `crate::bindings` only
//! converts types for JavaScript.

use serde_json::{Value, json};
use tickwise::{ResumeReport, TimeError};
use tickwise_sims::ConfigError;
use tickwise_sims::island::{
    IslandConfig, IslandSession, LifecycleConfig, MAX_ADVANCE, MAX_DURATION_MS,
    MAX_FRAMES_PER_CALL, SessionError, scripted_inputs,
};

use crate::args::{ArgError, whole};
use crate::host::HostClock;
use crate::lifecycle::{ResumeOutcome, VisibilityOutcome, platform_event};

/// `config/island_loop.json`, compiled in.
pub const ISLAND_LOOP_JSON: &[u8] = include_bytes!("../../../config/island_loop.json");
/// `config/island_lifecycle.json`, compiled in.
pub const ISLAND_LIFECYCLE_JSON: &[u8] = include_bytes!("../../../config/island_lifecycle.json");
/// Seed-pattern inputs for ticks `0..INPUT_TICKS`, as `tickwise script` uses by default.
pub const INPUT_TICKS: usize = 100_000;
/// A page call that was refused; nothing ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageError {
    /// A JS number that is not a whole number in range.
    Arg(ArgError),
    /// A limit of the session (the same limits `tickwise script` enforces).
    Session(SessionError),
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageError::Arg(e) => e.fmt(f),
            PageError::Session(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PageError {}

impl From<ArgError> for PageError {
    fn from(e: ArgError) -> PageError {
        PageError::Arg(e)
    }
}

impl From<SessionError> for PageError {
    fn from(e: SessionError) -> PageError {
        PageError::Session(e)
    }
}

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
    cfg: IslandConfig,
    lc: LifecycleConfig,
    session: IslandSession,
    host: HostClock,
    last_resume: Option<ResumeOutcome>,
}

impl IslandPage {
    /// A fresh page on the compiled-in configs: tick 0, scenes `menu`, `game`.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] if the compiled-in configs are invalid (a build
    /// defect that the crate's tests catch).
    pub fn new() -> Result<IslandPage, ConfigError> {
        IslandPage::with_configs(ISLAND_LOOP_JSON, ISLAND_LIFECYCLE_JSON)
    }

    /// A fresh page on the given config files' bytes.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the offending key.
    pub fn with_configs(
        loop_json: &[u8],
        lifecycle_json: &[u8],
    ) -> Result<IslandPage, ConfigError> {
        let cfg = IslandConfig::from_json(loop_json)?;
        let lc = LifecycleConfig::from_json(lifecycle_json)?;
        let session = IslandSession::new(&cfg, &lc, scripted_inputs(INPUT_TICKS))?;
        Ok(IslandPage {
            cfg,
            lc,
            session,
            host: HostClock::new(),
            last_resume: None,
        })
    }

    /// Back to the fresh state (configs kept).
    pub fn reset(&mut self) {
        // The configs were accepted once, so the session builds again.
        if let Ok(s) = IslandSession::new(&self.cfg, &self.lc, scripted_inputs(INPUT_TICKS)) {
            self.session = s;
        }
        self.host = HostClock::new();
        self.last_resume = None;
    }

    /// The configured step in ms (`stepFrames`' default frame).
    #[must_use]
    pub const fn step_ms(&self) -> u64 {
        self.cfg.step_ms
    }

    /// Feeds `n` frames of `ms` each (default: one step); returns the tick.
    ///
    /// # Errors
    ///
    /// [`PageError`] unless `n` is a whole number up to
    /// [`MAX_FRAMES_PER_CALL`], `ms` one up to [`MAX_DURATION_MS`], and the
    /// session's wall clock has room; nothing runs then.
    pub fn step_frames(&mut self, n: f64, ms: Option<f64>) -> Result<u64, PageError> {
        let n = whole("n", n, MAX_FRAMES_PER_CALL)?;
        let ms = match ms {
            Some(v) => whole("ms", v, MAX_DURATION_MS)?,
            None => self.cfg.step_ms,
        };
        self.session.frames(n, ms)?;
        self.host.reanchor();
        Ok(self.session.tick())
    }

    /// Runs `n` steps directly (whatever the lifecycle state); returns the tick.
    ///
    /// # Errors
    ///
    /// [`PageError`] unless `n` is a whole number up to [`MAX_ADVANCE`].
    pub fn advance(&mut self, n: f64) -> Result<u64, PageError> {
        let n = whole("n", n, MAX_ADVANCE)?;
        self.session.advance(n)?;
        Ok(self.session.tick())
    }

    /// Pauses now; `false` unless running.
    pub fn pause_now(&mut self) -> bool {
        self.session.pause()
    }

    /// Goes to the background now; `false` unless running.
    pub fn background_now(&mut self) -> bool {
        self.session.background()
    }

    /// Moves the host clock by `ms`, then resumes. A refused resume (already
    /// running) reports `ok: false` and zeros, like `tickwise script`, and
    /// changes nothing.
    ///
    /// # Errors
    ///
    /// [`PageError`] unless `ms` is a whole number up to [`MAX_DURATION_MS`]
    /// and the session's wall clock has room; nothing happens then.
    pub fn resume_after(&mut self, ms: f64) -> Result<&ResumeOutcome, PageError> {
        let ms = whole("ms", ms, MAX_DURATION_MS)?;
        let r = match self.session.resume_after(ms) {
            Ok(r) => Some(r),
            Err(SessionError::Lifecycle(_)) => None,
            Err(e) => return Err(e.into()),
        };
        self.host.reanchor();
        Ok(self.record_resume(r.as_ref()))
    }

    fn record_resume(&mut self, r: Option<&ResumeReport>) -> &ResumeOutcome {
        self.last_resume
            .insert(ResumeOutcome::new(r, self.session.digest()))
    }

    /// Pushes a scene; `false` for an invalid name or a full stack.
    pub fn push_scene(&mut self, name: &str) -> bool {
        self.session.push(name).is_ok()
    }

    /// Pops a scene; `false` on an empty stack.
    pub fn pop_scene(&mut self) -> bool {
        self.session.pop().is_ok()
    }

    /// Forgets the browser-clock anchor: the next browser time maps to the
    /// loop's current host time. The page calls it when real-time mode starts,
    /// so time spent in manual mode is not fed as one huge frame.
    pub const fn reanchor(&mut self) {
        self.host.reanchor();
    }

    /// Real-time mode: a frame at browser time `ms` (a `requestAnimationFrame`
    /// timestamp). Returns the steps it ran.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a NaN, infinite or negative timestamp: the frame is
    /// ignored (no time moves, nothing steps) and counted in the state's
    /// `rejectedFrames`.
    pub fn frame_at(&mut self, ms: f64) -> Result<u32, TimeError> {
        let now = self.host.map(ms, self.session.fixed_loop().host_time())?;
        Ok(self.session.frame_at(now).steps)
    }

    /// The platform adapter's entry: the page became hidden (`true`) or
    /// visible (`false`) at browser time `ms`. Hidden sends a running app to
    /// the background; visible resumes an app in the background under the
    /// catch-up policy. A player's pause survives the tab being hidden.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a NaN, infinite or negative time: the event is
    /// ignored and counted in `rejectedFrames`.
    pub fn visibility(&mut self, hidden: bool, ms: f64) -> Result<VisibilityOutcome, TimeError> {
        let now = self.host.map(ms, self.session.fixed_loop().host_time())?;
        let before = self.session.state();
        let report = self.session.platform_event(platform_event(hidden), now);
        let out =
            VisibilityOutcome::classify(before, self.session.state(), report.as_ref(), || {
                self.session.digest()
            });
        if let VisibilityOutcome::Resumed(r) = &out {
            self.last_resume = Some(r.clone());
        }
        Ok(out)
    }

    /// The last resume (from the API, a button or the platform), if any.
    #[must_use]
    pub const fn last_resume(&self) -> Option<&ResumeOutcome> {
        self.last_resume.as_ref()
    }

    /// The session (read-only).
    #[must_use]
    pub const fn session(&self) -> &IslandSession {
        &self.session
    }

    /// What the canvas draws.
    #[must_use]
    pub fn view(&self) -> IslandView {
        let w = self.session.world();
        IslandView {
            pos_x: w.pos_x(),
            pos_y: w.pos_y(),
            vel_x: w.vel_x(),
            vel_y: w.vel_y(),
            score: w.score(),
            tick: self.session.tick(),
            running: self.session.state() == tickwise::AppState::Running,
        }
    }

    /// The test API's state object, minus the page's own `paintCount`:
    /// `state`, `scenes`, `digest`, `tick`, `accumulator` (ms), `lastResume`
    /// (a resume report or `null`), `wallMs` (the host clock), `stepMs`,
    /// `rejectedFrames` (bad browser times ignored) and `backwardsFrames`.
    #[must_use]
    pub fn state_json(&self) -> Value {
        let lp = self.session.fixed_loop();
        json!({
            "state": self.session.state().as_str(),
            "scenes": self.session.scenes(),
            "digest": self.session.digest(),
            "tick": self.session.tick(),
            "accumulator": self.session.accumulator_ms(),
            "lastResume": self.last_resume.as_ref().map(ResumeOutcome::to_json),
            "wallMs": self.session.wall_ms(),
            "stepMs": self.cfg.step_ms,
            "rejectedFrames": self.host.rejected(),
            "backwardsFrames": lp.backwards_frames(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> IslandPage {
        IslandPage::new().expect("the compiled-in configs are valid")
    }

    fn state(p: &IslandPage) -> Value {
        p.state_json()
    }

    /// elapsed, wanted, caught up, carried, dropped.
    fn numbers(r: &ResumeOutcome) -> (u64, u64, u64, u64, u64) {
        (
            r.summary.elapsed_ms,
            r.summary.wanted_steps,
            r.summary.catch_up_steps,
            r.summary.carried_ms,
            r.summary.dropped_ms,
        )
    }

    #[test]
    fn seed_002_timeline_numbers() {
        // Every number below is from SPEC.md / seed 002.
        let mut p = page();
        assert_eq!(state(&p)["scenes"], "menu=paused,game=active");
        assert_eq!(p.step_frames(100.0, Some(16.0)), Ok(100));
        assert!(p.pause_now());
        assert_eq!(state(&p)["state"], "paused");
        let r = p.resume_after(5000.0).unwrap().clone();
        assert!(r.summary.ok);
        assert_eq!(
            (
                r.summary.elapsed_ms,
                r.summary.wanted_steps,
                r.summary.catch_up_steps,
                r.summary.dropped_ms
            ),
            (5000, 312, 300, 200)
        );
        assert_eq!(p.session().tick(), 400);
        assert!(p.pause_now());
        let r = p.resume_after(3_600_000.0).unwrap().clone();
        assert_eq!(
            (r.summary.wanted_steps, r.summary.catch_up_steps),
            (225_000, 300)
        );
        assert_eq!(p.session().tick(), 700);
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
    fn hundred_frames_reach_the_seed_digest() {
        let mut p = page();
        p.step_frames(100.0, None).unwrap();
        assert_eq!(state(&p)["digest"], "100|-131|5050|18|100|323|3492529440|0");
    }

    #[test]
    fn refused_resume_reports_ok_false_and_zeros() {
        let mut p = page();
        let r = p.resume_after(10.0).unwrap().clone();
        assert!(!r.summary.ok);
        assert_eq!(numbers(&r), (0, 0, 0, 0, 0));
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
        assert!(p.step_frames(-1.0, None).is_err());
        assert!(p.step_frames(10.0, Some(16.5)).is_err());
        assert!(p.step_frames(f64::NAN, None).is_err());
        assert!(p.step_frames(1e8, None).is_err());
        assert!(p.advance(1e9).is_err());
        assert!(p.pause_now());
        assert!(p.resume_after(-5.0).is_err());
        assert_eq!(
            state(&p)["state"],
            "paused",
            "a refused argument changes nothing"
        );
        assert_eq!(p.session().tick(), 0);
        assert!(!p.push_scene("a=b"));
    }

    #[test]
    fn reset_returns_to_the_fresh_state() {
        let mut p = page();
        let fresh = state(&p);
        p.step_frames(7.0, Some(33.0)).unwrap();
        p.pause_now();
        p.resume_after(100.0).unwrap();
        p.push_scene("x");
        p.frame_at(f64::NAN).unwrap_err();
        p.reset();
        assert_eq!(state(&p), fresh);
    }

    #[test]
    fn real_time_frames_follow_browser_time() {
        let mut p = page();
        // First frame anchors (zero-length), then 16.5 ms frames: the
        // accumulator gives floor(total / 16) steps over 10 frames = 165 ms.
        assert_eq!(p.frame_at(1234.5), Ok(0));
        let steps: u32 = (1..=10)
            .map(|k| p.frame_at(1234.5 + 16.5 * f64::from(k)).unwrap())
            .sum();
        assert_eq!(steps, 10); // 165 / 16 = 10 rem 5
        assert_eq!(state(&p)["accumulator"], 5);
        // A NaN frame is ignored and counted; time resumes from the last good frame.
        assert!(p.frame_at(f64::NAN).is_err());
        assert_eq!(p.frame_at(1234.5 + 165.0 + 11.0), Ok(1)); // 5 + 11 = 16
        assert_eq!(state(&p)["rejectedFrames"], 1);
        // A backwards frame is a zero-length frame, counted by the loop.
        assert_eq!(p.frame_at(1000.0), Ok(0));
        assert_eq!(state(&p)["backwardsFrames"], 1);
    }

    #[test]
    fn synthetic_moves_reanchor_the_browser_clock() {
        let mut p = page();
        p.frame_at(500.0).unwrap();
        p.step_frames(100.0, None).unwrap(); // host clock +1600 ms, no real time
        // The next real frame is pinned to the new host time: no double count.
        assert_eq!(p.frame_at(516.0), Ok(0));
        assert_eq!(p.frame_at(532.0), Ok(1));
        assert_eq!(p.session().tick(), 101);
    }

    #[test]
    fn hidden_for_an_hour_resumes_capped_through_the_platform_adapter() {
        let mut p = page();
        p.frame_at(0.0).unwrap();
        p.frame_at(1600.0).unwrap(); // capped at 8 steps per frame
        assert_eq!(p.session().tick(), 8);
        assert_eq!(
            p.visibility(true, 1600.0),
            Ok(VisibilityOutcome::Backgrounded)
        );
        assert_eq!(state(&p)["state"], "background");
        assert_eq!(p.visibility(true, 1700.0), Ok(VisibilityOutcome::Ignored));
        let out = p.visibility(false, 1600.0 + 3_600_000.0).unwrap();
        let VisibilityOutcome::Resumed(r) = out else {
            panic!("expected a resume, got {out:?}");
        };
        // 3 600 000 ms / 16 = 225 000 wanted; cap 300; dropped 3 600 000 - 4 800.
        assert_eq!(numbers(&r), (3_600_000, 225_000, 300, 0, 3_595_200));
        assert_eq!(p.session().tick(), 308);
        assert_eq!(p.last_resume(), Some(&r));
        // A blink shorter than minCatchUpMs (32) is jitter: nothing runs.
        p.visibility(true, 3_601_600.0).unwrap();
        let VisibilityOutcome::Resumed(r) = p.visibility(false, 3_601_620.0).unwrap() else {
            panic!("expected a resume");
        };
        assert_eq!(
            (
                r.summary.wanted_steps,
                r.summary.catch_up_steps,
                r.summary.dropped_ms
            ),
            (1, 0, 20)
        );
    }

    #[test]
    fn a_players_pause_survives_hide_and_show() {
        let mut p = page();
        p.frame_at(0.0).unwrap();
        assert!(p.pause_now());
        assert_eq!(p.visibility(true, 100.0), Ok(VisibilityOutcome::Ignored));
        assert_eq!(p.visibility(false, 5000.0), Ok(VisibilityOutcome::Ignored));
        assert_eq!(state(&p)["state"], "paused");
        assert!(p.visibility(false, f64::NAN).is_err());
    }
}
