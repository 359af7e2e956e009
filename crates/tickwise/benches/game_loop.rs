//! `FixedLoop` beside the `game-loop` crate's accumulator, in one run: the
//! same trivial sim, the same frames.
//!
//! The step is 1/64 s (15.625 ms, exact in nanoseconds and in binary
//! floating point, so both loops owe exactly one step for a 15.625 ms frame
//! and exactly 300 for a 4.6875 s one, with no rounding on either side).
//! `game-loop` reads its clock through `TimeTrait::now`; a fake clock that
//! the bench moves by the frame's duration feeds it the same frames
//! `FixedLoop::frame` gets. Each group also times the bare steps, so what a
//! loop adds is the difference:
//!
//! * `*_frame_one_step` minus `sim_step_x1`: a frame's loop overhead;
//! * `*_catch_up_300` minus `sim_step_x300`: a 300-step catch-up's overhead.
#![allow(
    clippy::disallowed_types,
    clippy::float_arithmetic,
    reason = "game-loop's interface is in f64 seconds; the kernel under test stays integer"
)]

use std::cell::Cell;
use std::hint::black_box;
use std::num::NonZeroU32;

use criterion::{Criterion, criterion_group, criterion_main};
use game_loop::{GameLoop, TimeTrait};
use tickwise::{
    CatchUpPolicy, ClockConfig, FixedLoop, FnInputs, Nanos, Sim, StateVisitor, StepLength, Tick,
};

/// The trivial sim: a counter and a running sum of its inputs.
#[derive(Clone, Default)]
struct Counter {
    ticks: u64,
    sum: u64,
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
    fn step(&mut self, input: &u64) {
        self.update(*input);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("ticks");
        v.value(self.ticks);
        v.field("sum");
        v.value(self.sum);
    }
}

const STEP_NS: u64 = 15_625_000;

thread_local! {
    /// The fake clock game-loop reads, in nanoseconds.
    static NOW_NS: Cell<u64> = const { Cell::new(0) };
}

#[derive(Clone, Copy)]
struct FakeTime(u64);

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
type CounterLoop = FixedLoop<Counter, FnInputs<fn(Tick) -> u64>>;

fn fixed_loop() -> CounterLoop {
    let config = ClockConfig::new(StepLength::from_nanos_ratio(STEP_NS, 1).unwrap())
        .with_max_steps_per_frame(NonZeroU32::new(1000).unwrap());
    FixedLoop::new(
        Counter::default(),
        FnInputs(tick_input as fn(Tick) -> u64),
        config,
        CatchUpPolicy::Full,
    )
}

fn game_loop() -> GameLoop<Counter, FakeTime, ()> {
    // 64 updates a second; frames up to 10 s are not clamped.
    GameLoop::new(Counter::default(), 64, 10.0, ())
}

/// One `game-loop` frame of `ns` nanoseconds.
fn game_loop_frame(g: &mut GameLoop<Counter, FakeTime, ()>, ns: u64) -> u64 {
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

fn loops(c: &mut Criterion) {
    let mut g = c.benchmark_group("loop_vs_game_loop");
    for (name, steps) in [("one_step", 1u64), ("catch_up_300", 300)] {
        let ns = STEP_NS * steps;
        g.bench_function(format!("tickwise_frame_{name}"), |b| {
            let mut lp = fixed_loop();
            b.iter(|| lp.frame(black_box(Nanos::from_nanos(ns))).steps);
        });
        g.bench_function(format!("game_loop_frame_{name}"), |b| {
            let mut gl = game_loop();
            b.iter(|| game_loop_frame(&mut gl, black_box(ns)));
        });
        g.bench_function(format!("sim_step_x{steps}"), |b| {
            let mut sim = Counter::default();
            let mut t = 0u64;
            b.iter(|| {
                for _ in 0..black_box(steps) {
                    sim.step(&(t & 3));
                    t += 1;
                }
                sim.sum
            });
        });
    }
    g.finish();
    // Both loops ran the same ticks with the same inputs: same state.
    let mut lp = fixed_loop();
    let mut gl = game_loop();
    for steps in [1u64, 300, 1, 1, 300] {
        let _ = lp.frame(Nanos::from_nanos(STEP_NS * steps));
        game_loop_frame(&mut gl, STEP_NS * steps);
    }
    assert_eq!(
        (lp.sim().ticks, lp.sim().sum),
        (gl.game.ticks, gl.game.sum),
        "the two loops disagree"
    );
}

criterion_group!(benches, loops);
criterion_main!(benches);
