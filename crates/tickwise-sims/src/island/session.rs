//! One island play session: the loop, its lifecycle, the scene stack and a
//! wall clock, driven by the commands `tickwise script` and the browser page share.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use tickwise::{
    AppState, FixedLoop, LifecycleError, Nanos, ResumeReport, SceneError, SceneStack, Sim,
    TickInputs,
};

use super::{IslandConfig, IslandWorld, LifecycleConfig};
use crate::config::ConfigError;

/// The island world in its loop, with lifecycle and scenes.
///
/// The wall clock starts at 0 and moves with every frame (also while paused)
/// and with `resume_after`. The scene stack starts as `menu`, `game`.
#[derive(Debug)]
pub struct IslandSession {
    lp: FixedLoop<IslandWorld, TickInputs<i32>>,
    scenes: SceneStack,
}

impl IslandSession {
    /// A fresh session.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Inconsistent`] when the lifecycle's `stepMs` differs from the loop's.
    pub fn new(
        cfg: &IslandConfig,
        lc: &LifecycleConfig,
        inputs: Vec<i32>,
    ) -> Result<IslandSession, ConfigError> {
        if lc.step_ms != cfg.step_ms {
            return Err(ConfigError::Inconsistent {
                key: "stepMs".into(),
                message: alloc::format!(
                    "the lifecycle config says {} ms but the loop config says {} ms; they must be equal",
                    lc.step_ms,
                    cfg.step_ms
                ),
            });
        }
        let lp = FixedLoop::new(
            IslandWorld::new(cfg),
            TickInputs::new(inputs),
            cfg.clock_config(),
            lc.policy,
        );
        let mut scenes = SceneStack::new();
        for name in ["menu", "game"] {
            // Both names are valid and the stack is empty: this cannot fail.
            let _ = scenes.push(name);
        }
        Ok(IslandSession { lp, scenes })
    }

    /// Feeds frames of the given durations (ms); returns the steps they ran.
    pub fn frames(&mut self, frame_ms: impl IntoIterator<Item = u64>) -> u64 {
        let mut steps = 0u64;
        for ms in frame_ms {
            let r = self.lp.frame(Nanos::from_millis(ms));
            steps += u64::from(r.steps);
        }
        self.scenes.run_ticks(steps);
        steps
    }

    /// Runs `n` steps directly.
    pub fn advance(&mut self, n: u64) {
        let _ = self.lp.advance(n);
        self.scenes.run_ticks(n);
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
    /// [`LifecycleError::AlreadyRunning`] when not paused or in the background
    /// (the wall clock has still moved).
    pub fn resume_after(&mut self, ms: u64) -> Result<ResumeReport, LifecycleError> {
        let now = self.lp.host_time().saturating_add(Nanos::from_millis(ms));
        let r = self.lp.resume(now)?;
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
    pub const fn world(&self) -> &IslandWorld {
        self.lp.sim()
    }

    /// The loop (read-only).
    #[must_use]
    pub const fn fixed_loop(&self) -> &FixedLoop<IslandWorld, TickInputs<i32>> {
        &self.lp
    }

    /// The seeds' text digest.
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

    /// The wall clock in whole milliseconds.
    #[must_use]
    pub const fn wall_ms(&self) -> u64 {
        self.lp.host_time().as_nanos() / tickwise::NANOS_PER_MILLI
    }
}
