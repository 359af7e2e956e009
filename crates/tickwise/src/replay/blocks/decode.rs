//! Reading a checked section lazily, one run at a time, in constant memory
//! (what a re-simulation steps through), and joining equal neighbours.

use alloc::vec::Vec;

use super::{BLOCK_PACKED, BLOCK_RUNS, read_palette, symbol_bits, symbol_bytes};
use crate::codec::Reader;
use crate::replay::codec::ReplayInput;
use crate::replay::run::Run;

/// The runs of a checked input blocks section, decoded one at a time, as
/// stored: a run that a writer split across two blocks (or an unmerged
/// neighbour in a runs block) comes out as two runs with the same input.
/// Re-simulation does not care; [`Replay::runs`](crate::Replay::runs)
/// merges them.
///
/// Returned by [`Replay::encoded_runs`](crate::Replay::encoded_runs);
/// yields `Run`s by value, so a re-simulation holds one decoded run and one
/// palette (at most [`MAX_PALETTE`](super::MAX_PALETTE) inputs) at a time,
/// whatever the tick count. Inside a packed block the next run is found
/// with a shift and a mask per tick.
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
    /// A decoder over a section that [`check_blocks`](super::check_blocks)
    /// accepted (without its length prefix).
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
