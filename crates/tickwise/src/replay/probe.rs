//! One pass over a sim's state giving the checksum and every field's hash.

use alloc::vec::Vec;

use crate::digest::{Fnv1a64, StateVisitor};
use crate::sim::Sim;

/// A reusable visitor computing [`Sim::checksum`] and the per-field FNV-1a
/// 64 hashes of [`Sim::field_hashes`] in a single pass, without allocating
/// after the first use. Checkpoints are taken with it.
#[derive(Debug, Default)]
pub(crate) struct Probe {
    sum: Fnv1a64,
    names: Vec<&'static str>,
    hashes: Vec<u64>,
    current: Option<Fnv1a64>,
}

impl Probe {
    /// Visits `sim`'s state, replacing the previous results.
    pub(crate) fn take<S: Sim + ?Sized>(&mut self, sim: &S) {
        self.sum = Fnv1a64::new();
        self.names.clear();
        self.hashes.clear();
        self.current = None;
        sim.visit_state(self);
        self.flush();
    }

    fn flush(&mut self) {
        if let Some(h) = self.current.take() {
            self.hashes.push(h.finish());
        }
    }

    /// The whole-state checksum.
    pub(crate) const fn checksum(&self) -> u64 {
        self.sum.finish()
    }

    /// The field names, in visiting order.
    pub(crate) fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// The stored (32-bit) form of each field's hash: its low half.
    pub(crate) fn short_hashes(&self) -> impl Iterator<Item = u32> + '_ {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "the low half, by definition"
        )]
        self.hashes.iter().map(|&h| h as u32)
    }
}

impl StateVisitor for Probe {
    fn field(&mut self, name: &'static str) {
        self.flush();
        self.names.push(name);
        self.current = Some(Fnv1a64::new());
    }

    fn value(&mut self, v: u64) {
        self.sum.write_u64(v);
        // Values before any field form an unnamed field, as in `FieldHashes`.
        if self.current.is_none() {
            self.names.push("");
        }
        self.current.get_or_insert_with(Fnv1a64::new).write_u64(v);
    }
}
