//! The duel's own tool binary, driven through `tickwise_cli::main_with_args`
//! with the catalog `src/bin/duel.rs` builds: a live session's replay is
//! verified, compared and sync-tested, and a build that changes one rule
//! without bumping the version fails `verify` at the first checkpoint.
//! `examples/duel/ci.sh` does the same with the real binaries and checks
//! their output.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;
use tickwise::{
    ClockConfig, Pcg32, Replay, ReplayLimits, ReplayVerdict, Sim, StateVisitor, TickInput,
};
use tickwise_catalog::{Catalog, CatalogError, CatalogSim};
use tickwise_cli::{ToolInfo, main_with_args};
use tickwise_example_duel::session::{
    DEMO_POLICY, LIVE_CHECKPOINT_EVERY, LiveSession, live_demo_actions,
};
use tickwise_example_duel::{ConfigError, DEFAULT_CONFIG, Duel, DuelConfig, json_input};

/// What `src/bin/duel.rs` passes to `main_with`.
fn duel_catalog() -> Catalog {
    Catalog::empty().with::<Duel>()
}

fn duel(catalog: &Catalog, args: &[&str]) -> ExitCode {
    main_with_args(
        &ToolInfo::new(
            "duel",
            env!("CARGO_PKG_VERSION"),
            "The duel's replay tools.",
        ),
        catalog,
        [&["duel"][..], args].concat(),
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

/// What `duel-live` writes.
fn write_live_replay(path: &Path) -> String {
    let mut session = LiveSession::new(DEFAULT_CONFIG, DEMO_POLICY, LIVE_CHECKPOINT_EVERY).unwrap();
    session.run(live_demo_actions()).unwrap();
    std::fs::write(path, session.replay().unwrap().to_bytes()).unwrap();
    session.sim().digest()
}

/// The duel built with one rule changed and its version left at 1: paddles
/// move one unit per tick faster (what `--features rule-change` builds).
/// The config bytes in the replay are the same; this build reads
/// `paddleSpeed` one higher.
#[derive(Clone, Debug)]
struct FasterPaddles(Duel);

impl Sim for FasterPaddles {
    type Input = TickInput;
    fn players(&self) -> usize {
        self.0.players()
    }
    fn step(&mut self, inputs: &[TickInput]) {
        self.0.step(inputs);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.0.visit_state(v);
    }
    fn digest(&self) -> String {
        self.0.digest()
    }
}

impl CatalogSim for FasterPaddles {
    const ID: &'static str = Duel::ID;
    const VERSION: u32 = Duel::VERSION;
    const DEFAULT_CONFIG: &'static [u8] = Duel::DEFAULT_CONFIG;
    type Config = DuelConfig;
    type ConfigError = ConfigError;
    fn parse_config(bytes: &[u8]) -> Result<DuelConfig, ConfigError> {
        let mut v: Value = serde_json::from_slice(bytes).map_err(|e| ConfigError::Syntax {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        if let Some(speed) = v.get_mut("paddleSpeed") {
            *speed = (speed.as_i64().unwrap_or(0) + 1).into();
        }
        DuelConfig::parse(v.to_string().as_bytes())
    }
    fn build(c: &DuelConfig) -> FasterPaddles {
        FasterPaddles(Duel::new(c))
    }
    fn seed(c: &DuelConfig) -> u64 {
        c.seed()
    }
    fn clock_config(c: &DuelConfig) -> ClockConfig {
        c.clock_config()
    }
    fn work_per_tick(_: &DuelConfig) -> u64 {
        1
    }
    fn scripted_input(tick: u64) -> TickInput {
        Duel::scripted_input(tick)
    }
    fn scripted_player_input(player: usize, tick: u64) -> TickInput {
        Duel::scripted_player_input(player, tick)
    }
    fn random_input(rng: &mut Pcg32) -> TickInput {
        Duel::random_input(rng)
    }
    fn json_input(v: &Value) -> Result<TickInput, String> {
        json_input(v)
    }
}

#[test]
fn a_live_session_verifies_compares_and_sync_tests_through_the_duel_tool() {
    let c = duel_catalog();
    let d = scratch("duel_tools");
    let live = d.join("live.twr");
    let digest = write_live_replay(&live);
    let bytes = std::fs::read(&live).unwrap();
    // The catalog's verdict carries the live session's final digest.
    match c.verify(&bytes, &ReplayLimits::DEFAULT).unwrap().verdict {
        ReplayVerdict::Match { digest: d } => assert_eq!(d, digest),
        other => panic!("the live replay does not verify: {other:?}"),
    }
    assert_eq!(duel(&c, &["verify", s(&live)]), ExitCode::SUCCESS);
    assert_eq!(
        duel(&c, &["compare", s(&live), s(&live)]),
        ExitCode::SUCCESS
    );
    // The bots play differently from the live players: exit 1, and the
    // report names tick 1 and the paddles (the right bot's stick moves
    // the right paddle on the first step; the live right player waits).
    // Tick 0's inputs differ in player 1's only: the left bot, like the
    // live left player, presses and holds up in tick 0.
    assert_eq!(
        duel(&c, &["compare", s(&live), "--live", "--inputs", "scripted"]),
        ExitCode::from(1)
    );
    let r = c
        .compare_live(
            &bytes,
            &ReplayLimits::DEFAULT,
            None,
            &tickwise_catalog::InputPlan::Scripted,
        )
        .unwrap();
    let div = r.comparison.divergence.expect("bots and players differ");
    assert_eq!((div.tick, div.fields), (1, vec!["paddles"]));
    assert_eq!(
        r.comparison
            .first_input_difference
            .map(|d| (d.tick, d.player)),
        Some((0, 1))
    );

    let sync = ["sync-test", "--ticks", "2000", "--rollback", "8"];
    assert_eq!(duel(&c, &sync), ExitCode::SUCCESS);
    let random = d.join("r.twr");
    let rec = ["record", "--ticks", "1000", "--inputs", "random:7", "--out"];
    assert_eq!(
        duel(&c, &[&rec[..], &[s(&random)]].concat()),
        ExitCode::SUCCESS
    );
    let recorded =
        Replay::<TickInput>::from_bytes(&std::fs::read(&random).unwrap(), &ReplayLimits::DEFAULT)
            .unwrap();
    assert_eq!((recorded.ticks(), recorded.players()), (1000, 2));
    // Each player draws its own stream: player p from Pcg32(7, p).
    for p in 0..2u64 {
        let mut rng = Pcg32::new(7, p);
        let expected: Vec<TickInput> = (0..1000).map(|_| Duel::random_input(&mut rng)).collect();
        let got: Vec<TickInput> = recorded.inputs(p as usize).copied().collect();
        assert_eq!(got, expected, "player {p}");
    }
    assert_eq!(duel(&c, &["verify", s(&random)]), ExitCode::SUCCESS);
    let budget = ["budget", "--ticks", "50", "--hz", "30,60", "--json"];
    assert_eq!(duel(&c, &budget), ExitCode::SUCCESS);
}

#[test]
fn a_one_rule_change_fails_verify_at_the_first_checkpoint_naming_paddles() {
    let d = scratch("duel_rule_change");
    let live = d.join("live.twr");
    write_live_replay(&live);
    let changed = Catalog::empty().with::<FasterPaddles>();
    assert_eq!(duel(&changed, &["verify", s(&live)]), ExitCode::from(1));
    // By hand: the left player holds up in ticks 0..=4, so after step 1 the
    // left paddle is at 173 instead of 174. Until the first checkpoint
    // (tick 30) only paddles differ: the ball waits at the centre until
    // step 30 and its serve comes from the seeded generator.
    let ReplayVerdict::Diverged(div) = changed
        .verify(&std::fs::read(&live).unwrap(), &ReplayLimits::DEFAULT)
        .unwrap()
        .verdict
    else {
        panic!("the rule change was not caught");
    };
    assert_eq!(
        (div.checkpoint, div.tick, div.last_good_tick),
        (Some(0), 30, 0)
    );
    assert_eq!(div.fields, ["paddles"]);
    assert!(
        div.to_string()
            .starts_with("checkpoint 1 at tick 30 diverges (last match at tick 0"),
        "{div}"
    );
}

#[test]
fn the_duel_tool_refuses_bad_input_with_exit_2() {
    let c = duel_catalog();
    let d = scratch("duel_bad_input");
    let out = d.join("out.twr");
    let typo = d.join("typo.json");
    std::fs::write(&typo, br#"[{"held": 1}, {"hold": 2}]"#).unwrap();
    let extra_button = d.join("button.json");
    std::fs::write(&extra_button, br#"[[{"held": 8}], []]"#).unwrap();
    // A flat array is one player's inputs: the duel takes two.
    let flat = d.join("flat.json");
    std::fs::write(&flat, br#"[{"held": 1}]"#).unwrap();
    for inputs in [s(&typo), s(&extra_button), s(&flat), "random:x"] {
        let args = [
            "record",
            "--ticks",
            "5",
            "--inputs",
            inputs,
            "--out",
            s(&out),
        ];
        assert_eq!(duel(&c, &args), ExitCode::from(2), "{inputs}");
    }
    assert!(!out.exists());
    assert_eq!(duel(&c, &["sync-test", "--sim", "pong"]), ExitCode::from(2));
    let garbage = d.join("garbage.twr");
    std::fs::write(&garbage, b"not a replay").unwrap();
    assert_eq!(duel(&c, &["verify", s(&garbage)]), ExitCode::from(2));
    // Session setup refuses what the catalog refuses.
    let bad = LiveSession::new(br#"{"seed": 1}"#, DEMO_POLICY, 30).unwrap_err();
    assert!(matches!(
        bad,
        tickwise_example_duel::session::SessionError::Setup(CatalogError::Config { .. })
    ));
    assert!(bad.to_string().contains("`stepMs` is missing"), "{bad}");
    assert!(LiveSession::new(DEFAULT_CONFIG, DEMO_POLICY, 0).is_err());
}

#[test]
fn json_inputs_are_strict() {
    use serde_json::json;
    let full =
        json_input(&json!({"held": 7, "pressed": 4, "released": 2, "axes": [-32768, 32767, 1, 2]}))
            .unwrap();
    assert_eq!(
        (
            full.held.bits(),
            full.pressed.bits(),
            full.released.bits(),
            full.axes
        ),
        (7, 4, 2, [-32768, 32767, 1, 2])
    );
    assert_eq!(json_input(&json!({})).unwrap(), TickInput::default());
    for (bad, names) in [
        (json!(5), "an object with optional keys"),
        (json!({"held": 8}), "\"held\" is an integer in 0..=7"),
        (json!({"pressed": -1}), "\"pressed\" is an integer in 0..=7"),
        (
            json!({"released": 1.5}),
            "\"released\" is an integer in 0..=7",
        ),
        (
            json!({"axes": [0, 0, 0, 0, 0]}),
            "\"axes\" is up to 4 integers",
        ),
        (json!({"axes": [32768]}), "\"axes\" is up to 4 integers"),
        (json!({"axes": 3}), "\"axes\" is up to 4 integers"),
        (json!({"held": 1, "Held": 1}), "(not \"Held\")"),
    ] {
        let e = json_input(&bad).unwrap_err();
        assert!(e.contains(names), "{bad}: {e}");
    }
}

/// A replay `duel record --ticks 300` wrote with version 1 (one input
/// steering both paddles), kept to prove old files are refused by version.
const VERSION_1_REPLAY: &[u8] = include_bytes!("fixtures/duel-v1.twr");

#[test]
fn a_version_1_replay_is_refused_by_version() {
    let c = duel_catalog();
    assert_eq!(tickwise_example_duel::VERSION, 2);
    let e = c
        .verify(VERSION_1_REPLAY, &ReplayLimits::DEFAULT)
        .unwrap_err();
    assert_eq!(
        e,
        CatalogError::VersionMismatch {
            id: "duel".into(),
            found: 1,
            supported: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "replay was recorded by duel version 1; this build runs version 2"
    );
    let d = scratch("duel_v1");
    let f = d.join("v1.twr");
    std::fs::write(&f, VERSION_1_REPLAY).unwrap();
    assert_eq!(duel(&c, &["verify", s(&f)]), ExitCode::from(2));
}

#[test]
fn record_players_takes_two_and_refuses_other_counts() {
    let c = duel_catalog();
    let d = scratch("duel_players");
    let out = d.join("p.twr");
    let rec = |n: &str| {
        duel(
            &c,
            &["record", "--players", n, "--ticks", "10", "--out", s(&out)],
        )
    };
    assert_eq!(rec("2"), ExitCode::SUCCESS);
    // The duel has no player-count key: only its own count is taken.
    let _ = std::fs::remove_file(&out);
    assert_eq!(rec("1"), ExitCode::from(2));
    assert_eq!(rec("3"), ExitCode::from(2));
    assert!(!out.exists());
    assert_eq!(
        c.config_for_players("duel", None, 3)
            .unwrap_err()
            .to_string(),
        "duel takes 2 players under this config, not 3"
    );
}

#[test]
fn a_forged_right_player_input_is_named_player_1() {
    let c = duel_catalog();
    let d = scratch("duel_forged");
    let live = d.join("live.twr");
    write_live_replay(&live);
    let bytes = std::fs::read(&live).unwrap();
    let replay = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    // Player 1 claims it held down in tick 100 (it held nothing): the right
    // paddle moves 6 more, so state 101 differs in `paddles`.
    let mut right: Vec<TickInput> = replay.inputs(1).copied().collect();
    assert_eq!(right[100], TickInput::default());
    right[100].held = right[100].held.with(tickwise_example_duel::DOWN);
    let mut parts = replay.into_parts();
    parts.set_inputs(1, right);
    let forged = Replay::from_parts(parts).unwrap().to_bytes();
    let r = c.compare(&bytes, &forged, &ReplayLimits::DEFAULT).unwrap();
    assert_eq!(
        r.comparison
            .first_input_difference
            .map(|x| (x.tick, x.player)),
        Some((100, 1))
    );
    let div = r.comparison.divergence.expect("the paddles differ");
    assert_eq!((div.tick, div.fields), (101, vec!["paddles"]));
    // `verify` catches it at the checkpoint after tick 100: 120 (every 30).
    let ReplayVerdict::Diverged(v) = c.verify(&forged, &ReplayLimits::DEFAULT).unwrap().verdict
    else {
        panic!("a forged input verified");
    };
    assert_eq!((v.last_good_tick, v.tick), (90, 120));
}
