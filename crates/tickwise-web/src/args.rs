//! Numbers from JavaScript.
//!
//! Every number the page API receives is a JS number, an `f64`. The kernel
//! takes integers, so each argument is checked here once: a whole number in
//! its range, or an [`ArgError`] that names the argument and the value. No
//! rounding, no clamping, no silent `NaN → 0`: a test that passes `16.5` or
//! `-1` learns about it instead of running something else.

use std::fmt;

/// An argument that is not a whole number in its accepted range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgError {
    /// The argument's name in the page API (`n`, `ms`, ...).
    pub name: &'static str,
    /// The largest accepted value.
    pub max: u64,
    /// The value given, as JavaScript would print it.
    pub found: String,
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} must be a whole number from 0 to {}, got {}",
            self.name, self.max, self.found
        )
    }
}

impl std::error::Error for ArgError {}

/// `v` as a `u64` when it is a whole number in `0..=max`.
///
/// `max` must be at most 2^53 (every accepted value is then exact in an `f64`).
///
/// # Errors
///
/// [`ArgError`] for NaN, infinities, negatives, fractions and values above `max`.
pub fn whole(name: &'static str, v: f64, max: u64) -> Result<u64, ArgError> {
    debug_assert!(max <= 1 << 53, "max must be exact in an f64");
    #[allow(
        clippy::cast_precision_loss,
        reason = "max is at most 2^53, exact in an f64"
    )]
    let max_f = max as f64;
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= max_f {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked: a whole number in 0..=max"
        )]
        return Ok(v as u64);
    }
    Err(ArgError {
        name,
        max,
        found: js_number(v),
    })
}

/// Formats an `f64` the way JavaScript prints numbers in the common cases
/// (`NaN`, `Infinity`, `-1`, `16.5`), for error messages.
fn js_number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_whole_numbers_in_range() {
        assert_eq!(whole("n", 0.0, 10), Ok(0));
        assert_eq!(whole("n", 10.0, 10), Ok(10));
        assert_eq!(whole("n", -0.0, 10), Ok(0));
        assert_eq!(whole("ms", 1e12, 1_000_000_000_000), Ok(1_000_000_000_000));
    }

    #[test]
    fn refuses_everything_else_with_a_message() {
        for (v, shown) in [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (-1.0, "-1"),
            (16.5, "16.5"),
            (11.0, "11"),
        ] {
            let e = whole("ms", v, 10).unwrap_err();
            assert_eq!(e.found, shown);
            assert_eq!(
                e.to_string(),
                format!("ms must be a whole number from 0 to 10, got {shown}")
            );
        }
    }
}
