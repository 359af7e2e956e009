//! `record --players N`, and `verify`, `verify --json` and `compare` naming
//! the player, through the real binary, on the co-op horde with a forged
//! player-1 input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tickwise::{Replay, ReplayLimits, TickInput};

fn tickwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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

/// The horde's RIGHT button (button 3, docs/horde.md) as a `held` bit set.
const RIGHT_BITS: u64 = 1 << 3;

/// An inputs file for two players: player 0 stands still (an empty array:
/// every tick absent), player 1 holds RIGHT for `ticks` ticks.
fn two_player_inputs(dir: &Path, ticks: usize) -> PathBuf {
    let right = format!("{{\"held\": {RIGHT_BITS}}}");
    let p1 = vec![right.as_str(); ticks].join(",");
    let f = dir.join("inputs.json");
    std::fs::write(&f, format!("[[], [{p1}]]")).unwrap();
    f
}

/// Records a two-hero horde of `ticks` ticks, checkpoint every 10.
fn record_horde(dir: &Path, out: &Path, ticks: usize) {
    let inputs = two_player_inputs(dir, ticks);
    let o = tickwise(&[
        "record",
        "--sim",
        "horde",
        "--players",
        "2",
        "--ticks",
        &ticks.to_string(),
        "--checkpoint-every",
        "10",
        "--inputs",
        s(&inputs),
        "--out",
        s(out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        stdout(&o).contains(&format!("horde {ticks} ticks, 2 players,")),
        "{}",
        stdout(&o)
    );
}

/// Player 1 claims no input at `tick` (it held RIGHT); the file is
/// rewritten with a valid checksum.
fn forge_player_1(path: &Path, tick: usize) {
    let bytes = std::fs::read(path).unwrap();
    let replay = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    let mut p1: Vec<TickInput> = replay.inputs(1).cloned().collect();
    assert_eq!(p1[tick].held.bits(), RIGHT_BITS, "the recorded input");
    p1[tick] = TickInput::default();
    let mut parts = replay.into_parts();
    parts.set_inputs(1, p1);
    std::fs::write(path, Replay::from_parts(parts).unwrap().to_bytes()).unwrap();
}

#[test]
fn record_players_sets_the_count_and_each_player_keeps_its_stream() {
    let d = scratch("players_record");
    let f = d.join("h2.twr");
    record_horde(&d, &f, 40);
    let bytes = std::fs::read(&f).unwrap();
    let r = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    assert_eq!(r.players(), 2);
    // The file's arrays, player by player: player 0 absent, player 1 RIGHT.
    assert!(r.inputs(0).all(|i| *i == TickInput::default()));
    assert!(r.inputs(1).all(|i| i.held.bits() == RIGHT_BITS));
    let o = tickwise(&["verify", s(&f)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");

    // random:SEED: one stream per player, so the two players differ.
    let g = d.join("r4.twr");
    let o = tickwise(&[
        "record",
        "--sim",
        "horde",
        "--players",
        "4",
        "--ticks",
        "50",
        "--inputs",
        "random:7",
        "--out",
        s(&g),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let bytes = std::fs::read(&g).unwrap();
    let r = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    assert_eq!(r.players(), 4);
    let streams: Vec<Vec<TickInput>> = (0..4).map(|p| r.inputs(p).cloned().collect()).collect();
    for p in 1..4 {
        assert_ne!(streams[0], streams[p], "player {p} drew player 0's stream");
    }
}

#[test]
fn record_players_refuses_sims_and_files_of_another_count() {
    let d = scratch("players_refused");
    let out = d.join("x.twr");
    // The island is a one-player sim: the catalog's own refusal.
    let o = tickwise(&[
        "record",
        "--sim",
        "island",
        "--players",
        "2",
        "--ticks",
        "10",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        stderr(&o)
            .contains("island takes 1 player under this config, not 2 (it is a one-player sim)"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // A file of two arrays for a three-player horde.
    let inputs = two_player_inputs(&d, 5);
    let o = tickwise(&[
        "record",
        "--sim",
        "horde",
        "--players",
        "3",
        "--ticks",
        "10",
        "--inputs",
        s(&inputs),
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        stderr(&o).contains("the inputs file holds 2 player arrays but the sim takes 3 players"),
        "{}",
        stderr(&o)
    );
    // Out of range for the flag itself.
    let o = tickwise(&[
        "record",
        "--sim",
        "horde",
        "--players",
        "5",
        "--ticks",
        "10",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(!out.exists());
}

#[test]
fn verify_names_player_1_of_a_forged_player_1_input() {
    let d = scratch("players_forged");
    let f = d.join("forged.twr");
    record_horde(&d, &f, 200);
    // Tick 125's input is consumed by the step to state 126: the checkpoint
    // at tick 130 (the 13th, every 10) is the first to see it, the one at
    // 120 still matches. Only hero 1 stood still: its x differs.
    forge_player_1(&f, 125);
    let o = tickwise(&["verify", s(&f)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains(
            "checkpoint 13 at tick 130 diverges (last match at tick 120, so within ticks 121..=130)"
        ),
        "{out}"
    );
    assert!(out.contains("hero1.x"), "{out}");
    assert!(!out.contains("hero0."), "{out}");
    assert!(out.contains("; player 1's own fields differ"), "{out}");

    let o = tickwise(&["verify", "--json", s(&f)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let line: Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert_eq!(line["status"], "diverged");
    assert_eq!(line["players"], 2);
    let div = &line["divergence"];
    assert_eq!(div["checkpoint"], 13);
    assert_eq!(div["tick"], 130);
    assert_eq!(div["lastGoodTick"], 120);
    assert_eq!(div["player"], 1);
    assert_eq!(div["fieldPlayers"], serde_json::json!([1]));
    assert!(
        div["fields"]
            .as_array()
            .unwrap()
            .contains(&Value::from("hero1.x")),
        "{div}"
    );
}

#[test]
fn verify_json_reports_players_for_every_replay() {
    let d = scratch("players_json");
    let one = d.join("a-island.twr");
    let o = tickwise(&["record", "--ticks", "20", "--out", s(&one)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let two = d.join("b-horde.twr");
    record_horde(&d, &two, 20);
    let broken = d.join("c-broken.twr");
    std::fs::write(&broken, b"not a replay").unwrap();
    let o = tickwise(&["verify", "--json", s(&d)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "three replays and the summary");
    assert_eq!(
        (lines[0]["players"].clone(), lines[0]["status"].clone()),
        (Value::from(1), Value::from("ok"))
    );
    assert_eq!(lines[0]["divergence"], Value::Null);
    assert_eq!(
        (lines[1]["players"].clone(), lines[1]["status"].clone()),
        (Value::from(2), Value::from("ok"))
    );
    // No header to read: no player count either.
    assert_eq!(lines[2]["players"], Value::Null);
    assert_eq!(lines[2]["status"], "refused");
    assert_eq!(lines[2]["reason"], "corrupt");
}

#[test]
fn compare_names_the_player_whose_inputs_differ_first() {
    let d = scratch("players_compare");
    let a = d.join("a.twr");
    let b = d.join("b.twr");
    record_horde(&d, &a, 200);
    std::fs::copy(&a, &b).unwrap();
    forge_player_1(&b, 57);
    let o = tickwise(&["compare", s(&a), s(&b)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    // The input of tick 57 makes state 58 differ, in hero 1 alone.
    assert!(out.contains("first divergent tick 58"), "{out}");
    assert!(
        out.contains("inputs first differ at tick 57 (player 1)"),
        "{out}"
    );
    assert!(out.contains("; player 1's own fields differ"), "{out}");
    assert!(!out.contains("hero0."), "{out}");
    // A live run with the same file of inputs matches A.
    let inputs = two_player_inputs(&d, 200);
    let o = tickwise(&["compare", s(&a), "--live", "--inputs", s(&inputs)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        stdout(&o).contains("no divergence in 200 ticks"),
        "{}",
        stdout(&o)
    );
}
