//! The input blocks section (format version 3): how a replay stores the
//! input of every tick.
//!
//! A block covers some ticks and stores them one of two ways, whichever the
//! writer found smaller:
//!
//! * **runs** (mode 0): `run length, input` pairs, as versions 1 and 2 stored
//!   every input. Long runs (a scripted walk, an idle player) cost two bytes
//!   per run whatever its length.
//! * **packed** (mode 1): a palette of the block's distinct inputs (2 to 16),
//!   then one fixed-width symbol per tick (1, 2 or 4 bits), least
//!   significant bits first. Inputs that change every tick (a random −1/0/1 stick) cost 2 bits
//!   a tick instead of about 11 as runs; log2(3) ≈ 1.58 bits is the floor.
//!
//! Widths that divide 8 keep every symbol inside one byte, so the decoder
//! shifts and masks one byte per tick, with no state carried across bytes;
//! 3 bits would save a quarter on palettes of 5 to 8 inputs, which random
//! ±1/0 inputs do not have. Palettes stop at 16: checking that no entry
//! repeats compares every pair (inputs have no order or hash), so a bound
//! of 16 keeps that at 120 comparisons per block of 19 bytes or more, and
//! inputs with more distinct values per stretch are cheaper as runs.
//!
//! The section is read twice: once, fully, when a replay is read
//! ([`check_blocks`]: every fault has its own [`BlockFault`] and offset),
//! and again, lazily, while a re-simulation steps through it
//! ([`RunDecoder`]: one run at a time, in constant memory). Decoding yields
//! the runs as stored; [`super::Replay::runs`] joins equal neighbours (also
//! across blocks), so it does not depend on the writer's choices.

use alloc::vec::Vec;
use core::fmt;

use super::codec::ReplayInput;
use super::error::ReplayError;
use super::run::Run;
use super::symbols::check_symbols;
use crate::codec::{Reader, put_varint};

/// Block mode byte: runs of identical inputs.
pub(crate) const BLOCK_RUNS: u8 = 0;
/// Block mode byte: a palette and fixed-width symbols.
pub(crate) const BLOCK_PACKED: u8 = 1;
/// The most inputs a packed block's palette may hold (4-bit symbols).
/// Inputs with more distinct values per stretch of short runs are stored
/// as runs.
pub(crate) const MAX_PALETTE: usize = 16;
/// Runs at least this long are always written as runs: in a packed block
/// they would cost `len × width / 8` bytes instead of about 2, and a packed
/// block's header and palette (about 8 bytes) is paid back within a few runs.
const WRITER_LONG_RUN: u64 = 64;

/// What is wrong with an input block (the offset is in
/// [`ReplayError::BadInputBlock`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockFault {
    /// A block of zero ticks.
    Empty,
    /// The block covers more ticks than the declared tick count leaves.
    PastEnd {
        /// Ticks the block declares.
        block_ticks: u64,
        /// Ticks the replay has left after the blocks before it.
        ticks_left: u64,
    },
    /// A mode byte other than 0 (runs) or 1 (packed).
    UnknownMode {
        /// The mode byte.
        mode: u8,
    },
    /// In a runs block, a run that ends past the block's last tick.
    RunPastBlock {
        /// Ticks the block declares.
        block_ticks: u64,
        /// Ticks its runs cover, this run included.
        covered: u64,
    },
    /// A packed block's palette size outside 2..=16.
    PaletteSize {
        /// The size declared.
        size: u64,
    },
    /// A palette entry equal to an earlier one (one input, one symbol).
    DuplicatePaletteEntry {
        /// The entry's index in the palette.
        index: u64,
    },
    /// A symbol that names no palette entry.
    SymbolOutsidePalette {
        /// The symbol's index in the block (its tick, counted from the block's first).
        index: u64,
        /// The symbol.
        symbol: u8,
        /// The palette's size.
        palette: u16,
    },
    /// Bits after the last symbol of a packed block are not zero.
    NonZeroPadding,
}

impl fmt::Display for BlockFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockFault::Empty => f.write_str("the block covers zero ticks"),
            BlockFault::PastEnd {
                block_ticks,
                ticks_left,
            } => write!(
                f,
                "the block covers {block_ticks} ticks but only {ticks_left} of the declared ticks are left"
            ),
            BlockFault::UnknownMode { mode } => {
                write!(f, "block mode {mode} is not known (0 = runs, 1 = packed)")
            }
            BlockFault::RunPastBlock {
                block_ticks,
                covered,
            } => write!(
                f,
                "its runs cover {covered} ticks, past the block's {block_ticks}"
            ),
            BlockFault::PaletteSize { size } => {
                write!(f, "palette of {size} inputs, outside 2..={MAX_PALETTE}")
            }
            BlockFault::DuplicatePaletteEntry { index } => {
                write!(f, "palette entry {index} repeats an earlier entry")
            }
            BlockFault::SymbolOutsidePalette {
                index,
                symbol,
                palette,
            } => write!(
                f,
                "symbol {index} is {symbol}, outside the palette of {palette}"
            ),
            BlockFault::NonZeroPadding => {
                f.write_str("the bits after the last symbol are not zero")
            }
        }
    }
}

fn fault(offset: u64, fault: BlockFault) -> ReplayError {
    ReplayError::BadInputBlock { offset, fault }
}

/// Bits per symbol for a palette of `size` inputs (2..=16): the smallest of
/// 1, 2, 4 that can number them.
#[must_use]
pub(crate) const fn symbol_bits(size: usize) -> u32 {
    if size <= 2 {
        1
    } else if size <= 4 {
        2
    } else {
        4
    }
}

/// Bytes of `n` symbols of `bits` bits (`⌈n·bits/8⌉`), or `None` past `u64`.
const fn symbol_bytes(n: u64, bits: u32) -> Option<u64> {
    match n.checked_mul(bits as u64) {
        Some(b) => Some(b.div_ceil(8)),
        None => None,
    }
}

/// Where a checked input blocks section lies in the file, and how many
/// (merged) runs it decodes to.
pub(crate) struct BlockSection {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) runs: usize,
}

/// Counts merged runs while checking: a piece extends the last run when its
/// input equals the last run's.
struct RunCounter<I> {
    last: Option<I>,
    runs: usize,
}

impl<I: PartialEq> RunCounter<I> {
    fn piece(&mut self, input: I) {
        if self.last.as_ref() != Some(&input) {
            self.runs += 1;
            self.last = Some(input);
        }
    }
}

/// Checks the input blocks section (length prefix included) without keeping
/// anything: every block is well formed, every input decodes canonically,
/// and together the blocks cover exactly `ticks` ticks. One pass; it
/// allocates a palette of at most [`MAX_PALETTE`] inputs and nothing that
/// grows with the file.
///
/// Work is bounded by the section's bytes plus `ticks`: each block covers at
/// least one tick and takes at least three bytes, a packed block's symbols
/// are counted against the bytes present before they are read, and the loop
/// stops as soon as a block would pass `ticks`.
pub(crate) fn check_blocks<I: ReplayInput>(
    r: &mut Reader<'_>,
    ticks: u64,
) -> Result<BlockSection, ReplayError> {
    let len = r.varint("input blocks length")?;
    let start = r.offset();
    let section = r.take(usize::try_from(len).unwrap_or(usize::MAX), "input blocks")?;
    let mut s = Reader::with_base(section, start);
    let mut covered = 0u64;
    let mut counter = RunCounter::<I> {
        last: None,
        runs: 0,
    };
    let mut palette: Vec<I> = Vec::new();
    while !s.is_empty() {
        let block_offset = s.offset();
        let n = s.varint("block tick count")?;
        if n == 0 {
            return Err(fault(block_offset, BlockFault::Empty));
        }
        let left = ticks - covered;
        if n > left {
            return Err(fault(
                block_offset,
                BlockFault::PastEnd {
                    block_ticks: n,
                    ticks_left: left,
                },
            ));
        }
        let mode_offset = s.offset();
        match s.u8("block mode")? {
            BLOCK_RUNS => {
                let mut in_block = 0u64;
                while in_block < n {
                    let run_offset = s.offset();
                    let len = s.varint("run length")?;
                    if len == 0 {
                        return Err(ReplayError::EmptyRun { offset: run_offset });
                    }
                    in_block = match in_block.checked_add(len) {
                        Some(c) if c <= n => c,
                        _ => {
                            return Err(fault(
                                run_offset,
                                BlockFault::RunPastBlock {
                                    block_ticks: n,
                                    covered: in_block.saturating_add(len),
                                },
                            ));
                        }
                    };
                    counter.piece(I::decode(&mut s)?);
                }
            }
            BLOCK_PACKED => {
                read_palette(&mut s, &mut palette)?;
                let bits = symbol_bits(palette.len());
                let sym_offset = s.offset();
                let bytes = symbol_bytes(n, bits).unwrap_or(u64::MAX);
                let symbols = s.take(
                    usize::try_from(bytes).unwrap_or(usize::MAX),
                    "packed input symbols",
                )?;
                // n symbols fit in the bytes present, so n fits a usize.
                let count = usize::try_from(n).unwrap_or(usize::MAX);
                let (first, last, changes) = check_symbols(symbols, count, bits, palette.len())
                    .map_err(|(index, symbol)| {
                        fault(
                            sym_offset + index * u64::from(bits) / 8,
                            BlockFault::SymbolOutsidePalette {
                                index,
                                symbol,
                                palette: u16::try_from(palette.len()).unwrap_or(u16::MAX),
                            },
                        )
                    })?;
                // The block's first run may continue the previous block's
                // last; each change of symbol starts a run.
                counter.piece(palette[usize::from(first)].clone());
                counter.runs += changes;
                counter.last = Some(palette[usize::from(last)].clone());
                let used_bits = count * bits as usize;
                if !used_bits.is_multiple_of(8)
                    && let Some(&last) = symbols.last()
                    && last >> (used_bits % 8) != 0
                {
                    return Err(fault(
                        sym_offset + symbols.len() as u64 - 1,
                        BlockFault::NonZeroPadding,
                    ));
                }
            }
            mode => {
                return Err(fault(mode_offset, BlockFault::UnknownMode { mode }));
            }
        }
        covered += n;
    }
    if covered != ticks {
        return Err(ReplayError::RunsDoNotCoverTicks {
            declared: ticks,
            covered,
        });
    }
    // The offsets are within `bytes`, which is a slice in memory.
    let start = usize::try_from(start).unwrap_or(usize::MAX);
    Ok(BlockSection {
        start,
        end: start + section.len(),
        runs: counter.runs,
    })
}

/// Reads a packed block's palette into `palette` (cleared first), checking
/// its size and that no entry repeats.
fn read_palette<I: ReplayInput>(
    s: &mut Reader<'_>,
    palette: &mut Vec<I>,
) -> Result<(), ReplayError> {
    let offset = s.offset();
    let size = s.varint("palette size")?;
    if !(2..=MAX_PALETTE as u64).contains(&size) {
        return Err(fault(offset, BlockFault::PaletteSize { size }));
    }
    palette.clear();
    for index in 0..size {
        let entry_offset = s.offset();
        let input = I::decode(s)?;
        if palette.contains(&input) {
            return Err(fault(
                entry_offset,
                BlockFault::DuplicatePaletteEntry { index },
            ));
        }
        palette.push(input);
    }
    Ok(())
}

/// The runs of a checked input blocks section, decoded one at a time, as
/// stored: a run that a writer split across two blocks (or an unmerged
/// neighbour in a runs block) comes out as two runs with the same input.
/// Re-simulation does not care; [`super::Replay::runs`] merges them.
///
/// Returned by [`super::Replay::encoded_runs`]; yields `Run`s by value, so a
/// re-simulation holds one decoded run and one palette (at most
/// [`MAX_PALETTE`] inputs) at a time, whatever the tick count. Inside a
/// packed block the next run is found with a shift and a mask per tick.
#[derive(Clone, Debug)]
pub(crate) struct RunDecoder<'a, I> {
    reader: Reader<'a>,
    /// Ticks left in the current runs block (0 outside one).
    runs_left: u64,
    /// The current packed block's symbols (empty outside one).
    symbols: &'a [u8],
    /// Index of the next symbol, and the block's symbol count (equal
    /// outside a packed block).
    next: usize,
    count: usize,
    /// Bits per symbol and their mask.
    bits: u32,
    mask: u8,
    palette: Vec<I>,
}

impl<'a, I: ReplayInput> RunDecoder<'a, I> {
    /// A decoder over a section that [`check_blocks`] accepted (without its
    /// length prefix).
    pub(crate) const fn new(section: &'a [u8]) -> RunDecoder<'a, I> {
        RunDecoder {
            reader: Reader::new(section),
            runs_left: 0,
            symbols: &[],
            next: 0,
            count: 0,
            bits: 1,
            mask: 1,
            palette: Vec::new(),
        }
    }

    #[inline]
    fn symbol(&self, i: usize) -> u8 {
        let bit = i * self.bits as usize;
        self.symbols
            .get(bit / 8)
            .map_or(0, |b| (b >> (bit % 8)) & self.mask)
    }

    /// The symbols of the current packed block up to the next change, as a
    /// run. Only called with `next < count`.
    #[inline]
    fn packed_piece(&mut self) -> Run<I> {
        let sym = self.symbol(self.next);
        let start = self.next;
        self.next += 1;
        while self.next < self.count && self.symbol(self.next) == sym {
            self.next += 1;
        }
        // The section was checked: every symbol names a palette entry.
        let input = self
            .palette
            .get(usize::from(sym))
            .cloned()
            .unwrap_or_default();
        Run {
            len: (self.next - start) as u64,
            input,
        }
    }

    /// The next run of a runs block, or of the next block. The section was
    /// checked when the replay was built, so no read fails; if one did, the
    /// iteration would end early (never a panic). Out of line, so that
    /// the loop that steps the sim keeps its registers.
    #[inline(never)]
    fn piece(&mut self) -> Option<Run<I>> {
        loop {
            if self.next < self.count {
                return Some(self.packed_piece());
            }
            if self.runs_left > 0 {
                let len = self.reader.varint("run length").ok()?;
                self.runs_left = self.runs_left.saturating_sub(len);
                let input = I::decode(&mut self.reader).ok()?;
                return Some(Run { len, input });
            }
            if self.reader.is_empty() {
                return None;
            }
            let n = self.reader.varint("block tick count").ok()?;
            match self.reader.u8("block mode").ok()? {
                BLOCK_RUNS => self.runs_left = n,
                BLOCK_PACKED => {
                    read_palette(&mut self.reader, &mut self.palette).ok()?;
                    self.bits = symbol_bits(self.palette.len());
                    self.mask = ((1u16 << self.bits) - 1).to_le_bytes()[0];
                    let bytes = usize::try_from(symbol_bytes(n, self.bits)?).ok()?;
                    self.symbols = self.reader.take(bytes, "packed input symbols").ok()?;
                    self.count = usize::try_from(n).ok()?;
                    self.next = 0;
                }
                _ => return None,
            }
        }
    }
}

impl<I: ReplayInput> Iterator for RunDecoder<'_, I> {
    type Item = Run<I>;

    #[inline]
    fn next(&mut self) -> Option<Run<I>> {
        if self.next < self.count {
            return Some(self.packed_piece());
        }
        self.piece()
    }
}

/// Collects runs, joining equal neighbours (the canonical runs of a replay,
/// whatever its blocks).
pub(crate) fn merge_runs<I: PartialEq>(runs: impl Iterator<Item = Run<I>>) -> Vec<Run<I>> {
    let mut out: Vec<Run<I>> = Vec::new();
    for run in runs {
        match out.last_mut() {
            Some(last) if last.input == run.input => last.len += run.len,
            _ => out.push(run),
        }
    }
    out
}

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
