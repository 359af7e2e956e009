//! The error of building a time value: a step, a duration or a speed.

use core::fmt;

use crate::time_bounds::{MAX_SPEED_RATIO, MAX_SPEED_TERM, MAX_STEP_DENOMINATOR};

/// Errors from building time values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeError {
    /// A step length or rate of zero.
    ZeroStep,
    /// A ratio with a zero denominator.
    ZeroDenominator,
    /// A floating-point time that is NaN or infinite.
    NotFinite,
    /// A negative duration.
    Negative,
    /// A value too large to represent.
    TooLarge,
    /// A step whose reduced denominator is above [`MAX_STEP_DENOMINATOR`]
    /// (a step length with finer than `1/2^32` ns resolution).
    DenominatorTooLarge {
        /// The reduced denominator.
        denominator: u64,
    },
    /// A speed outside `1 ≤ P, Q ≤ 1000`, `P/Q ≤ 16` ([`crate::Speed::new`]).
    SpeedOutOfRange {
        /// The numerator given.
        numerator: u32,
        /// The denominator given.
        denominator: u32,
    },
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeError::ZeroStep => f.write_str("step length must be greater than zero"),
            TimeError::ZeroDenominator => f.write_str("denominator must not be zero"),
            TimeError::NotFinite => f.write_str("time value is NaN or infinite"),
            TimeError::Negative => f.write_str("time value is negative"),
            TimeError::TooLarge => f.write_str("time value is too large"),
            TimeError::DenominatorTooLarge { denominator } => write!(
                f,
                "step denominator {denominator} (reduced) is above the limit of {MAX_STEP_DENOMINATOR}"
            ),
            TimeError::SpeedOutOfRange {
                numerator,
                denominator,
            } => write!(
                f,
                "speed {numerator}/{denominator} is out of range: numerator and denominator must be 1 to {}, and the speed at most {}x",
                MAX_SPEED_TERM, MAX_SPEED_RATIO
            ),
        }
    }
}

impl core::error::Error for TimeError {}
