//! The sim contract: state, one fixed step with that tick's input, a digest.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::digest::{Checksum, FieldHash, FieldHashes, StateVisitor};
use crate::time::Nanos;

/// The most players one sim takes (and one replay or netplay session holds).
pub const MAX_PLAYERS: usize = 4;

/// A deterministic simulation.
///
/// Implementations must be pure functions of their state and inputs: no floats,
/// no wall clock, no OS randomness, no hash-map iteration order (the workspace
/// lints enforce this for the sims crate). Given the same initial state and the
/// same input per tick, every machine computes the same states bit for bit.
///
/// The loop ([`crate::FixedLoop`]) owns the sim and is the only caller of
/// [`Sim::step`]; presentation code only ever gets `&Self`.
///
/// **Players.** A sim takes the input of every player each tick, indexed by
/// player slot, so it can tell who pressed what: a two-paddle pong reads
/// `inputs[0]` for the left paddle and `inputs[1]` for the right one. How
/// many players it takes is part of its state, fixed when it is built (from
/// its config), and never changes: a player who is absent (has not joined,
/// has left) still has a slot, whose input is the absent input,
/// `Self::Input::default()`. Single-player sims keep the default
/// [`Sim::players`] of 1 and read `inputs[0]`.
pub trait Sim {
    /// One player's input for one tick. `Default` is the input of a tick
    /// nobody said anything about, and the input of an absent player.
    type Input: Clone + Default + PartialEq + core::fmt::Debug;

    /// How many players this sim takes: 1 to [`MAX_PLAYERS`], fixed when
    /// the sim is built. Defaults to 1.
    fn players(&self) -> usize {
        1
    }

    /// Advances one fixed step with every player's input of this tick:
    /// `inputs[p]` is player `p`'s. Every caller in tickwise passes exactly
    /// [`Sim::players`] inputs (the loop, the recorder, verification,
    /// netplay); a sim may treat a missing entry as the absent input.
    fn step(&mut self, inputs: &[Self::Input]);

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
