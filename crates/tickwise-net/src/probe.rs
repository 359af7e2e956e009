//! One reusable pass over a sim's state: the checksum and every field's hash.

use alloc::vec::Vec;

use tickwise::{Fnv1a64, Sim, StateVisitor};

/// Computes [`Sim::checksum`] and the per-field FNV-1a 64 hashes of
/// [`Sim::field_hashes`] in one pass, reusing its buffers: after the first
/// use it never allocates (the names are `&'static str`).
#[derive(Clone, Debug, Default)]
pub struct Probe {
    sum: Fnv1a64,
    names: Vec<&'static str>,
    hashes: Vec<u64>,
    current: Option<Fnv1a64>,
}

impl Probe {
    /// An empty probe.
    #[must_use]
    pub const fn new() -> Probe {
        Probe {
            sum: Fnv1a64::new(),
            names: Vec::new(),
            hashes: Vec::new(),
            current: None,
        }
    }

    /// Visits `sim`, replacing the previous results.
    pub fn take<S: Sim + ?Sized>(&mut self, sim: &S) {
        self.sum = Fnv1a64::new();
        self.names.clear();
        self.hashes.clear();
        self.current = None;
        sim.visit_state(self);
        if let Some(h) = self.current.take() {
            self.hashes.push(h.finish());
        }
    }

    /// The whole-state checksum.
    #[must_use]
    pub const fn checksum(&self) -> u64 {
        self.sum.finish()
    }

    /// Field names in visiting order.
    #[must_use]
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// Field hashes in visiting order.
    #[must_use]
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }
}

impl StateVisitor for Probe {
    fn field(&mut self, name: &'static str) {
        if let Some(h) = self.current.take() {
            self.hashes.push(h.finish());
        }
        self.names.push(name);
        self.current = Some(Fnv1a64::new());
    }

    fn value(&mut self, v: u64) {
        self.sum.write_u64(v);
        if self.current.is_none() {
            self.names.push("");
        }
        self.current.get_or_insert_with(Fnv1a64::new).write_u64(v);
    }
}
