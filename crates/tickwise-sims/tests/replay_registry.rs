//! The registry end to end: record, verify, forge, compare, sync-test, and
//! the registry-level hostile cases (unknown sim, version, config, seed).

use tickwise::{
    Pcg32, Recorder, Replay, ReplayError, ReplayHeader, ReplayLimits, TickInput, Verdict,
};
use tickwise_sims::ConfigError;
use tickwise_sims::island::{IslandConfig, IslandWorld};
use tickwise_sims::registry::{self, InputPlan, RegistryError, SimKind};

const ISLAND_CONFIG: &[u8] = include_bytes!("../../../config/island_loop.json");
const LIMITS: ReplayLimits = ReplayLimits::DEFAULT;

fn island(ticks: u64, plan: &InputPlan) -> Vec<u8> {
    registry::record(SimKind::Island, ISLAND_CONFIG, plan, ticks, 60)
        .unwrap()
        .bytes
}

/// Re-records island inputs under an arbitrary header (to forge ids, versions, configs, seeds).
fn island_with(header: ReplayHeader, config: &IslandConfig) -> Vec<u8> {
    let mut rec = Recorder::new(IslandWorld::new(config), header).unwrap();
    for t in 0..100 {
        rec.step(if t % 40 < 20 { 1 } else { -1 });
    }
    rec.finish().unwrap().1.to_bytes()
}

fn island_header() -> ReplayHeader {
    ReplayHeader {
        sim_id: "island".into(),
        sim_version: 1,
        config: ISLAND_CONFIG.to_vec(),
        seed: 20_261_012,
        ticks: 0,
        checkpoint_every: 60,
        input_kind: 0,
    }
}

fn cfg() -> IslandConfig {
    IslandConfig::from_json(ISLAND_CONFIG).unwrap()
}

#[test]
fn island_replay_of_the_seed_pattern_reaches_the_seeds_digest() {
    let rec =
        registry::record(SimKind::Island, ISLAND_CONFIG, &InputPlan::Pattern, 100, 60).unwrap();
    // Seed 000: 100 ticks of `tick % 40 < 20 ? 1 : -1`.
    assert_eq!(rec.digest, "100|-131|5050|18|100|323|3492529440|0");
    assert_eq!(rec.runs, 5, "runs of 20 identical inputs");
    let report = registry::verify_bytes(&rec.bytes, &LIMITS).unwrap();
    assert_eq!(report.ticks_run, 100);
    assert_eq!(
        report.verdict,
        Verdict::Match {
            digest: "100|-131|5050|18|100|323|3492529440|0".into()
        }
    );
    let (kind, header) = registry::identify(&rec.bytes, &LIMITS).unwrap();
    assert_eq!(
        (kind, header.seed, header.config.as_slice()),
        (SimKind::Island, 20_261_012, ISLAND_CONFIG)
    );
}

#[test]
fn forged_island_inputs_are_caught_at_the_next_checkpoint_naming_the_fields() {
    let bytes = island(600, &InputPlan::Pattern);
    let replay = Replay::<i32>::from_bytes(&bytes, &LIMITS).unwrap();
    let mut inputs: Vec<i32> = replay.inputs().copied().collect();
    assert_eq!(inputs[130], 1);
    inputs[130] = -1;
    let mut parts = replay.into_parts();
    parts.set_inputs(inputs);
    let forged = Replay::from_parts(parts).unwrap().to_bytes();
    let report = registry::verify_bytes(&forged, &LIMITS).unwrap();
    let Verdict::Diverged(d) = report.verdict else {
        panic!("{:?}", report.verdict)
    };
    assert_eq!(
        (d.checkpoint, d.last_good_tick, d.tick),
        (Some(2), 120, 180)
    );
    // The island's input only enters velX, and through it posX (seed 000's step).
    assert_eq!(d.fields, ["posX", "velX"]);
    assert_eq!(report.ticks_run, 180);
}

#[test]
fn unknown_sim_id() {
    let bytes = island_with(
        ReplayHeader {
            sim_id: "zombies".into(),
            ..island_header()
        },
        &cfg(),
    );
    let e = registry::verify_bytes(&bytes, &LIMITS).unwrap_err();
    assert_eq!(
        e,
        RegistryError::UnknownSim {
            id: "zombies".into()
        }
    );
    assert!(e.to_string().contains("known: island, horde"), "{e}");
}

#[test]
fn other_sim_version() {
    let bytes = island_with(
        ReplayHeader {
            sim_version: 2,
            ..island_header()
        },
        &cfg(),
    );
    assert_eq!(
        registry::verify_bytes(&bytes, &LIMITS).unwrap_err(),
        RegistryError::VersionMismatch {
            id: "island".into(),
            found: 2,
            supported: 1
        }
    );
}

#[test]
fn embedded_config_that_fails_validation() {
    let bad = br#"{"seed": 1, "stepMs": 16, "accel": 3, "frictionNum": 17, "frictionDen": 16,
                  "maxStepsPerFrame": 8, "rngMultiplier": 1103515245, "rngIncrement": 12345}"#;
    let c = IslandConfig {
        friction_num: 17,
        ..cfg()
    };
    let bytes = island_with(
        ReplayHeader {
            config: bad.to_vec(),
            seed: 1,
            ..island_header()
        },
        &c,
    );
    let e = registry::verify_bytes(&bytes, &LIMITS).unwrap_err();
    assert!(
        matches!(&e, RegistryError::Config(ConfigError::Inconsistent { key, .. }) if key == "frictionNum"),
        "{e}"
    );
    let not_json = island_with(
        ReplayHeader {
            config: b"seed=1".to_vec(),
            ..island_header()
        },
        &cfg(),
    );
    assert!(matches!(
        registry::verify_bytes(&not_json, &LIMITS).unwrap_err(),
        RegistryError::Config(ConfigError::Syntax { .. })
    ));
}

/// The shipped island config with `"stepMs": 16` written twice: a reader that
/// keeps the last value and one that keeps the first agree on 16 here, which
/// is exactly why the bytes must be refused rather than judged by value.
fn island_config_with(extra: &str) -> Vec<u8> {
    let text = std::str::from_utf8(ISLAND_CONFIG).unwrap().trim_end();
    let body = text.strip_suffix('}').unwrap();
    format!("{body}, {extra}}}").into_bytes()
}

#[test]
fn embedded_config_with_a_duplicate_key_fails_verification() {
    // The inputs, seed and checkpoints are all genuine: only the embedded
    // config is ambiguous. Before strict parsing this verified OK.
    for (extra, key) in [
        (r#""stepMs": 16"#, "stepMs"),
        (r#""stepMs": 32"#, "stepMs"),
        (r#""note": "a second note""#, "note"),
    ] {
        let bytes = island_with(
            ReplayHeader {
                config: island_config_with(extra),
                ..island_header()
            },
            &cfg(),
        );
        let e = registry::verify_bytes(&bytes, &LIMITS).unwrap_err();
        assert_eq!(
            e,
            RegistryError::Config(ConfigError::DuplicateKey { key: key.into() }),
            "{extra}"
        );
        assert!(e.to_string().contains(&format!("`{key}`")), "{e}");
    }
    // An unknown key (a typo) is refused the same way, with a hint.
    let bytes = island_with(
        ReplayHeader {
            config: island_config_with(r#""stepMS": 16"#),
            ..island_header()
        },
        &cfg(),
    );
    let e = registry::verify_bytes(&bytes, &LIMITS).unwrap_err();
    assert!(
        matches!(&e, RegistryError::Config(ConfigError::UnknownKey { key, suggestion: Some("stepMs") }) if key == "stepMS"),
        "{e}"
    );
    // The same replay with the config as shipped verifies: the refusal is
    // about the config's bytes, nothing else.
    let good = island_with(island_header(), &cfg());
    assert!(matches!(
        registry::verify_bytes(&good, &LIMITS).unwrap().verdict,
        Verdict::Match { .. }
    ));
}

#[test]
fn header_seed_that_is_not_the_configs() {
    let bytes = island_with(
        ReplayHeader {
            seed: 7,
            ..island_header()
        },
        &cfg(),
    );
    assert_eq!(
        registry::verify_bytes(&bytes, &LIMITS).unwrap_err(),
        RegistryError::SeedMismatch {
            stored: 7,
            config: 20_261_012
        }
    );
}

#[test]
fn island_replay_with_event_inputs() {
    let header = ReplayHeader {
        checkpoint_every: 10,
        ..island_header()
    };
    struct Wrapped(IslandWorld);
    impl tickwise::Sim for Wrapped {
        type Input = TickInput;
        fn step(&mut self, _: &TickInput) {
            self.0.step(&0);
        }
        fn visit_state(&self, v: &mut dyn tickwise::StateVisitor) {
            self.0.visit_state(v);
        }
    }
    let mut rec = Recorder::new(Wrapped(IslandWorld::new(&cfg())), header).unwrap();
    rec.step(TickInput::default());
    let bytes = rec.finish().unwrap().1.to_bytes();
    assert_eq!(
        registry::verify_bytes(&bytes, &LIMITS).unwrap_err(),
        RegistryError::Replay(ReplayError::InputKindMismatch {
            expected: 1,
            found: 2
        })
    );
}

#[test]
fn declared_ticks_above_the_limit_are_refused_before_any_work() {
    let bytes = island(1000, &InputPlan::Pattern);
    let limits = ReplayLimits {
        max_ticks: 999,
        ..LIMITS
    };
    assert_eq!(
        registry::verify_bytes(&bytes, &limits).unwrap_err(),
        RegistryError::Replay(ReplayError::TooManyTicks {
            declared: 1000,
            limit: 999
        })
    );
}

/// The documented random plan: PCG32(seed, stream 0), `next_u32() % 3 - 1`.
fn random_island_inputs(seed: u64, n: usize) -> Vec<i32> {
    let mut rng = Pcg32::new(seed, 0);
    (0..n).map(|_| (rng.next_u32() % 3) as i32 - 1).collect()
}

#[test]
fn random_plan_is_the_documented_generator() {
    let bytes = island(500, &InputPlan::Random(77));
    let replay = Replay::<i32>::from_bytes(&bytes, &LIMITS).unwrap();
    assert_eq!(
        replay.inputs().copied().collect::<Vec<_>>(),
        random_island_inputs(77, 500)
    );
}

#[test]
fn json_inputs_and_their_errors() {
    let plan = InputPlan::Json(b"[1, 1, -1]".to_vec());
    let bytes = island(5, &plan);
    let replay = Replay::<i32>::from_bytes(&bytes, &LIMITS).unwrap();
    assert_eq!(
        replay.inputs().copied().collect::<Vec<_>>(),
        [1, 1, -1, 0, 0]
    );
    let e = registry::record(
        SimKind::Island,
        ISLAND_CONFIG,
        &InputPlan::Json(b"[1, 2.5]".to_vec()),
        5,
        60,
    )
    .unwrap_err();
    assert!(e.to_string().contains("element 1"), "{e}");
    let horde = registry::record(
        SimKind::Horde,
        SimKind::Horde.info().default_config,
        &InputPlan::Json(br#"[{"held": 8}, {"axes": [100, -100]}, {"jump": 1}]"#.to_vec()),
        3,
        60,
    )
    .unwrap_err();
    assert!(horde.to_string().contains("element 2"), "{horde}");
}

#[test]
fn compare_names_the_first_divergent_tick() {
    let seed = island(300, &InputPlan::Pattern);
    let random = island(300, &InputPlan::Random(5));
    let pattern: Vec<i32> = (0..300).map(|t| if t % 40 < 20 { 1 } else { -1 }).collect();
    let first = pattern
        .iter()
        .zip(random_island_inputs(5, 300))
        .position(|(a, b)| *a != b)
        .unwrap() as u64;
    let r = registry::compare_replays(&seed, &random, &LIMITS).unwrap();
    assert_eq!(r.comparison.first_input_difference, Some(first));
    let d = r.comparison.divergence.unwrap();
    assert_eq!(d.tick, first + 1);
    assert_eq!(d.fields, ["posX", "velX"]);
    // The same replay against a live run with its own inputs: no divergence.
    let live = registry::compare_live(&seed, &LIMITS, None, &InputPlan::Pattern).unwrap();
    assert_eq!(
        (live.comparison.divergence, live.comparison.ticks),
        (None, 300)
    );
    // Against a live run with another config seed: the initial rng differs.
    let other = String::from_utf8(ISLAND_CONFIG.to_vec())
        .unwrap()
        .replace("20261012", "1");
    let live = registry::compare_live(&seed, &LIMITS, Some(other.as_bytes()), &InputPlan::Pattern)
        .unwrap();
    let d = live.comparison.divergence.unwrap();
    assert_eq!((d.tick, d.fields), (0, vec!["rng"]));
}

#[test]
fn horde_replays_verify_and_forgeries_are_caught() {
    let config = SimKind::Horde.info().default_config;
    let rec = registry::record(SimKind::Horde, config, &InputPlan::Pattern, 240, 60).unwrap();
    let report = registry::verify_bytes(&rec.bytes, &LIMITS).unwrap();
    assert_eq!(
        report.verdict,
        Verdict::Match {
            digest: rec.digest.clone()
        }
    );
    let replay = Replay::<TickInput>::from_bytes(&rec.bytes, &LIMITS).unwrap();
    let mut inputs: Vec<TickInput> = replay.inputs().copied().collect();
    // Tick 70 of the demo walk holds RIGHT; a stick push left overrides it.
    inputs[70].axes[0] = -32_767;
    let mut parts = replay.into_parts();
    parts.set_inputs(inputs);
    let forged = Replay::from_parts(parts).unwrap().to_bytes();
    let Verdict::Diverged(d) = registry::verify_bytes(&forged, &LIMITS).unwrap().verdict else {
        panic!("forgery not caught")
    };
    assert_eq!((d.last_good_tick, d.tick), (60, 120));
    assert!(d.fields.iter().any(|f| f == "playerX"), "{:?}", d.fields);
}

#[test]
fn sync_test_passes_for_both_registered_sims() {
    let r = registry::sync_test(
        SimKind::Island,
        ISLAND_CONFIG,
        &InputPlan::Random(1),
        2000,
        7,
    )
    .unwrap();
    assert_eq!((r.mismatch, r.ticks), (None, 2000));
    let small = String::from_utf8(SimKind::Horde.info().default_config.to_vec())
        .unwrap()
        .replace("\"enemies\": 300", "\"enemies\": 40");
    let r = registry::sync_test(
        SimKind::Horde,
        small.as_bytes(),
        &InputPlan::Pattern,
        200,
        3,
    )
    .unwrap();
    assert_eq!((r.mismatch, r.ticks), (None, 200));
}

/// Golden checksums of the island state, computed independently (a few lines
/// of Python implementing docs/checksum.md over the seeds' digest values
/// `100|-131|5050|18|100|323|3492529440|0`).
#[test]
fn island_checksum_golden_vectors() {
    use tickwise::Sim;
    let mut w = IslandWorld::new(&cfg());
    assert_eq!(w.checksum(), 0xe5bf_6188_7746_5447);
    for t in 0..100 {
        w.step(&(if t % 40 < 20 { 1 } else { -1 }));
    }
    assert_eq!(w.checksum(), 0xdc0b_35df_9a38_8d3a);
    let bytes = island(100, &InputPlan::Pattern);
    let replay = Replay::<i32>::from_bytes(&bytes, &LIMITS).unwrap();
    let fin = replay.final_state();
    assert_eq!(fin.checksum, 0xdc0b_35df_9a38_8d3a);
    assert_eq!(
        fin.fields,
        [
            0x5a46_5561,
            0xc81b_90ff,
            0xcd34_8e0a,
            0xeced_7017,
            0x5a46_5561,
            0x40af_df01,
            0x3634_eccd,
            0x281a_39c5
        ]
    );
    assert_eq!(
        replay.field_names(),
        [
            "tick",
            "posX",
            "posY",
            "velX",
            "velY",
            "score",
            "rng",
            "droppedMs"
        ]
    );
}

#[test]
fn work_above_the_limit_is_refused_before_re_simulating() {
    // Island: one unit per tick, so 1000 ticks need 1000 units.
    let bytes = island(1000, &InputPlan::Pattern);
    let tight = ReplayLimits {
        max_work: 999,
        ..LIMITS
    };
    assert_eq!(
        registry::verify_bytes(&bytes, &tight).unwrap_err(),
        RegistryError::TooMuchWork {
            ticks: 1000,
            per_tick: 1,
            limit: 999
        }
    );
    assert!(
        registry::verify_bytes(
            &bytes,
            &ReplayLimits {
                max_work: 1000,
                ..LIMITS
            }
        )
        .is_ok()
    );
    // Horde: 1 + enemies units per tick, taken from the replay's own config, so a
    // small file cannot declare a huge world and buy hours of verification.
    let horde_cfg = include_bytes!("../../../config/horde.json");
    let enemies = tickwise_sims::horde::HordeConfig::from_json(horde_cfg)
        .unwrap()
        .enemies();
    let rec = registry::record(SimKind::Horde, horde_cfg, &InputPlan::Pattern, 10, 60).unwrap();
    let per_tick = 1 + u64::from(enemies);
    let limit = 10 * per_tick - 1;
    assert_eq!(
        registry::verify_bytes(
            &rec.bytes,
            &ReplayLimits {
                max_work: limit,
                ..LIMITS
            }
        )
        .unwrap_err(),
        RegistryError::TooMuchWork {
            ticks: 10,
            per_tick,
            limit
        }
    );
}
