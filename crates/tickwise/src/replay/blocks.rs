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
use super::symbols::check_symbols;
use crate::codec::Reader;

mod decode;
mod encode;

pub(crate) use decode::{RunDecoder, merge_runs};
pub(crate) use encode::encode_blocks;

/// Block mode byte: runs of identical inputs.
pub(crate) const BLOCK_RUNS: u8 = 0;
/// Block mode byte: a palette and fixed-width symbols.
pub(crate) const BLOCK_PACKED: u8 = 1;
/// The most inputs a packed block's palette may hold (4-bit symbols).
/// Inputs with more distinct values per stretch of short runs are stored
/// as runs.
pub(crate) const MAX_PALETTE: usize = 16;
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
