//! How one tick's input is written into a replay.
//!
//! A sim's input type implements [`ReplayInput`]: a one-byte kind that the
//! file records (so a reader in any language knows how to decode the runs)
//! and an encoding. Both kernel input types are covered: plain `i32` (the
//! island's `-1 / 0 / 1`) and event-mode [`TickInput`].

use alloc::vec::Vec;

use crate::codec::{DecodeError, Reader, put_signed, put_varint};
use crate::input::{AXES, Buttons, TickInput};

/// Input kind of `i32` inputs: one zigzag LEB128 varint.
pub const INPUT_KIND_I32: u8 = 1;
/// Input kind of [`TickInput`]: a presence byte, then the non-zero parts.
pub const INPUT_KIND_TICK_INPUT: u8 = 2;

/// An input type that can be stored in a replay (and sent in netplay
/// datagrams, which carry inputs in the same encoding).
///
/// Encodings must be canonical: `decode(encode(x)) == x`, and `decode`
/// refuses any bytes that `encode` would not produce, so one input has one
/// encoding and a reader in another language can be exact. Write with the
/// [`crate::codec`] functions and read with its bounds-checked [`Reader`];
/// the replay's own block codec stays private, and a [`DecodeError`]
/// becomes the matching [`crate::ReplayError`] inside a replay.
pub trait ReplayInput: Clone + PartialEq + Default {
    /// The kind byte stored in the file. Kernel kinds are below 128; kinds
    /// 128..=255 are free for applications.
    const KIND: u8;

    /// Appends the encoding of `self` (with [`crate::codec::put_varint`],
    /// [`crate::codec::put_signed`], or plain bytes).
    fn encode(&self, out: &mut Vec<u8>);

    /// Reads one input.
    ///
    /// # Errors
    ///
    /// [`DecodeError::Truncated`], [`DecodeError::BadVarint`] or
    /// [`DecodeError::Invalid`]; never panics on any bytes.
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError>;
}

impl ReplayInput for i32 {
    const KIND: u8 = INPUT_KIND_I32;

    fn encode(&self, out: &mut Vec<u8>) {
        put_signed(out, i64::from(*self));
    }

    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<i32, DecodeError> {
        let v = r.signed_in("input", i64::from(i32::MIN), i64::from(i32::MAX))?;
        Ok(i32::try_from(v).unwrap_or_default())
    }
}

const HELD: u8 = 1;
const PRESSED: u8 = 1 << 1;
const RELEASED: u8 = 1 << 2;
const AXIS0: u8 = 1 << 3;
const KNOWN_BITS: u8 = 0x7f;

impl ReplayInput for TickInput {
    const KIND: u8 = INPUT_KIND_TICK_INPUT;

    /// Presence byte: bit 0 held, bit 1 pressed, bit 2 released, bits 3..=6
    /// axes 0..=3 (bit 7 is reserved, 0). Then, in that order, each present
    /// part: button sets as varints, axes as zigzag varints. A part is present
    /// exactly when it is non-zero, so an idle tick is the single byte `00`.
    fn encode(&self, out: &mut Vec<u8>) {
        let mut mask = 0u8;
        let sets = [
            (HELD, self.held),
            (PRESSED, self.pressed),
            (RELEASED, self.released),
        ];
        for (bit, set) in sets {
            if !set.is_empty() {
                mask |= bit;
            }
        }
        for (i, &a) in self.axes.iter().enumerate() {
            if a != 0 {
                mask |= AXIS0 << i;
            }
        }
        out.push(mask);
        for (bit, set) in sets {
            if mask & bit != 0 {
                put_varint(out, set.bits());
            }
        }
        for &a in &self.axes {
            if a != 0 {
                put_signed(out, i64::from(a));
            }
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<TickInput, DecodeError> {
        let offset = r.offset();
        let mask = r.u8("input presence byte")?;
        if mask & !KNOWN_BITS != 0 {
            return Err(DecodeError::Invalid {
                what: "input presence byte",
                offset,
                reason: "reserved bit 7 of the presence byte is set",
            });
        }
        let zero = || DecodeError::Invalid {
            what: "input",
            offset,
            reason: "a part flagged present is zero (not the canonical encoding)",
        };
        let mut sets = [Buttons::NONE; 3];
        for (i, set) in sets.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                let bits = r.varint("input buttons")?;
                if bits == 0 {
                    return Err(zero());
                }
                *set = Buttons::from_bits(bits);
            }
        }
        let mut axes = [0i16; AXES];
        for (i, a) in axes.iter_mut().enumerate() {
            if mask & (AXIS0 << i) != 0 {
                let v = r.signed_in("input axis", i64::from(i16::MIN), i64::from(i16::MAX))?;
                if v == 0 {
                    return Err(zero());
                }
                *a = i16::try_from(v).unwrap_or_default();
            }
        }
        Ok(TickInput {
            held: sets[0],
            pressed: sets[1],
            released: sets[2],
            axes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn enc<I: ReplayInput>(i: &I) -> Vec<u8> {
        let mut v = Vec::new();
        i.encode(&mut v);
        v
    }

    #[test]
    fn i32_encoding_by_hand() {
        assert_eq!(enc(&0i32), [0x00]);
        assert_eq!(enc(&-1i32), [0x01]);
        assert_eq!(enc(&1i32), [0x02]);
        assert_eq!(enc(&-65i32), [0x81, 0x01]);
        assert_eq!(enc(&i32::MIN), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        let too_big = [0x80, 0x80, 0x80, 0x80, 0x10]; // zigzag 2^32 = 2^31 > i32::MAX
        assert!(matches!(
            i32::decode(&mut Reader::new(&too_big)),
            Err(DecodeError::Invalid { offset: 0, .. })
        ));
    }

    #[test]
    fn tick_input_encoding_by_hand() {
        assert_eq!(enc(&TickInput::default()), [0x00]);
        let t = TickInput {
            held: Buttons::from_bits(0b101),
            pressed: Buttons::from_bits(0b100),
            released: Buttons::NONE,
            axes: [0, -3, 0, 200],
        };
        // mask = held | pressed | axis1 (bit 4) | axis3 (bit 6) = 0x53;
        // held 5, pressed 4, axis1 zigzag(-3) = 5, axis3 zigzag(200) = 400 = 90 03.
        assert_eq!(enc(&t), vec![0x53, 0x05, 0x04, 0x05, 0x90, 0x03]);
        assert_eq!(TickInput::decode(&mut Reader::new(&enc(&t))), Ok(t));
        for bad in [
            &[0x80u8][..],
            &[0x01, 0x00],
            &[0x08, 0x00],
            &[0x08, 0x80, 0x80, 0x04],
        ] {
            assert!(
                matches!(
                    TickInput::decode(&mut Reader::new(bad)),
                    Err(DecodeError::Invalid { .. })
                ),
                "{bad:02x?}"
            );
        }
    }
}
