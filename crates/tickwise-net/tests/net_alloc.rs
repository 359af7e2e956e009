//! After warm-up a rollback session allocates nothing per tick: snapshots
//! are `clone_from` into ring slots filled once, inputs and checksums live
//! in preallocated rings, datagrams are encoded into fixed buffers. Every
//! heap call goes through a counting allocator.
//!
//! The count is this thread's alone (`allocation-counter`), and the code
//! under test runs on it: a count of the whole process also took in
//! libtest's own first heap calls on a loaded machine (docs/testing.md).

#[path = "suite/common.rs"]
mod common;

use std::hint::black_box;

use allocation_counter::measure;
use common::KEY;
use tickwise::{Nanos, Pcg32, Timestamp};
use tickwise_net::{NetworkConfig, Session, SessionConfig, SimNetwork};

#[test]
fn steady_state_rollback_ticks_do_not_allocate() {
    // The counter counts.
    let one = measure(|| drop(black_box(Vec::<u64>::with_capacity(16))));
    assert_eq!((one.count_total, one.count_current), (1, 0));

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
    let stats = measure(|| run(400, 1_000, &mut sessions, &mut net));
    // No allocation (a reallocation counts as one) and no free.
    assert_eq!(
        (stats.count_total, stats.count_current, stats.bytes_total),
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
