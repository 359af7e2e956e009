//! Seed 004's horde: one tick at 300 / 10,000 / 100,000 enemies, and a
//! 300-tick catch-up of the 300-enemy horde (one resume at maxCatchUpSteps).
//!
//! Each world is first stepped for `HordeConfig::settle_ticks` ticks, so the
//! horde has closed in on the player and the timed ticks are the steady
//! state (the expensive one), not the approach. The player walks the demo
//! square. Targets (issue 4, medians, one thread): 300 < 25 µs, 10k < 1.5 ms,
//! 100k < 20 ms, catch-up < 16 ms.
//!
//! ```text
//! cargo bench -p tickwise-sims --bench horde -- --warm-up-time 1 --measurement-time 3
//! ```
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tickwise::Sim;
use tickwise_sims::horde::{HordeConfig, HordeWorld, demo_input};

/// A world of `n` enemies stepped to its steady state, and its next tick.
fn settled(n: u64) -> (HordeWorld, u64) {
    let cfg = HordeConfig::from_json(include_bytes!("../../../config/horde.json"))
        .unwrap()
        .with_enemies(n)
        .unwrap();
    let mut w = HordeWorld::new(&cfg);
    let ticks = cfg.settle_ticks();
    for t in 0..ticks {
        w.step(&demo_input(t));
    }
    (w, ticks)
}

fn horde(c: &mut Criterion) {
    let mut g = c.benchmark_group("horde_tick");
    for n in [300u64, 10_000, 100_000] {
        let (mut w, mut t) = settled(n);
        g.throughput(Throughput::Elements(n));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                w.step(&demo_input(t));
                t += 1;
            });
        });
    }
    g.finish();

    let mut g = c.benchmark_group("horde_catch_up");
    let (mut w, mut t) = settled(300);
    g.throughput(Throughput::Elements(300));
    g.bench_function("300_ticks_of_300", |b| {
        b.iter(|| {
            for _ in 0..300 {
                w.step(&demo_input(t));
                t += 1;
            }
        });
    });
    g.finish();
}

criterion_group!(benches, horde);
criterion_main!(benches);
