//! Inputs belong to ticks, never to frames.
//!
//! A frame that runs two steps must feed each step the input of *its* tick; a
//! frame that runs none consumes nothing. The loop asks an [`InputSource`] for
//! the input of each tick it steps, with the host time at which that tick's
//! window ends, so event-driven sources can assign timestamped events to ticks.

use alloc::vec::Vec;

use crate::time::{Tick, Timestamp};

/// Supplies the input of each tick, in tick order.
pub trait InputSource<T> {
    /// The input for `tick`, whose window on the host clock ends at
    /// `window_end` (exclusive). Called exactly once per tick, in order.
    fn input(&mut self, tick: Tick, window_end: Timestamp) -> T;
}

/// Simple mode: `inputs[tick]`, and the default input for ticks past the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TickInputs<T> {
    inputs: Vec<T>,
}

impl<T> TickInputs<T> {
    /// Inputs indexed by tick.
    #[must_use]
    pub const fn new(inputs: Vec<T>) -> TickInputs<T> {
        TickInputs { inputs }
    }

    /// The inputs.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        &self.inputs
    }
}

impl<T: Clone + Default> TickInputs<T> {
    /// The input of `tick` (default past the end).
    #[must_use]
    pub fn get(&self, tick: Tick) -> T {
        usize::try_from(tick.get())
            .ok()
            .and_then(|i| self.inputs.get(i))
            .cloned()
            .unwrap_or_default()
    }
}

impl<T: Clone + Default> InputSource<T> for TickInputs<T> {
    fn input(&mut self, tick: Tick, _window_end: Timestamp) -> T {
        self.get(tick)
    }
}

/// A function of the tick, for generated inputs.
#[derive(Clone, Copy, Debug)]
pub struct FnInputs<F>(pub F);

impl<T, F: FnMut(Tick) -> T> InputSource<T> for FnInputs<F> {
    fn input(&mut self, tick: Tick, _window_end: Timestamp) -> T {
        (self.0)(tick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn missing_ticks_read_default() {
        let mut t = TickInputs::new(vec![1, -1]);
        assert_eq!(t.input(Tick(0), Timestamp::ZERO), 1);
        assert_eq!(t.input(Tick(1), Timestamp::ZERO), -1);
        assert_eq!(t.input(Tick(2), Timestamp::ZERO), 0);
        assert_eq!(t.input(Tick(u64::MAX), Timestamp::ZERO), 0);
    }
}
