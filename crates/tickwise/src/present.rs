//! Presentation: read-only snapshots for interpolated drawing.
//!
//! A renderer at 144 Hz over a 30 Hz sim draws between the previous and the
//! current tick with the clock's alpha. It needs two states; it must never be
//! able to write one back. [`Presenter`] keeps the previous snapshot and hands
//! out shared references only: interpolated values are computed from `&S::Snapshot`
//! and have nowhere to go but the screen.

use crate::clock::{Alpha, FrameReport};
use crate::fixed_loop::{FixedLoop, PlatformEvent};
use crate::input::InputSource;
use crate::lifecycle::{LifecycleError, ResumeReport};
use crate::sim::Sim;
use crate::time::{Nanos, Timestamp};

/// A sim that can hand presentation a snapshot of what it draws.
pub trait Capture: Sim {
    /// What presentation needs to draw one tick (positions, not the whole state).
    type Snapshot: Clone;

    /// Copies the drawable state into `out`, reusing its allocation.
    fn capture_into(&self, out: &mut Self::Snapshot);

    /// A fresh snapshot.
    fn capture(&self) -> Self::Snapshot;
}

/// Previous and current snapshots plus alpha, updated once per frame.
///
/// Drive every call that can run steps through the presenter (frames, and
/// also pause, background, resume and platform events: leaving runs the gap
/// since the last frame, resuming runs the catch-up), so that previous and
/// current are always the last two ticks the sim really ran. A loop driven
/// around the presenter leaves it drawing a stale state.
#[derive(Clone, Debug)]
pub struct Presenter<T> {
    prev: T,
    curr: T,
    alpha: Alpha,
}

impl<T: Clone> Presenter<T> {
    /// A presenter whose previous and current snapshots are both `sim`'s state.
    #[must_use]
    pub fn new<S: Capture<Snapshot = T>>(sim: &S) -> Presenter<T> {
        let s = sim.capture();
        Presenter {
            prev: s.clone(),
            curr: s,
            alpha: Alpha::ZERO,
        }
    }

    /// Runs one frame of `lp` and updates the snapshots: `prev` becomes the
    /// state before the frame's last step, `curr` the state after it. A frame
    /// that runs no steps only moves alpha.
    pub fn frame<S, I>(&mut self, lp: &mut FixedLoop<S, I>, dt: Nanos) -> FrameReport
    where
        S: Capture<Snapshot = T>,
        I: InputSource<S::Input>,
    {
        let prev = &mut self.prev;
        let report = lp.frame_with(dt, |s| s.capture_into(prev));
        self.finish(lp.sim(), report)
    }

    /// Hosted mode: like [`Presenter::frame`], for a frame at host timestamp
    /// `now` (see [`FixedLoop::frame_at`]).
    pub fn frame_at<S, I>(&mut self, lp: &mut FixedLoop<S, I>, now: Timestamp) -> FrameReport
    where
        S: Capture<Snapshot = T>,
        I: InputSource<S::Input>,
    {
        let prev = &mut self.prev;
        let report = lp.frame_at_with(now, |s| s.capture_into(prev));
        self.finish(lp.sim(), report)
    }

    /// Resumes `lp` at `now` (see [`FixedLoop::resume`]) and updates the
    /// snapshots: after a catch-up, `prev` is the state before its last step
    /// and `curr` the state after it; alpha is the clock's (the carried
    /// remainder). A resume that runs no steps leaves the snapshots alone.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::AlreadyRunning`] when not paused or in the background.
    pub fn resume<S, I>(
        &mut self,
        lp: &mut FixedLoop<S, I>,
        now: Timestamp,
    ) -> Result<ResumeReport, LifecycleError>
    where
        S: Capture<Snapshot = T>,
        I: InputSource<S::Input>,
    {
        self.around(lp, |lp, prev| {
            lp.resume_inner(now, &mut |_: &ResumeReport| {}, |s| {
                s.capture_into(prev);
            })
        })
    }

    /// Pauses `lp` at `now` (see [`FixedLoop::pause`]); the gap since the last
    /// frame may run steps, and the snapshots follow them.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running.
    pub fn pause<S, I>(
        &mut self,
        lp: &mut FixedLoop<S, I>,
        now: Timestamp,
    ) -> Result<(), LifecycleError>
    where
        S: Capture<Snapshot = T>,
        I: InputSource<S::Input>,
    {
        self.around(lp, |lp, prev| lp.pause_with(now, |s| s.capture_into(prev)))
    }

    /// Sends `lp` to the background at `now` (see [`FixedLoop::background`]);
    /// the snapshots follow the steps of the gap since the last frame.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running.
    pub fn background<S, I>(
        &mut self,
        lp: &mut FixedLoop<S, I>,
        now: Timestamp,
    ) -> Result<(), LifecycleError>
    where
        S: Capture<Snapshot = T>,
        I: InputSource<S::Input>,
    {
        self.around(lp, |lp, prev| {
            lp.background_with(now, |s| s.capture_into(prev))
        })
    }

    /// Routes a platform event to `lp` (see [`FixedLoop::platform_event`])
    /// and updates the snapshots from whatever steps it ran (the gap before
    /// hiding, or the catch-up after becoming visible).
    pub fn platform_event<S, I>(
        &mut self,
        lp: &mut FixedLoop<S, I>,
        event: PlatformEvent,
        now: Timestamp,
    ) -> Option<ResumeReport>
    where
        S: Capture<Snapshot = T>,
        I: InputSource<S::Input>,
    {
        self.around(lp, |lp, prev| {
            lp.platform_event_with(event, now, |s| s.capture_into(prev))
        })
    }

    /// Runs a lifecycle call on `lp` that captures the state before its
    /// last step into the `prev` it is given; afterwards the current
    /// snapshot follows any steps it ran, and alpha follows the clock.
    fn around<S, I, R>(
        &mut self,
        lp: &mut FixedLoop<S, I>,
        call: impl FnOnce(&mut FixedLoop<S, I>, &mut T) -> R,
    ) -> R
    where
        S: Capture<Snapshot = T>,
        I: InputSource<S::Input>,
    {
        let before = lp.tick();
        let r = call(lp, &mut self.prev);
        if lp.tick() != before {
            lp.sim().capture_into(&mut self.curr);
        }
        self.alpha = lp.clock().alpha();
        r
    }

    fn finish<S: Capture<Snapshot = T>>(&mut self, sim: &S, report: FrameReport) -> FrameReport {
        if report.steps > 0 {
            sim.capture_into(&mut self.curr);
        }
        self.alpha = report.alpha;
        report
    }

    /// The snapshot one tick before [`Presenter::current`].
    #[must_use]
    pub const fn previous(&self) -> &T {
        &self.prev
    }

    /// The latest tick's snapshot.
    #[must_use]
    pub const fn current(&self) -> &T {
        &self.curr
    }

    /// How far the display time is between previous and current.
    #[must_use]
    pub const fn alpha(&self) -> Alpha {
        self.alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CatchUpPolicy, ClockConfig, FnInputs, StateVisitor, StepLength, Tick};

    /// Moves one unit per tick.
    #[derive(Clone, Debug, PartialEq)]
    struct Mover(i64);

    impl Sim for Mover {
        type Input = i64;
        fn step(&mut self, inputs: &[i64]) {
            let input = &inputs.first().cloned().unwrap_or_default();
            self.0 += input;
        }
        fn visit_state(&self, v: &mut dyn StateVisitor) {
            v.field("x");
            v.value_i64(self.0);
        }
    }

    impl Capture for Mover {
        type Snapshot = i64;
        fn capture_into(&self, out: &mut i64) {
            *out = self.0;
        }
        fn capture(&self) -> i64 {
            self.0
        }
    }

    type MoverLoop = FixedLoop<Mover, FnInputs<fn(Tick) -> i64>>;

    fn capped_loop() -> MoverLoop {
        let inputs: FnInputs<fn(Tick) -> i64> = FnInputs(|t: Tick| t.get() as i64 % 5);
        FixedLoop::new(
            Mover(0),
            inputs,
            ClockConfig::new(StepLength::from_millis(16).unwrap()),
            CatchUpPolicy::Capped {
                max_steps: 300,
                min_elapsed: Nanos::from_millis(32),
            },
        )
    }

    /// x after `n` ticks of the input `t % 5`: sum of t % 5 for t < n.
    fn x_after(n: u64) -> i64 {
        (0..n).map(|t| (t % 5) as i64).sum()
    }

    #[test]
    fn snapshots_follow_a_capped_resume() {
        let mut lp = capped_loop();
        let mut p = Presenter::new(lp.sim());
        let _ = p.frame(&mut lp, Nanos::from_millis(40)); // 2 ticks, 8 ms left
        // Hidden at 50 ms: the 10 ms gap + 8 ms make one more tick (tick 3).
        assert_eq!(
            p.platform_event(&mut lp, PlatformEvent::Hidden, Timestamp::from_millis(50)),
            None
        );
        assert_eq!(lp.tick().get(), 3);
        assert_eq!((*p.previous(), *p.current()), (x_after(2), x_after(3)));
        // Visible 5 s later: 312 owed, 300 run. Ticks 302 and 303 are the last two.
        let r = p
            .platform_event(
                &mut lp,
                PlatformEvent::Visible,
                Timestamp::from_millis(5_050),
            )
            .unwrap();
        assert_eq!((r.wanted_steps, r.catch_up_steps), (312, 300));
        assert_eq!(lp.tick().get(), 303);
        assert_eq!((*p.previous(), *p.current()), (x_after(302), x_after(303)));
        assert_eq!(*p.current(), lp.sim().0);
        // Pause and resume through the presenter: 1 s away = 62 ticks + 8 ms carried.
        p.pause(&mut lp, Timestamp::from_millis(5_050)).unwrap();
        let r = p.resume(&mut lp, Timestamp::from_millis(6_050)).unwrap();
        assert_eq!((r.catch_up_steps, r.carried), (62, Nanos::from_millis(8)));
        assert_eq!((*p.previous(), *p.current()), (x_after(364), x_after(365)));
        // Alpha: the 2 ms the accumulator kept since the hide, plus the 8 ms carried.
        assert_eq!(p.alpha().scaled(16), 10);
        // A refused resume changes nothing.
        assert!(p.resume(&mut lp, Timestamp::from_millis(7_000)).is_err());
        assert_eq!((*p.previous(), *p.current()), (x_after(364), x_after(365)));
        // Background then a resume too short to catch up: snapshots unchanged.
        p.background(&mut lp, Timestamp::from_millis(6_050))
            .unwrap();
        let r = p.resume(&mut lp, Timestamp::from_millis(6_060)).unwrap();
        assert_eq!(r.catch_up_steps, 0);
        assert_eq!((*p.previous(), *p.current()), (x_after(364), x_after(365)));
    }

    #[test]
    fn previous_is_one_tick_before_current() {
        let step = StepLength::from_millis(16).unwrap();
        let mut lp = FixedLoop::new(
            Mover(0),
            FnInputs(|_: Tick| 1),
            ClockConfig::new(step),
            CatchUpPolicy::Full,
        );
        let mut p = Presenter::new(lp.sim());
        // 40 ms: two steps (x = 2), 8 ms left: alpha 8/16.
        let r = p.frame(&mut lp, Nanos::from_millis(40));
        assert_eq!(r.steps, 2);
        assert_eq!((*p.previous(), *p.current()), (1, 2));
        assert_eq!(p.alpha().scaled(16), 8);
        // 4 ms more: no step, snapshots unchanged, alpha 12/16.
        let _ = p.frame(&mut lp, Nanos::from_millis(4));
        assert_eq!((*p.previous(), *p.current()), (1, 2));
        assert_eq!(p.alpha().scaled(16), 12);
        // Hosted: timestamp 60 ms = 16 ms more: one step.
        let _ = p.frame_at(&mut lp, Timestamp::from_millis(60));
        assert_eq!((*p.previous(), *p.current()), (2, 3));
        assert_eq!(p.alpha().scaled(16), 12);
    }
}
