//! The built-in sims through the catalog: record, verify, forge, compare,
//! sync-test, and the catalog-level hostile cases (unknown sim, version,
//! config, seed, work).

use tickwise::{
    Pcg32, Recorder, Replay, ReplayError, ReplayHeader, ReplayLimits, ReplayVerdict, TickInput,
};
use tickwise_catalog::{Catalog, CatalogError, CatalogSim, InputPlan, InputsError};
use tickwise_config::ConfigError;
use tickwise_sims::horde::HordeWorld;
use tickwise_sims::island::{IslandConfig, IslandWorld};

const ISLAND_CONFIG: &[u8] = include_bytes!("../../../../config/island_loop.json");
const LIMITS: ReplayLimits = ReplayLimits::DEFAULT;

fn catalog() -> Catalog {
    Catalog::builtin()
}

fn island(ticks: u64, plan: &InputPlan) -> Vec<u8> {
    catalog()
        .record("island", Some(ISLAND_CONFIG), plan, ticks, 60)
        .unwrap()
        .bytes
}

/// Re-records island inputs under an arbitrary header (to forge ids, versions, configs, seeds).
fn island_with(header: ReplayHeader, config: &IslandConfig) -> Vec<u8> {
    let mut rec = Recorder::new(IslandWorld::new(config), header).unwrap();
    for t in 0..100 {
        rec.step(&[if t % 40 < 20 { 1 } else { -1 }]);
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
        players: 1,
    }
}

fn cfg() -> IslandConfig {
    IslandConfig::from_json(ISLAND_CONFIG).unwrap()
}

#[test]
fn island_replay_of_the_scripted_input_reaches_the_golden_digest() {
    let rec = catalog()
        .record("island", None, &InputPlan::Scripted, 100, 60)
        .unwrap();
    // The island rules (docs/background.md): 100 ticks of `tick % 40 < 20 ? 1 : -1`.
    assert_eq!(rec.digest, "100|-131|5050|18|100|323|3492529440|0");
    assert_eq!(rec.runs, 5, "runs of 20 identical inputs");
    let report = catalog().verify(&rec.bytes, &LIMITS).unwrap();
    assert_eq!(report.ticks_run, 100);
    assert_eq!(
        report.verdict,
        ReplayVerdict::Match {
            digest: "100|-131|5050|18|100|323|3492529440|0".into()
        }
    );
    let (info, header) = catalog().identify(&rec.bytes, &LIMITS).unwrap();
    assert_eq!(
        (info.id, header.seed, header.config.as_slice()),
        ("island", 20_261_012, ISLAND_CONFIG)
    );
}

#[test]
fn forged_island_inputs_are_caught_at_the_next_checkpoint_naming_the_fields() {
    let bytes = island(600, &InputPlan::Scripted);
    let replay = Replay::<i32>::from_bytes(&bytes, &LIMITS).unwrap();
    let mut inputs: Vec<i32> = replay.inputs(0).copied().collect();
    assert_eq!(inputs[130], 1);
    inputs[130] = -1;
    let mut parts = replay.into_parts();
    parts.set_inputs(0, inputs);
    let forged = Replay::from_parts(parts).unwrap().to_bytes();
    let report = catalog().verify(&forged, &LIMITS).unwrap();
    let ReplayVerdict::Diverged(d) = report.verdict else {
        panic!("{:?}", report.verdict)
    };
    assert_eq!(
        (d.checkpoint, d.last_good_tick, d.tick),
        (Some(2), 120, 180)
    );
    // The island's input only enters velX, and through it posX (the island rules' step).
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
    let e = catalog().verify(&bytes, &LIMITS).unwrap_err();
    assert_eq!(
        e,
        CatalogError::UnknownSim {
            id: "zombies".into(),
            known: vec!["island", "horde"],
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
        catalog().verify(&bytes, &LIMITS).unwrap_err(),
        CatalogError::VersionMismatch {
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
    let e = catalog().verify(&bytes, &LIMITS).unwrap_err();
    assert!(
        matches!(&e, CatalogError::Config { sim: "island", message } if message.contains("`frictionNum`")),
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
        catalog().verify(&not_json, &LIMITS).unwrap_err(),
        CatalogError::Config { sim: "island", message } if message.contains("JSON")
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
        let e = catalog().verify(&bytes, &LIMITS).unwrap_err();
        let CatalogError::Config { sim, message } = &e else {
            panic!("{extra}: {e:?}");
        };
        assert_eq!(*sim, "island");
        assert_eq!(
            *message,
            ConfigError::DuplicateKey { key: key.into() }.to_string(),
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
    let e = catalog().verify(&bytes, &LIMITS).unwrap_err();
    let expected = ConfigError::UnknownKey {
        key: "stepMS".into(),
        suggestion: Some("stepMs"),
    };
    assert!(
        matches!(&e, CatalogError::Config { message, .. } if *message == expected.to_string()),
        "{e}"
    );
    // The same replay with the config as shipped verifies: the refusal is
    // about the config's bytes, nothing else.
    let good = island_with(island_header(), &cfg());
    assert!(matches!(
        catalog().verify(&good, &LIMITS).unwrap().verdict,
        ReplayVerdict::Match { .. }
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
        catalog().verify(&bytes, &LIMITS).unwrap_err(),
        CatalogError::SeedMismatch {
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
        fn step(&mut self, _inputs: &[TickInput]) {
            self.0.step(&[0]);
        }
        fn visit_state(&self, v: &mut dyn tickwise::StateVisitor) {
            self.0.visit_state(v);
        }
    }
    let mut rec = Recorder::new(Wrapped(IslandWorld::new(&cfg())), header).unwrap();
    rec.step(&[TickInput::default()]);
    let bytes = rec.finish().unwrap().1.to_bytes();
    assert_eq!(
        catalog().verify(&bytes, &LIMITS).unwrap_err(),
        CatalogError::Replay(ReplayError::InputKindMismatch {
            expected: 1,
            found: 2
        })
    );
}

#[test]
fn declared_ticks_above_the_limit_are_refused_before_any_work() {
    let bytes = island(1000, &InputPlan::Scripted);
    let limits = ReplayLimits {
        max_ticks: 999,
        ..LIMITS
    };
    assert_eq!(
        catalog().verify(&bytes, &limits).unwrap_err(),
        CatalogError::Replay(ReplayError::TooManyTicks {
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
        replay.inputs(0).copied().collect::<Vec<_>>(),
        random_island_inputs(77, 500)
    );
}

#[test]
fn json_inputs_and_their_errors() {
    let plan = InputPlan::Json(b"[1, 1, -1]".to_vec());
    let bytes = island(5, &plan);
    let replay = Replay::<i32>::from_bytes(&bytes, &LIMITS).unwrap();
    assert_eq!(
        replay.inputs(0).copied().collect::<Vec<_>>(),
        [1, 1, -1, 0, 0]
    );
    let e = catalog()
        .record(
            "island",
            None,
            &InputPlan::Json(b"[1, 2.5]".to_vec()),
            5,
            60,
        )
        .unwrap_err();
    assert_eq!(
        e,
        CatalogError::Inputs(InputsError::Element {
            player: None,
            index: 1,
            expected: "an integer in the i32 range".into(),
            found: "2.5".into()
        })
    );
    let horde = catalog()
        .record(
            "horde",
            None,
            &InputPlan::Json(br#"[{"held": 8}, {"axes": [100, -100]}, {"jump": 1}]"#.to_vec()),
            3,
            60,
        )
        .unwrap_err();
    assert!(
        horde.to_string().starts_with("inputs[2] must be an object"),
        "{horde}"
    );
}

#[test]
fn compare_names_the_first_divergent_tick() {
    let seed = island(300, &InputPlan::Scripted);
    let random = island(300, &InputPlan::Random(5));
    let pattern: Vec<i32> = (0..300).map(|t| if t % 40 < 20 { 1 } else { -1 }).collect();
    let first = pattern
        .iter()
        .zip(random_island_inputs(5, 300))
        .position(|(a, b)| *a != b)
        .unwrap() as u64;
    let r = catalog().compare(&seed, &random, &LIMITS).unwrap();
    assert_eq!(
        r.comparison.first_input_difference.map(|d| d.tick),
        Some(first)
    );
    let d = r.comparison.divergence.unwrap();
    assert_eq!(d.tick, first + 1);
    assert_eq!(d.fields, ["posX", "velX"]);
    // The same replay against a live run with its own inputs: no divergence.
    let live = catalog()
        .compare_live(&seed, &LIMITS, None, &InputPlan::Scripted)
        .unwrap();
    assert_eq!(
        (live.comparison.divergence, live.comparison.ticks),
        (None, 300)
    );
    // Against a live run with another config seed: the initial rng differs.
    let other = String::from_utf8(ISLAND_CONFIG.to_vec())
        .unwrap()
        .replace("20261012", "1");
    let live = catalog()
        .compare_live(&seed, &LIMITS, Some(other.as_bytes()), &InputPlan::Scripted)
        .unwrap();
    let d = live.comparison.divergence.unwrap();
    assert_eq!((d.tick, d.fields), (0, vec!["rng"]));
}

#[test]
fn horde_replays_verify_and_forgeries_are_caught() {
    let rec = catalog()
        .record("horde", None, &InputPlan::Scripted, 240, 60)
        .unwrap();
    let report = catalog().verify(&rec.bytes, &LIMITS).unwrap();
    assert_eq!(
        report.verdict,
        ReplayVerdict::Match {
            digest: rec.digest.clone()
        }
    );
    let replay = Replay::<TickInput>::from_bytes(&rec.bytes, &LIMITS).unwrap();
    let mut inputs: Vec<TickInput> = replay.inputs(0).copied().collect();
    // Tick 70 of the demo walk holds RIGHT; a stick push left overrides it.
    inputs[70].axes[0] = -32_767;
    let mut parts = replay.into_parts();
    parts.set_inputs(0, inputs);
    let forged = Replay::from_parts(parts).unwrap().to_bytes();
    let ReplayVerdict::Diverged(d) = catalog().verify(&forged, &LIMITS).unwrap().verdict else {
        panic!("forgery not caught")
    };
    assert_eq!((d.last_good_tick, d.tick), (60, 120));
    assert!(d.fields.iter().any(|f| f == "hero0.x"), "{:?}", d.fields);
}

#[test]
fn sync_test_passes_for_both_registered_sims() {
    let r = catalog()
        .sync_test("island", None, &InputPlan::Random(1), 2000, 7)
        .unwrap();
    assert_eq!((r.mismatch, r.ticks), (None, 2000));
    let small = String::from_utf8(HordeWorld::DEFAULT_CONFIG.to_vec())
        .unwrap()
        .replace("\"enemies\": 300", "\"enemies\": 40");
    let r = catalog()
        .sync_test(
            "horde",
            Some(small.as_bytes()),
            &InputPlan::Scripted,
            200,
            3,
        )
        .unwrap();
    assert_eq!((r.mismatch, r.ticks), (None, 200));
}

/// Golden checksums of the island state, computed independently (a few lines
/// of Python implementing docs/checksum.md over the island rules' golden digest values
/// `100|-131|5050|18|100|323|3492529440|0`).
#[test]
fn island_checksum_golden_vectors() {
    use tickwise::Sim;
    let mut w = IslandWorld::new(&cfg());
    assert_eq!(w.checksum(), 0xe5bf_6188_7746_5447);
    for t in 0..100 {
        w.step(&[if t % 40 < 20 { 1 } else { -1 }]);
    }
    assert_eq!(w.checksum(), 0xdc0b_35df_9a38_8d3a);
    let bytes = island(100, &InputPlan::Scripted);
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
    // Island: 40 calibrated units per tick (about 35 ns of verification a
    // tick on the reference machine), so 1000 ticks need 40 000 units.
    let bytes = island(1000, &InputPlan::Scripted);
    let tight = ReplayLimits {
        max_work: 39_999,
        ..LIMITS
    };
    assert_eq!(
        catalog().verify(&bytes, &tight).unwrap_err(),
        CatalogError::TooMuchWork {
            ticks: 1000,
            per_tick: 40,
            limit: 39_999
        }
    );
    assert!(
        catalog()
            .verify(
                &bytes,
                &ReplayLimits {
                    max_work: 40_000,
                    ..LIMITS
                }
            )
            .is_ok()
    );
    // Horde: 500 units a tick plus 55 per enemy for the first 4096 and 140
    // for each after that, taken from the replay's own config, so a small
    // file cannot declare a huge world and buy hours of verification. The
    // default config has 300 enemies: 500 + 300 × 55 = 17 000 units
    // (about 16.7 µs measured).
    let horde_cfg = include_bytes!("../../../../config/horde.json");
    let enemies = tickwise_sims::horde::HordeConfig::from_json(horde_cfg)
        .unwrap()
        .enemies();
    assert_eq!(enemies, 300, "the expected cost below assumes 300 enemies");
    let rec = catalog()
        .record("horde", Some(horde_cfg), &InputPlan::Scripted, 10, 60)
        .unwrap();
    let per_tick = 17_000;
    let limit = 10 * per_tick - 1;
    assert_eq!(
        catalog()
            .verify(
                &rec.bytes,
                &ReplayLimits {
                    max_work: limit,
                    ..LIMITS
                }
            )
            .unwrap_err(),
        CatalogError::TooMuchWork {
            ticks: 10,
            per_tick,
            limit
        }
    );
    // A million enemies: 500 + 4096 × 55 + 995 904 × 140 units a tick.
    let big = tickwise_sims::horde::HordeConfig::from_json(horde_cfg)
        .unwrap()
        .with_enemies(1_000_000)
        .unwrap();
    assert_eq!(
        <tickwise_sims::horde::HordeWorld as tickwise_catalog::CatalogSim>::work_per_tick(&big),
        139_652_340
    );
}

/// `verify_vec` (the owned-buffer path `tickwise verify` uses, which picks
/// the sim before hashing the file once) answers exactly as `verify` does:
/// the same report for good and forged files, the same error for every
/// corrupted, truncated or foreign one, the integrity checksum first.
#[test]
fn verify_vec_answers_as_verify_does() {
    let good = island(500, &InputPlan::Random(3));
    let mut cases = vec![good.clone()];
    // One flipped bit anywhere: the checksum mismatch, whatever the byte
    // (including the sim id, the version and the config).
    for i in (0..good.len()).step_by(7) {
        let mut bad = good.clone();
        bad[i] ^= 0x10;
        cases.push(bad);
    }
    for n in [0, 9, 20, 40, good.len() - 9] {
        cases.push(good[..n].to_vec());
    }
    // Well-formed files that are not verifiable: unknown sim, other version.
    cases.push(island_with(
        ReplayHeader {
            sim_id: "nope".into(),
            ..island_header()
        },
        &cfg(),
    ));
    cases.push(island_with(
        ReplayHeader {
            sim_version: 99,
            ..island_header()
        },
        &cfg(),
    ));
    let c = catalog();
    for (i, bytes) in cases.iter().enumerate() {
        let a = c.verify(bytes, &LIMITS);
        let b = c.verify_vec(bytes.clone(), &LIMITS);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "case {i}");
    }
    assert!(c.verify_vec(good, &LIMITS).unwrap().is_match());
}

/// The service's path: `admit` at upload, `judge_admitted` later, gives
/// the verdict `judge` gives (the header read once, the file hashed once),
/// and every file `admit` refuses is refused by `judge` the same way.
#[test]
fn judge_admitted_answers_as_judge_does() {
    let good = island(500, &InputPlan::Random(3));
    let replay = Replay::<i32>::from_bytes(&good, &LIMITS).unwrap();
    let mut inputs: Vec<i32> = replay.inputs(0).copied().collect();
    inputs[130] = -inputs[130] + 1;
    let mut parts = replay.into_parts();
    parts.set_inputs(0, inputs);
    let forged = Replay::from_parts(parts).unwrap().to_bytes();
    let horde = catalog()
        .record("horde", None, &InputPlan::Random(5), 40, 10)
        .unwrap()
        .bytes;
    let mut cases = vec![good.clone(), forged, horde];
    for i in (0..good.len()).step_by(11) {
        let mut bad = good.clone();
        bad[i] ^= 0x04;
        cases.push(bad);
    }
    cases.push(island_with(
        ReplayHeader {
            sim_version: 99,
            ..island_header()
        },
        &cfg(),
    ));
    cases.push(island_with(
        ReplayHeader {
            seed: 7,
            ..island_header()
        },
        &cfg(),
    ));
    let c = catalog();
    let mut admitted = 0;
    for (i, bytes) in cases.iter().enumerate() {
        let judged = c.judge(bytes.clone(), &LIMITS);
        match c.admit(bytes, &LIMITS) {
            Ok(a) => {
                admitted += 1;
                assert_eq!(a.header(), &tickwise::read_header(bytes, &LIMITS).unwrap());
                let v = c.judge_admitted(bytes, &a, &LIMITS);
                assert_eq!(v.to_json(), judged.to_json(), "case {i}");
                assert_eq!(v.simulated, judged.simulated, "case {i}");
            }
            Err(refused) => assert_eq!(refused.to_json(), judged.to_json(), "case {i}"),
        }
    }
    // The good, forged and horde files, and the seed the config
    // contradicts (refused by the decode, not the header checks).
    assert_eq!(admitted, 4);
    let ok = c.judge_admitted(&good, &c.admit(&good, &LIMITS).unwrap(), &LIMITS);
    assert_eq!(ok.to_json()["status"], "ok");
    // Bytes of another length than the admitted ones: judged from scratch.
    let a = c.admit(&good, &LIMITS).unwrap();
    let cut = &good[..good.len() - 1];
    assert_eq!(
        c.judge_admitted(cut, &a, &LIMITS).to_json(),
        c.judge(cut.to_vec(), &LIMITS).to_json()
    );
}

#[test]
fn only_builtin_registers_the_island_and_the_horde() {
    // A default or empty catalog has no sims (a game's tool registers its
    // own); the built-in one lists them in this order.
    assert_eq!(Catalog::default().ids().count(), 0);
    assert_eq!(Catalog::empty().ids().count(), 0);
    assert_eq!(
        Catalog::builtin().ids().collect::<Vec<_>>(),
        ["island", "horde"]
    );
}
