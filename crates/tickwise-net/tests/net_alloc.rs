//! After warm-up a rollback session allocates nothing per tick: snapshots
//! are `clone_from` into ring slots filled once, inputs and checksums live
//! in preallocated rings, datagrams are encoded into fixed buffers. Every
//! heap call of this test process goes through a counting allocator.
//!
//! One test in this binary, so no other test thread allocates meanwhile.

#[path = "suite/common.rs"]
mod common;

use std::alloc::System;

use common::KEY;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tickwise::{Nanos, Pcg32, Timestamp};
use tickwise_net::{NetworkConfig, Session, SessionConfig, SimNetwork};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn steady_state_rollback_ticks_do_not_allocate() {
    // The counter counts.
    let region = Region::new(GLOBAL);
    let v: Vec<u64> = Vec::with_capacity(16);
    assert_eq!(region.change().allocations, 1);
    drop(v);

    let (world, _) = common::horde(300, 2);
    // 60 ms each way and no input delay: every remote input arrives after
    // its tick ran on a prediction, so rollbacks happen all the time.
    let mut net = SimNetwork::new(NetworkConfig {
        latency: Nanos::from_millis(60),
        jitter: Nanos::from_millis(5),
        seed: 3,
        ..NetworkConfig::PERFECT
    });
    let mut sessions: Vec<_> = (0..2)
        .map(|p| {
            let mut cfg = SessionConfig::new(2, p, KEY);
            cfg.input_delay = 0;
            Session::new(world.clone(), cfg).unwrap()
        })
        .collect();
    let mut rngs = [Pcg32::new(1, 0), Pcg32::new(1, 1)];
    let mut run = |from: u64, to: u64, sessions: &mut Vec<Session<_>>, net: &mut SimNetwork| {
        for round in from..to {
            net.advance_to(Timestamp::from_nanos(round * 16_666_667));
            for (i, s) in sessions.iter_mut().enumerate() {
                let input = common::horde_input(&mut rngs[i]);
                let _ = s.tick(&input, &mut net.port(u8::try_from(i).unwrap()));
            }
        }
    };
    run(1, 400, &mut sessions, &mut net);
    let before: Vec<_> = sessions.iter().map(|s| *s.stats()).collect();
    let region = Region::new(GLOBAL);
    run(400, 1_000, &mut sessions, &mut net);
    let stats = region.change();
    assert_eq!(
        (stats.allocations, stats.reallocations, stats.deallocations),
        (0, 0, 0),
        "{stats:?}"
    );
    // The measured stretch did roll back, re-simulate and compare checksums.
    for (s, b) in sessions.iter().zip(&before) {
        let now = s.stats();
        assert!(now.rollbacks > b.rollbacks + 100, "{now:?}");
        assert!(now.checks_compared > b.checks_compared + 400, "{now:?}");
        assert_eq!(now.desyncs, 0);
    }
}
