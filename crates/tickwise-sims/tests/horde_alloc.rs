//! The horde's steady state allocates nothing: every heap call of the test
//! process goes through a counting allocator, and a long run of ticks (with
//! waves, deaths, respawns, snapshots and checksums) must not make one.
//!
//! One test in this binary, so no other test thread allocates meanwhile.
//!
//! With the `parallel` feature the tick splits its work only inside a rayon
//! pool of more than one thread; this test steps outside any pool, so it
//! checks the single-thread path (the same pieces of work, run in order).
//! Inside a warm pool, `rayon::join` keeps its jobs on the stack, but the
//! pool's own bookkeeping is rayon's, so it is not what this test counts.

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tickwise::{Capture, Sim};
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn steady_state_ticks_do_not_allocate() {
    // The counter counts: one Vec is one allocation.
    let region = Region::new(GLOBAL);
    let v: Vec<u64> = Vec::with_capacity(16);
    assert_eq!(region.change().allocations, 1);
    drop(v);

    let cfg = HordeConfig::from_json(include_bytes!("../../../config/horde.json")).unwrap();
    // One hero, then four (co-op: each player its own input, per-hero
    // strikes, downs and get-ups).
    for (n, players) in [(300, 1), (10_000, 1), (10_000, 4)] {
        let cfg = cfg.with_enemies(n).unwrap().with_players(players).unwrap();
        let inputs = |t: u64| -> [tickwise::TickInput; 4] {
            core::array::from_fn(|p| scripted_input(t + 60 * p as u64))
        };
        let mut world = HordeWorld::new(&cfg);
        let mut snap = world.capture();
        // Warm-up: one wave and a first round of kills.
        for t in 0..200 {
            world.step_players(&inputs(t));
        }
        let kills = world.kills();
        let mut sum = 0u64;
        let region = Region::new(GLOBAL);
        for t in 200..800 {
            world.step_players(&inputs(t));
            world.capture_into(&mut snap);
            if t % 100 == 0 {
                sum ^= world.checksum();
            }
        }
        let stats = region.change();
        assert_eq!(
            (stats.allocations, stats.reallocations, stats.deallocations),
            (0, 0, 0),
            "{n} enemies, {players} heroes: {stats:?}"
        );
        // The run did what steady state means: waves came, enemies died.
        assert!(world.waves() >= 4 && world.kills() > kills, "{n}: {sum}");
    }
}
