//! The trivial sim and the two loops of the `game_loop` bench, shared with the
//! `frame_cost` example (both include this file with `#[path]`): a counter,
//! `FixedLoop` on it, and the `game-loop` crate's accumulator on it, fed the
//! same frames through a fake clock (the step, 1/64 s, is exact in
//! nanoseconds and in binary floating point: see the bench's docs).
#![allow(
    clippy::disallowed_types,
    clippy::float_arithmetic,
    reason = "game-loop's interface is in f64 seconds; the kernel under test stays integer"
)]

use std::cell::Cell;
use std::num::NonZeroU32;

use game_loop::{GameLoop, TimeTrait};
use tickwise::{
    CatchUpPolicy, ClockConfig, FixedLoop, FnInputs, Sim, StateVisitor, StepLength, Tick,
};

/// The trivial sim: a counter and a running sum of its inputs.
#[derive(Clone, Default)]
pub(crate) struct Counter {
    pub(crate) ticks: u64,
    pub(crate) sum: u64,
}

impl Counter {
    #[inline]
    fn update(&mut self, input: u64) {
        self.ticks = self.ticks.wrapping_add(1);
        self.sum = self.sum.wrapping_add(input ^ self.ticks);
    }
}

impl Sim for Counter {
    type Input = u64;
    #[inline]
    fn step(&mut self, inputs: &[u64]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        self.update(*input);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("ticks");
        v.value(self.ticks);
        v.field("sum");
        v.value(self.sum);
    }
}

/// 1/64 s.
pub(crate) const STEP_NS: u64 = 15_625_000;

thread_local! {
    /// The fake clock game-loop reads, in nanoseconds.
    static NOW_NS: Cell<u64> = const { Cell::new(0) };
}

#[derive(Clone, Copy)]
pub(crate) struct FakeTime(u64);

impl TimeTrait for FakeTime {
    fn now() -> Self {
        FakeTime(NOW_NS.with(Cell::get))
    }
    fn sub(&self, other: &Self) -> f64 {
        // Whole multiples of 1/64 s: exact in f64.
        (self.0 - other.0) as f64 / 1e9
    }
    fn supports_sleep() -> bool {
        false
    }
    fn sleep(_seconds: f64) {}
}

fn tick_input(t: Tick) -> u64 {
    t.get() & 3
}

/// The `FixedLoop` under test: the counter fed by a plain function of the tick.
pub(crate) type CounterLoop = FixedLoop<Counter, FnInputs<fn(Tick) -> u64>>;

pub(crate) fn fixed_loop() -> CounterLoop {
    let config = ClockConfig::new(StepLength::from_nanos_ratio(STEP_NS, 1).unwrap())
        .with_max_steps_per_frame(NonZeroU32::new(1000).unwrap());
    FixedLoop::new(
        Counter::default(),
        FnInputs(tick_input as fn(Tick) -> u64),
        config,
        CatchUpPolicy::Full,
    )
}

pub(crate) fn game_loop() -> GameLoop<Counter, FakeTime, ()> {
    // 64 updates a second; frames up to 10 s are not clamped.
    GameLoop::new(Counter::default(), 64, 10.0, ())
}

/// One `game-loop` frame of `ns` nanoseconds.
pub(crate) fn game_loop_frame(g: &mut GameLoop<Counter, FakeTime, ()>, ns: u64) -> u64 {
    NOW_NS.with(|c| c.set(c.get() + ns));
    g.next_frame(
        |g| {
            let t = g.number_of_updates();
            g.game.update(t & 3);
        },
        |_| {},
    );
    g.number_of_updates()
}
