//! Reading a whole replay from bytes. Reading is defensive: every length is
//! checked against the bytes present and against the limits before it is
//! used, and the inputs are checked but kept encoded.

use alloc::vec::Vec;
use core::cell::OnceCell;

use super::checkpoint::read_hashes;
use super::envelope::envelope;
use super::events::read_events;
use super::header::{HeaderRead, ReplayHeader, header};
use super::layout::{FIXED_HEADER_BYTES, TRAILER_BYTES, name};
use super::limits::ReplayLimits;
use super::parts::ReplayParts;
use super::replay::Replay;
use crate::codec::Reader;
use crate::replay::blocks::{BlockSection, check_blocks};
use crate::replay::codec::ReplayInput;
use crate::replay::error::ReplayError;

/// Reads and checks a whole replay; the runs are checked, not kept (one
/// section per player).
fn parse<I: ReplayInput>(
    bytes: &[u8],
    limits: &ReplayLimits,
) -> Result<(ReplayParts<I>, Vec<BlockSection>), ReplayError> {
    let mut r = envelope(bytes, limits)?;
    let header = header(&mut r, limits)?;
    parse_body(&mut r, header, limits)
}

/// Reads and checks everything after the header (`r` is just past it).
fn parse_body<I: ReplayInput>(
    r: &mut Reader<'_>,
    header: ReplayHeader,
    limits: &ReplayLimits,
) -> Result<(ReplayParts<I>, Vec<BlockSection>), ReplayError> {
    if header.input_kind != I::KIND {
        return Err(ReplayError::InputKindMismatch {
            expected: I::KIND,
            found: header.input_kind,
        });
    }
    let mut runs = Vec::with_capacity(usize::from(header.players));
    for _ in 0..header.players {
        runs.push(check_blocks::<I>(r, header.ticks)?);
    }
    let host_events = read_events(r, header.ticks)?;
    let max_fields = limits.max_fields as u64;
    let n_fields = r.varint_in("field count", 1, max_fields)?;
    let n_fields = usize::try_from(n_fields).unwrap_or(usize::MAX);
    let mut field_names = Vec::with_capacity(n_fields.min(r.remaining() / 2));
    for _ in 0..n_fields {
        field_names.push(name(r, "field name")?);
    }
    let count = header.checkpoint_count();
    let per = 8 + 4 * n_fields as u64;
    let needed = count.saturating_mul(per);
    if needed > r.remaining() as u64 {
        return Err(ReplayError::Truncated {
            what: "checkpoints",
            offset: r.offset(),
            needed,
            available: r.remaining() as u64,
        });
    }
    // count * per fits the bytes present, so these capacities are bounded by the file.
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    let mut checkpoint_checksums = Vec::with_capacity(count);
    let mut checkpoint_fields = Vec::with_capacity(count * n_fields);
    for _ in 0..count {
        checkpoint_checksums.push(r.u64_le("checkpoint checksum")?);
        read_hashes(r, n_fields, &mut checkpoint_fields)?;
    }
    let final_checksum = r.u64_le("final checksum")?;
    let mut final_fields = Vec::with_capacity(n_fields);
    read_hashes(r, n_fields, &mut final_fields)?;
    let offset = r.offset();
    let text = r.bytes_in("final digest", 0, limits.max_digest_bytes)?;
    let final_digest = core::str::from_utf8(text)
        .map_err(|_| ReplayError::BadText {
            what: "final digest",
            offset,
        })?
        .into();
    if !r.is_empty() {
        return Err(ReplayError::SectionLength {
            what: "replay body",
            declared: r.offset() - FIXED_HEADER_BYTES as u64 + r.remaining() as u64,
            used: r.offset() - FIXED_HEADER_BYTES as u64,
        });
    }
    Ok((
        ReplayParts {
            header,
            runs: Vec::new(),
            host_events,
            field_names,
            checkpoint_checksums,
            checkpoint_fields,
            final_checksum,
            final_fields,
            final_digest,
        },
        runs,
    ))
}

impl<I: ReplayInput> Replay<I> {
    /// Reads a replay.
    ///
    /// # Errors
    ///
    /// A specific [`ReplayError`] for every way the bytes can be wrong:
    /// oversized, truncated, bad magic, unknown version, corrupted (integrity
    /// checksum), limits exceeded, inputs of another kind, malformed inputs,
    /// runs that do not cover the ticks, and so on. Never panics.
    pub fn from_bytes(bytes: &[u8], limits: &ReplayLimits) -> Result<Replay<I>, ReplayError> {
        let (parts, sections) = parse::<I>(bytes, limits)?;
        Ok(Replay::assemble(bytes, parts, &sections))
    }

    /// Reads a replay whose envelope and header `read` holds, read from
    /// these same `bytes` with the same `limits` ([`HeaderRead::of`]):
    /// neither is read again and the file is not hashed again (its
    /// integrity checksum was checked then), so this costs a pass over the
    /// inputs and checkpoints only. Only the input blocks are copied, as in
    /// [`Replay::from_bytes`]. Bytes of another length than the header was
    /// read from are read whole, as [`Replay::from_bytes`] does.
    ///
    /// Bytes of the same length but other contents than `read`'s are
    /// decoded without the checksum's check: every other check still
    /// applies, so they give an error or a replay, never a panic; keeping
    /// the bytes and their `HeaderRead` together is the caller's part.
    ///
    /// # Errors
    ///
    /// As [`Replay::from_bytes`], but for the envelope's and the header's.
    pub fn from_header_read(
        bytes: &[u8],
        read: HeaderRead,
        limits: &ReplayLimits,
    ) -> Result<Replay<I>, ReplayError> {
        if bytes.len() != read.len || read.len < FIXED_HEADER_BYTES + TRAILER_BYTES {
            return Replay::from_bytes(bytes, limits);
        }
        let end = bytes.len() - TRAILER_BYTES;
        let Some(body) = bytes.get(read.body..end) else {
            return Replay::from_bytes(bytes, limits);
        };
        let mut r = Reader::with_base(body, read.body as u64);
        let (parts, sections) = parse_body::<I>(&mut r, read.header, limits)?;
        Ok(Replay::assemble(bytes, parts, &sections))
    }

    /// The replay of checked parts, its input sections copied out of `bytes`.
    fn assemble(bytes: &[u8], parts: ReplayParts<I>, sections: &[BlockSection]) -> Replay<I> {
        let mut run_bytes = Vec::with_capacity(sections.iter().map(|s| s.end - s.start).sum());
        let mut stream_ends = Vec::with_capacity(sections.len());
        for s in sections {
            run_bytes.extend_from_slice(&bytes[s.start..s.end]);
            stream_ends.push(run_bytes.len());
        }
        Replay {
            parts,
            run_bytes,
            stream_ends,
            run_counts: sections.iter().map(|s| s.runs).collect(),
            decoded: OnceCell::new(),
        }
    }

    /// Reads a replay from a buffer it may keep: the input blocks are moved to
    /// the front of `bytes` and the rest is dropped, so reading a file costs
    /// no second copy of its largest section (what `tickwise verify` uses).
    ///
    /// # Errors
    ///
    /// As [`Replay::from_bytes`].
    pub fn from_vec(mut bytes: Vec<u8>, limits: &ReplayLimits) -> Result<Replay<I>, ReplayError> {
        let (parts, sections) = parse::<I>(&bytes, limits)?;
        // Sections lie in file order, so each moves to or before its place.
        let mut end = 0;
        let mut stream_ends = Vec::with_capacity(sections.len());
        for s in &sections {
            bytes.copy_within(s.start..s.end, end);
            end += s.end - s.start;
            stream_ends.push(end);
        }
        bytes.truncate(end);
        Ok(Replay {
            parts,
            run_bytes: bytes,
            stream_ends,
            run_counts: sections.iter().map(|s| s.runs).collect(),
            decoded: OnceCell::new(),
        })
    }
}
