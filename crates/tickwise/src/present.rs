//! Presentation: read-only snapshots for interpolated drawing.
//!
//! A renderer at 144 Hz over a 30 Hz sim draws between the previous and the
//! current tick with the clock's alpha. It needs two states; it must never be
//! able to write one back. [`Presenter`] keeps the previous snapshot and hands
//! out shared references only: interpolated values are computed from `&S::Snapshot`
//! and have nowhere to go but the screen.

use crate::clock::{Alpha, FrameReport};
use crate::fixed_loop::FixedLoop;
use crate::input::InputSource;
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
        fn step(&mut self, input: &i64) {
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
