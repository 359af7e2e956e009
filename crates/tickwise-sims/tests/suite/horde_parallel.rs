//! The horde's parallel tick (feature `parallel`) is bit-identical at any
//! thread count: the checksum after every tick is the same in rayon pools
//! of 1, 2, 3 and 8 threads, and the same as the O(n²) reference (which
//! never splits its work).
//!
//! The crate's dev-dependency on itself turns `parallel` on, so plain
//! `cargo test -p tickwise-sims` runs these. What splits, and from where
//! (`src/horde/par.rs`): below 3072 enemies ([`MIN_PARALLEL`]) a tick stays
//! on one thread whatever the pool; from 3072 the separation runs in row
//! bands, and the per-enemy phases and the grid's sort are cut into pieces
//! of 1024 ([`CHUNK`]) too (the chunked split). Each test below names the
//! path it reaches.

#[cfg(not(feature = "parallel"))]
compile_error!(
    "tests/suite/horde_parallel.rs needs the `parallel` feature (the crate's dev-dependency on itself turns it on)"
);

use proptest::prelude::*;
use tickwise::{Sim, TickInput};
use tickwise_sims::horde::{HordeConfig, HordeWorld, NaiveHorde, scripted_input};

const SHIPPED: &[u8] = include_bytes!("../../../../config/horde.json");

/// `par::MIN_PARALLEL`: enemies (live and dead slots) from which a tick splits.
const MIN_PARALLEL: u64 = 3 * CHUNK;
/// `par::CHUNK`: enemies per piece of the chunked per-enemy phases.
const CHUNK: u64 = 1024;

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

/// The checksums of `ticks` ticks on one thread, after asserting that pools
/// of each of `threads` give the same ones, tick by tick.
fn same_on_every_pool(cfg: &HordeConfig, ticks: u64, threads: &[usize]) -> Vec<u64> {
    let one = checksums(cfg, 1, ticks);
    for &n in threads {
        let many = checksums(cfg, n, ticks);
        let first = one.iter().zip(&many).position(|(a, b)| a != b);
        assert_eq!(first, None, "{n} threads differ at tick index {first:?}");
    }
    one
}

/// The O(n²) reference's checksum after every tick, on the calling thread.
fn reference(cfg: &HordeConfig, ticks: u64) -> Vec<u64> {
    let mut naive = NaiveHorde::new(cfg);
    (0..ticks)
        .map(|t| {
            naive.step_players(&inputs(cfg.players(), t));
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
    // 40 000 enemies: many pieces of 1024 and many bands of rows, so the
    // split work really is split; waves and deaths happen within the ticks.
    let cfg = base.with_enemies(40_000).unwrap();
    let one = same_on_every_pool(&cfg, 120, &[2, 3, 8]);
    // Outside any pool (the single-thread path) it is the same run too.
    let mut w = HordeWorld::new(&cfg);
    for (t, sum) in one.iter().enumerate() {
        w.step(&[scripted_input(t as u64)]);
        assert_eq!(w.checksum(), *sum, "tick {t}");
    }
}

#[test]
fn the_chunked_split_matches_the_reference() {
    // Three full pieces of 1024 and a short fourth one: the per-enemy phases,
    // the grid's parallel sort and the pushes all run in pieces, on two
    // threads, and every tick's checksum is the O(n²) reference's. The
    // reference costs n²/2 pair checks a tick (6.4·10⁶ here), so the run
    // is short; the reference runs on its own thread meanwhile.
    let enemies = 3 * CHUNK + 500;
    let ticks = 6;
    let cfg = config(77, enemies);
    let naive = std::thread::spawn(move || reference(&cfg, ticks));
    let split = checksums(&cfg, 2, ticks);
    let naive = naive.join().unwrap();
    assert_eq!(split.len() as u64, ticks);
    for (t, (s, n)) in split.iter().zip(&naive).enumerate() {
        assert_eq!(
            s, n,
            "the chunked split differs from the reference at tick {t}"
        );
    }
}

/// Two heroes and `enemies` spawned 30 px away (so strikes land from the
/// first ticks), separation every second tick, and the shipped config's
/// other keys but `keys`.
fn close_pair_every_2(enemies: u64, keys: &[(&str, u32)]) -> HordeConfig {
    let mut m: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(SHIPPED).unwrap();
    m.insert("spawnDistance".into(), 30.into());
    for &(k, v) in keys {
        m.insert(k.into(), v.into());
    }
    HordeConfig::from_json(&serde_json::to_vec(&m).unwrap())
        .unwrap()
        .with_enemies(enemies)
        .unwrap()
        .with_players(2)
        .unwrap()
        .with_separation_ticks(2)
        .unwrap()
}

#[test]
fn the_chunked_strike_without_separation_matches_the_reference() {
    // On the ticks without separation the grid world strikes enemy by
    // enemy in pieces of 1024 and adds up the pieces' tallies; the
    // reference in one loop. Four pieces and two heroes, on a 96 px field
    // with a 96 px attack: every enemy is within both heroes' reach (at
    // most 87 px away), so every piece holds kills
    // (on a big field the heroes' neighbours all sit in one piece, and a
    // wrong sum of another's would go unseen). Attacks on ticks 0, 3
    // and 6; each hits for 5 of an enemy's 20 hit points, and both heroes
    // reach every enemy, so the kills come at tick 3, without separation.
    let cfg = close_pair_every_2(
        3 * CHUNK + 500,
        &[
            ("fieldWidth", 96),
            ("fieldHeight", 96),
            ("attackRadius", 96),
            ("attackCooldownTicks", 3),
            ("attackDamage", 5),
        ],
    );
    let ticks = 8;
    let naive = std::thread::spawn(move || reference(&cfg, ticks));
    let split = checksums(&cfg, 2, ticks);
    assert_eq!(split, naive.join().unwrap());
    let mut w = HordeWorld::new(&cfg);
    for t in 0..ticks {
        w.step_players(&inputs(2, t));
        if t == 3 {
            // Most of the horde (2837 of 3572 when written): more than two
            // pieces hold, so at least three of the four pieces' kills are
            // summed (doubling one piece's tally fails against the reference
            // above).
            assert!(w.kills() > 2 * CHUNK, "tick 3 kills: {}", w.kills());
        }
    }
}

#[test]
fn ticks_without_separation_are_the_same_on_1_2_and_3_threads() {
    // separationTicks 2: every other tick builds no grid, and the heroes'
    // strike walks every enemy in pieces of 1024 (20 000 enemies: twenty
    // pieces), two heroes so that both tallies are merged.
    let cfg = close_pair_every_2(20_000, &[]);
    same_on_every_pool(&cfg, 80, &[2, 3]);
    // The run reaches kills on ticks without separation, so the strike
    // there is exercised, not only the steering.
    let mut w = HordeWorld::new(&cfg);
    let mut kills_between = 0;
    for t in 0..80 {
        let before = w.kills();
        w.step_players(&inputs(2, t));
        if t % 2 == 1 {
            kills_between += w.kills() - before;
        }
    }
    assert!(kills_between > 0, "no kill on a tick without separation");
}

/// Enemy counts for the proptest: from the split threshold to 4200 (the
/// banded separation and three to five pieces on three threads; the
/// reference's n² cost bounds the top) in nine cases out of ten, and below
/// it (one thread whatever the pool) in the rest.
fn enemy_count() -> impl Strategy<Value = u64> {
    prop_oneof![
        9 => MIN_PARALLEL..4_200,
        1 => 1..MIN_PARALLEL,
    ]
}

#[test]
fn the_proptest_mostly_draws_counts_that_split() {
    // The strategy above, sampled: most of its draws reach the parallel path.
    use proptest::strategy::ValueTree as _;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = enemy_count();
    let draws = 1_000;
    let split = (0..draws)
        .filter(|_| strategy.new_tree(&mut runner).unwrap().current() >= MIN_PARALLEL)
        .count();
    assert!(split >= draws * 8 / 10, "{split} of {draws} draws split");
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
    let one = same_on_every_pool(&cfg, 90, &[2, 3]);
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
        enemies in enemy_count(),
        players in 1u64..=4,
        separation in 1u64..=3,
    ) {
        // Separation every 1 to 3 ticks: the ticks without it strike on
        // one thread after a split steering.
        let cfg = config(seed, enemies)
            .with_players(players)
            .unwrap()
            .with_separation_ticks(separation)
            .unwrap();
        let ticks = 25;
        // HordeConfig is Copy: the thread gets its own.
        let naive = std::thread::spawn(move || reference(&cfg, ticks));
        let one = checksums(&cfg, 1, ticks);
        prop_assert_eq!(&checksums(&cfg, 3, ticks), &one);
        prop_assert_eq!(&naive.join().unwrap(), &one);
    }
}
