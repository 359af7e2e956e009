//! Integer time: durations, host timestamps, ticks, and the rational step length.
//!
//! Every quantity here is an integer. A step length is a rational number of
//! nanoseconds (`num / den`), so rates such as 60 Hz (16 666 666⅔ ns) are exact:
//! the clock keeps its accumulator in units of `1/den` ns and never rounds.

use core::fmt;
use core::ops::{Add, AddAssign, Sub, SubAssign};

use crate::time_bounds::MAX_STEP_DENOMINATOR;
use crate::time_error::TimeError;

/// Nanoseconds in one millisecond.
pub const NANOS_PER_MILLI: u64 = 1_000_000;
/// Nanoseconds in one second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A non-negative duration in whole nanoseconds.
///
/// Nanoseconds are fine enough for any display or input timestamp and a `u64`
/// of them spans 584 years, so no realistic session overflows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(u64);

impl Nanos {
    /// The zero duration.
    pub const ZERO: Nanos = Nanos(0);
    /// The largest representable duration.
    pub const MAX: Nanos = Nanos(u64::MAX);

    /// A duration of `ns` nanoseconds.
    #[must_use]
    pub const fn from_nanos(ns: u64) -> Nanos {
        Nanos(ns)
    }

    /// A duration of `ms` milliseconds, saturating at [`Nanos::MAX`].
    #[must_use]
    pub const fn from_millis(ms: u64) -> Nanos {
        Nanos(ms.saturating_mul(NANOS_PER_MILLI))
    }

    /// A duration of `us` microseconds, saturating at [`Nanos::MAX`].
    #[must_use]
    pub const fn from_micros(us: u64) -> Nanos {
        Nanos(us.saturating_mul(1_000))
    }

    /// A duration of `s` seconds, saturating at [`Nanos::MAX`].
    #[must_use]
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s.saturating_mul(NANOS_PER_SEC))
    }

    /// Converts a floating-point millisecond count, as browsers report frame
    /// times (`performance.now()` deltas), to whole nanoseconds, rounding to the
    /// nearest nanosecond.
    ///
    /// This is the one place where a float enters the kernel, at the boundary,
    /// and it leaves as an integer before any simulation arithmetic happens.
    ///
    /// # Errors
    ///
    /// [`TimeError::NotFinite`] for NaN or infinities, [`TimeError::Negative`]
    /// for values below zero (including `-0.0`'s negative neighbours; `-0.0`
    /// itself is zero), [`TimeError::TooLarge`] when the value does not fit in
    /// a `u64` of nanoseconds.
    #[allow(
        clippy::disallowed_types,
        clippy::float_arithmetic,
        reason = "boundary conversion of a host float to integer nanoseconds"
    )]
    pub fn try_from_millis_f64(ms: f64) -> Result<Nanos, TimeError> {
        if !ms.is_finite() {
            return Err(TimeError::NotFinite);
        }
        if ms < 0.0 {
            return Err(TimeError::Negative);
        }
        // `as` truncates; adding 0.5 first rounds half up for non-negative values
        // (f64::round needs std, and this must work in no_std).
        let ns = ms * 1_000_000.0 + 0.5;
        if ns >= 18_446_744_073_709_551_615.0 {
            return Err(TimeError::TooLarge);
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "range checked above"
        )]
        Ok(Nanos(ns as u64))
    }

    /// Converts a `core::time::Duration`, saturating at [`Nanos::MAX`].
    #[must_use]
    pub const fn from_duration(d: core::time::Duration) -> Nanos {
        let ns = d.as_nanos();
        if ns > u64::MAX as u128 {
            Nanos::MAX
        } else {
            Nanos(ns as u64)
        }
    }

    /// The duration as a `core::time::Duration`.
    #[must_use]
    pub const fn to_duration(self) -> core::time::Duration {
        core::time::Duration::from_nanos(self.0)
    }

    /// The duration in nanoseconds.
    #[must_use]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// The duration in whole milliseconds, rounded down.
    #[must_use]
    pub const fn as_millis(self) -> u64 {
        self.0 / NANOS_PER_MILLI
    }

    /// Addition saturating at [`Nanos::MAX`].
    #[must_use]
    pub const fn saturating_add(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(other.0))
    }

    /// Subtraction saturating at zero.
    #[must_use]
    pub const fn saturating_sub(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(other.0))
    }

    /// Addition, or `None` on overflow.
    #[must_use]
    pub const fn checked_add(self, other: Nanos) -> Option<Nanos> {
        match self.0.checked_add(other.0) {
            Some(v) => Some(Nanos(v)),
            None => None,
        }
    }

    /// Subtraction, or `None` when `other` is longer than `self`.
    #[must_use]
    pub const fn checked_sub(self, other: Nanos) -> Option<Nanos> {
        match self.0.checked_sub(other.0) {
            Some(v) => Some(Nanos(v)),
            None => None,
        }
    }
}

/// `a + b`, like `core::time::Duration`'s `+`.
///
/// # Panics
///
/// On overflow (a sum past 584 years). Where the operands come from outside
/// the program (a host timestamp, a file), use [`Nanos::checked_add`] or
/// [`Nanos::saturating_add`], as the kernel itself does.
impl Add for Nanos {
    type Output = Nanos;
    fn add(self, other: Nanos) -> Nanos {
        match self.checked_add(other) {
            Some(v) => v,
            None => panic!("overflow when adding durations"),
        }
    }
}

/// `a += b`.
///
/// # Panics
///
/// As `+`, on overflow.
impl AddAssign for Nanos {
    fn add_assign(&mut self, other: Nanos) {
        *self = *self + other;
    }
}

/// `a - b`, like `core::time::Duration`'s `-`.
///
/// # Panics
///
/// When `b` is longer than `a` (durations are never negative). Use
/// [`Nanos::checked_sub`] or [`Nanos::saturating_sub`] when that can happen.
impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, other: Nanos) -> Nanos {
        match self.checked_sub(other) {
            Some(v) => v,
            None => panic!("overflow when subtracting durations"),
        }
    }
}

/// `a -= b`.
///
/// # Panics
///
/// As `-`, when `b` is longer than `a`.
impl SubAssign for Nanos {
    fn sub_assign(&mut self, other: Nanos) {
        *self = *self - other;
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0 / NANOS_PER_MILLI;
        let frac = self.0 % NANOS_PER_MILLI;
        if frac == 0 {
            write!(f, "{ms} ms")
        } else {
            write!(f, "{ms}.{frac:06} ms")
        }
    }
}

/// A reading of a monotonic host clock, in nanoseconds since an arbitrary origin.
///
/// The kernel never reads a clock itself: hosts pass timestamps in (a desktop
/// runner from `std::time::Instant`, a browser from `performance.now()`, a test
/// from a counter), which is what makes runs reproducible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The origin of the host clock.
    pub const ZERO: Timestamp = Timestamp(0);

    /// A timestamp `ns` nanoseconds after the origin.
    #[must_use]
    pub const fn from_nanos(ns: u64) -> Timestamp {
        Timestamp(ns)
    }

    /// A timestamp `ms` milliseconds after the origin (saturating).
    #[must_use]
    pub const fn from_millis(ms: u64) -> Timestamp {
        Timestamp(ms.saturating_mul(NANOS_PER_MILLI))
    }

    /// Nanoseconds since the origin.
    #[must_use]
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// The time from `earlier` to `self`, or `None` when the clock went
    /// backwards (`earlier` is after `self`).
    #[must_use]
    pub const fn checked_since(self, earlier: Timestamp) -> Option<Nanos> {
        match self.0.checked_sub(earlier.0) {
            Some(v) => Some(Nanos(v)),
            None => None,
        }
    }

    /// A desktop host's timestamp: the time from `origin` to `now`, both read by
    /// the host from `std::time::Instant` (the kernel never reads a clock).
    /// Saturates at `u64::MAX` ns; `now` before `origin` gives [`Timestamp::ZERO`].
    #[cfg(feature = "std")]
    #[must_use]
    pub fn from_instants(origin: std::time::Instant, now: std::time::Instant) -> Timestamp {
        let d = now.saturating_duration_since(origin);
        Timestamp(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The timestamp `d` later (saturating).
    #[must_use]
    pub const fn saturating_add(self, d: Nanos) -> Timestamp {
        Timestamp(self.0.saturating_add(d.0))
    }

    /// The timestamp `d` earlier, saturating at [`Timestamp::ZERO`].
    #[must_use]
    pub const fn saturating_sub(self, d: Nanos) -> Timestamp {
        Timestamp(self.0.saturating_sub(d.0))
    }

    /// The timestamp `d` later, or `None` past the end of the `u64` clock.
    #[must_use]
    pub const fn checked_add(self, d: Nanos) -> Option<Timestamp> {
        match self.0.checked_add(d.0) {
            Some(v) => Some(Timestamp(v)),
            None => None,
        }
    }

    /// The timestamp `d` earlier, or `None` before the clock's origin.
    #[must_use]
    pub const fn checked_sub(self, d: Nanos) -> Option<Timestamp> {
        match self.0.checked_sub(d.0) {
            Some(v) => Some(Timestamp(v)),
            None => None,
        }
    }
}

/// `t + d`, like `std::time::Instant`'s `+`.
///
/// # Panics
///
/// Past the end of the `u64` clock (584 years after the origin). Host
/// timestamps come from outside the program: use [`Timestamp::checked_add`] or
/// [`Timestamp::saturating_add`] where they flow in, as the kernel does.
impl Add<Nanos> for Timestamp {
    type Output = Timestamp;
    fn add(self, d: Nanos) -> Timestamp {
        match self.checked_add(d) {
            Some(t) => t,
            None => panic!("overflow when adding a duration to a timestamp"),
        }
    }
}

/// `t += d`.
///
/// # Panics
///
/// As `+`, past the end of the clock.
impl AddAssign<Nanos> for Timestamp {
    fn add_assign(&mut self, d: Nanos) {
        *self = *self + d;
    }
}

/// `t - d`, like `std::time::Instant`'s `-`.
///
/// # Panics
///
/// Before the clock's origin. Use [`Timestamp::checked_sub`] or
/// [`Timestamp::saturating_sub`] when that can happen. (The time between two
/// timestamps is [`Timestamp::checked_since`]: a host clock can go backwards,
/// so it has no panicking operator.)
impl Sub<Nanos> for Timestamp {
    type Output = Timestamp;
    fn sub(self, d: Nanos) -> Timestamp {
        match self.checked_sub(d) {
            Some(t) => t,
            None => panic!("overflow when subtracting a duration from a timestamp"),
        }
    }
}

/// `t -= d`.
///
/// # Panics
///
/// As `-`, before the origin.
impl SubAssign<Nanos> for Timestamp {
    fn sub_assign(&mut self, d: Nanos) {
        *self = *self - d;
    }
}

/// The index of a fixed simulation step. Tick `n` is the `n`-th step run,
/// counting from zero; a fresh simulation is *at* tick 0 and its first step
/// consumes the input of tick 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tick(pub u64);

impl Tick {
    /// The first tick.
    pub const ZERO: Tick = Tick(0);

    /// The tick index as an integer.
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The following tick (saturating; `u64::MAX` ticks is 9.7 billion years at 60 Hz).
    #[must_use]
    pub const fn next(self) -> Tick {
        Tick(self.0.saturating_add(1))
    }
}

impl fmt::Display for Tick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The fixed step length, an exact rational number of nanoseconds.
///
/// Stored reduced as `num / den` nanoseconds. 16 ms is `16_000_000 / 1`;
/// 60 Hz is `50_000_000 / 3`. Exactness is the point: a float step drifts
/// (a day of 60 Hz frames would gain or lose ticks), a rational one cannot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepLength {
    num: u64,
    den: u64,
}

const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl StepLength {
    /// A step of `num / den` nanoseconds.
    ///
    /// # Errors
    ///
    /// [`TimeError::ZeroStep`] when `num` is zero, [`TimeError::ZeroDenominator`]
    /// when `den` is zero, [`TimeError::DenominatorTooLarge`] when the reduced
    /// denominator is above [`MAX_STEP_DENOMINATOR`].
    pub const fn from_nanos_ratio(num: u64, den: u64) -> Result<StepLength, TimeError> {
        if den == 0 {
            return Err(TimeError::ZeroDenominator);
        }
        if num == 0 {
            return Err(TimeError::ZeroStep);
        }
        let g = gcd(num, den);
        if den / g > MAX_STEP_DENOMINATOR {
            return Err(TimeError::DenominatorTooLarge {
                denominator: den / g,
            });
        }
        Ok(StepLength {
            num: num / g,
            den: den / g,
        })
    }

    /// A step of whole milliseconds, like the island config's `stepMs`.
    ///
    /// # Errors
    ///
    /// [`TimeError::ZeroStep`] for zero, [`TimeError::TooLarge`] above `u64` nanoseconds.
    pub const fn from_millis(ms: u64) -> Result<StepLength, TimeError> {
        match ms.checked_mul(NANOS_PER_MILLI) {
            Some(ns) => StepLength::from_nanos_ratio(ns, 1),
            None => Err(TimeError::TooLarge),
        }
    }

    /// A step of `1 / hz` seconds.
    ///
    /// # Errors
    ///
    /// [`TimeError::ZeroStep`] for a rate of zero.
    pub const fn from_hz(hz: u64) -> Result<StepLength, TimeError> {
        if hz == 0 {
            return Err(TimeError::ZeroStep);
        }
        StepLength::from_nanos_ratio(NANOS_PER_SEC, hz)
    }

    /// A rate of `ticks` per `seconds` (for example 30000 ticks per 1001 s).
    ///
    /// # Errors
    ///
    /// [`TimeError::ZeroStep`] when `ticks` or `seconds` is zero,
    /// [`TimeError::TooLarge`] when `seconds` in nanoseconds overflows `u64`.
    pub const fn from_rate(ticks: u64, seconds: u64) -> Result<StepLength, TimeError> {
        if ticks == 0 || seconds == 0 {
            return Err(TimeError::ZeroStep);
        }
        match seconds.checked_mul(NANOS_PER_SEC) {
            Some(ns) => StepLength::from_nanos_ratio(ns, ticks),
            None => Err(TimeError::TooLarge),
        }
    }

    /// Numerator of the reduced step length in nanoseconds.
    #[must_use]
    pub const fn numerator(self) -> u64 {
        self.num
    }

    /// Denominator of the reduced step length in nanoseconds.
    #[must_use]
    pub const fn denominator(self) -> u64 {
        self.den
    }

    /// The step length in whole nanoseconds, rounded down.
    #[must_use]
    pub const fn as_nanos_floor(self) -> u64 {
        self.num / self.den
    }

    /// `d` in the clock's exact sub-nanosecond unit (`1/den` ns).
    pub(crate) const fn scale(self, d: Nanos) -> u128 {
        d.0 as u128 * self.den as u128
    }

    /// The exact sub-nanosecond unit back to whole nanoseconds, rounded down.
    pub(crate) const fn unscale_floor(self, v: u128) -> Nanos {
        // Avoid the 128-bit division (a library call) on the per-frame path,
        // and any division for zero (what a frame drops almost always).
        if v == 0 {
            return Nanos(0);
        }
        if v <= u64::MAX as u128 {
            return Nanos(v as u64 / self.den);
        }
        let ns = v / self.den as u128;
        if ns > u64::MAX as u128 {
            Nanos::MAX
        } else {
            Nanos(ns as u64)
        }
    }

    /// The number of whole steps in `d` and the exact remainder (in `1/den` ns).
    pub(crate) const fn split(self, d: Nanos) -> (u64, u128) {
        let scaled = self.scale(d);
        let steps = scaled / self.num as u128;
        let rem = scaled - steps * self.num as u128;
        // `d * den / num` fits in u64 whenever `den <= num`; a step shorter
        // than 1 ns saturates (documented on the clock).
        let steps = if steps > u64::MAX as u128 {
            u64::MAX
        } else {
            steps as u64
        };
        (steps, rem)
    }

    /// The total length of `n` steps, rounded down to nanoseconds (saturating).
    #[must_use]
    pub const fn steps_to_nanos(self, n: u64) -> Nanos {
        self.unscale_floor(n as u128 * self.num as u128)
    }
}

impl fmt::Display for StepLength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", Nanos(self.num))
        } else {
            write!(f, "{}/{} ns", self.num, self.den)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_hz_is_exact_rational() {
        let s = StepLength::from_hz(60).unwrap();
        assert_eq!((s.numerator(), s.denominator()), (50_000_000, 3));
        assert_eq!(StepLength::from_millis(16).unwrap().numerator(), 16_000_000);
        assert_eq!(
            StepLength::from_rate(30_000, 1_001).unwrap(),
            StepLength::from_nanos_ratio(1_001_000_000_000, 30_000).unwrap()
        );
    }

    #[test]
    fn step_denominators_stay_where_the_accumulator_cannot_overflow() {
        // 2^32 - 1 is accepted; one more (reduced) is refused.
        let top = StepLength::from_nanos_ratio(1, MAX_STEP_DENOMINATOR).unwrap();
        assert_eq!(top.denominator(), u64::from(u32::MAX));
        assert_eq!(
            StepLength::from_nanos_ratio(1, MAX_STEP_DENOMINATOR + 1),
            Err(TimeError::DenominatorTooLarge {
                denominator: 1 << 32
            })
        );
        // Reduction comes first: 2^40 / 2^40 ns is a 1 ns step.
        let one = StepLength::from_nanos_ratio(1 << 40, 1 << 40).unwrap();
        assert_eq!((one.numerator(), one.denominator()), (1, 1));
        // The case that used to lose time silently: the finest step and the
        // longest frame still conserve every nanosecond.
        let mut clock = crate::Clock::new(crate::ClockConfig::new(top));
        let r = clock.advance(Nanos::MAX);
        assert!(r.steps > 0, "{r:?}");
        assert!(
            r.dropped > Nanos::ZERO,
            "the step cap drops what it cannot run"
        );
        assert_eq!(clock.accumulator(), Nanos::ZERO);
    }

    #[test]
    fn bad_steps_are_errors() {
        assert_eq!(StepLength::from_millis(0), Err(TimeError::ZeroStep));
        assert_eq!(StepLength::from_hz(0), Err(TimeError::ZeroStep));
        assert_eq!(
            StepLength::from_nanos_ratio(1, 0),
            Err(TimeError::ZeroDenominator)
        );
        assert_eq!(StepLength::from_millis(u64::MAX), Err(TimeError::TooLarge));
    }

    #[test]
    #[allow(clippy::disallowed_types, reason = "tests the float boundary")]
    fn float_millis_boundary() {
        assert_eq!(Nanos::try_from_millis_f64(16.0), Ok(Nanos::from_millis(16)));
        assert_eq!(
            Nanos::try_from_millis_f64(16.6667),
            Ok(Nanos::from_nanos(16_666_700))
        );
        assert_eq!(Nanos::try_from_millis_f64(-0.0), Ok(Nanos::ZERO));
        assert_eq!(Nanos::try_from_millis_f64(-1.0), Err(TimeError::Negative));
        assert_eq!(
            Nanos::try_from_millis_f64(f64::NAN),
            Err(TimeError::NotFinite)
        );
        assert_eq!(
            Nanos::try_from_millis_f64(f64::INFINITY),
            Err(TimeError::NotFinite)
        );
        assert_eq!(Nanos::try_from_millis_f64(1e300), Err(TimeError::TooLarge));
    }

    #[test]
    fn split_keeps_exact_remainder() {
        let s = StepLength::from_hz(60).unwrap();
        // 1 s is exactly 60 steps, no remainder.
        assert_eq!(s.split(Nanos::from_secs(1)), (60, 0));
        // 20 ms = 60_000_000/3 units; one step is 50_000_000 units.
        assert_eq!(s.split(Nanos::from_millis(20)), (1, 10_000_000));
    }

    #[test]
    fn duration_round_trip_and_saturation() {
        let d = core::time::Duration::from_millis(16);
        assert_eq!(Nanos::from_duration(d), Nanos::from_millis(16));
        assert_eq!(Nanos::from_millis(16).to_duration(), d);
        assert_eq!(Nanos::from_duration(core::time::Duration::MAX), Nanos::MAX);
    }

    #[test]
    fn operators_and_checked_variants() {
        let (a, b) = (Nanos::from_millis(5), Nanos::from_millis(3));
        assert_eq!(a + b, Nanos::from_millis(8));
        assert_eq!(a - b, Nanos::from_millis(2));
        let mut c = a;
        c += b;
        c -= Nanos::from_millis(1);
        assert_eq!(c, Nanos::from_nanos(7_000_000));
        assert_eq!(b.checked_sub(a), None);
        assert_eq!(Nanos::MAX.checked_add(Nanos::from_nanos(1)), None);
        let t = Timestamp::from_millis(10);
        assert_eq!(t + b, Timestamp::from_millis(13));
        assert_eq!(t - b, Timestamp::from_millis(7));
        let mut u = t;
        u += a;
        u -= b;
        assert_eq!(u, Timestamp::from_millis(12));
        assert_eq!(t.checked_sub(Nanos::from_millis(11)), None);
        assert_eq!(t.saturating_sub(Nanos::from_millis(11)), Timestamp::ZERO);
        assert_eq!(
            Timestamp::from_nanos(u64::MAX).checked_add(Nanos::from_nanos(1)),
            None
        );
        assert_eq!(t.checked_add(a), Some(Timestamp::from_millis(15)));
    }

    #[test]
    #[should_panic(expected = "overflow when subtracting durations")]
    fn nanos_sub_panics_like_duration() {
        let _ = Nanos::from_nanos(1) - Nanos::from_nanos(2);
    }

    #[test]
    #[should_panic(expected = "overflow when adding a duration to a timestamp")]
    fn timestamp_add_panics_past_the_end() {
        let _ = Timestamp::from_nanos(u64::MAX) + Nanos::from_nanos(1);
    }

    #[test]
    fn timestamps_going_backwards_are_none() {
        let a = Timestamp::from_millis(10);
        let b = Timestamp::from_millis(4);
        assert_eq!(a.checked_since(b), Some(Nanos::from_millis(6)));
        assert_eq!(b.checked_since(a), None);
    }
}
