//! The real-clock runner: the kernel's loop on a desktop, paced or not.
//!
//! Two ways to own a loop; who owns it (the platform or the game) is the first
//! choice the loop experiment's chapter puts to a game:
//!
//! * **Hosted** ([`Hosted`]): the platform owns the loop and calls us once
//!   per display frame with a timestamp (`requestAnimationFrame`, a vsync
//!   callback, an engine's update). [`Hosted::frame`] is that callback's body:
//!   turn the timestamp into a frame duration, run the steps it owes, update
//!   the interpolation snapshots. Visibility changes go to
//!   [`Hosted::platform_event`]. The kernel call underneath is
//!   [`FixedLoop::frame_with`], the same as [`FixedLoop::frame_at`] plus the
//!   hook that captures the previous snapshot for interpolation.
//! * **Owned** ([`run`]): we own the loop. Each iteration reads the host clock,
//!   calls the hosted body, renders, then paces: capped to a frame rate by
//!   sleeping until just before the next frame's target time and spinning the
//!   rest (OS sleeps overshoot by tens of microseconds to milliseconds), or
//!   uncapped, burning a core to draw as often as possible. The difference in
//!   CPU time is the power trade-off that chapter weighs.
//!
//! Everything talks to time through [`Host`], so tests drive the runner with
//! a fake clock; only the CLI uses [`SystemHost`].

use core::fmt;
use core::num::NonZeroU32;
use std::time::Instant;

use tickwise::{
    AppState, Capture, CatchUpPolicy, ClockConfig, FixedLoop, FrameReport, InputSource,
    LifecycleError, NANOS_PER_SEC, Nanos, PlatformEvent, Presenter, ResumeReport, StepLength,
    TickInputs, Timestamp,
};

use crate::cpu;
use crate::histogram::FrameTimeHistogram;
use crate::strategy::{GUARD_MAX_FRAME, GUARD_MAX_STEPS};
use crate::world::{LabWorld, blend_px};

/// The runner's view of the machine: a monotonic clock, a sleep, and
/// optionally the CPU time used.
pub trait Host {
    /// Reads the monotonic clock.
    fn now(&mut self) -> Timestamp;
    /// Sleeps for about `d` (real sleeps overshoot).
    fn sleep(&mut self, d: Nanos);
    /// One iteration of a spin-wait.
    fn spin(&mut self) {
        core::hint::spin_loop();
    }
    /// CPU time used so far by the running thread, if the platform says.
    fn cpu_time(&mut self) -> Option<Nanos> {
        None
    }
}

/// The real machine: [`Instant`], [`std::thread::sleep`], and CPU time from `/proc`.
#[derive(Clone, Copy, Debug)]
pub struct SystemHost {
    origin: Instant,
}

impl SystemHost {
    /// A host whose clock starts now.
    #[must_use]
    pub fn new() -> SystemHost {
        SystemHost {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemHost {
    fn default() -> Self {
        SystemHost::new()
    }
}

impl Host for SystemHost {
    fn now(&mut self) -> Timestamp {
        let ns = self.origin.elapsed().as_nanos();
        Timestamp::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    fn sleep(&mut self, d: Nanos) {
        std::thread::sleep(std::time::Duration::from_nanos(d.as_nanos()));
    }

    fn cpu_time(&mut self) -> Option<Nanos> {
        cpu::cpu_time().map(|(ns, _)| ns)
    }
}

/// The hosted mode: the kernel loop plus interpolation snapshots, driven by
/// host timestamps, one call per display frame.
#[derive(Debug)]
pub struct Hosted<S: Capture, I> {
    lp: FixedLoop<S, I>,
    presenter: Presenter<S::Snapshot>,
    backwards_frames: u64,
}

impl<S: Capture, I: InputSource<S::Input>> Hosted<S, I> {
    /// Wraps a loop; its host clock origin is the platform's timestamp 0.
    #[must_use]
    pub fn new(lp: FixedLoop<S, I>) -> Hosted<S, I> {
        let presenter = Presenter::new(lp.sim());
        Hosted {
            lp,
            presenter,
            backwards_frames: 0,
        }
    }

    /// One display frame at host timestamp `now`: runs the steps owed since
    /// the previous frame and updates the snapshots. A timestamp earlier than
    /// the previous one is a zero-length frame, counted in
    /// [`Hosted::backwards_frames`].
    pub fn frame(&mut self, now: Timestamp) -> FrameReport {
        let dt = now.checked_since(self.lp.host_time()).unwrap_or_else(|| {
            self.backwards_frames += 1;
            Nanos::ZERO
        });
        self.presenter.frame(&mut self.lp, dt)
    }

    /// A platform visibility event at `now` (see [`FixedLoop::platform_event`]).
    pub fn platform_event(&mut self, event: PlatformEvent, now: Timestamp) -> Option<ResumeReport> {
        self.lp.platform_event(event, now)
    }

    /// The player pauses at `now`.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running.
    pub fn pause(&mut self, now: Timestamp) -> Result<(), LifecycleError> {
        self.lp.pause(now)
    }

    /// The player resumes at `now`.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::AlreadyRunning`] when not paused or in the background.
    pub fn resume(&mut self, now: Timestamp) -> Result<ResumeReport, LifecycleError> {
        self.lp.resume(now)
    }

    /// The loop, read-only.
    #[must_use]
    pub const fn fixed_loop(&self) -> &FixedLoop<S, I> {
        &self.lp
    }

    /// Previous / current snapshots and alpha, for drawing.
    #[must_use]
    pub const fn presenter(&self) -> &Presenter<S::Snapshot> {
        &self.presenter
    }

    /// Frames whose timestamp went backwards.
    #[must_use]
    pub const fn backwards_frames(&self) -> u64 {
        self.backwards_frames
    }
}

/// How the owned loop paces frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameCap {
    /// No pacing: draw again as soon as the last frame is done.
    Uncapped,
    /// At most `fps` frames a second: sleep until `spin` before each frame's
    /// target time, then spin-wait the rest.
    Fps {
        /// Frames per second.
        fps: NonZeroU32,
        /// How long before the target to stop sleeping and start spinning.
        spin: Nanos,
    },
}

/// Something that happens to the app during a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunnerEvent {
    /// The player pauses (frames keep drawing, no steps run).
    Pause,
    /// The player resumes.
    Resume,
    /// The window is hidden: no frames are drawn, the runner sleeps.
    Hidden,
    /// The window is visible again.
    Visible,
}

/// An event at a time since the run started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduledEvent {
    /// When, since the run started.
    pub at: Nanos,
    /// What.
    pub event: RunnerEvent,
}

/// Why a runner configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunnerError {
    /// Run length outside 1 ms ..= 1 hour.
    Duration(Nanos),
    /// A spin window of a second or more (it would spin the whole frame).
    Spin(Nanos),
}

impl fmt::Display for RunnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunnerError::Duration(d) => {
                write!(f, "run length must be between 1 ms and 1 hour, got {d}")
            }
            RunnerError::Spin(d) => write!(f, "spin window must be under 1 s, got {d}"),
        }
    }
}

impl core::error::Error for RunnerError {}

/// The longest run.
pub const MAX_RUN: Nanos = Nanos::from_secs(3_600);
/// How often a hidden app wakes to check for events.
pub const BACKGROUND_POLL: Nanos = Nanos::from_millis(50);
/// Most spin-wait iterations for one frame (a stuck clock cannot hang the runner).
const MAX_SPIN_ITERS: u64 = 50_000_000;

/// What the owned loop runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunnerConfig {
    duration: Nanos,
    cap: FrameCap,
    events: Vec<ScheduledEvent>,
    max_frames: u64,
}

impl RunnerConfig {
    /// Runs for `duration` with frame cap `cap`, no events.
    ///
    /// The run also stops after `duration / 20 ns` frames (50 million a
    /// second, more than any real loop draws) so a clock that stops
    /// advancing cannot hang it.
    ///
    /// # Errors
    ///
    /// [`RunnerError::Duration`] outside 1 ms ..= 1 h; [`RunnerError::Spin`]
    /// for a spin window of 1 s or more.
    pub fn new(duration: Nanos, cap: FrameCap) -> Result<RunnerConfig, RunnerError> {
        if duration < Nanos::from_millis(1) || duration > MAX_RUN {
            return Err(RunnerError::Duration(duration));
        }
        if let FrameCap::Fps { spin, .. } = cap
            && spin >= Nanos::from_secs(1)
        {
            return Err(RunnerError::Spin(spin));
        }
        Ok(RunnerConfig {
            duration,
            cap,
            events: Vec::new(),
            max_frames: duration.as_nanos() / 20 + 1_000,
        })
    }

    /// Adds an event `at` after the start (events are applied in time order
    /// at the first frame at or after their time).
    #[must_use]
    pub fn with_event(mut self, at: Nanos, event: RunnerEvent) -> RunnerConfig {
        self.events.push(ScheduledEvent { at, event });
        self.events.sort_by_key(|e| e.at);
        self
    }

    /// Replaces the frame limit.
    #[must_use]
    pub const fn with_max_frames(mut self, max_frames: u64) -> RunnerConfig {
        self.max_frames = max_frames;
        self
    }

    /// The run length.
    #[must_use]
    pub const fn duration(&self) -> Nanos {
        self.duration
    }

    /// The frame cap.
    #[must_use]
    pub const fn cap(&self) -> FrameCap {
        self.cap
    }
}

/// What a run did.
#[must_use]
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Frames drawn.
    pub frames: u64,
    /// Host time from the start to the last frame.
    pub elapsed: Nanos,
    /// Time spent hidden (no frames drawn).
    pub hidden: Nanos,
    /// Intervals between consecutive drawn frames (a hidden spell is not a frame).
    pub frame_times: FrameTimeHistogram,
    /// Ticks run.
    pub ticks: u64,
    /// Ticks the elapsed time is worth, after thrown-away time:
    /// `floor((elapsed - thrown_away) / step)`.
    pub expected_ticks: u64,
    /// Time the clock and the lifecycle threw away (clamped, dropped, resume drops).
    pub thrown_away: Nanos,
    /// Every resume (after a pause or a hidden spell).
    pub resumes: Vec<ResumeReport>,
    /// Events the lifecycle refused (a resume while running, ...).
    pub refused_events: u64,
    /// Frames whose timestamp went backwards.
    pub backwards_frames: u64,
    /// CPU time used during the run, if the host can tell.
    pub cpu: Option<Nanos>,
    /// The run hit its frame limit before its length.
    pub truncated: bool,
}

impl RunReport {
    /// `ticks - expected_ticks`.
    #[must_use]
    pub fn tick_error(&self) -> i128 {
        i128::from(self.ticks) - i128::from(self.expected_ticks)
    }

    /// Whether the ticks match the expected count to within one.
    #[must_use]
    pub fn ticks_ok(&self) -> bool {
        self.tick_error().abs() <= 1
    }

    /// Frames per second over the time frames were drawn.
    #[must_use]
    pub fn fps(&self) -> f64 {
        let shown = self.elapsed.saturating_sub(self.hidden).as_nanos();
        if shown == 0 {
            return 0.0;
        }
        self.frames as f64 * NANOS_PER_SEC as f64 / shown as f64
    }

    /// CPU time as a share of the elapsed time.
    #[must_use]
    pub fn cpu_share(&self) -> Option<f64> {
        let e = self.elapsed.as_nanos();
        self.cpu
            .filter(|_| e > 0)
            .map(|c| c.as_nanos() as f64 / e as f64)
    }
}

fn since(t: Timestamp, origin: Timestamp) -> Timestamp {
    Timestamp::from_nanos(t.as_nanos().saturating_sub(origin.as_nanos()))
}

/// The target time of frame `k` at `fps`: `floor(k * 1e9 / fps)` ns, exact
/// for any rate (no drift from a rounded period).
fn target(k: u64, fps: NonZeroU32) -> u64 {
    let t = u128::from(k) * u128::from(NANOS_PER_SEC) / u128::from(fps.get());
    u64::try_from(t).unwrap_or(u64::MAX)
}

/// The scheduled events still to apply, and what applying them produced.
#[derive(Debug, Default)]
struct EventLog {
    next: usize,
    resumes: Vec<ResumeReport>,
    refused: u64,
}

impl EventLog {
    /// Applies the events of `events` due at `now`, in order.
    fn apply_due<S: Capture, I: InputSource<S::Input>>(
        &mut self,
        hosted: &mut Hosted<S, I>,
        events: &[ScheduledEvent],
        now: Timestamp,
    ) {
        while let Some(ev) = events
            .get(self.next)
            .filter(|e| e.at.as_nanos() <= now.as_nanos())
        {
            self.next += 1;
            let outcome = match ev.event {
                RunnerEvent::Pause => hosted.pause(now).map(|()| None).map_err(|_| ()),
                RunnerEvent::Resume => hosted.resume(now).map(Some).map_err(|_| ()),
                RunnerEvent::Hidden => {
                    if hosted.fixed_loop().state() == AppState::Running {
                        let _ = hosted.platform_event(PlatformEvent::Hidden, now);
                        Ok(None)
                    } else {
                        Err(())
                    }
                }
                RunnerEvent::Visible => hosted
                    .platform_event(PlatformEvent::Visible, now)
                    .map(Some)
                    .ok_or(()),
            };
            match outcome {
                Ok(Some(r)) => self.resumes.push(r),
                Ok(None) => {}
                Err(()) => self.refused += 1,
            }
        }
    }
}

/// The lab world ([`LabWorld`]) at `step` in the kernel's loop as a game
/// would set it up: the lab's death-spiral guards
/// ([`GUARD_MAX_STEPS`], [`GUARD_MAX_FRAME`]), the resume rules' capped
/// catch-up ([`CatchUpPolicy::RESUME_RULES`]) and an interpolating render
/// callback, run on `host` under `cfg`: what `tickwise run` measures on the
/// real clock.
pub fn run_lab_world<H: Host>(host: &mut H, step: StepLength, cfg: &RunnerConfig) -> RunReport {
    let clock = ClockConfig::new(step)
        .with_max_steps_per_frame(GUARD_MAX_STEPS)
        .with_max_frame(GUARD_MAX_FRAME);
    let lp = FixedLoop::new(
        LabWorld::new(step, u64::MAX),
        TickInputs::new(Vec::new()),
        clock,
        CatchUpPolicy::RESUME_RULES,
    );
    let mut hosted = Hosted::new(lp);
    let mut drawn = 0.0f64;
    let report = run(host, &mut hosted, cfg, |h, r| {
        // Where a renderer would draw the runner: between the two states.
        let p = h.presenter();
        drawn += blend_px(*p.previous(), *p.current(), f64::from(r.alpha.as_f32()));
    });
    std::hint::black_box(drawn);
    report
}

/// Runs the owned loop on `host` for the configured length, calling
/// `render(&hosted, &report)` after every drawn frame.
///
/// Frames are drawn while running or paused; while hidden the runner draws
/// nothing and sleeps in [`BACKGROUND_POLL`] naps. Timestamps passed to the
/// loop are host time since the run started.
pub fn run<H, S, I>(
    host: &mut H,
    hosted: &mut Hosted<S, I>,
    cfg: &RunnerConfig,
    mut render: impl FnMut(&Hosted<S, I>, &FrameReport),
) -> RunReport
where
    H: Host,
    S: Capture,
    I: InputSource<S::Input>,
{
    let origin = host.now();
    let cpu_start = host.cpu_time();
    let end = cfg.duration.as_nanos();
    let mut frame_times = FrameTimeHistogram::new();
    let mut log = EventLog::default();
    let mut prev_frame: Option<Timestamp> = None;
    let mut frames = 0u64;
    let mut hidden = 0u64;
    let mut k = 0u64;
    let mut truncated = false;
    let mut last_now = Timestamp::ZERO;
    loop {
        let now = since(host.now(), origin);
        last_now = last_now.max(now);
        if hosted.fixed_loop().state() == AppState::Background {
            log.apply_due(hosted, &cfg.events, now);
        }
        if hosted.fixed_loop().state() == AppState::Background {
            if now.as_nanos() >= end {
                break;
            }
            let wake = cfg
                .events
                .get(log.next)
                .map_or(end, |e| e.at.as_nanos())
                .min(end)
                .min(now.as_nanos().saturating_add(BACKGROUND_POLL.as_nanos()));
            let nap = wake.saturating_sub(now.as_nanos()).max(1);
            host.sleep(Nanos::from_nanos(nap));
            let after = since(host.now(), origin);
            hidden = hidden.saturating_add(after.as_nanos().saturating_sub(now.as_nanos()));
            prev_frame = None;
            continue;
        }

        let report = hosted.frame(now);
        render(hosted, &report);
        frames += 1;
        if let Some(p) = prev_frame {
            frame_times.record(now.checked_since(p).unwrap_or(Nanos::ZERO).as_nanos());
        }
        prev_frame = Some(now);
        // Events take effect after the frame at the same timestamp, so the
        // loop's host clock is up to date when the lifecycle starts counting
        // time away (a pause at a later time than the last frame would lose
        // the gap between them).
        log.apply_due(hosted, &cfg.events, now);
        if now.as_nanos() >= end {
            break;
        }
        if frames >= cfg.max_frames {
            truncated = true;
            break;
        }
        if let FrameCap::Fps { fps, spin } = cfg.cap {
            k += 1;
            let period = target(1, fps);
            let done = since(host.now(), origin).as_nanos();
            if done > target(k, fps).saturating_add(period) {
                // More than a frame late: skip the missed targets, never burst.
                k = u64::try_from(
                    u128::from(done) * u128::from(fps.get()) / u128::from(NANOS_PER_SEC),
                )
                .unwrap_or(u64::MAX)
                .saturating_add(1);
            }
            let goal = target(k, fps).min(end);
            if let Some(nap) = goal.checked_sub(done.saturating_add(spin.as_nanos()))
                && nap > 0
            {
                host.sleep(Nanos::from_nanos(nap));
            }
            let mut iters = 0u64;
            while since(host.now(), origin).as_nanos() < goal && iters < MAX_SPIN_ITERS {
                host.spin();
                iters += 1;
            }
        }
    }

    let lp = hosted.fixed_loop();
    let clock = lp.clock();
    let resume_dropped: u128 = log
        .resumes
        .iter()
        .map(|r| u128::from(r.dropped.as_nanos()))
        .sum();
    let thrown = u128::from(clock.dropped_total().as_nanos())
        + u128::from(clock.clamped_total().as_nanos())
        + resume_dropped;
    let step = clock.config().step();
    let kept = u128::from(lp.host_time().as_nanos()).saturating_sub(thrown);
    // floor(kept / (num / den)) = floor(kept * den / num)
    let expected = kept * u128::from(step.denominator()) / u128::from(step.numerator());
    let cpu = match (cpu_start, host.cpu_time()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    RunReport {
        frames,
        elapsed: Nanos::from_nanos(last_now.as_nanos()),
        hidden: Nanos::from_nanos(hidden),
        frame_times,
        ticks: lp.tick().get(),
        expected_ticks: u64::try_from(expected).unwrap_or(u64::MAX),
        thrown_away: Nanos::from_nanos(u64::try_from(thrown).unwrap_or(u64::MAX)),
        resumes: log.resumes,
        refused_events: log.refused,
        backwards_frames: hosted.backwards_frames(),
        cpu,
        truncated,
    }
}
