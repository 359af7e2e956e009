//! One pass over a sim's state giving the checksum and every field's hash.
//!
//! Replays take their checkpoints with it and `tickwise-net` its
//! per-tick checks, so both hash a state the same way, and neither
//! allocates per tick.

use alloc::vec::Vec;

use crate::digest::{Fnv1a64, StateVisitor};
use crate::sim::Sim;

/// A reusable visitor computing [`Sim::checksum`] and the per-field FNV-1a
/// 64 hashes of [`Sim::field_hashes`] in a single pass, without allocating
/// after the first use (the names are `&'static str`). A replay's
/// checkpoints and a netplay session's checks are taken with it.
///
/// ```
/// use tickwise::{Sim, StateHasher, StateVisitor};
///
/// struct Ball { x: i32, y: i32 }
/// impl Sim for Ball {
///     type Input = i32;
///     fn step(&mut self, _: &[i32]) {}
///     fn visit_state(&self, v: &mut dyn StateVisitor) {
///         v.field("x"); v.value_i64(self.x.into());
///         v.field("y"); v.value_i64(self.y.into());
///     }
/// }
///
/// let ball = Ball { x: 3, y: -4 };
/// let mut h = StateHasher::new();
/// h.take(&ball);
/// assert_eq!(h.checksum(), ball.checksum());
/// assert_eq!(h.names(), ["x", "y"]);
/// let fields: Vec<u64> = ball.field_hashes().iter().map(|f| f.hash).collect();
/// assert_eq!(h.hashes(), fields);
/// ```
#[derive(Clone, Debug, Default)]
pub struct StateHasher {
    sum: Fnv1a64,
    names: Vec<&'static str>,
    hashes: Vec<u64>,
    current: Option<Fnv1a64>,
}

impl StateHasher {
    /// An empty hasher.
    #[must_use]
    pub const fn new() -> StateHasher {
        StateHasher {
            sum: Fnv1a64::new(),
            names: Vec::new(),
            hashes: Vec::new(),
            current: None,
        }
    }

    /// Visits `sim`'s state, replacing the previous results.
    pub fn take<S: Sim + ?Sized>(&mut self, sim: &S) {
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

    /// The whole-state checksum ([`Sim::checksum`]).
    #[must_use]
    pub const fn checksum(&self) -> u64 {
        self.sum.finish()
    }

    /// The field names, in visiting order.
    #[must_use]
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// Each field's FNV-1a 64 hash, in visiting order.
    #[must_use]
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
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

impl StateVisitor for StateHasher {
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
