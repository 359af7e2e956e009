//! Island steps per second, a frame of the loop that owes no step, and the
//! cost of live recording (a one-step frame with recording off and on, and
//! the replay's bytes per tick, printed once).
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tickwise::{CatchUpPolicy, FixedLoop, Nanos, ReplayHeader, Sim, TickInputs};
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
                local.step(core::slice::from_ref(i));
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
    let header = ReplayHeader {
        sim_id: "island".into(),
        sim_version: 1,
        config: include_bytes!("../../../config/island_loop.json").to_vec(),
        seed: 20_261_012,
        ticks: 0,
        checkpoint_every: 60,
        input_kind: 0,
        players: 1,
    };
    let long_inputs = scripted_inputs(10_000_000);
    g.bench_function("frame_one_step_recording", |b| {
        let mut lp = FixedLoop::new(
            IslandWorld::new(&cfg),
            TickInputs::new(long_inputs.clone()),
            cfg.clock_config(),
            CatchUpPolicy::Full,
        );
        lp.start_recording(header.clone()).unwrap();
        b.iter(|| lp.frame(black_box(Nanos::from_millis(16))).steps);
    });
    g.finish();
    // Replay size of a live session: 100 000 ticks of the island rules'
    // irregular frames (3/7/13/29/48 ms) with their scripted input
    // (`tick % 40 < 20 ? 1 : -1`), one 100 s frame
    // (a step-cap drop, one host event) in the middle.
    let mut lp = FixedLoop::new(
        IslandWorld::new(&cfg),
        TickInputs::new(long_inputs),
        cfg.clock_config(),
        CatchUpPolicy::Full,
    );
    lp.start_recording(header).unwrap();
    let frames = [3u64, 7, 13, 29, 48];
    let mut i = 0;
    while lp.tick().get() < 100_000 {
        if i == 10_000 {
            let _ = lp.frame(Nanos::from_millis(100_000));
        }
        let _ = lp.frame(Nanos::from_millis(frames[i % frames.len()]));
        i += 1;
    }
    let replay = lp.replay().unwrap();
    let bytes = replay.to_bytes().len();
    // Integers only in this crate: bytes per 1000 ticks, printed as x.yyy.
    let milli = bytes as u64 * 1000 / replay.ticks().max(1);
    println!(
        "live replay: {} ticks, {} host events, {bytes} bytes, {}.{:03} bytes/tick",
        replay.ticks(),
        replay.host_events().len(),
        milli / 1000,
        milli % 1000
    );
}

criterion_group!(benches, island);
criterion_main!(benches);
