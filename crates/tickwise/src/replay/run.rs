//! A run: consecutive ticks with one input, the unit a replay stores inputs in.
//!
//! Its own module because both the block codec (which packs runs) and the
//! file format (which hands them out) use it, and neither owns the other.

/// `len` consecutive ticks with the same input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run<I> {
    /// Ticks covered (at least 1).
    pub len: u64,
    /// The input of each of those ticks.
    pub input: I,
}
