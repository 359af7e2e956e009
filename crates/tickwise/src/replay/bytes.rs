//! Little-endian integers and LEB128 varints, read with bounds checks.
//!
//! Every read names the part of the file it was reading, so a truncated or
//! malformed replay gets an error that says where it broke. Nothing here
//! allocates based on a length it has not checked against the bytes present.

use alloc::vec::Vec;

use super::error::ReplayError;

/// The longest LEB128 encoding of a `u64`.
pub const MAX_VARINT_BYTES: usize = 10;

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

/// Zigzag mapping of a signed integer to an unsigned one (0, -1, 1, -2, … →
/// 0, 1, 2, 3, …), so small magnitudes of either sign encode in few bytes.
#[must_use]
pub const fn zigzag(v: i64) -> u64 {
    (v << 1).cast_unsigned() ^ (v >> 63).cast_unsigned()
}

/// The inverse of [`zigzag`].
#[must_use]
pub const fn unzigzag(v: u64) -> i64 {
    (v >> 1).cast_signed() ^ -((v & 1).cast_signed())
}

/// A bounds-checked cursor over a byte slice.
///
/// Offsets in errors are relative to the start of the slice the reader was
/// made from; [`ByteReader::with_base`] shifts them so they are file offsets.
#[derive(Clone, Debug)]
pub struct ByteReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> ByteReader<'a> {
    /// A reader at the start of `bytes`.
    #[must_use]
    pub const fn new(bytes: &'a [u8]) -> ByteReader<'a> {
        ByteReader {
            bytes,
            pos: 0,
            base: 0,
        }
    }

    /// A reader whose reported offsets start at `base` (the slice's offset in the file).
    #[must_use]
    pub const fn with_base(bytes: &'a [u8], base: u64) -> ByteReader<'a> {
        ByteReader {
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
    /// [`ReplayError::Truncated`] naming `what` when fewer than `n` remain.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ReplayError> {
        if n > self.remaining() {
            return Err(ReplayError::Truncated {
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
    /// As [`ByteReader::take`].
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], ReplayError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    /// One byte.
    ///
    /// # Errors
    ///
    /// As [`ByteReader::take`].
    pub fn u8(&mut self, what: &'static str) -> Result<u8, ReplayError> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A little-endian `u16`.
    ///
    /// # Errors
    ///
    /// As [`ByteReader::take`].
    pub fn u16_le(&mut self, what: &'static str) -> Result<u16, ReplayError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u32`.
    ///
    /// # Errors
    ///
    /// As [`ByteReader::take`].
    pub fn u32_le(&mut self, what: &'static str) -> Result<u32, ReplayError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u64`.
    ///
    /// # Errors
    ///
    /// As [`ByteReader::take`].
    pub fn u64_le(&mut self, what: &'static str) -> Result<u64, ReplayError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// An unsigned LEB128 varint in its minimal encoding.
    ///
    /// # Errors
    ///
    /// [`ReplayError::Truncated`] if the bytes end inside it;
    /// [`ReplayError::BadVarint`] if it overflows 64 bits or is longer than
    /// needed (an overlong encoding such as `80 00` for 0).
    #[inline]
    pub fn varint(&mut self, what: &'static str) -> Result<u64, ReplayError> {
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
    fn varint_long(&mut self, what: &'static str) -> Result<u64, ReplayError> {
        let start = self.offset();
        let mut v: u64 = 0;
        for i in 0..MAX_VARINT_BYTES {
            let b = self.u8(what)?;
            let bits = u64::from(b & 0x7f);
            // The tenth byte may only carry the 64th bit.
            if i == MAX_VARINT_BYTES - 1 && bits > 1 {
                return Err(ReplayError::BadVarint {
                    what,
                    offset: start,
                });
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                if i > 0 && b == 0 {
                    return Err(ReplayError::BadVarint {
                        what,
                        offset: start,
                    });
                }
                return Ok(v);
            }
        }
        Err(ReplayError::BadVarint {
            what,
            offset: start,
        })
    }

    /// A varint in `min..=max`.
    ///
    /// # Errors
    ///
    /// As [`ByteReader::varint`], or [`ReplayError::LengthOutOfRange`].
    pub fn varint_in(
        &mut self,
        what: &'static str,
        min: u64,
        max: u64,
    ) -> Result<u64, ReplayError> {
        let v = self.varint(what)?;
        if v < min || v > max {
            return Err(ReplayError::LengthOutOfRange {
                what,
                declared: v,
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
    /// As [`ByteReader::varint`], or [`ReplayError::BadInput`] outside the range.
    #[inline]
    pub fn signed_in(
        &mut self,
        what: &'static str,
        min: i64,
        max: i64,
    ) -> Result<i64, ReplayError> {
        let offset = self.offset();
        let v = unzigzag(self.varint(what)?);
        if v < min || v > max {
            return Err(ReplayError::BadInput {
                offset,
                reason: "a signed value is outside its type's range",
            });
        }
        Ok(v)
    }

    /// A length-prefixed byte string whose length is in `min..=max` and
    /// present in full.
    ///
    /// # Errors
    ///
    /// As [`ByteReader::varint_in`] and [`ByteReader::take`].
    pub fn bytes_in(
        &mut self,
        what: &'static str,
        min: usize,
        max: usize,
    ) -> Result<&'a [u8], ReplayError> {
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
            assert_eq!(ByteReader::new(&enc).varint("v"), Ok(v));
        }
    }

    #[test]
    fn bad_varints() {
        let overlong = [0x80, 0x00];
        assert!(matches!(
            ByteReader::new(&overlong).varint("v"),
            Err(ReplayError::BadVarint { offset: 0, .. })
        ));
        let overflow = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(matches!(
            ByteReader::new(&overflow).varint("v"),
            Err(ReplayError::BadVarint { .. })
        ));
        assert!(matches!(
            ByteReader::new(&[0x80]).varint("v"),
            Err(ReplayError::Truncated { .. })
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
