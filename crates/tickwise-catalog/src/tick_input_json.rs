//! A strict JSON reader for the kernel's [`TickInput`], for
//! [`CatalogSim::json_input`](crate::CatalogSim::json_input).
//!
//! Why in the library: every sim on `TickInput` (the horde, the duel, a
//! game's own) needs the same 30 to 40 lines to read an inputs file, and
//! each copy must be strict the same way: an unknown key or a button the
//! sim does not have is an error, so a typo cannot silently mean "no input".

use alloc::format;
use alloc::string::{String, ToString};

use serde_json::Value;
use tickwise::{AXES, Buttons, TickInput};

/// How a sim's [`TickInput`] is written in an inputs file: an object with
/// the optional keys `held`, `pressed` and `released` (bit sets of the
/// sim's buttons, as integers) and `axes` (up to [`TickInputJson::axes`]
/// integers in `-32768..=32767`). A missing key means no buttons, or the
/// stick at rest.
///
/// ```
/// use tickwise_catalog::TickInputJson;
/// use tickwise_catalog::serde_json::json;
///
/// // Three buttons (bits 0 to 2) and one stick axis.
/// const INPUT: TickInputJson = TickInputJson::new(0b111, 1);
/// let input = INPUT.read(&json!({"held": 1, "pressed": 5, "axes": [-300]}))?;
/// assert_eq!((input.held.bits(), input.pressed.bits()), (1, 5));
/// assert_eq!(input.axes, [-300, 0, 0, 0]);
/// assert!(INPUT.read(&json!({"held": 8})).is_err()); // no button 3
/// assert!(INPUT.read(&json!({"axes": [1, 2]})).is_err()); // one axis
/// let typo = INPUT.read(&json!({"hold": 1})).unwrap_err();
/// assert!(typo.ends_with("(not \"hold\")"), "{typo}");
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickInputJson {
    /// The button bits the sim has; any other bit is refused.
    pub buttons: u64,
    /// How many axes an input may list (at most [`AXES`]).
    pub axes: usize,
}

impl TickInputJson {
    /// Every button bit and every axis.
    pub const ALL: TickInputJson = TickInputJson::new(u64::MAX, AXES);

    /// Inputs with the button bits `buttons` and up to `axes` axes (more
    /// than [`AXES`] counts as [`AXES`]).
    #[must_use]
    pub const fn new(buttons: u64, axes: usize) -> TickInputJson {
        TickInputJson {
            buttons,
            axes: if axes > AXES { AXES } else { axes },
        }
    }

    /// The allowed bits in words: `an integer in 0..=7 (bits of buttons 0
    /// to 2)` for the low bits, else the mask.
    fn bits_text(&self) -> String {
        let b = self.buttons;
        if b == 0 {
            return "0 (the sim has no buttons)".to_string();
        }
        if b & b.wrapping_add(1) == 0 {
            let n = b.count_ones();
            format!(
                "an integer in 0..={b} (bits of buttons 0 to {})",
                n.saturating_sub(1)
            )
        } else {
            format!("an integer using only the bits of {b:#x}")
        }
    }

    fn axes_text(&self) -> String {
        format!("up to {} integers in -32768..=32767", self.axes)
    }

    /// Reads one element of an inputs file (one player's input of one tick).
    ///
    /// # Errors
    ///
    /// What the element should have been, naming the offending key; the
    /// catalog reports it as `inputs[N] must be ..., found ...`.
    pub fn read(&self, value: &Value) -> Result<TickInput, String> {
        let obj = value.as_object().ok_or_else(|| {
            format!(
                "an object with optional keys held, pressed, released ({}) and axes ({})",
                self.bits_text(),
                self.axes_text()
            )
        })?;
        let mut input = TickInput::default();
        for (key, v) in obj {
            let bits = || {
                v.as_u64()
                    .filter(|b| b & !self.buttons == 0)
                    .map(Buttons::from_bits)
                    .ok_or_else(|| format!("an object whose {key:?} is {}", self.bits_text()))
            };
            match key.as_str() {
                "held" => input.held = bits()?,
                "pressed" => input.pressed = bits()?,
                "released" => input.released = bits()?,
                "axes" => {
                    let bad = || format!("an object whose \"axes\" is {}", self.axes_text());
                    let arr = v
                        .as_array()
                        .filter(|a| a.len() <= self.axes)
                        .ok_or_else(bad)?;
                    for (slot, a) in input.axes.iter_mut().zip(arr) {
                        *slot = a
                            .as_i64()
                            .and_then(|x| i16::try_from(x).ok())
                            .ok_or_else(bad)?;
                    }
                }
                _ => {
                    return Err(format!(
                        "an object with only the keys held, pressed, released and axes (not {key:?})"
                    ));
                }
            }
        }
        Ok(input)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strict_about_keys_bits_and_axes() {
        let three = TickInputJson::new(0b111, 4);
        let i = three
            .read(&json!({"held": 7, "released": 2, "axes": [1, -2, 32767, -32768]}))
            .unwrap();
        assert_eq!((i.held.bits(), i.released.bits()), (7, 2));
        assert_eq!(i.axes, [1, -2, 32767, -32768]);
        assert_eq!(three.read(&json!({})).unwrap(), TickInput::default());
        for (bad, why) in [
            (
                json!({"held": 8}),
                "\"held\" is an integer in 0..=7 (bits of buttons 0 to 2)",
            ),
            (json!({"pressed": -1}), "\"pressed\" is an integer in 0..=7"),
            (json!({"axes": [32768]}), "\"axes\" is up to 4 integers"),
            (
                json!({"axes": [0, 0, 0, 0, 0]}),
                "\"axes\" is up to 4 integers",
            ),
            (json!({"axes": 3}), "\"axes\" is up to 4"),
            (json!({"Held": 1}), "(not \"Held\")"),
            (json!([1]), "an object with optional keys held"),
        ] {
            let e = three.read(&bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        // Every bit: any u64; a mask that is not the low bits is named.
        let all = TickInputJson::ALL.read(&json!({"held": u64::MAX})).unwrap();
        assert_eq!(all.held.bits(), u64::MAX);
        let odd = TickInputJson::new(0b1010, 0);
        assert!(odd.read(&json!({"held": 2})).is_ok());
        let e = odd.read(&json!({"held": 1})).unwrap_err();
        assert!(e.contains("only the bits of 0xa"), "{e}");
        assert!(odd.read(&json!({"axes": [1]})).is_err());
        assert_eq!(TickInputJson::new(1, 9).axes, AXES);
    }
}
