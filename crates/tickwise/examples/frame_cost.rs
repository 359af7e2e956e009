//! An instruction-count probe for the loop's per-frame cost (issue 12, goal 5):
//! the `game_loop` bench's trivial sim and frames, without criterion, so that
//! `valgrind --tool=callgrind` can count exactly what one frame costs on a
//! machine too busy for wall-clock figures to mean much.
//!
//! ```text
//! cargo build --release -p tickwise --example frame_cost
//! valgrind --tool=callgrind --toggle-collect='frame_cost::run*' \
//!     target/release/examples/frame_cost MODE N
//! ```
//!
//! `MODE` is one of `frame` (N frames of one step each), `catch_up` (N frames
//! of 300 steps each), `steps` (N bare sim steps), `steps300` (N batches of
//! 300 bare steps), or `game_loop` / `game_loop300` (the `game-loop` crate's
//! accumulator on the same frames, as in the bench). Instructions per frame
//! minus instructions per bare step (or batch) is what the loop adds. The
//! final state is printed so that no run can be optimised away.
#![allow(
    clippy::disallowed_types,
    clippy::float_arithmetic,
    reason = "game-loop's interface is in f64 seconds; the kernel under test stays integer"
)]

use std::cell::Cell;
use std::hint::black_box;
use std::num::NonZeroU32;

use game_loop::{GameLoop, TimeTrait};
use tickwise::{
    CatchUpPolicy, ClockConfig, FixedLoop, FnInputs, Nanos, Sim, StateVisitor, StepLength, Tick,
};

/// The trivial sim of the `game_loop` bench: a counter and a running sum.
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

/// 1/64 s, as in the bench.
const STEP_NS: u64 = 15_625_000;

fn tick_input(t: Tick) -> u64 {
    t.get() & 3
}

#[inline(never)]
fn run_frames(n: u64, steps_per_frame: u64) -> (u64, u64) {
    let config = ClockConfig::new(StepLength::from_nanos_ratio(STEP_NS, 1).unwrap())
        .with_max_steps_per_frame(NonZeroU32::new(1000).unwrap());
    let mut lp = FixedLoop::new(
        Counter::default(),
        FnInputs(tick_input as fn(Tick) -> u64),
        config,
        CatchUpPolicy::Full,
    );
    for _ in 0..n {
        let _ = lp.frame(black_box(Nanos::from_nanos(STEP_NS * steps_per_frame)));
    }
    (lp.sim().ticks, lp.sim().sum)
}

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

#[inline(never)]
fn run_game_loop(n: u64, steps_per_frame: u64) -> (u64, u64) {
    let mut g: GameLoop<Counter, FakeTime, ()> = GameLoop::new(Counter::default(), 64, 10.0, ());
    for _ in 0..n {
        let ns = black_box(STEP_NS * steps_per_frame);
        NOW_NS.with(|c| c.set(c.get() + ns));
        g.next_frame(
            |g| {
                let t = g.number_of_updates();
                g.game.update(t & 3);
            },
            |_| {},
        );
    }
    (g.game.ticks, g.game.sum)
}

#[inline(never)]
fn run_steps(n: u64, batch: u64) -> (u64, u64) {
    let mut sim = Counter::default();
    let mut t = 0u64;
    for _ in 0..n {
        for _ in 0..black_box(batch) {
            sim.step(&(t & 3));
            t += 1;
        }
        black_box(sim.sum);
    }
    (sim.ticks, sim.sum)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "frame".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let out = match mode.as_str() {
        "frame" => run_frames(n, 1),
        "catch_up" => run_frames(n, 300),
        "steps" => run_steps(n, 1),
        "steps300" => run_steps(n, 300),
        "game_loop" => run_game_loop(n, 1),
        "game_loop300" => run_game_loop(n, 300),
        other => {
            eprintln!("unknown mode {other}: frame, catch_up, steps or steps300");
            std::process::exit(2);
        }
    };
    println!("{mode} x{n}: ticks {} sum {}", out.0, out.1);
}
