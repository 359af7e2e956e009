//! A live play session of any catalog sim, type-erased: what `script`
//! drives (frames, direct steps, pause, background, resume, speed, scenes).
//!
//! Why here: the script language is the same for every sim; only building
//! the sim's loop is generic, and that is compiled once per sim at
//! [`Catalog::with`](crate::Catalog::with) like every other operation.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use tickwise::{
    CatchUpPolicy, FixedLoop, InputSource, Nanos, PlayError, PlaySession, ResumeReport, SceneError,
    Sim, Speed, Tick, Timestamp,
};

use crate::error::CatalogError;
use crate::inputs::{InputPlan, PlanInputs};
use crate::sim::CatalogSim;

/// A play session of some sim: a [`PlaySession`] with its sim type erased.
/// Every call is bounded as [`PlaySession`]'s are.
pub trait Playable {
    /// `count` frames of `ms` each; the steps they ran.
    ///
    /// # Errors
    ///
    /// As [`PlaySession::frames`].
    fn frames(&mut self, count: u64, ms: u64) -> Result<u64, PlayError>;
    /// One frame per listed duration (ms); the steps they ran.
    ///
    /// # Errors
    ///
    /// As [`PlaySession::frame_list`].
    fn frame_list(&mut self, frame_ms: &[u64]) -> Result<u64, PlayError>;
    /// `n` direct steps, whatever the lifecycle state.
    ///
    /// # Errors
    ///
    /// As [`PlaySession::advance`].
    fn advance(&mut self, n: u64) -> Result<(), PlayError>;
    /// Pauses now; `false` if not running.
    fn pause(&mut self) -> bool;
    /// Goes to the background now; `false` if not running.
    fn background(&mut self) -> bool;
    /// Moves the wall clock by `ms`, then resumes.
    ///
    /// # Errors
    ///
    /// As [`PlaySession::resume_after`].
    fn resume_after(&mut self, ms: u64) -> Result<ResumeReport, PlayError>;
    /// The time scale from now on.
    fn set_speed(&mut self, speed: Speed);
    /// Pushes a scene.
    ///
    /// # Errors
    ///
    /// As [`PlaySession::push`].
    fn push(&mut self, name: &str) -> Result<(), SceneError>;
    /// Pops a scene.
    ///
    /// # Errors
    ///
    /// As [`PlaySession::pop`].
    fn pop(&mut self) -> Result<(), SceneError>;
    /// Steps run.
    fn tick(&self) -> u64;
    /// The sim's text digest.
    fn digest(&self) -> String;
    /// The scene stack dump, e.g. `menu=paused,game=active`.
    fn scenes(&self) -> String;
    /// The fixed step in whole milliseconds.
    fn step_ms(&self) -> u64;
    /// The catch-up policy of a resume.
    fn policy(&self) -> CatchUpPolicy;
}

impl<S: Sim, I: InputSource<S::Input>> Playable for PlaySession<S, I> {
    fn frames(&mut self, count: u64, ms: u64) -> Result<u64, PlayError> {
        PlaySession::frames(self, count, ms)
    }
    fn frame_list(&mut self, frame_ms: &[u64]) -> Result<u64, PlayError> {
        PlaySession::frame_list(self, frame_ms)
    }
    fn advance(&mut self, n: u64) -> Result<(), PlayError> {
        PlaySession::advance(self, n)
    }
    fn pause(&mut self) -> bool {
        PlaySession::pause(self)
    }
    fn background(&mut self) -> bool {
        PlaySession::background(self)
    }
    fn resume_after(&mut self, ms: u64) -> Result<ResumeReport, PlayError> {
        PlaySession::resume_after(self, ms)
    }
    fn set_speed(&mut self, speed: Speed) {
        PlaySession::set_speed(self, speed);
    }
    fn push(&mut self, name: &str) -> Result<(), SceneError> {
        PlaySession::push(self, name)
    }
    fn pop(&mut self) -> Result<(), SceneError> {
        PlaySession::pop(self)
    }
    fn tick(&self) -> u64 {
        PlaySession::tick(self)
    }
    fn digest(&self) -> String {
        PlaySession::digest(self)
    }
    fn scenes(&self) -> String {
        PlaySession::scenes(self)
    }
    fn step_ms(&self) -> u64 {
        PlaySession::step_ms(self)
    }
    fn policy(&self) -> CatchUpPolicy {
        self.fixed_loop().lifecycle().policy()
    }
}

/// The inputs of a plan as the loop's input source, every player's.
struct PlanSource<S: CatalogSim> {
    plan: PlanInputs<S>,
    one: Vec<S::Input>,
}

impl<S: CatalogSim> InputSource<S::Input> for PlanSource<S> {
    const NEEDS_WINDOW: bool = false;

    fn input(&mut self, _tick: Tick, _window_end: Timestamp) -> S::Input {
        self.plan.fill(&mut self.one);
        self.one.first().cloned().unwrap_or_default()
    }

    fn inputs(&mut self, _tick: Tick, _window_end: Timestamp, out: &mut [S::Input]) {
        self.plan.fill(out);
    }
}

/// The catch-up policy of a play session of `S` under `cfg`: the sim's
/// most catch-up steps per resume when it has such a setting
/// ([`CatalogSim::max_catch_up_steps`]), else every step of the absence
/// (a script bounds that work before it runs).
fn policy_of<S: CatalogSim>(cfg: &S::Config) -> CatchUpPolicy {
    match S::max_catch_up_steps(cfg) {
        Some(max_steps) => CatchUpPolicy::Capped {
            max_steps,
            min_elapsed: Nanos::ZERO,
        },
        None => CatchUpPolicy::Full,
    }
}

/// A fresh play session of `S` from `config`, fed by `plan`.
pub(crate) fn play<S: CatalogSim>(
    config: &S::Config,
    plan: &InputPlan,
) -> Result<Box<dyn Playable>, CatalogError> {
    let sim = S::build(config);
    let plan = PlanInputs::<S>::new(plan, sim.players())?;
    let source = PlanSource {
        one: alloc::vec![S::Input::default(); plan.players()],
        plan,
    };
    let lp = FixedLoop::new(sim, source, S::clock_config(config), policy_of::<S>(config));
    Ok(Box::new(PlaySession::from_loop(lp)))
}
