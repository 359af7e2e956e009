//! The sim contract: state, one fixed step with that tick's input, a digest.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::digest::{Checksum, FieldHash, FieldHashes, StateVisitor};
use crate::time::Nanos;

/// A deterministic simulation.
///
/// Implementations must be pure functions of their state and inputs: no floats,
/// no wall clock, no OS randomness, no hash-map iteration order (the workspace
/// lints enforce this for the sims crate). Given the same initial state and the
/// same input per tick, every machine computes the same states bit for bit.
///
/// The loop ([`crate::FixedLoop`]) owns the sim and is the only caller of
/// [`Sim::step`]; presentation code only ever gets `&Self`.
pub trait Sim {
    /// One tick's input. `Default` is the input of a tick nobody said anything about.
    type Input: Clone + Default + PartialEq + core::fmt::Debug;

    /// Advances one fixed step.
    fn step(&mut self, input: &Self::Input);

    /// Describes the whole state as named integer fields, in a fixed order.
    /// Checksums, field-level desync reports and sync tests are built on this.
    fn visit_state(&self, visitor: &mut dyn StateVisitor);

    /// Called by the loop with time it threw away (step cap or frame clamp),
    /// for sims that record it in their state as the island world does
    /// (its `droppedMs`).
    fn on_time_dropped(&mut self, dropped: Nanos) {
        let _ = dropped;
    }

    /// The 64-bit state checksum (FNV-1a over [`Sim::visit_state`]).
    fn checksum(&self) -> u64 {
        let mut c = Checksum::new();
        self.visit_state(&mut c);
        c.finish()
    }

    /// Per-field hashes, to name which fields differ between two runs.
    fn field_hashes(&self) -> Vec<FieldHash> {
        let mut f = FieldHashes::new();
        self.visit_state(&mut f);
        f.finish()
    }

    /// A stable text digest. Defaults to the checksum in 16 hex digits; the
    /// island world overrides it with the island rules' `tick|posX|...` text.
    fn digest(&self) -> String {
        format!("{:016x}", self.checksum())
    }
}
