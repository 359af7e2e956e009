//! Walking every player's input stream in step, one stretch of unchanged
//! inputs at a time, in constant memory: how re-simulation and lockstep
//! comparison read a multi-player replay's inputs.

use alloc::vec::Vec;

use crate::replay::blocks::RunDecoder;
use crate::replay::codec::ReplayInput;

/// Walks every player's input runs in step: each call to
/// [`TickInputsCursor::next_stretch`] gives the inputs of all players (slot
/// order) and how many ticks in a row they hold, until the next change of
/// any player's input. Built by [`Replay::tick_inputs`](super::Replay::tick_inputs).
#[derive(Debug)]
pub struct TickInputsCursor<'a, I> {
    decoders: Vec<RunDecoder<'a, I>>,
    left: Vec<u64>,
    current: Vec<I>,
}

impl<'a, I: ReplayInput> TickInputsCursor<'a, I> {
    /// The cursor over these decoders, one per player in slot order.
    pub(super) fn new(decoders: Vec<RunDecoder<'a, I>>) -> TickInputsCursor<'a, I> {
        let n = decoders.len();
        TickInputsCursor {
            decoders,
            left: alloc::vec![0; n],
            current: alloc::vec![I::default(); n],
        }
    }

    /// The inputs of the next stretch of ticks and its length, or `None`
    /// after the last tick. The stretch is never empty; every player's
    /// stream covers the same ticks (the reader checked it).
    pub fn next_stretch(&mut self) -> Option<(&[I], u64)> {
        let len = self.advance(u64::MAX)?;
        Some((&self.current, len))
    }

    /// The next single tick's inputs, written into `out` (one entry per
    /// player, slot order), or `false` after the last tick (then `out` is
    /// left as it was). For callers that step tick by tick, such as a
    /// lockstep comparison.
    pub fn next_tick(&mut self, out: &mut [I]) -> bool {
        if self.advance(1).is_none() {
            return false;
        }
        for (o, c) in out.iter_mut().zip(&self.current) {
            o.clone_from(c);
        }
        true
    }

    /// Moves on by up to `max` ticks in which no player's input changes;
    /// returns how many (never 0), or `None` after the last tick.
    fn advance(&mut self, max: u64) -> Option<u64> {
        // One player (most replays): no loop over the streams, so a replay
        // of short runs costs what the single-stream reader cost.
        if let ([decoder], [left], [current]) = (
            self.decoders.as_mut_slice(),
            self.left.as_mut_slice(),
            self.current.as_mut_slice(),
        ) {
            if *left == 0 {
                let run = decoder.next()?;
                *current = run.input;
                *left = run.len;
            }
            let len = (*left).min(max);
            *left -= len;
            return (len > 0).then_some(len);
        }
        let mut len = max;
        for p in 0..self.decoders.len() {
            if self.left[p] == 0 {
                let run = self.decoders[p].next()?;
                self.current[p] = run.input;
                self.left[p] = run.len;
            }
            len = len.min(self.left[p]);
        }
        if self.decoders.is_empty() || len == 0 {
            return None;
        }
        for left in &mut self.left {
            *left -= len;
        }
        Some(len)
    }
}
