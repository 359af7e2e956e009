//! Leaving and coming back: a player's pause, the app sent to the
//! background, the resume that runs the catch-up its policy allows, and the
//! platform's visibility events routed to them. The time a resume drops
//! goes to an [`OfflineSettlement`] hook, outside the deterministic sim.

use super::FixedLoop;
use crate::input::InputSource;
use crate::lifecycle::{AppState, Lifecycle, LifecycleError, ResumeReport};
use crate::sim::Sim;
use crate::time::Timestamp;

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

impl<S: Sim, I: InputSource<S::Input>> FixedLoop<S, I> {
    /// Pauses at host time `now`. If `now` is after the last frame, the time in
    /// between is run as a frame first: it was spent running. Held buttons
    /// stay held (the app keeps focus; see [`FixedLoop::background`]).
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running.
    pub fn pause(&mut self, now: Timestamp) -> Result<(), LifecycleError> {
        self.pause_with(now, |_| {})
    }

    pub(crate) fn pause_with(
        &mut self,
        now: Timestamp,
        before_last_step: impl FnOnce(&S),
    ) -> Result<(), LifecycleError> {
        self.leave(now, Lifecycle::pause, before_last_step)
    }

    /// Leaves the running state at `now`. Time between the last frame and
    /// `now` was spent running, so it is fed to the clock first as one frame
    /// (a platform event that arrives between two display frames loses nothing).
    fn leave(
        &mut self,
        now: Timestamp,
        transition: fn(&mut Lifecycle, Timestamp) -> Result<(), LifecycleError>,
        before_last_step: impl FnOnce(&S),
    ) -> Result<(), LifecycleError> {
        if !self.lifecycle.is_running() {
            return Err(LifecycleError::NotRunning {
                state: self.lifecycle.state(),
            });
        }
        if now > self.host_now {
            let _ = self.frame_at_with(now, before_last_step);
        }
        transition(&mut self.lifecycle, now)
    }

    /// Goes to the background at host time `now` (the gap since the last frame
    /// runs first, as for [`FixedLoop::pause`]), then releases every held
    /// button at `now` through [`InputSource::release_all`]: a hidden app gets
    /// no key-ups, and a key held at hide time must not drive the catch-up
    /// ticks of the resume (see the lifecycle docs, "Held buttons while hidden").
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running (nothing is released then).
    pub fn background(&mut self, now: Timestamp) -> Result<(), LifecycleError> {
        self.background_with(now, |_| {})
    }

    pub(crate) fn background_with(
        &mut self,
        now: Timestamp,
        before_last_step: impl FnOnce(&S),
    ) -> Result<(), LifecycleError> {
        self.leave(now, Lifecycle::background, before_last_step)?;
        self.inputs.release_all(now);
        Ok(())
    }

    /// Resumes at host time `now`: runs the catch-up steps the policy allows,
    /// returns the carried remainder to the accumulator, and reports it all.
    /// At a speed other than 1/1 the policy decides on the scaled time away
    /// ([`ResumeReport::sim_elapsed`]).
    ///
    /// # Errors
    ///
    /// [`LifecycleError::AlreadyRunning`] when not paused or in the background.
    pub fn resume(&mut self, now: Timestamp) -> Result<ResumeReport, LifecycleError> {
        self.resume_inner(now, &mut |_: &ResumeReport| {}, |_| {})
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
        self.resume_inner(now, settlement, |_| {})
    }

    pub(crate) fn resume_inner(
        &mut self,
        now: Timestamp,
        settlement: &mut impl OfflineSettlement,
        before_last_step: impl FnOnce(&S),
    ) -> Result<ResumeReport, LifecycleError> {
        let speed = self.speed;
        let rem = &mut self.speed_rem;
        let report = self
            .lifecycle
            .resume_scaled(now, self.clock.config().step(), |host| {
                Self::scale(speed, rem, host)
            })?;
        self.host_now = self.host_now.max(now);
        self.clock.carry_scaled(report.carried_scaled);
        self.run_steps(report.catch_up_steps, before_last_step);
        settlement.settle(&report);
        Ok(report)
    }

    /// Routes a platform visibility event: `Hidden` sends a running app to the
    /// background, `Visible` resumes an app that is in the background. Events
    /// that do not apply (hidden while paused, a duplicate visible, visible
    /// while paused by the player) change nothing and return `None`: a player's
    /// pause survives the tab being hidden and shown again.
    pub fn platform_event(&mut self, event: PlatformEvent, now: Timestamp) -> Option<ResumeReport> {
        self.platform_event_with(event, now, |_| {})
    }

    pub(crate) fn platform_event_with(
        &mut self,
        event: PlatformEvent,
        now: Timestamp,
        before_last_step: impl FnOnce(&S),
    ) -> Option<ResumeReport> {
        match (event, self.lifecycle.state()) {
            (PlatformEvent::Hidden, AppState::Running) => {
                let _ = self.background_with(now, before_last_step);
                None
            }
            (PlatformEvent::Visible, AppState::Background) => self
                .resume_inner(now, &mut |_: &ResumeReport| {}, before_last_step)
                .ok(),
            _ => None,
        }
    }
}
