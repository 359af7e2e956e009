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
//!
//! The sim and both loops are the bench's own: `benches/support/counter_loop.rs`.

#[path = "../benches/support/counter_loop.rs"]
mod counter_loop;

use std::hint::black_box;

use counter_loop::{Counter, STEP_NS, fixed_loop, game_loop, game_loop_frame};
use tickwise::{Nanos, Sim};

#[inline(never)]
fn run_frames(n: u64, steps_per_frame: u64) -> (u64, u64) {
    let mut lp = fixed_loop();
    for _ in 0..n {
        let _ = lp.frame(black_box(Nanos::from_nanos(STEP_NS * steps_per_frame)));
    }
    (lp.sim().ticks, lp.sim().sum)
}

#[inline(never)]
fn run_game_loop(n: u64, steps_per_frame: u64) -> (u64, u64) {
    let mut g = game_loop();
    for _ in 0..n {
        game_loop_frame(&mut g, black_box(STEP_NS * steps_per_frame));
    }
    (g.game.ticks, g.game.sum)
}

#[inline(never)]
fn run_steps(n: u64, batch: u64) -> (u64, u64) {
    let mut sim = Counter::default();
    let mut t = 0u64;
    for _ in 0..n {
        for _ in 0..black_box(batch) {
            sim.step(core::slice::from_ref(&(t & 3)));
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
