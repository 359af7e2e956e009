//! The loop: owns a sim, its clock, its lifecycle and its input source.

use crate::clock::{Clock, ClockConfig, FrameReport};
use crate::input::InputSource;
use crate::lifecycle::{AppState, CatchUpPolicy, Lifecycle, LifecycleError, ResumeReport};
use crate::sim::Sim;
use crate::time::{Nanos, Tick, Timestamp};

/// `ceil(scaled / den)` as a timestamp, clamped to the `u64` range: the
/// exclusive end of a tick window in whole ns (`t < x/den  <=>  t < ceil(x/den)`).
/// Fast paths avoid a 128-bit division (a library call) on every step.
#[inline]
fn ceil_to_nanos(scaled: i128, den: u64) -> Timestamp {
    if scaled <= 0 {
        return Timestamp::ZERO;
    }
    let ns = match (u64::try_from(scaled), den) {
        (Ok(v), 1) => v,
        (Ok(v), d) => v.div_ceil(d),
        (Err(_), d) => {
            let d = i128::from(d);
            let q = scaled / d + i128::from(scaled % d != 0);
            u64::try_from(q).unwrap_or(u64::MAX)
        }
    };
    Timestamp::from_nanos(ns)
}

/// Receives the time a resume dropped, to settle offline rewards outside the
/// deterministic sim ("you were away 1 h: here are your coins").
///
/// Real-time catch-up keeps the world from freezing the app; settlement keeps
/// the player from losing out. They are separate systems on purpose.
pub trait OfflineSettlement {
    /// Called once per resume with its full report (`report.dropped` is the
    /// time the sim will never see).
    fn settle(&mut self, report: &ResumeReport);
}

impl<F: FnMut(&ResumeReport)> OfflineSettlement for F {
    fn settle(&mut self, report: &ResumeReport) {
        self(report);
    }
}

/// A host visibility event, as a platform adapter reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlatformEvent {
    /// The app was hidden (`visibilitychange` to hidden, `onHide`, minimised).
    Hidden,
    /// The app is visible again.
    Visible,
}

/// A fixed-timestep loop over a [`Sim`].
///
/// The loop is the only owner of the sim: presentation code gets `&S` from
/// [`FixedLoop::sim`] and can never step or mutate it, so interpolated values
/// cannot flow back into the simulation.
///
/// The loop keeps a host clock: [`FixedLoop::frame`] moves it by the frame's
/// duration, [`FixedLoop::frame_at`] sets it from a host timestamp. Tick `k`'s
/// input window on that clock ends at `origin + (k + 1) * step`, where `origin`
/// shifts by any time the sim never saw (dropped, clamped, or spent away).
#[derive(Debug)]
pub struct FixedLoop<S, I> {
    sim: S,
    inputs: I,
    clock: Clock,
    lifecycle: Lifecycle,
    tick: Tick,
    host_now: Timestamp,
    backwards_frames: u64,
}

impl<S: Sim, I: InputSource<S::Input>> FixedLoop<S, I> {
    /// A running loop at tick 0 and host time 0.
    #[must_use]
    pub fn new(sim: S, inputs: I, clock: ClockConfig, policy: CatchUpPolicy) -> Self {
        FixedLoop {
            sim,
            inputs,
            clock: Clock::new(clock),
            lifecycle: Lifecycle::new(policy),
            tick: Tick::ZERO,
            host_now: Timestamp::ZERO,
            backwards_frames: 0,
        }
    }

    /// Read-only access to the sim, for presentation and digests.
    #[must_use]
    pub const fn sim(&self) -> &S {
        &self.sim
    }

    /// The next tick to run (the number of steps run so far).
    #[must_use]
    pub const fn tick(&self) -> Tick {
        self.tick
    }

    /// The clock.
    #[must_use]
    pub const fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The lifecycle state.
    #[must_use]
    pub const fn state(&self) -> AppState {
        self.lifecycle.state()
    }

    /// The lifecycle.
    #[must_use]
    pub const fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    /// The input source.
    #[must_use]
    pub const fn inputs(&self) -> &I {
        &self.inputs
    }

    /// The input source, mutably (to push events into an event buffer).
    pub const fn inputs_mut(&mut self) -> &mut I {
        &mut self.inputs
    }

    /// The loop's host clock.
    #[must_use]
    pub const fn host_time(&self) -> Timestamp {
        self.host_now
    }

    /// Frames whose timestamp was earlier than the previous one (treated as
    /// zero-length frames).
    #[must_use]
    pub const fn backwards_frames(&self) -> u64 {
        self.backwards_frames
    }

    /// Feeds a frame of duration `dt` and runs the steps it owes.
    ///
    /// While paused or in the background the host clock moves but no steps run
    /// (the report has `running: false`); the time is accounted at resume.
    pub fn frame(&mut self, dt: Nanos) -> FrameReport {
        self.frame_with(dt, |_| {})
    }

    /// Like [`FixedLoop::frame`], calling `before_last_step(&sim)` just before
    /// the frame's last step (not at all when it runs none). An interpolating
    /// renderer captures its "previous" snapshot there.
    pub fn frame_with(&mut self, dt: Nanos, before_last_step: impl FnOnce(&S)) -> FrameReport {
        self.host_now = self.host_now.saturating_add(dt);
        if !self.lifecycle.is_running() {
            return FrameReport {
                steps: 0,
                clamped: Nanos::ZERO,
                dropped: Nanos::ZERO,
                capped: false,
                alpha: self.clock.alpha(),
                running: false,
            };
        }
        let report = self.clock.advance(dt);
        self.run_steps(u64::from(report.steps), before_last_step);
        let thrown = report.thrown_away();
        if thrown > Nanos::ZERO {
            self.sim.on_time_dropped(thrown);
        }
        report
    }

    /// Hosted mode: a frame at host timestamp `now` (a `requestAnimationFrame`
    /// timestamp, a vsync callback). The duration is the time since the
    /// previous frame; a timestamp earlier than the previous one counts as a
    /// zero-length frame and is counted in [`FixedLoop::backwards_frames`].
    pub fn frame_at(&mut self, now: Timestamp) -> FrameReport {
        self.frame_at_with(now, |_| {})
    }

    /// [`FixedLoop::frame_at`] with the hook of [`FixedLoop::frame_with`].
    pub fn frame_at_with(
        &mut self,
        now: Timestamp,
        before_last_step: impl FnOnce(&S),
    ) -> FrameReport {
        let dt = match now.checked_since(self.host_now) {
            Some(dt) => dt,
            None => {
                self.backwards_frames += 1;
                Nanos::ZERO
            }
        };
        self.frame_with(dt, before_last_step)
    }

    /// Runs `n` steps directly, whatever the clock or lifecycle say (tests,
    /// tools, and catch-up). Returns the new tick.
    pub fn advance(&mut self, n: u64) -> Tick {
        self.run_steps(n, |_| {});
        self.tick
    }

    fn run_steps(&mut self, n: u64, before_last_step: impl FnOnce(&S)) {
        if n == 0 {
            return;
        }
        // Tick windows: tick k ends at origin + (k+1)*step on the host clock,
        // where origin = now - (tick + n)*step - accumulator. In the clock's
        // exact 1/den ns units, the last tick of this batch ends at
        // now*den - acc - drift and each earlier one a step before.
        let step = self.clock.config().step();
        let unit = i128::from(step.numerator());
        let den = step.denominator();
        let (acc, drift, _) = self.clock.exact_parts();
        let last_end = i128::from(self.host_now.as_nanos()) * i128::from(den) - acc - drift;
        let mut end_scaled = last_end - i128::from(n - 1) * unit;
        let mut before = Some(before_last_step);
        for j in 0..n {
            if j + 1 == n
                && let Some(f) = before.take()
            {
                f(&self.sim);
            }
            let window_end = ceil_to_nanos(end_scaled, den);
            let input = self.inputs.input(self.tick, window_end);
            self.sim.step(&input);
            self.tick = self.tick.next();
            end_scaled += unit;
        }
    }

    /// Pauses at host time `now`. If `now` is after the last frame, the time in
    /// between is run as a frame first: it was spent running.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running.
    pub fn pause(&mut self, now: Timestamp) -> Result<(), LifecycleError> {
        self.leave(now, Lifecycle::pause)
    }

    /// Leaves the running state at `now`. Time between the last frame and
    /// `now` was spent running, so it is fed to the clock first as one frame
    /// (a platform event that arrives between two display frames loses nothing).
    fn leave(
        &mut self,
        now: Timestamp,
        transition: fn(&mut Lifecycle, Timestamp) -> Result<(), LifecycleError>,
    ) -> Result<(), LifecycleError> {
        if !self.lifecycle.is_running() {
            return Err(LifecycleError::NotRunning {
                state: self.lifecycle.state(),
            });
        }
        if now > self.host_now {
            let _ = self.frame_at(now);
        }
        transition(&mut self.lifecycle, now)
    }

    /// Goes to the background at host time `now` (the gap since the last frame
    /// runs first, as for [`FixedLoop::pause`]).
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running.
    pub fn background(&mut self, now: Timestamp) -> Result<(), LifecycleError> {
        self.leave(now, Lifecycle::background)
    }

    /// Resumes at host time `now`: runs the catch-up steps the policy allows,
    /// returns the carried remainder to the accumulator, and reports it all.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::AlreadyRunning`] when not paused or in the background.
    pub fn resume(&mut self, now: Timestamp) -> Result<ResumeReport, LifecycleError> {
        self.resume_with(now, &mut |_: &ResumeReport| {})
    }

    /// Like [`FixedLoop::resume`], handing the report to an offline-settlement
    /// hook after the catch-up ran.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::AlreadyRunning`] when not paused or in the background.
    pub fn resume_with(
        &mut self,
        now: Timestamp,
        settlement: &mut impl OfflineSettlement,
    ) -> Result<ResumeReport, LifecycleError> {
        let report = self.lifecycle.resume(now, self.clock.config().step())?;
        self.host_now = self.host_now.max(now);
        self.clock.carry_scaled(report.carried_scaled);
        self.run_steps(report.catch_up_steps, |_| {});
        settlement.settle(&report);
        Ok(report)
    }

    /// Routes a platform visibility event: `Hidden` sends a running app to the
    /// background, `Visible` resumes an app that is in the background. Events
    /// that do not apply (hidden while paused, a duplicate visible, visible
    /// while paused by the player) change nothing and return `None`: a player's
    /// pause survives the tab being hidden and shown again.
    pub fn platform_event(&mut self, event: PlatformEvent, now: Timestamp) -> Option<ResumeReport> {
        match (event, self.lifecycle.state()) {
            (PlatformEvent::Hidden, AppState::Running) => {
                let _ = self.background(now);
                None
            }
            (PlatformEvent::Visible, AppState::Background) => self.resume(now).ok(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_to_nanos_rounds_up_and_clamps() {
        assert_eq!(ceil_to_nanos(-7, 3), Timestamp::ZERO);
        assert_eq!(ceil_to_nanos(0, 3), Timestamp::ZERO);
        assert_eq!(ceil_to_nanos(9, 1), Timestamp::from_nanos(9));
        assert_eq!(ceil_to_nanos(9, 3), Timestamp::from_nanos(3));
        assert_eq!(ceil_to_nanos(10, 3), Timestamp::from_nanos(4));
        let big = i128::from(u64::MAX) * 3 + 1;
        assert_eq!(ceil_to_nanos(big, 3), Timestamp::from_nanos(u64::MAX));
        assert_eq!(ceil_to_nanos(i128::MAX, 1), Timestamp::from_nanos(u64::MAX));
    }
}
