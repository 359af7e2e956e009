//! State checksums: a specified 64-bit hash, field by field.
//!
//! Every sim describes its state to a [`StateVisitor`]: a sequence of named
//! fields, each a sequence of integers. From that one description come
//!
//! * the **checksum**: FNV-1a 64 over the little-endian bytes of every value,
//!   in order (field names are not hashed) — see `docs/checksum.md`;
//! * **field hashes**: the same hash per field, so two runs that diverge can
//!   name the fields that differ.
//!
//! FNV-1a is specified in a few lines (offset basis `0xcbf29ce484222325`,
//! prime `0x100000001b3`) and is trivial to re-implement in Python, JS or C#,
//! which matters more here than speed. `DefaultHasher` is unspecified and may
//! change between Rust releases, so it is banned by the workspace lints.

use alloc::vec::Vec;

/// FNV-1a 64-bit offset basis.
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The FNV-1a 64-bit hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a64(u64);

impl Default for Fnv1a64 {
    fn default() -> Self {
        Fnv1a64::new()
    }
}

impl Fnv1a64 {
    /// A hasher at the offset basis.
    #[must_use]
    pub const fn new() -> Fnv1a64 {
        Fnv1a64(FNV_OFFSET_BASIS)
    }

    /// Hashes `bytes`.
    pub const fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut i = 0;
        while i < bytes.len() {
            h ^= bytes[i] as u64;
            h = h.wrapping_mul(FNV_PRIME);
            i += 1;
        }
        self.0 = h;
    }

    /// Hashes the 8 little-endian bytes of `v`.
    pub const fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }

    /// The hash so far.
    #[must_use]
    pub const fn finish(&self) -> u64 {
        self.0
    }

    /// FNV-1a 64 of `bytes` in one call.
    #[must_use]
    pub const fn hash(bytes: &[u8]) -> u64 {
        let mut h = Fnv1a64::new();
        h.write(bytes);
        h.finish()
    }
}

/// Receives a sim's state as named fields of integers.
///
/// Signed values are written as their two's-complement `u64` (`v as u64`), so
/// `-1i64` hashes as `ff ff ff ff ff ff ff ff`. Narrower integers are widened
/// to 64 bits first (sign-extended for signed types).
pub trait StateVisitor {
    /// Starts a new field; values until the next call belong to it.
    fn field(&mut self, name: &'static str);
    /// One value of the current field.
    fn value(&mut self, v: u64);
    /// One signed value (two's complement).
    fn value_i64(&mut self, v: i64) {
        self.value(v.cast_unsigned());
    }
    /// A run of values.
    fn values(&mut self, vs: &[u64]) {
        for &v in vs {
            self.value(v);
        }
    }
    /// A run of signed values.
    fn values_i32(&mut self, vs: &[i32]) {
        for &v in vs {
            self.value_i64(i64::from(v));
        }
    }
    /// A run of unsigned 32-bit values.
    fn values_u32(&mut self, vs: &[u32]) {
        for &v in vs {
            self.value(u64::from(v));
        }
    }
}

/// Visitor computing the whole-state checksum.
#[derive(Debug, Default)]
pub struct Checksum(Fnv1a64);

impl Checksum {
    /// A fresh checksum.
    #[must_use]
    pub const fn new() -> Checksum {
        Checksum(Fnv1a64::new())
    }

    /// The checksum of everything visited.
    #[must_use]
    pub const fn finish(&self) -> u64 {
        self.0.finish()
    }
}

impl StateVisitor for Checksum {
    fn field(&mut self, _name: &'static str) {}
    fn value(&mut self, v: u64) {
        self.0.write_u64(v);
    }
}

/// The hash of one field, for naming what diverged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldHash {
    /// The field's name.
    pub name: &'static str,
    /// FNV-1a 64 over the field's values.
    pub hash: u64,
    /// How many values the field holds.
    pub len: u64,
}

/// Visitor collecting one [`FieldHash`] per field.
#[derive(Debug, Default)]
pub struct FieldHashes {
    fields: Vec<FieldHash>,
    current: Option<(Fnv1a64, &'static str, u64)>,
}

impl FieldHashes {
    /// An empty collector.
    #[must_use]
    pub const fn new() -> FieldHashes {
        FieldHashes {
            fields: Vec::new(),
            current: None,
        }
    }

    fn flush(&mut self) {
        if let Some((h, name, len)) = self.current.take() {
            self.fields.push(FieldHash {
                name,
                hash: h.finish(),
                len,
            });
        }
    }

    /// The collected field hashes, in visiting order.
    #[must_use]
    pub fn finish(mut self) -> Vec<FieldHash> {
        self.flush();
        self.fields
    }
}

impl StateVisitor for FieldHashes {
    fn field(&mut self, name: &'static str) {
        self.flush();
        self.current = Some((Fnv1a64::new(), name, 0));
    }
    fn value(&mut self, v: u64) {
        let cur = self.current.get_or_insert((Fnv1a64::new(), "", 0));
        cur.0.write_u64(v);
        cur.2 += 1;
    }
}

/// The names of fields whose hashes differ between `a` and `b` (fields present
/// on one side only are included).
#[must_use]
pub fn differing_fields(a: &[FieldHash], b: &[FieldHash]) -> Vec<&'static str> {
    let mut out = Vec::new();
    for fa in a {
        match b.iter().find(|fb| fb.name == fa.name) {
            Some(fb) if fb.hash == fa.hash && fb.len == fa.len => {}
            _ => out.push(fa.name),
        }
    }
    for fb in b {
        if !a.iter().any(|fa| fa.name == fb.name) {
            out.push(fb.name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_reference_vectors() {
        // From the FNV reference test suite (Fowler/Noll/Vo, draft-eastlake-fnv).
        assert_eq!(Fnv1a64::hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv1a64::hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv1a64::hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn checksum_is_fnv_over_le_values() {
        let mut c = Checksum::new();
        c.field("x");
        c.value_i64(-1);
        c.value(2);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        bytes[8..].copy_from_slice(&2u64.to_le_bytes());
        assert_eq!(c.finish(), Fnv1a64::hash(&bytes));
    }

    #[test]
    fn field_hashes_name_the_difference() {
        let collect = |x: i64, y: i64| {
            let mut f = FieldHashes::new();
            f.field("x");
            f.value_i64(x);
            f.field("y");
            f.value_i64(y);
            f.finish()
        };
        assert_eq!(differing_fields(&collect(1, 2), &collect(1, 3)), ["y"]);
        assert!(differing_fields(&collect(1, 2), &collect(1, 2)).is_empty());
    }
}
