//! A sim defined here, outside the sims crate, registered exactly as a game
//! would: record, verify, tamper, compare, sync-test, run, and the version
//! and id rules.

use serde_json::Value;
use tickwise::{
    ClockConfig, Pcg32, Replay, ReplayLimits, ReplayVerdict, Sim, StateVisitor, StepLength,
};
use tickwise_catalog::{Catalog, CatalogError, CatalogSim, InputPlan, replay_header};

/// A counter that adds its input to `total` and counts odd totals.
#[derive(Clone, Debug)]
struct Tally {
    total: i64,
    odd: u64,
}

impl Sim for Tally {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        let add = &inputs.first().cloned().unwrap_or_default();
        self.total += i64::from(*add);
        if self.total % 2 != 0 {
            self.odd += 1;
        }
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("total");
        v.value_i64(self.total);
        v.field("odd");
        v.value(self.odd);
    }
}

const STEP: StepLength = match StepLength::from_hz(30) {
    Ok(s) => s,
    Err(_) => panic!("30 Hz is a valid step"),
};

/// `{"start": N}`.
fn parse(bytes: &[u8]) -> Result<i64, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    v.get("start")
        .and_then(Value::as_i64)
        .ok_or_else(|| "`start` must be an integer".into())
}

impl CatalogSim for Tally {
    const ID: &'static str = "tally";
    const VERSION: u32 = 3;
    const DEFAULT_CONFIG: &'static [u8] = br#"{"start": 0}"#;
    type Config = i64;
    type ConfigError = String;
    fn parse_config(bytes: &[u8]) -> Result<i64, String> {
        parse(bytes)
    }
    fn build(start: &i64) -> Tally {
        Tally {
            total: *start,
            odd: 0,
        }
    }
    fn seed(start: &i64) -> u64 {
        start.unsigned_abs()
    }
    fn clock_config(_: &i64) -> ClockConfig {
        ClockConfig::new(STEP)
    }
    fn work_per_tick(_: &i64) -> u64 {
        2
    }
    fn scripted_input(tick: u64) -> i32 {
        i32::from(tick.is_multiple_of(3))
    }
    fn random_input(rng: &mut Pcg32) -> i32 {
        i32::try_from(rng.next_u32() % 5).unwrap()
    }
    fn json_input(v: &Value) -> Result<i32, String> {
        v.as_i64()
            .and_then(|x| i32::try_from(x).ok())
            .ok_or_else(|| "an integer".into())
    }
}

/// The same id with a newer version: the rules changed.
#[derive(Clone, Debug)]
struct TallyV4(Tally);

impl Sim for TallyV4 {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        let add = &inputs.first().cloned().unwrap_or_default();
        self.0.step(core::slice::from_ref(&add.saturating_mul(2)));
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.0.visit_state(v);
    }
}

impl CatalogSim for TallyV4 {
    const ID: &'static str = "tally";
    const VERSION: u32 = 4;
    const DEFAULT_CONFIG: &'static [u8] = Tally::DEFAULT_CONFIG;
    type Config = i64;
    type ConfigError = String;
    fn parse_config(bytes: &[u8]) -> Result<i64, String> {
        parse(bytes)
    }
    fn build(start: &i64) -> TallyV4 {
        TallyV4(Tally::build(start))
    }
    fn seed(start: &i64) -> u64 {
        Tally::seed(start)
    }
    fn clock_config(c: &i64) -> ClockConfig {
        Tally::clock_config(c)
    }
    fn work_per_tick(c: &i64) -> u64 {
        Tally::work_per_tick(c)
    }
    fn scripted_input(tick: u64) -> i32 {
        Tally::scripted_input(tick)
    }
    fn random_input(rng: &mut Pcg32) -> i32 {
        Tally::random_input(rng)
    }
    fn json_input(v: &Value) -> Result<i32, String> {
        Tally::json_input(v)
    }
}

const LIMITS: ReplayLimits = ReplayLimits::DEFAULT;

fn catalog() -> Catalog {
    Catalog::empty().with::<Tally>()
}

#[test]
fn record_verify_tamper_compare() {
    let c = catalog();
    // Scripted: +1 on ticks 0, 3, 6, ...: after 9 ticks total 3; totals
    // 1,1,1,2,2,2,3,3,3 are odd on 6 ticks.
    let rec = c.record("tally", None, &InputPlan::Scripted, 9, 3).unwrap();
    let fields = Tally { total: 3, odd: 6 };
    assert_eq!(rec.digest, format!("{:016x}", fields.checksum()));
    let report = c.verify(&rec.bytes, &LIMITS).unwrap();
    assert_eq!(
        report.verdict,
        ReplayVerdict::Match {
            digest: rec.digest.clone()
        }
    );

    // Tick 4 gets +1: totals from tick 4 on are one higher, so the first
    // checkpoint after it (tick 6, the second) catches it.
    let replay = Replay::<i32>::from_bytes(&rec.bytes, &LIMITS).unwrap();
    let mut inputs: Vec<i32> = replay.inputs(0).copied().collect();
    inputs[4] = 1;
    let mut parts = replay.into_parts();
    parts.set_inputs(0, inputs);
    let forged = Replay::from_parts(parts).unwrap().to_bytes();
    let ReplayVerdict::Diverged(d) = c.verify(&forged, &LIMITS).unwrap().verdict else {
        panic!("forgery not caught")
    };
    assert_eq!((d.last_good_tick, d.tick), (3, 6));
    assert_eq!(d.fields, ["total", "odd"]);

    let cmp = c.compare(&rec.bytes, &forged, &LIMITS).unwrap();
    assert_eq!(cmp.sim.id, "tally");
    assert_eq!(
        cmp.comparison.first_input_difference.map(|d| d.tick),
        Some(4)
    );
    // The state after tick 4 (tick count 5) is the first to differ.
    assert_eq!(cmp.comparison.divergence.unwrap().tick, 5);

    let live = c
        .compare_live(&rec.bytes, &LIMITS, None, &InputPlan::Scripted)
        .unwrap();
    assert_eq!((live.comparison.divergence, live.ticks_b), (None, 9));
    let other_start = c
        .compare_live(
            &rec.bytes,
            &LIMITS,
            Some(br#"{"start": 1}"#),
            &InputPlan::Scripted,
        )
        .unwrap();
    assert_eq!(other_start.comparison.divergence.unwrap().tick, 0);
}

#[test]
fn sync_test_runner_and_profile() {
    let c = catalog();
    let r = c
        .sync_test("tally", None, &InputPlan::Random(9), 500, 4)
        .unwrap();
    assert_eq!((r.mismatch, r.ticks), (None, 500));

    let mut runner = c
        .runner(
            "tally",
            Some(br#"{"start": 10}"#),
            &InputPlan::Json(b"[5, 5]".to_vec()),
        )
        .unwrap();
    runner.run(3);
    // 10 + 5 + 5 + 0: totals 15, 20, 20; one odd.
    assert_eq!(runner.tick(), 3);
    assert_eq!(runner.checksum(), Tally { total: 20, odd: 1 }.checksum());
    let p = *runner.profile();
    assert_eq!(
        (p.sim.id, p.sim.version, p.seed, p.work_per_tick),
        ("tally", 3, 10, 2)
    );
    assert_eq!((p.settle_ticks, p.max_catch_up_steps), (0, None));
    assert_eq!(p.clock.step(), STEP);
    assert_eq!(c.profile("tally", None).unwrap().seed, 0);
}

#[test]
fn a_replay_of_another_version_is_refused_not_called_a_forgery() {
    let rec = catalog()
        .record("tally", None, &InputPlan::Scripted, 30, 10)
        .unwrap();
    let newer = Catalog::empty().with::<TallyV4>();
    let expected = CatalogError::VersionMismatch {
        id: "tally".into(),
        found: 3,
        supported: 4,
    };
    assert_eq!(newer.verify(&rec.bytes, &LIMITS).unwrap_err(), expected);
    assert_eq!(
        newer.compare(&rec.bytes, &rec.bytes, &LIMITS).unwrap_err(),
        expected
    );
    assert_eq!(newer.identify(&rec.bytes, &LIMITS).unwrap_err(), expected);
    assert_eq!(
        expected.to_string(),
        "replay was recorded by tally version 3; this build runs version 4"
    );
}

#[test]
fn ids_lookup_and_replacement() {
    let c = Catalog::builtin().with::<Tally>();
    assert_eq!(c.ids().collect::<Vec<_>>(), ["island", "horde", "tally"]);
    let e = c.get("pong").unwrap_err();
    assert_eq!(
        e,
        CatalogError::UnknownSim {
            id: "pong".into(),
            known: vec!["island", "horde", "tally"]
        }
    );
    assert_eq!(
        e.to_string(),
        "unknown sim id \"pong\" (known: island, horde, tally)"
    );
    assert_eq!(
        Catalog::empty().get("x").unwrap_err().to_string(),
        "unknown sim id \"x\" (known: none)"
    );
    // A later registration under a taken id replaces the earlier one in place.
    let replaced = c.with::<TallyV4>();
    assert_eq!(replaced.ids().count(), 3);
    assert_eq!(replaced.get("tally").unwrap().version, 4);
}

#[test]
fn config_errors_and_live_headers() {
    let c = catalog();
    let e = c
        .record("tally", Some(b"{}"), &InputPlan::Scripted, 1, 1)
        .unwrap_err();
    assert_eq!(
        e,
        CatalogError::Config {
            sim: "tally",
            message: "`start` must be an integer".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "invalid tally config: `start` must be an integer"
    );

    let h = replay_header::<Tally>(br#"{"start": -7}"#, 16).unwrap();
    assert_eq!(
        (
            h.sim_id.as_str(),
            h.sim_version,
            h.seed,
            h.checkpoint_every,
            h.ticks
        ),
        ("tally", 3, 7, 16, 0)
    );
    assert_eq!(h.config, br#"{"start": -7}"#);
    assert!(matches!(
        replay_header::<Tally>(b"nope", 16),
        Err(CatalogError::Config { sim: "tally", .. })
    ));
}

#[test]
fn work_limit_uses_the_sims_own_cost() {
    let rec = catalog()
        .record("tally", None, &InputPlan::Scripted, 50, 10)
        .unwrap();
    // 50 ticks at 2 units each: 100 units.
    let tight = ReplayLimits {
        max_work: 99,
        ..LIMITS
    };
    assert_eq!(
        catalog().verify(&rec.bytes, &tight).unwrap_err(),
        CatalogError::TooMuchWork {
            ticks: 50,
            per_tick: 2,
            limit: 99
        }
    );
    let msg = catalog()
        .verify(&rec.bytes, &tight)
        .unwrap_err()
        .to_string();
    assert!(!msg.contains("--"), "library errors name no flags: {msg}");
}
