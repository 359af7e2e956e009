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
//!
//! The sim, the fake clock and both loops are in `support/counter_loop.rs`,
//! shared with the `frame_cost` example.

#[path = "support/counter_loop.rs"]
mod counter_loop;

use std::hint::black_box;

use counter_loop::{Counter, STEP_NS, fixed_loop, game_loop, game_loop_frame};
use criterion::{Criterion, criterion_group, criterion_main};
use tickwise::{Nanos, Sim};

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
                    sim.step(&[t & 3]);
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
