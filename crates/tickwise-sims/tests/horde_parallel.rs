//! The horde's parallel tick (feature `parallel`) is bit-identical at any
//! thread count: the checksum after every tick is the same in rayon pools
//! of 1, 2, 3 and 8 threads, and the same as the O(n²) reference (which
//! never splits its work).
//!
//! The crate's dev-dependency on itself turns `parallel` on, so plain
//! `cargo test -p tickwise-sims` runs these. What splits, and from where
//! (`src/horde/par.rs`): below 2048 enemies ([`MIN_PARALLEL`]) a tick stays
//! on one thread whatever the pool; from 2048 the separation runs in row
//! bands; above 8192 ([`CHUNK`]) the per-enemy phases and the grid's sort
//! are cut into pieces of 8192 too (the chunked split). Each test below
//! names the path it reaches.

#[cfg(not(feature = "parallel"))]
compile_error!(
    "tests/horde_parallel.rs needs the `parallel` feature (the crate's dev-dependency on itself turns it on)"
);

use proptest::prelude::*;
use tickwise::{Sim, TickInput};
use tickwise_sims::horde::{HordeConfig, HordeWorld, NaiveHorde, scripted_input};

const SHIPPED: &[u8] = include_bytes!("../../../config/horde.json");

/// Every player's input for tick `t`: player 0 walks the scripted square,
/// player `p` the same square `45 p` ticks later (each its own phase).
fn inputs(players: usize, t: u64) -> Vec<TickInput> {
    (0..players as u64)
        .map(|p| scripted_input(t + 45 * p))
        .collect()
}

/// The checksum after every tick of `ticks`, run inside a pool of `threads`.
fn checksums(cfg: &HordeConfig, threads: usize, ticks: u64) -> Vec<u64> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut w = HordeWorld::new(cfg);
        (0..ticks)
            .map(|t| {
                w.step_players(&inputs(cfg.players(), t));
                w.checksum()
            })
            .collect()
    })
}

/// The O(n²) reference's checksum after every tick, on the calling thread.
fn reference(cfg: &HordeConfig, ticks: u64) -> Vec<u64> {
    let mut naive = NaiveHorde::new(cfg);
    (0..ticks)
        .map(|t| {
            naive.step(&[scripted_input(t)]);
            naive.checksum()
        })
        .collect()
}

/// The shipped config with another seed and enemy count.
fn config(seed: u32, enemies: u64) -> HordeConfig {
    let mut m: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(SHIPPED).unwrap();
    m.insert("seed".into(), u64::from(seed).into());
    HordeConfig::from_json(&serde_json::to_vec(&m).unwrap())
        .unwrap()
        .with_enemies(enemies)
        .unwrap()
}

#[test]
fn every_tick_is_the_same_on_1_2_3_and_8_threads() {
    let base = HordeConfig::from_json(SHIPPED).unwrap();
    // 40 000 enemies: several pieces of 8192 and many bands of rows, so the
    // split work really is split; waves and deaths happen within the ticks.
    let cfg = base.with_enemies(40_000).unwrap();
    let one = checksums(&cfg, 1, 120);
    for threads in [2, 3, 8] {
        let many = checksums(&cfg, threads, 120);
        let first = one.iter().zip(&many).position(|(a, b)| a != b);
        assert_eq!(
            first, None,
            "{threads} threads differ at tick index {first:?}"
        );
    }
    // Outside any pool (the single-thread path) it is the same run too.
    let mut w = HordeWorld::new(&cfg);
    for (t, sum) in one.iter().enumerate() {
        w.step(&[scripted_input(t as u64)]);
        assert_eq!(w.checksum(), *sum, "tick {t}");
    }
}

#[test]
fn a_four_hero_world_is_the_same_on_1_2_and_3_threads() {
    // Co-op: steering picks the nearest of four heroes in every piece, the
    // strike visits four boxes; still bit-identical at any thread count.
    let cfg = HordeConfig::from_json(SHIPPED)
        .unwrap()
        .with_players(4)
        .unwrap()
        .with_enemies(20_000)
        .unwrap();
    let one = checksums(&cfg, 1, 90);
    for threads in [2, 3] {
        assert_eq!(checksums(&cfg, threads, 90), one, "{threads} threads");
    }
    let mut w = HordeWorld::new(&cfg);
    for (t, sum) in one.iter().enumerate() {
        w.step_players(&inputs(4, t as u64));
        assert_eq!(w.checksum(), *sum, "tick {t}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn any_seed_and_count_matches_one_thread_and_the_reference(
        seed in any::<u32>(),
        enemies in 1u64..3000,
        players in 1u64..=4,
    ) {
        let mut m: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(SHIPPED).unwrap();
        m.insert("seed".into(), u64::from(seed).into());
        let cfg = HordeConfig::from_json(&serde_json::to_vec(&m).unwrap())
            .unwrap()
            .with_enemies(enemies)
            .unwrap()
            .with_players(players)
            .unwrap();
        let ticks = 40;
        let one = checksums(&cfg, 1, ticks);
        prop_assert_eq!(&checksums(&cfg, 3, ticks), &one);
        // The O(n²) reference, on this thread.
        let mut naive = NaiveHorde::new(&cfg);
        for (t, sum) in one.iter().enumerate() {
            naive.step_players(&inputs(cfg.players(), t as u64));
            prop_assert_eq!(naive.checksum(), *sum, "tick {}", t);
        }
    }
}
