//! The horde's version pin, held by a file that only a version bump may
//! replace (issue 20, finding 11).
//!
//! `sim_versions.rs` pins the horde's digest to the Python reference's
//! golden file; but the reference, its golden file and the Rust horde can
//! be changed together, and then that pin moves with them. This one cannot:
//! `tests/fixtures/horde_v3_pin.twr` is a replay recorded by the Rust horde
//! at version 3 — three heroes, 9000 enemies (more than the parallel tick's
//! `MIN_PARALLEL` 3072 slots and its 1024-enemy pieces, so on more than one
//! thread every phase splits), a checkpoint every 2 ticks for 320 ticks,
//! through waves, kills, downs and a wipe — and
//!
//! * it must verify, serially and in rayon pools of 2 and 3 threads (the
//!   parallel split is bit-identical to the serial path);
//! * its header's sim version must be the horde's `VERSION`;
//! * its bytes must hash to the last row of [`PINS`], an append-only table
//!   with one row per horde version, versions strictly increasing.
//!
//! So changing the horde's results fails here until the file is re-recorded,
//! and a re-recorded file fails until it gets a new row, which needs a new
//! version (rewriting an old row is a visible edit of a released version's
//! pin). The old version's files stay under test as replays refused by
//! version (`sim_versions.rs`).
//!
//! To re-record after a deliberate, version-bumping change (writes
//! `tests/fixtures/horde_v{VERSION}_pin.twr` and re-records
//! `fuzz/seeds/replay_reader/horde_20.twr`, 20 scripted ticks of the
//! shipped config; prints the new row):
//!
//! ```text
//! TICKWISE_RECORD_HORDE_PIN=1 cargo test -p tickwise-catalog \
//!     --test horde_pin -- --ignored --nocapture record_the_pin_replays
//! ```
//!
//! The replay is format 4, one input stream per hero: every player walks
//! the scripted square (`InputPlan::Scripted`), each hero from its own
//! start.

use std::path::{Path, PathBuf};

use tickwise::{Fnv1a64, Replay, ReplayLimits, ReplayVerdict, Sim, TickInput, read_header};
use tickwise_catalog::{Catalog, CatalogSim, InputPlan};
use tickwise_sims::horde::{HordeConfig, HordeWorld};

/// One row per horde version: (version, FNV-1a 64 of that version's pin
/// replay). Append-only; the last row is the current version's.
const PINS: &[(u32, u64)] = &[(3, 0xa8b2_62cc_19a0_9e68)];

/// The pinned world: the shipped config with these keys replaced.
const PIN_KEYS: &[(&str, i64)] = &[
    ("players", 3),
    ("enemies", 9000),
    ("spawnDistance", 48),
    ("waveTicks", 150),
    ("contactDamage", 30),
    ("playerHp", 30),
    ("invulnTicks", 2),
];
const PIN_TICKS: u64 = 320;
const PIN_EVERY: u64 = 2;

const LIMITS: ReplayLimits = ReplayLimits::DEFAULT;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn pin_path(version: u32) -> PathBuf {
    fixtures().join(format!("horde_v{version}_pin.twr"))
}

fn pin_config() -> Vec<u8> {
    let mut m: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(HordeWorld::DEFAULT_CONFIG).unwrap();
    for &(k, v) in PIN_KEYS {
        m.insert(k.into(), v.into());
    }
    serde_json::to_vec_pretty(&m).unwrap()
}

fn verify_in_pool(threads: usize, bytes: &[u8]) -> ReplayVerdict {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| Catalog::builtin().verify(bytes, &LIMITS))
        .unwrap()
        .verdict
}

#[test]
fn the_pin_replay_is_this_versions_and_verifies_on_any_thread_count() {
    let version = HordeWorld::VERSION;
    let &(last_version, last_hash) = PINS.last().unwrap();
    assert!(
        PINS.windows(2).all(|w| w[0].0 < w[1].0),
        "PINS must list each horde version once, in increasing order: {PINS:?}"
    );
    assert_eq!(
        last_version, version,
        "the horde is version {version}, but the last pin row is version {last_version}: \
         record tests/fixtures/horde_v{version}_pin.twr (see this file's docs) and append \
         its row; keep the older pin files as replays refused by version"
    );
    let path = pin_path(version);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: the horde's version {version} has no pin replay (see this file's docs)",
            path.display()
        )
    });
    assert_eq!(
        Fnv1a64::hash(&bytes),
        last_hash,
        "{} is not the file pinned for version {version}: a pin replay is replaced only \
         with a version bump (a new row in PINS)",
        path.display()
    );
    let header = read_header(&bytes, &LIMITS).unwrap();
    assert_eq!(
        (header.sim_id.as_str(), header.sim_version),
        ("horde", version)
    );
    let cfg = HordeConfig::from_json(&header.config).unwrap();
    assert!(
        cfg.players() >= 2 && cfg.enemies() >= 2000,
        "{}",
        cfg.summary()
    );
    assert!(header.checkpoint_every <= 4 && header.ticks >= 200);
    // Serially, then split over 2 and 3 threads: the same checkpoints.
    let serial = Catalog::builtin().verify(&bytes, &LIMITS).unwrap().verdict;
    assert!(matches!(serial, ReplayVerdict::Match { .. }), "{serial:?}");
    for threads in [2, 3] {
        assert_eq!(verify_in_pool(threads, &bytes), serial, "{threads} threads");
    }
}

#[test]
fn the_pin_replay_covers_the_co_op_rules() {
    // Replaying the pinned inputs shows what the pin holds: waves, kills,
    // every hero touched and hit, and a wipe, so a change to any of those
    // rules moves a checkpoint.
    let bytes = std::fs::read(pin_path(HordeWorld::VERSION)).unwrap();
    let replay = Replay::<TickInput>::from_bytes(&bytes, &LIMITS).unwrap();
    let cfg = HordeConfig::from_json(&replay.header().config).unwrap();
    let mut w = HordeWorld::new(&cfg);
    let mut hit = vec![false; cfg.players()];
    let mut stretches = replay.tick_inputs();
    while let Some((inputs, len)) = stretches.next_stretch() {
        let inputs = inputs.to_vec();
        for _ in 0..len {
            let before: Vec<i64> = w.heroes().iter().map(|h| h.hp).collect();
            w.step_players(&inputs);
            for (h, (hero, hp)) in hit.iter_mut().zip(w.heroes().iter().zip(before)) {
                *h |= hero.hp < hp || hero.downs > 0;
            }
        }
    }
    assert_eq!(w.digest(), replay.final_digest());
    assert!(
        w.waves() >= 2 && w.kills() > 0,
        "{} waves {}",
        w.digest(),
        w.waves()
    );
    assert!(hit.iter().all(|&h| h), "{hit:?}");
    assert!(w.wipes() >= 1, "{} wipes {}", w.digest(), w.wipes());
}

#[test]
fn a_changed_rule_breaks_the_pin() {
    // The pin can fail: the same inputs under one changed rule (a stronger
    // attack) diverge from the file's checkpoints.
    let bytes = std::fs::read(pin_path(HordeWorld::VERSION)).unwrap();
    let replay = Replay::<TickInput>::from_bytes(&bytes, &LIMITS).unwrap();
    let mut m: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&replay.header().config).unwrap();
    m.insert("attackDamage".into(), 11.into());
    let cfg = HordeConfig::from_json(&serde_json::to_vec(&m).unwrap()).unwrap();
    let report = tickwise::verify(HordeWorld::new(&cfg), &replay);
    assert!(!report.is_match(), "{:?}", report.verdict);
}

#[test]
#[ignore = "writes the pin replay and the fuzz seed: run by hand after a version bump"]
fn record_the_pin_replays() {
    assert!(
        std::env::var_os("TICKWISE_RECORD_HORDE_PIN").is_some(),
        "set TICKWISE_RECORD_HORDE_PIN=1 to overwrite the checked-in replays"
    );
    let version = HordeWorld::VERSION;
    let recorded = Catalog::builtin()
        .record(
            "horde",
            Some(&pin_config()),
            &InputPlan::Scripted,
            PIN_TICKS,
            PIN_EVERY,
        )
        .unwrap();
    std::fs::write(pin_path(version), &recorded.bytes).unwrap();
    println!(
        "wrote {} ({} bytes, digest {}): append ({version}, {:#018x}) to PINS",
        pin_path(version).display(),
        recorded.bytes.len(),
        recorded.digest,
        Fnv1a64::hash(&recorded.bytes)
    );
    // The fuzzer's horde seed: the shipped config, 20 scripted ticks, a
    // checkpoint every 5, recorded by this version.
    let seed = Catalog::builtin()
        .record("horde", None, &InputPlan::Scripted, 20, 5)
        .unwrap()
        .bytes;
    let seed_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/replay_reader/horde_20.twr");
    std::fs::write(&seed_path, &seed).unwrap();
    println!("wrote {} ({} bytes)", seed_path.display(), seed.len());
}
