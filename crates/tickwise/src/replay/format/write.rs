//! Writing a replay in the current format version: the reader's checks in
//! reverse, with the declared length and the integrity checksum filled in
//! last.

use alloc::vec::Vec;

use super::checkpoint::put_hashes;
use super::events::HostEventKind;
use super::layout::{FORMAT_VERSION, MAGIC, TRAILER_BYTES};
use super::replay::Replay;
use crate::codec::put_varint;
use crate::digest::Fnv1a64;
use crate::replay::codec::ReplayInput;

impl<I: ReplayInput> Replay<I> {
    /// Writes the replay in the current format version.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let p = &self.parts;
        let h = &p.header;
        let mut out = Vec::with_capacity(128 + h.config.len() + self.run_bytes.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // length, patched below
        put_bytes(&mut out, h.sim_id.as_bytes());
        out.extend_from_slice(&h.sim_version.to_le_bytes());
        put_bytes(&mut out, &h.config);
        out.extend_from_slice(&h.config_hash().to_le_bytes());
        out.extend_from_slice(&h.seed.to_le_bytes());
        put_varint(&mut out, h.ticks);
        put_varint(&mut out, h.checkpoint_every);
        out.push(I::KIND);
        out.push(h.players);
        for p in 0..self.stream_ends.len() {
            put_bytes(&mut out, self.stream(p));
        }
        put_varint(&mut out, p.host_events.len() as u64);
        let mut previous = 0u64;
        for e in &p.host_events {
            // from_parts and the reader keep events sorted: the delta is >= 0.
            put_varint(&mut out, e.tick.saturating_sub(previous));
            previous = e.tick;
            out.push(e.kind.kind_byte());
            match e.kind {
                HostEventKind::TimeDropped(d) => put_varint(&mut out, d.as_nanos()),
            }
        }
        put_varint(&mut out, p.field_names.len() as u64);
        for n in &p.field_names {
            put_bytes(&mut out, n.as_bytes());
        }
        let f = p.field_names.len();
        for (j, sum) in p.checkpoint_checksums.iter().enumerate() {
            out.extend_from_slice(&sum.to_le_bytes());
            put_hashes(&mut out, &p.checkpoint_fields[j * f..(j + 1) * f]);
        }
        out.extend_from_slice(&p.final_checksum.to_le_bytes());
        put_hashes(&mut out, &p.final_fields);
        put_bytes(&mut out, p.final_digest.as_bytes());
        let len = (out.len() + TRAILER_BYTES) as u64;
        out[12..20].copy_from_slice(&len.to_le_bytes());
        let sum = Fnv1a64::hash(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}
