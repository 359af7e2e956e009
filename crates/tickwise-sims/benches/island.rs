//! Island steps per second, and a frame of the loop that owes no step.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tickwise::{CatchUpPolicy, FixedLoop, Nanos, Sim, TickInputs};
use tickwise_sims::island::{IslandConfig, IslandWorld, scripted_inputs};

fn island(c: &mut Criterion) {
    let cfg = IslandConfig::from_json(include_bytes!("../../../config/island_loop.json")).unwrap();
    let inputs = scripted_inputs(1_000);
    let mut g = c.benchmark_group("island");
    g.throughput(Throughput::Elements(inputs.len() as u64));
    g.bench_function("step_x1000", |b| {
        let mut w = IslandWorld::new(&cfg);
        // The inputs are opaque once per batch, not per step, and the world is
        // a local: a barrier per step (or a possible alias between the input
        // slice and the world) would force every field through memory each
        // tick, which measures the harness rather than the step.
        b.iter(|| {
            let mut local = w.clone();
            for i in black_box(inputs.as_slice()) {
                local.step(i);
            }
            w = black_box(local);
        });
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("idle_frame", |b| {
        let mut lp = FixedLoop::new(
            IslandWorld::new(&cfg),
            TickInputs::new(Vec::new()),
            cfg.clock_config(),
            CatchUpPolicy::Full,
        );
        b.iter(|| lp.frame(black_box(Nanos::ZERO)).steps);
    });
    g.bench_function("frame_one_step", |b| {
        let mut lp = FixedLoop::new(
            IslandWorld::new(&cfg),
            TickInputs::new(inputs.clone()),
            cfg.clock_config(),
            CatchUpPolicy::Full,
        );
        b.iter(|| lp.frame(black_box(Nanos::from_millis(16))).steps);
    });
    g.finish();
}

criterion_group!(benches, island);
criterion_main!(benches);
