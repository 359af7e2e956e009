//! The browser's clock, mapped onto the loop's host clock.
//!
//! The browser hands out float milliseconds since page load
//! (`requestAnimationFrame` timestamps, `performance.now()`, event
//! `timeStamp`s). The kernel wants integer [`Timestamp`]s on *its* host clock,
//! which the page's test API also moves synthetically (`stepFrames(100, 16)`
//! moves it by 1600 ms without any real time passing). [`HostClock`] joins the
//! two: the first browser reading after an [`HostClock::reanchor`] is pinned to
//! the loop's current host time, and later readings are that plus the browser
//! time elapsed since. Synthetic moves re-anchor, so real time and synthetic
//! time never double-count each other.
//!
//! Bad browser times (NaN, infinite, negative: [`Nanos::try_from_millis_f64`]
//! refuses them) are not mapped: the caller ignores that frame or event, and
//! the clock counts it in [`HostClock::rejected`]. The next good reading
//! measures from the last good one, so no time is invented or lost beyond the
//! one bad reading.

use tickwise::{Nanos, TimeError, Timestamp};

/// Maps browser milliseconds onto a loop's host clock. See the [module docs](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostClock {
    /// (browser time, host time) pinned together at the last anchor.
    anchor: Option<(Nanos, Timestamp)>,
    rejected: u64,
}

impl HostClock {
    /// A clock that anchors at its first reading.
    #[must_use]
    pub const fn new() -> HostClock {
        HostClock {
            anchor: None,
            rejected: 0,
        }
    }

    /// Forgets the anchor: the next reading maps to the loop's host time then.
    /// Call it after anything that moved the loop's clock synthetically.
    pub const fn reanchor(&mut self) {
        self.anchor = None;
    }

    /// The host time of browser time `ms`, given the loop's current host time
    /// `loop_now` (used when anchoring). A browser time before the anchor maps
    /// to the anchor's host time (the loop then sees a zero-length or
    /// backwards frame and counts it).
    ///
    /// # Errors
    ///
    /// The [`TimeError`] of [`Nanos::try_from_millis_f64`] for NaN, infinite,
    /// negative or absurdly large `ms`; the reading is counted in
    /// [`HostClock::rejected`] and nothing else changes.
    pub fn map(&mut self, ms: f64, loop_now: Timestamp) -> Result<Timestamp, TimeError> {
        let browser = Nanos::try_from_millis_f64(ms).inspect_err(|_| self.rejected += 1)?;
        let (b0, h0) = *self.anchor.get_or_insert((browser, loop_now));
        Ok(h0.saturating_add(browser.saturating_sub(b0)))
    }

    /// Browser readings refused so far.
    #[must_use]
    pub const fn rejected(&self) -> u64 {
        self.rejected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn ms(v: u64) -> Timestamp {
        Timestamp::from_millis(v)
    }

    #[test]
    fn first_reading_anchors_and_later_ones_add_browser_time() {
        let mut c = HostClock::new();
        assert_eq!(c.map(5000.25, ms(1600)), Ok(ms(1600)));
        // 16.5 ms of browser time later; loop_now is ignored once anchored.
        assert_eq!(
            c.map(5016.75, ms(9999)),
            Ok(Timestamp::from_nanos(1_616_500_000))
        );
        c.reanchor();
        assert_eq!(c.map(6000.0, ms(7000)), Ok(ms(7000)));
        assert_eq!(c.map(6100.0, ms(0)), Ok(ms(7100)));
    }

    #[test]
    fn before_the_anchor_saturates_to_the_anchor() {
        let mut c = HostClock::new();
        assert_eq!(c.map(100.0, ms(50)), Ok(ms(50)));
        assert_eq!(c.map(90.0, ms(50)), Ok(ms(50)));
    }

    #[test]
    fn bad_readings_are_refused_counted_and_change_nothing() {
        let mut c = HostClock::new();
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1e300] {
            assert!(c.map(bad, ms(0)).is_err(), "{bad}");
        }
        assert_eq!(c.rejected(), 4);
        // Still unanchored: the first good reading anchors.
        assert_eq!(c.map(42.0, ms(7)), Ok(ms(7)));
    }
}
