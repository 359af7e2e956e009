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
use crate::time::Nanos;

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
        if report.steps > 0 {
            lp.sim().capture_into(&mut self.curr);
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
