//! The bounds every time value is checked against.
//!
//! They live in a module of their own because both the values that obey them
//! ([`crate::StepLength`], [`crate::Speed`]) and the error that names them
//! ([`crate::TimeError`]) need them: kept here, none of the three imports
//! another in a loop.

/// The largest reduced denominator a [`StepLength`](crate::StepLength) may have: 2^32 − 1.
///
/// The clock keeps its accumulator in units of `1/den` ns in an `i128`. With
/// `den < 2^32`, a frame of up to `u64::MAX` ns is below 2^96 units and the
/// sum with a carried remainder cannot overflow, so no time is ever lost to
/// the accumulator's range. Every real rate is far inside this: 60 Hz has
/// `den = 3`, 30000 ticks per 1001 s has `den = 30`, and any whole-hertz rate
/// up to 4.29 GHz fits.
pub const MAX_STEP_DENOMINATOR: u64 = u32::MAX as u64;

/// The largest numerator or denominator [`Speed::new`](crate::Speed::new) accepts.
pub const MAX_SPEED_TERM: u32 = 1000;
/// The largest speed [`Speed::new`](crate::Speed::new) accepts: 16×. Faster than that, a frame
/// owes so many steps that the step cap (see [`Speed::step_cap_for`](crate::Speed::step_cap_for)) would
/// have to be raised beyond what a frame can run without stalling.
pub const MAX_SPEED_RATIO: u32 = 16;
