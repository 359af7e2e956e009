//! The stored state summaries (checkpoints and the final state): a 64-bit
//! checksum and one 32-bit hash per field, and how their field hashes are
//! read and written.

use alloc::vec::Vec;

use crate::codec::Reader;
use crate::replay::error::ReplayError;

/// A stored state summary: the 64-bit checksum and one 32-bit hash per
/// field (the low half of the field's FNV-1a 64), at `tick`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint<'a> {
    /// The state's tick (steps run).
    pub tick: u64,
    /// The whole-state checksum ([`crate::Sim::checksum`]).
    pub checksum: u64,
    /// Per-field hashes, in [`Replay::field_names`](super::Replay::field_names) order.
    pub fields: &'a [u32],
}

pub(super) fn read_hashes(
    r: &mut Reader<'_>,
    n: usize,
    out: &mut Vec<u32>,
) -> Result<(), ReplayError> {
    for _ in 0..n {
        out.push(r.u32_le("field hash")?);
    }
    Ok(())
}

pub(super) fn put_hashes(out: &mut Vec<u8>, hashes: &[u32]) {
    for h in hashes {
        out.extend_from_slice(&h.to_le_bytes());
    }
}
