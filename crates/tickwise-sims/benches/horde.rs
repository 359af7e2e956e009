//! The horde (the tick-rate budget article's workload, see
//! `docs/background.md`): one tick at 300 / 10,000 / 100,000 enemies, and a
//! 300-tick catch-up of the 300-enemy horde (one resume at maxCatchUpSteps).
//!
//! Each world is first stepped for `HordeConfig::settle_ticks` ticks, so the
//! horde has closed in on the player and the timed ticks are the steady state
//! (the expensive one), not the approach. The player walks the demo square.
//! Every sample times ticks of the same fixed window (the 300 ticks after
//! settling: two waves, twenty attacks), restarting from a copy of the settled
//! world at the window's end; the copy is not timed. Stepping one world
//! forever instead would time a different stretch of the game in every
//! sample. Targets (issue 4, medians, one thread): 300 < 25 µs, 10k < 1.5 ms,
//! 100k < 20 ms, catch-up < 16 ms.
//!
//! ```text
//! cargo bench -p tickwise-sims --bench horde -- --warm-up-time 1 --measurement-time 3
//! ```
#![allow(
    clippy::disallowed_methods,
    reason = "the bench times the sim from outside; the sim never sees a clock"
)]

use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tickwise::Sim;
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};

/// Ticks in the timed window.
const WINDOW: u64 = 300;

/// A world of `n` enemies stepped to its steady state, and its next tick.
fn settled(n: u64) -> (HordeWorld, u64) {
    let cfg = HordeConfig::from_json(include_bytes!("../../../config/horde.json"))
        .unwrap()
        .with_enemies(n)
        .unwrap();
    let mut w = HordeWorld::new(&cfg);
    let ticks = cfg.settle_ticks();
    for t in 0..ticks {
        w.step(&[scripted_input(t)]);
    }
    (w, ticks)
}

fn horde(c: &mut Criterion) {
    let mut g = c.benchmark_group("horde_tick");
    for n in [300u64, 10_000, 100_000] {
        let (start, first) = settled(n);
        let (mut w, mut t) = (start.clone(), first);
        g.throughput(Throughput::Elements(n));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    if t == first + WINDOW {
                        w.clone_from(&start);
                        t = first;
                    }
                    let input = scripted_input(t);
                    let began = Instant::now();
                    w.step(core::slice::from_ref(&input));
                    timed += began.elapsed();
                    t += 1;
                }
                timed
            });
        });
    }
    g.finish();

    let mut g = c.benchmark_group("horde_catch_up");
    let (start, first) = settled(300);
    g.throughput(Throughput::Elements(WINDOW));
    g.bench_function("300_ticks_of_300", |b| {
        b.iter_batched_ref(
            || start.clone(),
            |w| {
                for t in first..first + WINDOW {
                    w.step(&[scripted_input(t)]);
                }
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

criterion_group!(benches, horde);
criterion_main!(benches);
