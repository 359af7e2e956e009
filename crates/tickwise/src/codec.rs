//! A small byte codec for snapshots and wire messages: LEB128 varints,
//! zigzag-signed varints, little-endian integers and length-prefixed bytes,
//! read back with bounds checks.
//!
//! Why it is public: a game that lets a player rejoin writes its state as
//! bytes ([`crate::SnapshotBytes`]), and a sim's input type writes itself
//! into replays and datagrams ([`crate::ReplayInput`]). Both need the same
//! few encodings the kernel uses, and a reader that can be handed hostile
//! bytes. Replay files use it too, but the replay format's own parts (its
//! blocks, palettes and checksums) are not here: they are private to
//! [`crate::replay`].
//!
//! * Writing appends to a `Vec<u8>`: [`put_varint`], [`put_signed`],
//!   [`put_bytes`] (and `Vec::push` / `extend_from_slice` for fixed bytes).
//! * [`Reader`] is a cursor over a byte slice. Every read is bounds-checked,
//!   names what it was reading and returns a [`DecodeError`] with the offset
//!   where it broke; a length prefix is checked against a caller's maximum
//!   *and* the bytes present before anything is taken, so hostile bytes
//!   never cause a panic or an allocation.
//! * Encodings are canonical: an overlong varint (`80 00` for 0) is refused,
//!   so one value has one encoding.
//!
//! ```
//! use tickwise::codec::{DecodeError, Reader, put_bytes, put_signed, put_varint};
//!
//! let mut out = Vec::new();
//! put_varint(&mut out, 300);          // ac 02
//! put_signed(&mut out, -2);           // zigzag: 03
//! put_bytes(&mut out, b"hi");         // 02 'h' 'i'
//! assert_eq!(out, [0xac, 0x02, 0x03, 0x02, b'h', b'i']);
//!
//! let mut r = Reader::new(&out);
//! assert_eq!(r.varint("score")?, 300);
//! assert_eq!(r.signed_in("velocity", -100, 100)?, -2);
//! assert_eq!(r.bytes_in("name", 0, 16)?, b"hi");
//! assert!(r.is_empty());
//!
//! // Hostile bytes: a length of 5 with one byte behind it is refused,
//! // naming the part and where its bytes start; a length over the
//! // caller's maximum is refused before anything is taken.
//! assert_eq!(
//!     Reader::new(&[0x05, b'a']).bytes_in("name", 0, 16),
//!     Err(DecodeError::Truncated { what: "name", offset: 1, needed: 5, available: 1 })
//! );
//! assert!(matches!(
//!     Reader::new(&[0x7f]).bytes_in("name", 0, 16),
//!     Err(DecodeError::OutOfRange { what: "name", value: 127, max: 16, .. })
//! ));
//! # Ok::<(), DecodeError>(())
//! ```

use alloc::vec::Vec;
use core::fmt;

/// The longest LEB128 encoding of a `u64`.
pub const MAX_VARINT_BYTES: usize = 10;

/// Why bytes could not be decoded. Each variant names what was being read
/// (the caller's `what`) and the offset where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end before the part named by `what` does.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Offset where it starts.
        offset: u64,
        /// Bytes it needs.
        needed: u64,
        /// Bytes that were left.
        available: u64,
    },
    /// A varint longer than needed (not canonical), or past 64 bits.
    BadVarint {
        /// What was being read.
        what: &'static str,
        /// Offset of its first byte.
        offset: u64,
    },
    /// An unsigned value (a length or count) outside the range the caller accepts.
    OutOfRange {
        /// What was being read.
        what: &'static str,
        /// Offset of its first byte.
        offset: u64,
        /// The value found.
        value: u64,
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A value that is well-formed bytes but not a valid value of its type
    /// (a signed value outside its type's range, a reserved bit set, a
    /// non-canonical encoding of an input).
    Invalid {
        /// What was being read.
        what: &'static str,
        /// Offset of its first byte.
        offset: u64,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl DecodeError {
    /// What was being read when decoding failed.
    #[must_use]
    pub const fn what(&self) -> &'static str {
        match self {
            DecodeError::Truncated { what, .. }
            | DecodeError::BadVarint { what, .. }
            | DecodeError::OutOfRange { what, .. }
            | DecodeError::Invalid { what, .. } => what,
        }
    }

    /// The offset where the part that failed starts.
    #[must_use]
    pub const fn offset(&self) -> u64 {
        match self {
            DecodeError::Truncated { offset, .. }
            | DecodeError::BadVarint { offset, .. }
            | DecodeError::OutOfRange { offset, .. }
            | DecodeError::Invalid { offset, .. } => *offset,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated {
                what,
                offset,
                needed,
                available,
            } => write!(
                f,
                "{what} at offset {offset} is cut short: it needs {needed} bytes, {available} are left"
            ),
            DecodeError::BadVarint { what, offset } => write!(
                f,
                "{what} at offset {offset} is not a minimal 64-bit varint"
            ),
            DecodeError::OutOfRange {
                what,
                offset,
                value,
                min,
                max,
            } => write!(
                f,
                "{what} at offset {offset} is {value}, outside the accepted {min}..={max}"
            ),
            DecodeError::Invalid {
                what,
                offset,
                reason,
            } => write!(f, "invalid {what} at offset {offset}: {reason}"),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Appends `v` as an unsigned LEB128 varint (7 bits per byte, low bits
/// first, high bit set on every byte but the last; minimal length).
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        #[allow(clippy::cast_possible_truncation, reason = "masked to 7 bits")]
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    #[allow(clippy::cast_possible_truncation, reason = "v < 0x80")]
    out.push(v as u8);
}

/// Appends `v` zigzag-mapped (0, −1, 1, −2, … → 0, 1, 2, 3, …) as a
/// varint, so small magnitudes of either sign take few bytes. Read it back
/// with [`Reader::signed_in`].
pub fn put_signed(out: &mut Vec<u8>, v: i64) {
    put_varint(out, zigzag(v));
}

/// Appends `bytes` with its length in front as a varint. Read it back with
/// [`Reader::bytes_in`].
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Zigzag mapping of a signed integer to an unsigned one.
const fn zigzag(v: i64) -> u64 {
    (v << 1).cast_unsigned() ^ (v >> 63).cast_unsigned()
}

/// The inverse of [`zigzag`].
const fn unzigzag(v: u64) -> i64 {
    (v >> 1).cast_signed() ^ -((v & 1).cast_signed())
}

/// A bounds-checked cursor over a byte slice.
///
/// Offsets in errors are relative to the start of the slice the reader was
/// made from (a replay's reader shifts them so that they are file offsets).
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    #[must_use]
    pub const fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            base: 0,
        }
    }

    /// A reader whose reported offsets start at `base` (the slice's offset in the file).
    #[must_use]
    pub(crate) const fn with_base(bytes: &'a [u8], base: u64) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            base,
        }
    }

    /// The offset of the next byte, in the file.
    #[must_use]
    pub const fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes not read yet.
    #[must_use]
    pub const fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Whether every byte has been read.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `n` bytes.
    ///
    /// # Errors
    ///
    /// [`DecodeError::Truncated`] naming `what` when fewer than `n` remain.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::Truncated {
                what,
                offset: self.offset(),
                needed: n as u64,
                available: self.remaining() as u64,
            });
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The next `N` bytes as an array.
    ///
    /// # Errors
    ///
    /// As [`Reader::take`].
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    /// One byte.
    ///
    /// # Errors
    ///
    /// As [`Reader::take`].
    pub fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A little-endian `u16`.
    ///
    /// # Errors
    ///
    /// As [`Reader::take`].
    pub fn u16_le(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u32`.
    ///
    /// # Errors
    ///
    /// As [`Reader::take`].
    pub fn u32_le(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u64`.
    ///
    /// # Errors
    ///
    /// As [`Reader::take`].
    pub fn u64_le(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// An unsigned LEB128 varint in its minimal encoding.
    ///
    /// # Errors
    ///
    /// [`DecodeError::Truncated`] if the bytes end inside it;
    /// [`DecodeError::BadVarint`] if it overflows 64 bits or is longer than
    /// needed (an overlong encoding such as `80 00` for 0).
    #[inline]
    pub fn varint(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        // Fast path, inlined: most run lengths and inputs fit one byte.
        if let Some(&b) = self.bytes.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        self.varint_long(what)
    }

    /// A varint of two bytes or more (or a truncated one), out of line so
    /// that the one-byte path stays small where it is inlined.
    #[inline(never)]
    fn varint_long(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        let start = self.offset();
        let mut v: u64 = 0;
        for i in 0..MAX_VARINT_BYTES {
            let b = self.u8(what)?;
            let bits = u64::from(b & 0x7f);
            // The tenth byte may only carry the 64th bit.
            if i == MAX_VARINT_BYTES - 1 && bits > 1 {
                return Err(DecodeError::BadVarint {
                    what,
                    offset: start,
                });
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                if i > 0 && b == 0 {
                    return Err(DecodeError::BadVarint {
                        what,
                        offset: start,
                    });
                }
                return Ok(v);
            }
        }
        Err(DecodeError::BadVarint {
            what,
            offset: start,
        })
    }

    /// A varint in `min..=max`.
    ///
    /// # Errors
    ///
    /// As [`Reader::varint`], or [`DecodeError::OutOfRange`].
    pub fn varint_in(
        &mut self,
        what: &'static str,
        min: u64,
        max: u64,
    ) -> Result<u64, DecodeError> {
        let offset = self.offset();
        let v = self.varint(what)?;
        if v < min || v > max {
            return Err(DecodeError::OutOfRange {
                what,
                offset,
                value: v,
                min,
                max,
            });
        }
        Ok(v)
    }

    /// A zigzag varint that must fit `min..=max` (an `i16` or `i32` range).
    ///
    /// # Errors
    ///
    /// As [`Reader::varint`], or [`DecodeError::Invalid`] outside the range.
    #[inline]
    pub fn signed_in(
        &mut self,
        what: &'static str,
        min: i64,
        max: i64,
    ) -> Result<i64, DecodeError> {
        let offset = self.offset();
        let v = unzigzag(self.varint(what)?);
        if v < min || v > max {
            return Err(DecodeError::Invalid {
                what,
                offset,
                reason: "a signed value is outside its type's range",
            });
        }
        Ok(v)
    }

    /// A varint that must fit a `u32`: the counters and timers a snapshot
    /// holds, without a range check at every call site.
    ///
    /// # Errors
    ///
    /// As [`Reader::varint_in`] with `0..=u32::MAX`.
    pub fn varint_u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        let offset = self.offset();
        let v = self.varint_in(what, 0, u64::from(u32::MAX))?;
        u32::try_from(v).map_err(|_| DecodeError::Invalid {
            what,
            offset,
            reason: "a value is outside u32",
        })
    }

    /// A zigzag varint that must fit an `i32`: positions and velocities in a
    /// snapshot.
    ///
    /// # Errors
    ///
    /// As [`Reader::signed_in`] with the `i32` range.
    pub fn signed_i32(&mut self, what: &'static str) -> Result<i32, DecodeError> {
        let offset = self.offset();
        let v = self.signed_in(what, i32::MIN.into(), i32::MAX.into())?;
        i32::try_from(v).map_err(|_| DecodeError::Invalid {
            what,
            offset,
            reason: "a signed value is outside i32",
        })
    }

    /// A length-prefixed byte string whose length is in `min..=max` and
    /// present in full.
    ///
    /// # Errors
    ///
    /// As [`Reader::varint_in`] and [`Reader::take`].
    pub fn bytes_in(
        &mut self,
        what: &'static str,
        min: usize,
        max: usize,
    ) -> Result<&'a [u8], DecodeError> {
        let len = self.varint_in(what, min as u64, max as u64)?;
        // len <= max, which is a usize.
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        self.take(len, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// The typed readers' bounds, on bytes worked out by hand: LEB128 of
    /// 2^32 − 1 is `ff ff ff ff 0f`, of 2^32 `80 80 80 80 10`; zigzag maps −1
    /// to 1, `i32::MIN` to 2^32 − 1 and 2^31 to 2^32.
    #[test]
    fn varint_u32_and_signed_i32_stop_at_their_types_bounds() {
        let max = [0xff, 0xff, 0xff, 0xff, 0x0f];
        let over = [0x80, 0x80, 0x80, 0x80, 0x10];
        assert_eq!(Reader::new(&max).varint_u32("n"), Ok(u32::MAX));
        assert!(matches!(
            Reader::new(&over).varint_u32("n"),
            Err(DecodeError::OutOfRange {
                what: "n",
                offset: 0,
                value: 4_294_967_296,
                ..
            })
        ));
        assert_eq!(Reader::new(&[0x01]).signed_i32("x"), Ok(-1));
        assert_eq!(Reader::new(&max).signed_i32("x"), Ok(i32::MIN));
        assert!(matches!(
            Reader::new(&over).signed_i32("x"),
            Err(DecodeError::Invalid {
                what: "x",
                offset: 0,
                ..
            })
        ));
        assert!(matches!(
            Reader::new(&[0x80]).varint_u32("n"),
            Err(DecodeError::Truncated { what: "n", .. })
        ));
    }

    #[test]
    fn varint_vectors() {
        // LEB128 examples: 0, 127, 128 = 80 01, 300 = ac 02, 624485 = e5 8e 26.
        for (v, enc) in [
            (0u64, vec![0x00]),
            (127, vec![0x7f]),
            (128, vec![0x80, 0x01]),
            (300, vec![0xac, 0x02]),
            (624_485, vec![0xe5, 0x8e, 0x26]),
            (
                u64::MAX,
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out, enc, "{v}");
            assert_eq!(Reader::new(&enc).varint("v"), Ok(v));
        }
    }

    #[test]
    fn bad_varints() {
        let overlong = [0x80, 0x00];
        assert!(matches!(
            Reader::new(&overlong).varint("v"),
            Err(DecodeError::BadVarint { offset: 0, .. })
        ));
        let overflow = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(matches!(
            Reader::new(&overflow).varint("v"),
            Err(DecodeError::BadVarint { .. })
        ));
        assert!(matches!(
            Reader::new(&[0x80]).varint("v"),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn zigzag_vectors() {
        // From the protobuf encoding guide.
        for (s, u) in [
            (0i64, 0u64),
            (-1, 1),
            (1, 2),
            (-2, 3),
            (2_147_483_647, 4_294_967_294),
            (-2_147_483_648, 4_294_967_295),
        ] {
            assert_eq!(zigzag(s), u);
            assert_eq!(unzigzag(u), s);
        }
        assert_eq!(unzigzag(zigzag(i64::MIN)), i64::MIN);
        assert_eq!(unzigzag(zigzag(i64::MAX)), i64::MAX);
    }
}
