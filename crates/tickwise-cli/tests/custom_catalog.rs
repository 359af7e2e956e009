//! The CLI as a library: a game's own sim, defined here, gets `record`,
//! `verify`, `compare`, `sync-test` and `budget` through
//! `tickwise_cli::main_with_args` with a catalog of its own.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;
use tickwise::{
    ClockConfig, Pcg32, Replay, ReplayLimits, ReplayVerdict, Sim, StateVisitor, StepLength,
};
use tickwise_cli::{Catalog, CatalogSim, ToolInfo, main_with_args};

/// A paddle that follows its input (-1, 0, 1) within a court of half-width
/// `court`, and counts the ticks it spent against a wall.
#[derive(Clone, Debug)]
struct Paddle {
    y: i64,
    court: i64,
    at_wall: u64,
}

impl Sim for Paddle {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        let dir = inputs[0];
        self.y = (self.y + 3 * i64::from(dir.clamp(-1, 1))).clamp(-self.court, self.court);
        if self.y.abs() == self.court {
            self.at_wall += 1;
        }
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("y");
        v.value_i64(self.y);
        v.field("atWall");
        v.value(self.at_wall);
    }
}

const STEP: StepLength = match StepLength::from_hz(60) {
    Ok(s) => s,
    Err(_) => panic!("60 Hz is a valid step"),
};

impl CatalogSim for Paddle {
    const ID: &'static str = "paddle";
    const VERSION: u32 = 1;
    const DEFAULT_CONFIG: &'static [u8] = br#"{"court": 30}"#;
    type Config = i64;
    type ConfigError = String;
    fn parse_config(bytes: &[u8]) -> Result<i64, String> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        v.get("court")
            .and_then(Value::as_i64)
            .filter(|c| (1..=1000).contains(c))
            .ok_or_else(|| "`court` must be an integer from 1 to 1000".into())
    }
    fn build(court: &i64) -> Paddle {
        Paddle {
            y: 0,
            court: *court,
            at_wall: 0,
        }
    }
    fn seed(_: &i64) -> u64 {
        0
    }
    fn clock_config(_: &i64) -> ClockConfig {
        ClockConfig::new(STEP)
    }
    fn work_per_tick(_: &i64) -> u64 {
        1
    }
    /// Up for 25 ticks, down for 25.
    fn scripted_input(tick: u64) -> i32 {
        if tick % 50 < 25 { 1 } else { -1 }
    }
    fn random_input(rng: &mut Pcg32) -> i32 {
        i32::try_from(rng.next_u32() % 3).unwrap() - 1
    }
    fn json_input(v: &Value) -> Result<i32, String> {
        v.as_i64()
            .and_then(|x| i32::try_from(x).ok())
            .ok_or_else(|| "an integer".into())
    }
}

/// The same id, version 2.
#[derive(Clone, Debug)]
struct PaddleV2(Paddle);

impl Sim for PaddleV2 {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        self.0.step(inputs);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.0.visit_state(v);
    }
}

impl CatalogSim for PaddleV2 {
    const ID: &'static str = "paddle";
    const VERSION: u32 = 2;
    const DEFAULT_CONFIG: &'static [u8] = Paddle::DEFAULT_CONFIG;
    type Config = i64;
    type ConfigError = String;
    fn parse_config(bytes: &[u8]) -> Result<i64, String> {
        Paddle::parse_config(bytes)
    }
    fn build(c: &i64) -> PaddleV2 {
        PaddleV2(Paddle::build(c))
    }
    fn seed(c: &i64) -> u64 {
        Paddle::seed(c)
    }
    fn clock_config(c: &i64) -> ClockConfig {
        Paddle::clock_config(c)
    }
    fn work_per_tick(c: &i64) -> u64 {
        Paddle::work_per_tick(c)
    }
    fn scripted_input(t: u64) -> i32 {
        Paddle::scripted_input(t)
    }
    fn random_input(rng: &mut Pcg32) -> i32 {
        Paddle::random_input(rng)
    }
    fn json_input(v: &Value) -> Result<i32, String> {
        Paddle::json_input(v)
    }
}

fn catalog() -> Catalog {
    Catalog::empty().with::<Paddle>()
}

fn tool(catalog: &Catalog, args: &[&str]) -> ExitCode {
    main_with_args(
        &ToolInfo::new("my-game-tools", "0.3.1", "My game's replay tools."),
        catalog,
        [&["my-game-tools"][..], args].concat(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const LIMITS: ReplayLimits = ReplayLimits::DEFAULT;

#[test]
fn record_verify_tamper_compare_sync_test_budget() {
    let c = catalog();
    let d = scratch("custom_catalog");
    let good = d.join("good.twr");
    let rec = [
        "record",
        "--sim",
        "paddle",
        "--ticks",
        "200",
        "--checkpoint-every",
        "20",
        "--out",
    ];
    assert_eq!(
        tool(&c, &[&rec[..], &[s(&good)]].concat()),
        ExitCode::SUCCESS
    );
    // By hand: ticks 0..=24 go up 3 each, reaching the wall (30) on tick 9
    // and staying there for ticks 9..=24 (16 ticks). Every later half-period
    // of 25 ticks crosses the 60-wide court in 20 ticks and rests at the
    // far wall for the last 6 (7 half-periods up to tick 199). Final state:
    // y = -30, atWall = 16 + 7 * 6 = 58.
    let bytes = std::fs::read(&good).unwrap();
    let replay = Replay::<i32>::from_bytes(&bytes, &LIMITS).unwrap();
    assert_eq!(replay.header().sim_id, "paddle");
    assert_eq!(replay.ticks(), 200);
    let by_hand = Paddle {
        y: -30,
        court: 30,
        at_wall: 58,
    };
    assert_eq!(replay.final_digest(), by_hand.digest());
    assert_eq!(tool(&c, &["verify", s(&good)]), ExitCode::SUCCESS);

    // Tamper: tick 5 goes down instead of up. The paddle is 6 lower from
    // tick 5 and reaches the wall on tick 11 instead of 9; from then on only
    // atWall differs (14 instead of 16 at tick 24), so the first checkpoint
    // (index 0, tick 20) catches it, naming that one field.
    let mut inputs: Vec<i32> = replay.inputs(0).copied().collect();
    assert_eq!(inputs[5], 1);
    inputs[5] = -1;
    let mut parts = replay.into_parts();
    parts.set_inputs(0, inputs);
    let bad = d.join("bad.twr");
    std::fs::write(&bad, Replay::from_parts(parts).unwrap().to_bytes()).unwrap();
    assert_eq!(tool(&c, &["verify", s(&bad)]), ExitCode::from(1));
    let ReplayVerdict::Diverged(div) = c
        .verify(&std::fs::read(&bad).unwrap(), &LIMITS)
        .unwrap()
        .verdict
    else {
        panic!("tampering not caught")
    };
    assert_eq!((div.checkpoint, div.tick), (Some(0), 20));
    assert_eq!(div.fields, ["atWall"]);
    // A directory with both: one diverged, exit 1.
    assert_eq!(tool(&c, &["verify", "--quiet", s(&d)]), ExitCode::from(1));

    assert_eq!(tool(&c, &["compare", s(&good), s(&bad)]), ExitCode::from(1));
    assert_eq!(
        tool(&c, &["compare", s(&good), "--live"]),
        ExitCode::SUCCESS
    );
    let other_court = d.join("court.json");
    std::fs::write(&other_court, r#"{"court": 6}"#).unwrap();
    assert_eq!(
        tool(
            &c,
            &["compare", s(&good), "--live", "--config", s(&other_court)]
        ),
        ExitCode::from(1)
    );

    let sync = [
        "sync-test",
        "--sim",
        "paddle",
        "--ticks",
        "300",
        "--inputs",
        "random:4",
    ];
    assert_eq!(tool(&c, &sync), ExitCode::SUCCESS);

    let budget = [
        "budget", "--sim", "paddle", "--ticks", "50", "--hz", "30,60",
    ];
    assert_eq!(tool(&c, &budget), ExitCode::SUCCESS);
    assert_eq!(
        tool(&c, &[&budget[..], &["--json"]].concat()),
        ExitCode::SUCCESS
    );
    let assumed = [
        "budget",
        "--sim",
        "paddle",
        "--cost-ms",
        "2",
        "--catch-up",
        "10",
    ];
    assert_eq!(tool(&c, &assumed), ExitCode::SUCCESS);
}

#[test]
fn inputs_files_and_bad_configs() {
    let c = catalog();
    let d = scratch("custom_catalog_inputs");
    let inputs = d.join("inputs.json");
    std::fs::write(&inputs, "[1, 1, 1, -1]").unwrap();
    let out = d.join("j.twr");
    let args = [
        "record",
        "--sim",
        "paddle",
        "--ticks",
        "6",
        "--inputs",
        s(&inputs),
        "--out",
        s(&out),
    ];
    assert_eq!(tool(&c, &args), ExitCode::SUCCESS);
    let replay = Replay::<i32>::from_bytes(&std::fs::read(&out).unwrap(), &LIMITS).unwrap();
    // Ticks past the array's end get the default input.
    assert_eq!(
        replay.inputs(0).copied().collect::<Vec<_>>(),
        [1, 1, 1, -1, 0, 0]
    );

    std::fs::write(&inputs, "[1, \"up\"]").unwrap();
    assert_eq!(tool(&c, &args), ExitCode::from(2));
    let bad_cfg = d.join("bad.json");
    std::fs::write(&bad_cfg, r#"{"court": 0}"#).unwrap();
    let args = ["sync-test", "--sim", "paddle", "--config", s(&bad_cfg)];
    assert_eq!(tool(&c, &args), ExitCode::from(2));
}

#[test]
fn unknown_ids_and_other_versions_exit_2() {
    let c = catalog();
    let d = scratch("custom_catalog_versions");
    let f = d.join("v1.twr");
    let rec = ["record", "--sim", "paddle", "--ticks", "50", "--out", s(&f)];
    assert_eq!(tool(&c, &rec), ExitCode::SUCCESS);
    // The built-in sims are not in this catalog, and this sim is not in the
    // built-in one: both are unknown ids (exit 2), never divergences.
    for args in [
        &[
            "record",
            "--sim",
            "island",
            "--ticks",
            "5",
            "--out",
            s(&d.join("x.twr")),
        ][..],
        &["sync-test", "--sim", "horde"],
        &["budget", "--sim", "horde", "--cost-ms", "1"],
    ] {
        assert_eq!(tool(&c, args), ExitCode::from(2), "{args:?}");
    }
    // Without `--sim`, a catalog of one sim means that sim (a game's tool
    // need not repeat its one id); a catalog of several keeps the built-in
    // defaults (island; horde for budget).
    let implicit = d.join("implicit.twr");
    let rec_implicit = ["record", "--ticks", "7", "--out", s(&implicit)];
    assert_eq!(tool(&c, &rec_implicit), ExitCode::SUCCESS);
    let bytes = std::fs::read(&implicit).unwrap();
    let header = Replay::<i32>::from_bytes(&bytes, &LIMITS).unwrap();
    assert_eq!(
        (header.header().sim_id.as_str(), header.ticks()),
        ("paddle", 7)
    );
    assert_eq!(tool(&c, &["sync-test", "--ticks", "20"]), ExitCode::SUCCESS);
    assert_eq!(tool(&c, &["budget", "--cost-ms", "1"]), ExitCode::SUCCESS);
    let both = Catalog::builtin().with::<Paddle>();
    assert_eq!(tool(&both, &rec_implicit), ExitCode::SUCCESS);
    let bytes = std::fs::read(&implicit).unwrap();
    assert_eq!(
        Replay::<i32>::from_bytes(&bytes, &LIMITS)
            .unwrap()
            .header()
            .sim_id,
        "island"
    );
    assert_eq!(
        tool(&Catalog::builtin(), &["verify", s(&f)]),
        ExitCode::from(2)
    );
    // A newer build of the sim refuses the old replay as unreadable (2), not
    // as a forgery (1).
    let v2 = Catalog::empty().with::<PaddleV2>();
    assert_eq!(tool(&v2, &["verify", s(&f)]), ExitCode::from(2));
    assert_eq!(tool(&v2, &["compare", s(&f), s(&f)]), ExitCode::from(2));
    // The library error text carries the facts; the tool adds nothing wrong.
    let e = v2.verify(&std::fs::read(&f).unwrap(), &LIMITS).unwrap_err();
    assert_eq!(
        e.to_string(),
        "replay was recorded by paddle version 1; this build runs version 2"
    );
    let e = c.get("island").unwrap_err();
    assert_eq!(e.to_string(), "unknown sim id \"island\" (known: paddle)");
}
