//! The horde's steady state allocates nothing: every heap call goes through
//! a counting allocator, and a long run of ticks (with waves, deaths,
//! respawns, snapshots and checksums) must not make one.
//!
//! The count is this thread's alone (`allocation-counter`). Counting the
//! whole process, as this test did through `stats_alloc`, also counted
//! libtest's main thread, which makes its first heap calls when it first
//! waits for a test to finish: on a loaded machine those came inside the
//! counted stretch (4 calls, 900 bytes, in 17 of 30 runs of
//! `horde_alloc` with the other core busy).
//!
//! With the `parallel` feature the tick splits its work only inside a rayon
//! pool of more than one thread; this test steps outside any pool, so it
//! checks the single-thread path (the same pieces of work, run in order),
//! all of it on this thread, which is the thread counted.
//! Inside a warm pool, `rayon::join` keeps its jobs on the stack, but the
//! pool's own bookkeeping is rayon's, so it is not what this test counts.

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::thread;

use allocation_counter::measure;
use tickwise::{Capture, Sim};
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};

#[test]
fn steady_state_ticks_do_not_allocate() {
    // The counter counts: one Vec is one allocation.
    let one = measure(|| drop(black_box(Vec::<u64>::with_capacity(16))));
    assert_eq!((one.count_total, one.count_current), (1, 0));
    // And it counts this thread only: another thread allocating meanwhile
    // (as libtest's main thread may) adds nothing. A barrier waits without
    // a heap call.
    let (go, done) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let other = {
        let (go, done) = (Arc::clone(&go), Arc::clone(&done));
        thread::spawn(move || {
            go.wait();
            drop(black_box(Vec::<u64>::with_capacity(16)));
            done.wait();
        })
    };
    let none = measure(|| {
        go.wait();
        done.wait();
    });
    other.join().unwrap();
    assert_eq!(none.count_total, 0, "{none:?}");

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
        let stats = measure(|| {
            for t in 200..800 {
                world.step_players(&inputs(t));
                world.capture_into(&mut snap);
                if t % 100 == 0 {
                    sum ^= world.checksum();
                }
            }
        });
        // No allocation (a reallocation counts as one) and no free.
        assert_eq!(
            (stats.count_total, stats.count_current, stats.bytes_total),
            (0, 0, 0),
            "{n} enemies, {players} heroes: {stats:?}"
        );
        // The run did what steady state means: waves came, enemies died.
        assert!(world.waves() >= 4 && world.kills() > kills, "{n}: {sum}");
    }
}
