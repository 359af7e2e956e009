//! Time scale: slow motion and fast-forward as an exact rational speed.
//!
//! A fixed step makes slow motion cheap and exact: at speed `P/Q` the loop
//! hands the clock `P/Q` of every host duration, and the sim runs the same
//! ticks with the same inputs, only more or less often. Scaling in floats
//! would round a little every frame and the sim would drift from real time;
//! scaling in whole nanoseconds with a truncating divide would lose up to
//! one nanosecond per frame. [`Speed::scale`] keeps the sub-nanosecond
//! remainder (in units of `1/Q` ns) and adds it to the next duration, so
//! after any number of frames the sim time handed out is exactly
//! `floor(total host time × P / Q)`.

use core::fmt;

use crate::time::{Nanos, StepLength};
use crate::time_bounds::{MAX_SPEED_RATIO, MAX_SPEED_TERM};
use crate::time_error::TimeError;

/// An exact speed `P/Q`: sim time runs at `P/Q` of host time.
///
/// Stored reduced (`2/4` is `1/2`), so two speeds are equal exactly when
/// they are the same ratio. `1 ≤ P, Q ≤ 1000` and `P/Q ≤ 16`: the bounds keep
/// every product in the loop's 128-bit arithmetic far from overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Speed {
    p: u32,
    q: u32,
}

const fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl Speed {
    /// Real time: 1/1.
    pub const NORMAL: Speed = Speed { p: 1, q: 1 };

    /// The speed `p/q`, reduced.
    ///
    /// # Errors
    ///
    /// [`TimeError::SpeedOutOfRange`] unless `1 ≤ p ≤ 1000`, `1 ≤ q ≤ 1000`
    /// and `p ≤ 16·q`.
    pub const fn new(p: u32, q: u32) -> Result<Speed, TimeError> {
        if p == 0 || q == 0 || p > MAX_SPEED_TERM || q > MAX_SPEED_TERM || p > MAX_SPEED_RATIO * q {
            return Err(TimeError::SpeedOutOfRange {
                numerator: p,
                denominator: q,
            });
        }
        let g = gcd(p, q);
        Ok(Speed { p: p / g, q: q / g })
    }

    /// `P`, reduced.
    #[must_use]
    pub const fn numerator(self) -> u32 {
        self.p
    }

    /// `Q`, reduced.
    #[must_use]
    pub const fn denominator(self) -> u32 {
        self.q
    }

    /// Whether this is [`Speed::NORMAL`].
    #[must_use]
    pub const fn is_normal(self) -> bool {
        self.p == 1 && self.q == 1
    }

    /// Scales the host duration `dt` with the carried remainder `rem` (in
    /// units of `1/Q` ns): returns `(floor((dt·P + rem) / Q), (dt·P + rem) mod Q)`.
    /// Feed the returned remainder to the next call and no time is created or
    /// lost by rounding. The result saturates at [`Nanos::MAX`] (a duration of
    /// 584 years; the remainder is still exact).
    #[must_use]
    pub const fn scale(self, dt: Nanos, rem: u64) -> (Nanos, u64) {
        let p = self.p as u64;
        let q = self.q as u64;
        // Fast path: dt·P + rem fits in u64 for any frame under 213 days at 16×.
        if let Some(prod) = dt.as_nanos().checked_mul(p)
            && let Some(total) = prod.checked_add(rem)
        {
            return (Nanos::from_nanos(total / q), total % q);
        }
        let total = dt.as_nanos() as u128 * p as u128 + rem as u128;
        let sim = total / q as u128;
        #[allow(clippy::cast_possible_truncation, reason = "a remainder below q")]
        let rem = (total % q as u128) as u64;
        if sim > u64::MAX as u128 {
            (Nanos::MAX, rem)
        } else {
            #[allow(clippy::cast_possible_truncation, reason = "checked above")]
            (Nanos::from_nanos(sim as u64), rem)
        }
    }

    /// A step cap (`max_steps_per_frame`) with which a host frame of
    /// `longest_frame` never drops time at this speed (jitter guard off):
    /// `floor(longest_frame × P/Q / step) + 2`. The `+ 2` covers the partial
    /// step the accumulator may already hold and the remainder under one step
    /// a resume may have carried into it. (With the jitter guard on, add one
    /// more: it may round a frame up to the next whole step.) Saturates at
    /// `u64::MAX`.
    ///
    /// This is how to size the cap for fast-forward. The speed itself never
    /// loses time, but it multiplies the steps a frame owes: at 60 Hz and 4×,
    /// a 50 ms hitch is 200 ms of sim time, 12 steps, so a cap of 14 keeps
    /// it, while the default cap of 8 would drop the rest of that frame
    /// ([`crate::FrameReport::dropped`]). With a frame clamp `C`, no frame
    /// gives the clock more than `C` of sim time, so
    /// `Speed::NORMAL.step_cap_for(step, C)` is enough at any speed (the
    /// clamp then cuts host frames longer than `C·Q/P` instead).
    #[must_use]
    pub const fn step_cap_for(self, step: StepLength, longest_frame: Nanos) -> u64 {
        let (sim, rem) = self.scale(longest_frame, 0);
        // A carried remainder can add one more nanosecond of sim time.
        let sim = if rem > 0 {
            sim.saturating_add(Nanos::from_nanos(1))
        } else {
            sim
        };
        let (steps, _) = step.split(sim);
        steps.saturating_add(2)
    }
}

impl Default for Speed {
    fn default() -> Self {
        Speed::NORMAL
    }
}

impl fmt::Display for Speed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.p, self.q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_are_reduced_and_bounded() {
        let s = Speed::new(2, 4).unwrap();
        assert_eq!((s.numerator(), s.denominator()), (1, 2));
        assert_eq!(Speed::new(1000, 1000).unwrap(), Speed::NORMAL);
        assert_eq!(Speed::new(16, 1).unwrap().numerator(), 16);
        assert_eq!(Speed::new(1, 1000).unwrap().denominator(), 1000);
        for (p, q) in [(0, 1), (1, 0), (17, 1), (1001, 1000), (1, 1001), (161, 10)] {
            assert_eq!(
                Speed::new(p, q),
                Err(TimeError::SpeedOutOfRange {
                    numerator: p,
                    denominator: q
                }),
                "{p}/{q}"
            );
        }
        assert!(Speed::default().is_normal());
        assert_eq!(Speed::new(3, 4).unwrap().to_string(), "3/4");
    }

    #[test]
    fn scale_carries_the_remainder() {
        // 1/3 speed: 10 ns -> 3 ns rem 1; 10 ns -> (10 + 1) / 3 = 3 rem 2;
        // 10 ns -> (10 + 2) / 3 = 4 rem 0. 30 ns of host time, exactly 10 of sim.
        let s = Speed::new(1, 3).unwrap();
        let t = Nanos::from_nanos(10);
        assert_eq!(s.scale(t, 0), (Nanos::from_nanos(3), 1));
        assert_eq!(s.scale(t, 1), (Nanos::from_nanos(3), 2));
        assert_eq!(s.scale(t, 2), (Nanos::from_nanos(4), 0));
        // 16x on the largest duration saturates; the remainder stays exact.
        let f = Speed::new(16, 1).unwrap();
        assert_eq!(f.scale(Nanos::MAX, 0), (Nanos::MAX, 0));
        let g = Speed::new(7, 3).unwrap();
        // u64::MAX * 7 mod 3: u64::MAX = 18446744073709551615 ≡ 0 (mod 3) (digit sum 87).
        assert_eq!(g.scale(Nanos::MAX, 2), (Nanos::MAX, 2));
    }

    #[test]
    fn step_cap_for_fast_forward() {
        let step = StepLength::from_hz(60).unwrap();
        let four = Speed::new(4, 1).unwrap();
        // 50 ms at 4x = 200 ms = 12 steps of 16.67 ms; plus two.
        assert_eq!(four.step_cap_for(step, Nanos::from_millis(50)), 14);
        let ms16 = StepLength::from_millis(16).unwrap();
        // 1x, 128 ms = 8 steps exactly, +2.
        assert_eq!(
            Speed::NORMAL.step_cap_for(ms16, Nanos::from_millis(128)),
            10
        );
        // 1/3 of 100 ns leaves a remainder: 33.3 ns rounds up to 34 before dividing.
        let ns = StepLength::from_nanos_ratio(34, 1).unwrap();
        assert_eq!(
            Speed::new(1, 3)
                .unwrap()
                .step_cap_for(ns, Nanos::from_nanos(100)),
            3
        );
    }
}
