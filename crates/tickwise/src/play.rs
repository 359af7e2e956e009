//! One play session: a sim in its loop, the lifecycle, a scene stack and a
//! wall clock, driven by the commands `tickwise script` runs (frames,
//! advance, pause, background, resume, speed, scenes) for any sim.
//!
//! Every call checks its counts and durations against the limits below before
//! anything runs, so a script (or any caller) cannot ask for unbounded work
//! or push the wall clock past what the kernel's clock can hold.

use alloc::string::{String, ToString};

use crate::{
    AppState, FixedLoop, FrameReport, InputSource, LifecycleError, Nanos, PlatformEvent,
    ResumeReport, SceneError, SceneStack, Sim, Speed, Timestamp,
};

/// The most frames one [`PlaySession::frames`] call feeds.
pub const MAX_FRAMES_PER_CALL: u64 = 10_000_000;
/// The most durations one [`PlaySession::frame_list`] call takes.
pub const MAX_FRAME_LIST: usize = 10_000;
/// The most steps one [`PlaySession::advance`] call runs.
pub const MAX_ADVANCE: u64 = 100_000_000;
/// The longest single duration (a frame, or a time away), in ms: about 31.7 years.
pub const MAX_DURATION_MS: u64 = 1_000_000_000_000;
/// The furthest the session's wall clock may go, in ms: 10^13 ms, about 317
/// years, well inside the kernel's `u64` nanosecond host clock (584 years), so
/// no time value ever saturates. Calls that would pass it are refused.
pub const MAX_WALL_MS: u64 = 10_000_000_000_000;

/// A session call that was refused; nothing ran.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlayError {
    /// A count or duration above its limit.
    TooLarge {
        /// What was too large (`frames`, `durations`, `steps`, `ms`).
        what: &'static str,
        /// The value given.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// The call would move the wall clock past [`MAX_WALL_MS`].
    WallClockFull {
        /// The wall clock now, in ms.
        now_ms: u64,
        /// The time the call would add, in ms.
        adding_ms: u64,
    },
    /// `resume_after` while running.
    Lifecycle(LifecycleError),
}

impl core::fmt::Display for PlayError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PlayError::TooLarge { what, value, limit } => {
                write!(
                    f,
                    "{value} {what} is more than the {limit} one call accepts"
                )
            }
            PlayError::WallClockFull { now_ms, adding_ms } => write!(
                f,
                "the wall clock is at {now_ms} ms; adding {adding_ms} ms would pass the session's limit of {MAX_WALL_MS} ms"
            ),
            PlayError::Lifecycle(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for PlayError {}

fn at_most(what: &'static str, value: u64, limit: u64) -> Result<u64, PlayError> {
    if value > limit {
        Err(PlayError::TooLarge { what, value, limit })
    } else {
        Ok(value)
    }
}

/// A sim in its loop, with lifecycle and scenes.
///
/// The wall clock starts at 0 and moves with every frame (also while paused)
/// and with a successful `resume_after`; it never passes [`MAX_WALL_MS`]. The
/// scene stack starts as `menu`, `game`.
#[derive(Debug)]
pub struct PlaySession<S: Sim, I: InputSource<S::Input>> {
    lp: FixedLoop<S, I>,
    scenes: SceneStack,
}

impl<S: Sim, I: InputSource<S::Input>> PlaySession<S, I> {
    /// A session of the loop `lp` (fresh or not), its scene stack `menu`,
    /// `game` and its wall clock at the loop's host time.
    pub fn from_loop(lp: FixedLoop<S, I>) -> PlaySession<S, I> {
        let mut scenes = SceneStack::new();
        for name in ["menu", "game"] {
            // Both names are valid and the stack is empty: this cannot fail.
            let _ = scenes.push(name);
        }
        PlaySession { lp, scenes }
    }

    /// Feeds `count` frames of `ms` each; returns the steps they ran.
    ///
    /// # Errors
    ///
    /// [`PlayError::TooLarge`] past [`MAX_FRAMES_PER_CALL`] or
    /// [`MAX_DURATION_MS`], [`PlayError::WallClockFull`] past [`MAX_WALL_MS`];
    /// nothing runs then.
    pub fn frames(&mut self, count: u64, ms: u64) -> Result<u64, PlayError> {
        at_most("frames", count, MAX_FRAMES_PER_CALL)?;
        at_most("ms", ms, MAX_DURATION_MS)?;
        self.reserve_wall(count.saturating_mul(ms))?;
        Ok(self.run_frames((0..count).map(|_| ms)))
    }

    /// Feeds one frame per listed duration (ms); returns the steps they ran.
    ///
    /// # Errors
    ///
    /// As [`PlaySession::frames`], with [`MAX_FRAME_LIST`] durations at most.
    pub fn frame_list(&mut self, frame_ms: &[u64]) -> Result<u64, PlayError> {
        at_most("durations", frame_ms.len() as u64, MAX_FRAME_LIST as u64)?;
        let mut total = 0u64;
        for &ms in frame_ms {
            total = total.saturating_add(at_most("ms", ms, MAX_DURATION_MS)?);
        }
        self.reserve_wall(total)?;
        Ok(self.run_frames(frame_ms.iter().copied()))
    }

    fn reserve_wall(&self, adding_ms: u64) -> Result<(), PlayError> {
        let now_ms = self.wall_ms();
        if now_ms.saturating_add(adding_ms) > MAX_WALL_MS {
            return Err(PlayError::WallClockFull { now_ms, adding_ms });
        }
        Ok(())
    }

    fn run_frames(&mut self, frame_ms: impl Iterator<Item = u64>) -> u64 {
        let mut steps = 0u64;
        for ms in frame_ms {
            let r = self.lp.frame(Nanos::from_millis(ms));
            steps += u64::from(r.steps);
        }
        self.scenes.run_ticks(steps);
        steps
    }

    /// Sets the time scale (see [`FixedLoop::set_speed`]): later frames and
    /// the time away at the next resume are scaled by it exactly.
    pub fn set_speed(&mut self, speed: Speed) {
        self.lp.set_speed(speed);
    }

    /// Hosted mode: a frame at host timestamp `now` (see [`FixedLoop::frame_at`]);
    /// the steps it runs also run the active scene's time.
    pub fn frame_at(&mut self, now: Timestamp) -> FrameReport {
        let r = self.lp.frame_at(now);
        self.scenes.run_ticks(u64::from(r.steps));
        r
    }

    /// Routes a platform visibility event at host timestamp `now` (see
    /// [`FixedLoop::platform_event`]); every step it runs (the gap before
    /// going to the background, a resume's catch-up) also runs the active
    /// scene's time.
    pub fn platform_event(&mut self, event: PlatformEvent, now: Timestamp) -> Option<ResumeReport> {
        let before = self.lp.tick().get();
        let r = self.lp.platform_event(event, now);
        self.scenes.run_ticks(self.lp.tick().get() - before);
        r
    }

    /// Runs `n` steps directly, whatever the lifecycle state.
    ///
    /// # Errors
    ///
    /// [`PlayError::TooLarge`] past [`MAX_ADVANCE`]; nothing runs then.
    pub fn advance(&mut self, n: u64) -> Result<(), PlayError> {
        at_most("steps", n, MAX_ADVANCE)?;
        let _ = self.lp.advance(n);
        self.scenes.run_ticks(n);
        Ok(())
    }

    /// Pauses now; `false` if not running.
    pub fn pause(&mut self) -> bool {
        self.lp.pause(self.lp.host_time()).is_ok()
    }

    /// Goes to the background now; `false` if not running.
    pub fn background(&mut self) -> bool {
        self.lp.background(self.lp.host_time()).is_ok()
    }

    /// Moves the wall clock by `ms`, then resumes.
    ///
    /// # Errors
    ///
    /// [`PlayError::Lifecycle`] when not paused or in the background: a
    /// resume without a pause is refused and changes nothing (while running,
    /// only frames move time). [`PlayError::TooLarge`] or
    /// [`PlayError::WallClockFull`] for a duration past the limits.
    pub fn resume_after(&mut self, ms: u64) -> Result<ResumeReport, PlayError> {
        at_most("ms", ms, MAX_DURATION_MS)?;
        self.reserve_wall(ms)?;
        let now = self.lp.host_time().saturating_add(Nanos::from_millis(ms));
        let r = self.lp.resume(now).map_err(PlayError::Lifecycle)?;
        self.scenes.run_ticks(r.catch_up_steps);
        Ok(r)
    }

    /// Pushes a scene.
    ///
    /// # Errors
    ///
    /// As [`SceneStack::push`].
    pub fn push(&mut self, name: &str) -> Result<(), SceneError> {
        self.scenes.push(name)
    }

    /// Pops a scene.
    ///
    /// # Errors
    ///
    /// [`SceneError::Empty`] on an empty stack.
    pub fn pop(&mut self) -> Result<(), SceneError> {
        self.scenes.pop().map(|_| ())
    }

    /// The world (read-only).
    #[must_use]
    pub const fn world(&self) -> &S {
        self.lp.sim()
    }

    /// The loop (read-only).
    #[must_use]
    pub const fn fixed_loop(&self) -> &FixedLoop<S, I> {
        &self.lp
    }

    /// The sim's text digest (the island's:
    /// `tick|posX|posY|velX|velY|score|rng|droppedMs`).
    #[must_use]
    pub fn digest(&self) -> String {
        self.lp.sim().digest()
    }

    /// Steps run.
    #[must_use]
    pub const fn tick(&self) -> u64 {
        self.lp.tick().get()
    }

    /// The scene stack dump, e.g. `menu=paused,game=active`.
    #[must_use]
    pub fn scenes(&self) -> String {
        self.scenes.to_string()
    }

    /// The lifecycle state.
    #[must_use]
    pub const fn state(&self) -> AppState {
        self.lp.state()
    }

    /// The accumulator in whole milliseconds.
    #[must_use]
    pub fn accumulator_ms(&self) -> u64 {
        self.lp.clock().accumulator().as_millis()
    }

    /// The fixed step in milliseconds.
    #[must_use]
    pub const fn step_ms(&self) -> u64 {
        self.lp.clock().config().step().as_nanos_floor() / crate::NANOS_PER_MILLI
    }

    /// The wall clock in whole milliseconds.
    #[must_use]
    pub const fn wall_ms(&self) -> u64 {
        self.lp.host_time().as_nanos() / crate::NANOS_PER_MILLI
    }
}
