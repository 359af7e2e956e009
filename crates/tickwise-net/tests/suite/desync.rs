//! Injected non-determinism is caught at the first checked confirmed tick,
//! with the fields named, and the bundle holds two readable replays.

use crate::common;

use common::{KEY, island, island_input};
use tickwise::{Nanos, Replay, ReplayLimits};
use tickwise_net::{NetworkConfig, RunOptions, run_local};

fn run(inject: u64, check_every: u64) -> tickwise_net::LocalRun {
    let (sim, header, _) = island(2);
    let mut opts = RunOptions::new(2, 1_500, KEY);
    opts.input_delay = 0;
    opts.check_every = check_every;
    opts.inject_desync_at = Some(inject);
    let net = NetworkConfig {
        latency: Nanos::from_millis(150),
        loss_ppm: 100_000,
        dup_ppm: 50_000,
        reorder_ppm: 50_000,
        seed: 3,
        ..NetworkConfig::PERFECT
    };
    run_local(
        &sim,
        &header,
        common::inputs(opts.players, 1, island_input),
        &opts,
        net,
        0,
        Nanos::from_nanos(16_666_667),
        &mut || 0,
    )
    .unwrap()
}

#[test]
fn injected_desync_is_caught_at_its_tick_with_fields() {
    let r = run(700, 1);
    let f = r.desync.expect("the injected fault must be reported");
    assert_eq!(f.tick, 700);
    // The faulty step ran twice: the island's tick counter is one ahead.
    assert!(f.fields.contains(&"tick"), "{:?} {:?}", f.fields, r.peers);
    let (snap_tick, _) = f
        .snapshot
        .expect("a confirmed snapshot before the desync is kept");
    assert!(
        (700 - 4 * 64..700).contains(&snap_tick),
        "{snap_tick} {f:?}"
    );
    // Both peers saw it, and both learned the field names over the wire.
    for p in &r.peers {
        let d = p.desync.as_ref().expect("both sides detect it");
        assert_eq!(d.tick, 700);
        assert!(
            d.fields.as_ref().is_some_and(|fs| fs.contains(&"tick")),
            "{d:?}"
        );
    }
    let names: Vec<&str> = r.bundle.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["peer0.twr", "peer1.twr", "report.txt"]);
    let (sim, _, _) = island(2);
    let honest = Replay::<i32>::from_bytes(&r.bundle[0].bytes, &ReplayLimits::DEFAULT).unwrap();
    let faulty = Replay::<i32>::from_bytes(&r.bundle[1].bytes, &ReplayLimits::DEFAULT).unwrap();
    // Confirmed inputs are the same on both sides.
    assert!((0..2).all(|p| honest.inputs(p).eq(faulty.inputs(p))));
    assert!(tickwise::verify(sim.clone(), &honest).is_match());
    assert!(!tickwise::verify(sim, &faulty).is_match());
    let text = String::from_utf8(r.bundle[2].bytes.clone()).unwrap();
    assert!(
        text.contains("first divergent checked confirmed tick: 700"),
        "{text}"
    );
}

#[test]
fn sparse_checks_catch_it_at_the_next_checked_tick() {
    let r = run(701, 10);
    let f = r.desync.expect("reported");
    assert_eq!(f.tick, 710);
    assert!(f.fields.contains(&"tick"));
}

#[test]
fn no_injection_no_desync() {
    let (sim, header, _) = island(2);
    let mut opts = RunOptions::new(2, 1_500, KEY);
    opts.input_delay = 0;
    let r = run_local(
        &sim,
        &header,
        common::inputs(opts.players, 1, island_input),
        &opts,
        NetworkConfig::PERFECT,
        0,
        Nanos::from_nanos(16_666_667),
        &mut || 0,
    )
    .unwrap();
    assert!(r.desync.is_none() && r.bundle.is_empty());
}
