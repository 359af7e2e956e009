//! Writing the section: per stretch of runs, runs or packed symbols,
//! whichever is smaller.

use alloc::vec::Vec;

use super::decode::merge_runs;
use super::{BLOCK_PACKED, BLOCK_RUNS, MAX_PALETTE, symbol_bits, symbol_bytes};
use crate::codec::put_varint;
use crate::replay::codec::ReplayInput;
use crate::replay::run::Run;

/// Runs at least this long are always written as runs: in a packed block
/// they would cost `len × width / 8` bytes instead of about 2, and a packed
/// block's header and palette (about 8 bytes) is paid back within a few runs.
const WRITER_LONG_RUN: u64 = 64;

/// Bytes of `v` as a varint.
const fn varint_len(mut v: u64) -> u64 {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// One stretch of runs the writer stores in one way.
struct Segment {
    /// Index range in the merged runs.
    start: usize,
    end: usize,
    packed: bool,
}

/// Encodes runs as the file's input blocks section (without its length
/// prefix), choosing per stretch of runs between runs and packed symbols by
/// size. Equal neighbours are merged first. Deterministic: the same runs
/// always give the same bytes.
///
/// Long runs (at least 64 ticks) are always stored as runs. Each maximal
/// stretch of shorter runs whose distinct inputs fit a palette of 16 is
/// stored packed when that is smaller than its runs plus the cost of
/// breaking the surrounding runs block (counted as a header for all the
/// ticks); consecutive stretches stored as runs share one block. So the
/// section is never larger than the same runs in one runs block (what
/// version 2 stored, plus that block's header).
pub(crate) fn encode_blocks<I: ReplayInput>(runs: &[Run<I>]) -> (Vec<u8>, usize) {
    // A recorder's runs are merged already: copy only when they are not.
    let copy: Vec<Run<I>>;
    let merged: &[Run<I>] = if runs.windows(2).any(|w| w[0].input == w[1].input) {
        copy = merge_runs(runs.iter().cloned());
        &copy
    } else {
        runs
    };
    let mut scratch = Vec::new();
    let mut size = |input: &I| {
        scratch.clear();
        input.encode(&mut scratch);
        scratch.len() as u64
    };
    let total: u64 = merged.iter().map(|r| r.len).sum();
    let mut segments: Vec<Segment> = Vec::new();
    let mut i = 0;
    while i < merged.len() {
        if merged[i].len >= WRITER_LONG_RUN {
            push_segment(&mut segments, i, i + 1, false);
            i += 1;
            continue;
        }
        // A stretch of short runs whose inputs fit the writer's palette.
        let mut palette: Vec<&I> = Vec::new();
        let mut j = i;
        let mut ticks = 0u64;
        let mut as_runs = 0u64;
        while j < merged.len() && merged[j].len < WRITER_LONG_RUN {
            let input = &merged[j].input;
            if !palette.contains(&input) {
                if palette.len() == MAX_PALETTE {
                    break;
                }
                palette.push(input);
            }
            ticks += merged[j].len;
            as_runs += varint_len(merged[j].len) + size(input);
            j += 1;
        }
        let packed = palette.len() >= 2 && {
            let palette_bytes: u64 = palette.iter().map(|p| size(p)).sum();
            let symbols = symbol_bytes(ticks, symbol_bits(palette.len())).unwrap_or(u64::MAX);
            // Its own header and palette, and at most one more runs block
            // header (the runs block it splits): charging that to the packed
            // block keeps the section no larger than one runs block would be.
            let cost =
                (varint_len(ticks) + 1) + (varint_len(total) + 1) + 1 + palette_bytes + symbols;
            cost < as_runs
        };
        push_segment(&mut segments, i, j, packed);
        i = j;
    }
    let mut out = Vec::new();
    for seg in &segments {
        let stretch = &merged[seg.start..seg.end];
        let ticks: u64 = stretch.iter().map(|r| r.len).sum();
        put_varint(&mut out, ticks);
        if seg.packed {
            out.push(BLOCK_PACKED);
            let mut palette: Vec<&I> = Vec::new();
            for r in stretch {
                if !palette.contains(&&r.input) {
                    palette.push(&r.input);
                }
            }
            put_varint(&mut out, palette.len() as u64);
            for p in &palette {
                p.encode(&mut out);
            }
            let bits = symbol_bits(palette.len());
            let mut byte = 0u8;
            let mut used = 0u32;
            for r in stretch {
                #[allow(clippy::cast_possible_truncation, reason = "palette index < 16")]
                let sym = palette.iter().position(|p| *p == &r.input).unwrap_or(0) as u8;
                for _ in 0..r.len {
                    byte |= sym << used;
                    used += bits;
                    if used == 8 {
                        out.push(byte);
                        byte = 0;
                        used = 0;
                    }
                }
            }
            if used > 0 {
                out.push(byte);
            }
        } else {
            out.push(BLOCK_RUNS);
            for r in stretch {
                put_varint(&mut out, r.len);
                r.input.encode(&mut out);
            }
        }
    }
    (out, merged.len())
}

/// Appends a segment, joining it to the previous one when both are runs.
fn push_segment(segments: &mut Vec<Segment>, start: usize, end: usize, packed: bool) {
    if !packed
        && let Some(last) = segments.last_mut()
        && !last.packed
        && last.end == start
    {
        last.end = end;
        return;
    }
    segments.push(Segment { start, end, packed });
}
