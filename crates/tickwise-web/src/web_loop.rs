//! The generic browser adapter: any [`Sim`] in a [`FixedLoop`], driven by
//! browser timestamps.
//!
//! A page needs the same few things whatever it simulates: turn
//! `requestAnimationFrame` timestamps (float milliseconds) into frames of the
//! loop, turn `visibilitychange` into the kernel's [`tickwise::PlatformEvent`]s, pause
//! and resume with a report a tool can compare, and a test API that moves time
//! synthetically without fighting the real clock. [`WebLoop`] is that adapter,
//! written once: the island page, the horde page and a game's own page are thin
//! layers over it (see [`crate::page`] for the JavaScript side).
//!
//! It is plain Rust with native tests; nothing here touches `wasm-bindgen`.
//! Floats appear only as the browser's `f64` arguments, which are checked
//! ([`crate::args`]) or mapped ([`HostClock`]) before anything else happens.
//!
//! # Time, and why the browser clock is re-anchored
//!
//! The loop keeps its own integer host clock. Real-time frames move it by the
//! browser time elapsed ([`WebLoop::frame_at`]); the test API moves it by
//! whole milliseconds with no real time passing ([`WebLoop::step_frames`],
//! [`WebLoop::resume_after`]). After a synthetic move the browser clock is
//! re-anchored, so the next real frame measures from the loop's new time and
//! the two kinds of time never count twice.
//!
//! # Bad browser times
//!
//! A NaN, infinite or negative timestamp is refused: nothing moves, nothing
//! steps, and [`HostClock::rejected`] counts it. A timestamp earlier than the
//! previous frame is a zero-length frame, counted by the loop
//! ([`FixedLoop::backwards_frames`]). No JS input can panic the adapter.
//!
//! # Recording and speed
//!
//! A page that starts its loop with [`WebLoop::recording`] records the whole
//! session from tick 0 (the kernel's live recording: every tick's input,
//! catch-up ticks included, and every millisecond the step cap, the frame
//! clamp or a capped resume dropped). [`WebLoop::replay_bytes`] and
//! [`WebLoop::replay_base64`] hand out the replay file at any moment; the
//! recording goes on through pauses, hides, resumes and speed changes, and
//! `tickwise verify` on the file ends on the page's digest. The adapter keeps
//! no copy of its own: it only remembers, as a function pointer taken where
//! the input type is known to be recordable, how to ask the loop for its
//! replay, so the JavaScript class of every page has the same `replay()`
//! whether or not its sim records.
//!
//! [`WebLoop::set_speed`] checks two JS numbers and hands the kernel an exact
//! [`Speed`]; the loop scales every stretch of host time from then on.

use serde_json::{Map, Value};
use tickwise::{
    AppState, Capture, FixedLoop, FrameReport, InputSource, Nanos, Presenter, ReplayError,
    ReplayHeader, ReplayInput, ResumeReport, Sim, Speed, StepLength, TimeError, Timestamp,
};

use crate::args::{ArgError, whole};
use crate::host::HostClock;
use crate::lifecycle::{ResumeOutcome, VisibilityOutcome, platform_event};

// The test API's limits are the kernel's play-session limits, the same as
// `tickwise script`'s: the most frames one `step_frames` call feeds
// (MAX_FRAMES_PER_CALL), steps one `advance` runs (MAX_ADVANCE), the longest
// synthetic duration (MAX_DURATION_MS) and the furthest the host clock may
// move (MAX_WALL_MS, far inside the kernel's u64 nanosecond clock).
use tickwise::{MAX_ADVANCE, MAX_DURATION_MS, MAX_FRAMES_PER_CALL, MAX_WALL_MS};

/// A test-API call that was refused; nothing ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WebError {
    /// A JS number that is not a whole number in range.
    Arg(ArgError),
    /// The call would move the host clock past [`MAX_WALL_MS`].
    WallClockFull {
        /// The host clock now, in whole ms.
        now_ms: u64,
        /// The time the call would add, in ms.
        adding_ms: u64,
    },
}

impl std::fmt::Display for WebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebError::Arg(e) => e.fmt(f),
            WebError::WallClockFull { now_ms, adding_ms } => write!(
                f,
                "the wall clock is at {now_ms} ms; adding {adding_ms} ms would pass the page's limit of {MAX_WALL_MS} ms"
            ),
        }
    }
}

impl std::error::Error for WebError {}

impl From<ArgError> for WebError {
    fn from(e: ArgError) -> WebError {
        WebError::Arg(e)
    }
}

/// `ceil(n * step)` in ns (saturating): `n` frames of these lengths run
/// exactly `n` steps even when a step is not a whole number of nanoseconds
/// (60 Hz is 16 666 666⅔ ns).
fn steps_ceil(step: StepLength, n: u64) -> u64 {
    let scaled = u128::from(n) * u128::from(step.numerator());
    let den = u128::from(step.denominator());
    u64::try_from(scaled.div_ceil(den)).unwrap_or(u64::MAX)
}

/// How a recording loop writes its replay file: set by [`WebLoop::recording`],
/// where the sim's input type is known to be a [`ReplayInput`].
type ReplayFn<S, I> = fn(&FixedLoop<S, I>) -> Result<Vec<u8>, ReplayError>;

fn replay_file<S: Sim, I: InputSource<S::Input>>(
    lp: &FixedLoop<S, I>,
) -> Result<Vec<u8>, ReplayError>
where
    S::Input: ReplayInput,
{
    lp.replay().map(|r| r.to_bytes())
}

/// A [`FixedLoop`] driven by a browser. See the [module docs](self).
///
/// `S` is the sim, `I` its input source (`TickInputs` for scripted inputs,
/// `InputBuffer` for keyboard events pushed through [`WebLoop::inputs_mut`]).
#[derive(Debug)]
pub struct WebLoop<S: Sim, I> {
    lp: FixedLoop<S, I>,
    host: HostClock,
    frames: u64,
    last_resume: Option<ResumeOutcome>,
    /// `Some` while the loop records (see the module docs).
    replay_fn: Option<ReplayFn<S, I>>,
}

impl<S: Sim, I: InputSource<S::Input>> WebLoop<S, I> {
    /// Wraps a loop (usually fresh: tick 0, host time 0).
    #[must_use]
    pub const fn new(lp: FixedLoop<S, I>) -> WebLoop<S, I> {
        WebLoop {
            lp,
            host: HostClock::new(),
            frames: 0,
            last_resume: None,
            replay_fn: None,
        }
    }

    /// Wraps a fresh loop and starts recording it from tick 0 under `header`
    /// (which names the sim, its version, its config bytes and seed; a
    /// catalog sim's page gets it from `tickwise_catalog::replay_header`).
    ///
    /// # Errors
    ///
    /// The kernel's [`ReplayError`] from [`FixedLoop::start_recording`]: a
    /// loop past tick 0, or a `checkpoint_every` of 0.
    pub fn recording(
        mut lp: FixedLoop<S, I>,
        header: ReplayHeader,
    ) -> Result<WebLoop<S, I>, ReplayError>
    where
        S::Input: ReplayInput,
    {
        lp.start_recording(header)?;
        let mut w = WebLoop::new(lp);
        w.replay_fn = Some(replay_file::<S, I>);
        Ok(w)
    }

    /// Whether the session is being recorded.
    #[must_use]
    pub const fn is_recording(&self) -> bool {
        self.replay_fn.is_some()
    }

    /// Stops recording (the loop runs on without the recording's per-tick
    /// cost; the replay so far is gone). For benchmarks.
    pub fn stop_recording(&mut self) {
        self.lp.stop_recording();
        self.replay_fn = None;
    }

    /// The session so far as a replay file (the current format version): the bytes
    /// `tickwise verify` reads. Non-destructive: recording goes on.
    ///
    /// # Errors
    ///
    /// [`ReplayError::NotRecording`] unless the loop was built with
    /// [`WebLoop::recording`] (and not stopped); the kernel's errors for a
    /// sim whose field list changed mid-session.
    pub fn replay_bytes(&self) -> Result<Vec<u8>, ReplayError> {
        match self.replay_fn {
            Some(f) => f(&self.lp),
            None => Err(ReplayError::NotRecording),
        }
    }

    /// [`WebLoop::replay_bytes`] as standard base64 (what `replay()` returns
    /// to JavaScript; `atob` reads it back).
    ///
    /// # Errors
    ///
    /// As [`WebLoop::replay_bytes`].
    pub fn replay_base64(&self) -> Result<String, ReplayError> {
        self.replay_bytes().map(|b| crate::base64::encode(&b))
    }

    /// The speed sim time runs at.
    #[must_use]
    pub const fn speed(&self) -> Speed {
        self.lp.speed()
    }

    /// Sets the speed to `p/q` from the next frame on (see
    /// [`FixedLoop::set_speed`]). Returns `false`, and changes nothing,
    /// unless both are whole numbers that [`Speed::new`] accepts
    /// (`1 ≤ p, q ≤ 1000`, `p/q ≤ 16`). `2/4` is `1/2`.
    pub fn set_speed(&mut self, p: f64, q: f64) -> bool {
        let term = u64::from(tickwise::MAX_SPEED_TERM);
        let (Ok(p), Ok(q)) = (whole("p", p, term), whole("q", q, term)) else {
            return false;
        };
        let (Ok(p), Ok(q)) = (u32::try_from(p), u32::try_from(q)) else {
            return false;
        };
        match Speed::new(p, q) {
            Ok(s) => {
                self.lp.set_speed(s);
                true
            }
            Err(_) => false,
        }
    }

    /// The loop (read-only: pages draw from `&S`, they never step it).
    #[must_use]
    pub const fn fixed_loop(&self) -> &FixedLoop<S, I> {
        &self.lp
    }

    /// The sim (read-only).
    #[must_use]
    pub const fn sim(&self) -> &S {
        self.lp.sim()
    }

    /// The input source, mutably: a page pushes its events here, with times
    /// from [`WebLoop::host_time_at`].
    pub const fn inputs_mut(&mut self) -> &mut I {
        self.lp.inputs_mut()
    }

    /// Steps run so far.
    #[must_use]
    pub const fn tick(&self) -> u64 {
        self.lp.tick().get()
    }

    /// The sim's text digest.
    #[must_use]
    pub fn digest(&self) -> String {
        self.lp.sim().digest()
    }

    /// The lifecycle state.
    #[must_use]
    pub const fn state(&self) -> AppState {
        self.lp.state()
    }

    /// The loop's host clock in whole ms.
    #[must_use]
    pub const fn wall_ms(&self) -> u64 {
        self.lp.host_time().as_nanos() / tickwise::NANOS_PER_MILLI
    }

    /// The browser-clock mapping (its anchor and rejected readings).
    #[must_use]
    pub const fn host_clock(&self) -> &HostClock {
        &self.host
    }

    /// Real-time frames accepted so far (refused timestamps are not frames).
    #[must_use]
    pub const fn frames(&self) -> u64 {
        self.frames
    }

    /// The last resume (test API, pause button or platform), if any.
    #[must_use]
    pub const fn last_resume(&self) -> Option<&ResumeOutcome> {
        self.last_resume.as_ref()
    }

    /// Forgets the browser-clock anchor: the next browser time maps to the
    /// loop's current host time. Call it when real-time mode starts, so time
    /// spent in manual mode is not fed as one huge frame.
    pub const fn reanchor(&mut self) {
        self.host.reanchor();
    }

    /// The loop's host time for browser time `ms` (a frame's timestamp, an
    /// event's `timeStamp`, `performance.now()`).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for NaN, infinite, negative or absurdly large `ms`;
    /// counted in [`HostClock::rejected`], nothing else changes.
    pub fn host_time_at(&mut self, ms: f64) -> Result<Timestamp, TimeError> {
        self.host.map(ms, self.lp.host_time())
    }

    /// A real-time frame at browser time `ms` (a `requestAnimationFrame`
    /// timestamp): runs the steps the time since the previous frame owes.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp: the frame is ignored (no time
    /// moves, nothing steps) and counted. A timestamp before the previous
    /// frame is not an error: it is a zero-length frame, counted in
    /// [`FixedLoop::backwards_frames`].
    pub fn frame_at(&mut self, ms: f64) -> Result<FrameReport, TimeError> {
        let now = self.host_time_at(ms)?;
        self.frames += 1;
        Ok(self.lp.frame_at(now))
    }

    /// [`WebLoop::frame_at`] for an interpolating renderer: `presenter` keeps
    /// the snapshots before and after the frame's last step.
    ///
    /// # Errors
    ///
    /// As [`WebLoop::frame_at`].
    pub fn frame_at_presenting(
        &mut self,
        ms: f64,
        presenter: &mut Presenter<S::Snapshot>,
    ) -> Result<FrameReport, TimeError>
    where
        S: Capture,
    {
        let now = self.host_time_at(ms)?;
        self.frames += 1;
        Ok(presenter.frame_at(&mut self.lp, now))
    }

    /// [`WebLoop::visibility`] for an interpolating renderer: the steps the
    /// event runs (the gap before hiding, the catch-up after showing) go
    /// through `presenter` ([`Presenter::platform_event`]), so it keeps the
    /// last two ticks the sim really ran.
    ///
    /// # Errors
    ///
    /// As [`WebLoop::visibility`].
    pub fn visibility_presenting(
        &mut self,
        hidden: bool,
        ms: f64,
        presenter: &mut Presenter<S::Snapshot>,
    ) -> Result<VisibilityOutcome, TimeError>
    where
        S: Capture,
    {
        let now = self.host_time_at(ms)?;
        let before = self.lp.state();
        let report = presenter.platform_event(&mut self.lp, platform_event(hidden), now);
        Ok(self.classify(before, report.as_ref()))
    }

    /// [`WebLoop::pause_at`] through `presenter` ([`Presenter::pause`]).
    ///
    /// # Errors
    ///
    /// As [`WebLoop::pause_at`].
    pub fn pause_at_presenting(
        &mut self,
        ms: f64,
        presenter: &mut Presenter<S::Snapshot>,
    ) -> Result<bool, TimeError>
    where
        S: Capture,
    {
        let now = self.host_time_at(ms)?;
        Ok(presenter.pause(&mut self.lp, now).is_ok())
    }

    /// [`WebLoop::resume_at`] through `presenter` ([`Presenter::resume`]):
    /// after a catch-up, its snapshots are the catch-up's last two ticks.
    ///
    /// # Errors
    ///
    /// As [`WebLoop::resume_at`].
    pub fn resume_at_presenting(
        &mut self,
        ms: f64,
        presenter: &mut Presenter<S::Snapshot>,
    ) -> Result<&ResumeOutcome, TimeError>
    where
        S: Capture,
    {
        let now = self.host_time_at(ms)?;
        let r = presenter.resume(&mut self.lp, now).ok();
        Ok(self.record_resume(r.as_ref()))
    }

    fn classify(&mut self, before: AppState, report: Option<&ResumeReport>) -> VisibilityOutcome {
        let out =
            VisibilityOutcome::classify(before, self.lp.state(), report, || self.lp.sim().digest());
        if let VisibilityOutcome::Resumed(r) = &out {
            self.last_resume = Some(r.clone());
        }
        out
    }

    /// The platform adapter's entry: the page became hidden (`true`) or
    /// visible (`false`) at browser time `ms`. Hidden sends a running app to
    /// the background (the time since the last frame runs first); visible
    /// resumes an app in the background under the loop's catch-up policy. A
    /// player's pause survives the tab being hidden and shown.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad time: the event is ignored and counted.
    pub fn visibility(&mut self, hidden: bool, ms: f64) -> Result<VisibilityOutcome, TimeError> {
        let now = self.host_time_at(ms)?;
        let before = self.lp.state();
        let report = self.lp.platform_event(platform_event(hidden), now);
        Ok(self.classify(before, report.as_ref()))
    }

    /// A player's pause at browser time `ms` (a pause button in real-time
    /// mode); the time since the last frame runs first. `Ok(false)` unless
    /// running.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad time (ignored and counted).
    pub fn pause_at(&mut self, ms: f64) -> Result<bool, TimeError> {
        let now = self.host_time_at(ms)?;
        Ok(self.lp.pause(now).is_ok())
    }

    /// Resumes at browser time `ms` (a resume button in real-time mode). A
    /// refused resume (already running) reports `ok: false` and zeros.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad time (ignored and counted).
    pub fn resume_at(&mut self, ms: f64) -> Result<&ResumeOutcome, TimeError> {
        let now = self.host_time_at(ms)?;
        let r = self.lp.resume(now).ok();
        Ok(self.record_resume(r.as_ref()))
    }

    fn record_resume(&mut self, r: Option<&ResumeReport>) -> &ResumeOutcome {
        self.last_resume
            .insert(ResumeOutcome::new(r, self.lp.sim().digest()))
    }

    /// Pauses at the loop's current host time (test API); `false` unless running.
    pub fn pause_now(&mut self) -> bool {
        self.lp.pause(self.lp.host_time()).is_ok()
    }

    /// Goes to the background at the loop's current host time (test API);
    /// `false` unless running.
    pub fn background_now(&mut self) -> bool {
        self.lp.background(self.lp.host_time()).is_ok()
    }

    fn reserve_wall(&self, adding_ms: u64) -> Result<(), WebError> {
        let now_ms = self.wall_ms();
        if now_ms.saturating_add(adding_ms) > MAX_WALL_MS {
            return Err(WebError::WallClockFull { now_ms, adding_ms });
        }
        Ok(())
    }

    /// Test API: moves the host clock by `ms` (no real time passes), then
    /// resumes. A refused resume (already running) reports `ok: false` and
    /// zeros, like `tickwise script`, and moves nothing.
    ///
    /// # Errors
    ///
    /// [`WebError`] unless `ms` is a whole number up to [`MAX_DURATION_MS`]
    /// and the host clock stays within [`MAX_WALL_MS`]; nothing happens then.
    pub fn resume_after(&mut self, ms: f64) -> Result<&ResumeOutcome, WebError> {
        let ms = whole("ms", ms, MAX_DURATION_MS)?;
        self.reserve_wall(ms)?;
        let now = self.lp.host_time().saturating_add(Nanos::from_millis(ms));
        // The only refusal is "already running", reported as `ok: false`.
        let r = self.lp.resume(now).ok();
        self.host.reanchor();
        Ok(self.record_resume(r.as_ref()))
    }

    /// Test API: `n` frames of `ms` each, or of one step each when `ms` is
    /// `None` (`n` such frames run exactly `n` steps, also for steps that are
    /// not whole milliseconds). No real time passes. Returns the steps run.
    ///
    /// # Errors
    ///
    /// [`WebError`] unless `n` is a whole number up to [`MAX_FRAMES_PER_CALL`],
    /// `ms` one up to [`MAX_DURATION_MS`], and the host clock stays within
    /// [`MAX_WALL_MS`]; nothing runs then.
    pub fn step_frames(&mut self, n: f64, ms: Option<f64>) -> Result<u64, WebError> {
        let n = whole("n", n, MAX_FRAMES_PER_CALL)?;
        let ms = ms.map(|v| whole("ms", v, MAX_DURATION_MS)).transpose()?;
        let step = self.lp.clock().config().step();
        let total_ms = match ms {
            Some(ms) => n.saturating_mul(ms),
            None => steps_ceil(step, n).div_ceil(tickwise::NANOS_PER_MILLI),
        };
        self.reserve_wall(total_ms)?;
        let mut steps = 0u64;
        for k in 0..n {
            let dt = match ms {
                Some(ms) => Nanos::from_millis(ms),
                None => Nanos::from_nanos(steps_ceil(step, k + 1) - steps_ceil(step, k)),
            };
            steps += u64::from(self.lp.frame(dt).steps);
        }
        self.host.reanchor();
        Ok(steps)
    }

    /// Test API: runs `n` steps directly, whatever the clock or lifecycle say.
    /// Returns `n`.
    ///
    /// # Errors
    ///
    /// [`WebError`] unless `n` is a whole number up to [`MAX_ADVANCE`].
    pub fn advance(&mut self, n: f64) -> Result<u64, WebError> {
        let n = whole("n", n, MAX_ADVANCE)?;
        let _ = self.lp.advance(n);
        Ok(n)
    }

    /// The state every page reports, as a JSON object: `state`, `tick`,
    /// `digest`, `wallMs` (host clock, whole ms), `accumulator` (whole ms),
    /// `frames` (real-time frames accepted), `backwardsFrames`,
    /// `rejectedTimes` (bad browser times ignored), `lastResume` (a resume
    /// report or `null`), `capDroppedMs` (sim time the step cap threw away,
    /// whole ms), `speed` (`[p, q]`, reduced) and `recording` (whether
    /// `replay()` has a session to give). Pages add their own keys.
    #[must_use]
    pub fn state_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("state".into(), self.lp.state().as_str().into());
        m.insert("tick".into(), self.tick().into());
        m.insert("digest".into(), self.digest().into());
        m.insert("wallMs".into(), self.wall_ms().into());
        m.insert(
            "accumulator".into(),
            self.lp.clock().accumulator().as_millis().into(),
        );
        m.insert("frames".into(), self.frames.into());
        m.insert("backwardsFrames".into(), self.lp.backwards_frames().into());
        m.insert("rejectedTimes".into(), self.host.rejected().into());
        m.insert(
            "lastResume".into(),
            self.last_resume
                .as_ref()
                .map_or(Value::Null, ResumeOutcome::to_json),
        );
        m.insert(
            "capDroppedMs".into(),
            self.lp.clock().dropped_total().as_millis().into(),
        );
        let speed = self.lp.speed();
        m.insert(
            "speed".into(),
            Value::from(vec![speed.numerator(), speed.denominator()]),
        );
        m.insert("recording".into(), self.is_recording().into());
        m
    }
}

#[cfg(test)]
mod tests;
