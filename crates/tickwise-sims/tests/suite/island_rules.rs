//! Every golden number of the island rules and the resume rules (listed in
//! `docs/background.md`), checked natively.

use proptest::prelude::*;
use tickwise::{
    CatchUpPolicy, FixedLoop, MAX_ADVANCE, MAX_DURATION_MS, MAX_FRAMES_PER_CALL, MAX_WALL_MS,
    Nanos, PlayError, Sim, TickInputs, Timestamp,
};
use tickwise_config::ConfigError;
use tickwise_sims::island::{
    IslandConfig, IslandWorld, LifecycleConfig, island_session, scripted_inputs,
};

const LOOP_JSON: &[u8] = include_bytes!("../../../../config/island_loop.json");
const LIFECYCLE_JSON: &[u8] = include_bytes!("../../../../config/island_lifecycle.json");
const GOLDEN_100: &str = "100|-131|5050|18|100|323|3492529440|0";

fn cfg() -> IslandConfig {
    IslandConfig::from_json(LOOP_JSON).unwrap()
}

fn new_loop(inputs: Vec<i32>) -> FixedLoop<IslandWorld, TickInputs<i32>> {
    let c = cfg();
    FixedLoop::new(
        IslandWorld::new(&c),
        TickInputs::new(inputs),
        c.clock_config(),
        CatchUpPolicy::Full,
    )
}

fn feed(frames: &[u64], inputs: Vec<i32>) -> (u64, FixedLoop<IslandWorld, TickInputs<i32>>) {
    let mut lp = new_loop(inputs);
    let steps = frames
        .iter()
        .map(|&ms| u64::from(lp.frame(Nanos::from_millis(ms)).steps))
        .sum();
    (steps, lp)
}

#[test]
fn config_file_holds_the_island_rules_values() {
    let c = cfg();
    assert_eq!(
        (
            c.seed,
            c.step_ms,
            c.accel,
            c.friction_num,
            c.friction_den,
            c.max_steps_per_frame
        ),
        (20_261_012, 16, 3, 15, 16, 8)
    );
    assert_eq!(
        (c.rng_multiplier, c.rng_increment, c.max_frame_ms),
        (1_103_515_245, 12_345, None)
    );
    let lc = LifecycleConfig::from_json(LIFECYCLE_JSON).unwrap();
    assert_eq!(lc.step_ms, 16);
    assert_eq!(
        lc.policy,
        CatchUpPolicy::Capped {
            max_steps: 300,
            min_elapsed: Nanos::from_millis(32)
        }
    );
}

#[test]
fn sixteen_thirtytwo_and_irregular_frames_end_on_the_golden_digest() {
    let irregular: Vec<u64> = [3, 7, 13, 29, 48]
        .iter()
        .copied()
        .cycle()
        .take(80)
        .collect();
    for frames in [vec![16; 100], vec![32; 50], irregular] {
        assert_eq!(frames.iter().sum::<u64>(), 1600);
        let (steps, lp) = feed(&frames, scripted_inputs(100));
        assert_eq!(steps, 100);
        assert_eq!(lp.sim().digest(), GOLDEN_100);
    }
}

#[test]
fn a_100_second_frame_runs_eight_steps_and_drops_the_rest() {
    let (steps, lp) = feed(&[100_000], scripted_inputs(100));
    assert_eq!(steps, 8);
    assert_eq!(lp.sim().tick(), 8);
    assert!(lp.sim().dropped_ms() > 0);
    assert_eq!(lp.sim().dropped_ms(), 100_000 - 8 * 16);
    assert_eq!(lp.clock().accumulator(), Nanos::ZERO);
}

#[test]
fn fifteen_ms_then_one_ms() {
    let mut lp = new_loop(scripted_inputs(100));
    assert_eq!(lp.frame(Nanos::from_millis(15)).steps, 0);
    assert_eq!(lp.sim().tick(), 0);
    assert_eq!(lp.frame(Nanos::from_millis(1)).steps, 1);
    assert_eq!(lp.sim().tick(), 1);
    assert_eq!(lp.clock().accumulator(), Nanos::ZERO);
}

#[test]
fn advance_equals_frames_and_inputs_and_seed_matter() {
    let mut direct = new_loop(scripted_inputs(100));
    let _ = direct.advance(100);
    assert_eq!(direct.sim().digest(), GOLDEN_100);
    let flipped: Vec<i32> = scripted_inputs(100).iter().map(|i| -i).collect();
    assert_ne!(feed(&[16; 100], flipped).1.sim().digest(), GOLDEN_100);
    let mut other = cfg();
    other.seed += 1;
    let mut w = IslandWorld::new(&other);
    for i in scripted_inputs(100) {
        w.step(core::slice::from_ref(&i));
    }
    assert_ne!(w.digest(), GOLDEN_100);
}

#[test]
fn resume_rules_browser_timeline_natively() {
    let lc = LifecycleConfig::from_json(LIFECYCLE_JSON).unwrap();
    let mut s = island_session(&cfg(), &lc, scripted_inputs(100_000)).unwrap();
    assert_eq!(s.frames(100, 16).unwrap(), 100);
    assert_eq!(s.tick(), 100);
    assert!(s.pause());
    let r = s.resume_after(5_000).unwrap();
    assert_eq!(r.elapsed, Nanos::from_millis(5_000));
    assert_eq!((r.wanted_steps, r.catch_up_steps), (312, 300));
    assert_eq!(r.dropped, Nanos::from_millis(200));
    assert_eq!(s.tick(), 400);
    assert!(s.pause());
    let r = s.resume_after(3_600_000).unwrap();
    assert_eq!((r.wanted_steps, r.catch_up_steps), (225_000, 300));
    assert_eq!(s.tick(), 700);
    assert_eq!(s.scenes(), "menu=paused,game=active");
    s.push("popup").unwrap();
    assert_eq!(s.scenes(), "menu=paused,game=paused,popup=active");
    s.pop().unwrap();
    assert_eq!(s.scenes(), "menu=paused,game=active");
    s.pop().unwrap();
    s.pop().unwrap();
    assert_eq!(s.scenes(), "");
    assert!(s.pop().is_err());
    // A resume without a pause is refused and changes nothing.
    let (before, wall) = (s.digest(), s.wall_ms());
    assert!(matches!(s.resume_after(10), Err(PlayError::Lifecycle(_))));
    assert_eq!((s.digest(), s.wall_ms()), (before, wall));
}

#[test]
fn session_limits_refuse_before_running() {
    let lc = LifecycleConfig::from_json(LIFECYCLE_JSON).unwrap();
    let mut s = island_session(&cfg(), &lc, scripted_inputs(100)).unwrap();
    assert!(matches!(
        s.frames(MAX_FRAMES_PER_CALL + 1, 16),
        Err(PlayError::TooLarge { what: "frames", .. })
    ));
    assert!(matches!(
        s.advance(MAX_ADVANCE + 1),
        Err(PlayError::TooLarge { what: "steps", .. })
    ));
    assert!(matches!(
        s.frame_list(&[MAX_DURATION_MS + 1]),
        Err(PlayError::TooLarge { what: "ms", .. })
    ));
    // Ten absences of 10^12 ms reach the wall-clock limit exactly; one more ms is refused.
    for _ in 0..10 {
        assert!(s.pause());
        let _ = s.resume_after(MAX_DURATION_MS).unwrap();
    }
    assert_eq!(s.wall_ms(), MAX_WALL_MS);
    assert!(s.pause());
    assert!(matches!(
        s.resume_after(1),
        Err(PlayError::WallClockFull { .. })
    ));
    assert!(matches!(
        s.frames(1, 1),
        Err(PlayError::WallClockFull { .. })
    ));
    // Nothing ran: 10 capped resumes of 300 steps each.
    assert_eq!(s.tick(), 3_000);
}

#[test]
fn uncapped_resume_equals_staying_online() {
    // Online: 20 ms frames for 100 frames, then 30 s more of 20 ms frames.
    // Offline: the same first 100 frames, pause, 30 s away with the Full policy,
    // resume, then one zero-length frame to run the carried remainder.
    let c = cfg();
    let full = LifecycleConfig {
        step_ms: 16,
        policy: CatchUpPolicy::Full,
    };
    let mut online = island_session(&c, &full, scripted_inputs(5_000)).unwrap();
    let mut offline = island_session(&c, &full, scripted_inputs(5_000)).unwrap();
    online.frames(100, 20).unwrap();
    offline.frames(100, 20).unwrap();
    online.frames(1_500, 20).unwrap();
    assert!(offline.pause());
    let r = offline.resume_after(30_000).unwrap();
    assert_eq!(r.dropped, Nanos::ZERO);
    offline.frames(1, 0).unwrap();
    assert_eq!(offline.digest(), online.digest());
    assert_eq!(offline.accumulator_ms(), online.accumulator_ms());
    assert_eq!(
        offline.fixed_loop().clock().exact_parts(),
        online.fixed_loop().clock().exact_parts()
    );
}

#[test]
fn config_errors_name_the_key() {
    let base: serde_json::Value = serde_json::from_slice(LOOP_JSON).unwrap();
    let with = |key: &str, v: serde_json::Value| {
        let mut o = base.clone();
        o[key] = v;
        IslandConfig::from_json(o.to_string().as_bytes()).unwrap_err()
    };
    let key_of = |e: &ConfigError| match e {
        ConfigError::Missing { key }
        | ConfigError::WrongType { key, .. }
        | ConfigError::OutOfRange { key, .. }
        | ConfigError::Inconsistent { key, .. } => key.clone(),
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(key_of(&with("stepMs", 0.into())), "stepMs");
    assert_eq!(key_of(&with("stepMs", (-16).into())), "stepMs");
    assert_eq!(key_of(&with("stepMs", "16".into())), "stepMs");
    assert_eq!(key_of(&with("stepMs", serde_json::json!(16.5))), "stepMs");
    assert_eq!(key_of(&with("frictionDen", 0.into())), "frictionDen");
    assert_eq!(key_of(&with("frictionNum", 17.into())), "frictionNum");
    assert_eq!(
        key_of(&with("maxStepsPerFrame", 0.into())),
        "maxStepsPerFrame"
    );
    assert_eq!(
        key_of(&with("seed", serde_json::json!(4_294_967_296u64))),
        "seed"
    );
    assert_eq!(key_of(&with("version", 2.into())), "version");
    let mut missing = base.clone();
    missing.as_object_mut().unwrap().remove("accel");
    let e = IslandConfig::from_json(missing.to_string().as_bytes()).unwrap_err();
    assert_eq!(
        e,
        ConfigError::Missing {
            key: "accel".into()
        }
    );
    assert!(e.to_string().contains("`accel`"));
    assert!(matches!(
        IslandConfig::from_json(b"{"),
        Err(ConfigError::Syntax { .. })
    ));

    let lc_bad =
        br#"{"stepMs": 16, "maxCatchUpSteps": 300, "minCatchUpMs": 32, "policy": "sometimes"}"#;
    assert!(
        matches!(LifecycleConfig::from_json(lc_bad), Err(ConfigError::OutOfRange { key, .. }) if key == "policy")
    );
    let lc_17 = LifecycleConfig {
        step_ms: 17,
        policy: CatchUpPolicy::Full,
    };
    assert!(
        matches!(island_session(&cfg(), &lc_17, Vec::new()), Err(ConfigError::Inconsistent { key, .. }) if key == "stepMs")
    );
}

#[test]
fn island_configs_refuse_duplicate_and_unknown_keys() {
    let loop_text = std::str::from_utf8(LOOP_JSON).unwrap().trim_end();
    let lc_text = std::str::from_utf8(LIFECYCLE_JSON).unwrap().trim_end();
    let plus = |text: &str, extra: &str| {
        format!("{}, {extra}}}", text.strip_suffix('}').unwrap()).into_bytes()
    };
    // Duplicates: the issue's example, then a key of the lifecycle file.
    assert_eq!(
        IslandConfig::from_json(&plus(loop_text, r#""stepMs": 32"#)).unwrap_err(),
        ConfigError::DuplicateKey {
            key: "stepMs".into()
        }
    );
    assert_eq!(
        LifecycleConfig::from_json(&plus(lc_text, r#""policy": "full""#)).unwrap_err(),
        ConfigError::DuplicateKey {
            key: "policy".into()
        }
    );
    // A typo is named with the key it most likely meant.
    let e = IslandConfig::from_json(&plus(loop_text, r#""maxFrameMS": 50"#)).unwrap_err();
    assert_eq!(
        e,
        ConfigError::UnknownKey {
            key: "maxFrameMS".into(),
            suggestion: Some("maxFrameMs")
        }
    );
    assert!(e.to_string().contains("did you mean `maxFrameMs`?"), "{e}");
    // Each file's keys belong to it alone.
    assert!(matches!(
        LifecycleConfig::from_json(&plus(lc_text, r#""seed": 1"#)),
        Err(ConfigError::UnknownKey { key, .. }) if key == "seed"
    ));
    assert!(matches!(
        IslandConfig::from_json(&plus(loop_text, r#""policy": "full""#)),
        Err(ConfigError::UnknownKey { key, .. }) if key == "policy"
    ));
    // Free text: `note` (already in both files) and `$comment`, strings only.
    assert!(IslandConfig::from_json(&plus(loop_text, r#""$comment": "ok""#)).is_ok());
    assert!(matches!(
        IslandConfig::from_json(&plus(loop_text, r#""$comment": 7"#)),
        Err(ConfigError::WrongType { key, .. }) if key == "$comment"
    ));
    assert!(matches!(
        IslandConfig::from_json(br#"{"game": 1}"#),
        Err(ConfigError::WrongType { key, .. }) if key == "game"
    ));
}

#[test]
fn posy_is_64_bit() {
    // velY = t and posY = t(t+1)/2: past 2^32 after 92 682 ticks (a 32-bit
    // position would wrap there). Checked against the closed form.
    let mut lp = new_loop(Vec::new());
    let t: u64 = 100_000;
    let _ = lp.advance(t);
    assert_eq!(lp.sim().pos_y(), i64::try_from(t * (t + 1) / 2).unwrap());
    assert_eq!(lp.sim().vel_y(), i64::try_from(t).unwrap());
}

#[test]
fn negative_velocity_floors_toward_minus_infinity() {
    // One tick of input -1 from rest: velX = floor(-3 * 15 / 16) = floor(-2.8125) = -3
    // (truncation would give -2).
    let mut w = IslandWorld::new(&cfg());
    w.step(&[-1]);
    assert_eq!((w.vel_x(), w.pos_x()), (-3, -3));
}

proptest! {
    /// Any frame schedule that never hits the step cap ends on the same digest
    /// as the same total time fed as one-step (16 ms) frames.
    #[test]
    fn frame_rate_independence(frames in proptest::collection::vec(0u64..=128, 1..300)) {
        // A remainder under 16 ms plus 128 ms is under 9 steps: never capped.
        let total: u64 = frames.iter().sum();
        let (steps, lp) = feed(&frames, scripted_inputs(3_000));
        prop_assert_eq!(lp.sim().dropped_ms(), 0);
        let whole = total / 16;
        let mut reference: Vec<u64> = vec![16; usize::try_from(whole).unwrap()];
        reference.push(total % 16);
        let (ref_steps, ref_lp) = feed(&reference, scripted_inputs(3_000));
        prop_assert_eq!(steps, ref_steps);
        prop_assert_eq!(lp.sim().digest(), ref_lp.sim().digest());
        prop_assert_eq!(lp.clock().accumulator(), ref_lp.clock().accumulator());
    }

    /// The loop's host timestamps give the same result as durations.
    #[test]
    fn hosted_timestamps_equal_durations(frames in proptest::collection::vec(0u64..=128, 1..100)) {
        let (_, by_dt) = feed(&frames, scripted_inputs(1_000));
        let mut hosted = new_loop(scripted_inputs(1_000));
        let mut now = 0;
        for ms in &frames {
            now += ms;
            let _ = hosted.frame_at(Timestamp::from_millis(now));
        }
        prop_assert_eq!(hosted.sim().digest(), by_dt.sim().digest());
    }
}
