//! `tickwise script` end to end through the real binary.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn config(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../config")
        .join(name)
}

fn script(text: &str, extra: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .arg("script")
        .arg("--loop")
        .arg(config("island_loop.json"))
        .arg("--lifecycle")
        .arg(config("island_lifecycle.json"))
        .args(extra)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The binary may refuse a bad config or inputs file and exit before it
    // reads the script: a broken pipe here is that, not a failure.
    if let Err(e) = child.stdin.take().unwrap().write_all(text.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn resume_rules_timeline_numbers() {
    let out = script(
        "frames 100 16\npause\nresume-after 5000\npause\nresume-after 3600000\npush popup\npop\npop\npop\npop\n",
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let l = lines(&out);
    assert_eq!(l.len(), 10);
    assert_eq!(l[0]["tick"], 100);
    assert_eq!(l[0]["digest"], "100|-131|5050|18|100|323|3492529440|0");
    assert_eq!(l[1]["ok"], true);
    let r5 = &l[2];
    assert_eq!(
        (
            &r5["ok"],
            &r5["elapsedMs"],
            &r5["wantedSteps"],
            &r5["catchUpSteps"],
            &r5["droppedMs"],
            &r5["tick"]
        ),
        (
            &true.into(),
            &5000.into(),
            &312.into(),
            &300.into(),
            &200.into(),
            &400.into()
        )
    );
    let r1h = &l[4];
    assert_eq!(
        (&r1h["wantedSteps"], &r1h["catchUpSteps"], &r1h["tick"]),
        (&225_000.into(), &300.into(), &700.into())
    );
    assert_eq!(l[5]["scenes"], "menu=paused,game=paused,popup=active");
    assert_eq!(l[6]["scenes"], "menu=paused,game=active");
    assert_eq!(l[8]["scenes"], "");
    assert_eq!(l[9]["ok"], false);
    for (i, o) in l.iter().enumerate() {
        assert_eq!(o["line"], i + 1);
        assert!(o["digest"].is_string() && o["tick"].is_u64() && o["cmd"].is_string());
    }
}

#[test]
fn a_bad_line_runs_nothing_and_exits_2() {
    let out = script("frames 10 16\npause\nfrobnicate 3\n", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "nothing may run before the whole script parses"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3") && err.contains("frobnicate"),
        "{err}"
    );
}

#[test]
fn refused_resume_and_paused_frames() {
    let out = script(
        "resume-after 100\npause\nframes 10 16\nbackground\nresume-after 20\n",
        &[],
    );
    let l = lines(&out);
    assert_eq!(
        (&l[0]["ok"], &l[0]["elapsedMs"], &l[0]["catchUpSteps"]),
        (&false.into(), &0.into(), &0.into())
    );
    // Paused frames run nothing but move the wall clock: 160 ms + 20 ms away.
    assert_eq!((&l[2]["steps"], &l[2]["tick"]), (&0.into(), &0.into()));
    assert_eq!(l[3]["ok"], false, "background while paused is refused");
    assert_eq!(
        (
            &l[4]["elapsedMs"],
            &l[4]["wantedSteps"],
            &l[4]["catchUpSteps"]
        ),
        (&180.into(), &11.into(), &11.into())
    );
    assert_eq!(l[4]["carriedMs"], 4);
}

#[test]
fn inputs_file_and_config_errors() {
    let dir = std::env::temp_dir().join(format!("tickwise-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let inputs = dir.join("inputs.json");
    std::fs::write(&inputs, "[1, 1, 1]").unwrap();
    let out = script("advance 3\n", &["--inputs", inputs.to_str().unwrap()]);
    // Three ticks of input 1 by hand: velX 2, 4, 6 (floor((v+3)*15/16)), posX 2, 6, 12.
    assert_eq!(
        lines(&out)[0]["digest"]
            .as_str()
            .unwrap()
            .split('|')
            .take(4)
            .collect::<Vec<_>>(),
        ["3", "12", "6", "6"]
    );
    std::fs::write(&inputs, "[1, \"x\"]").unwrap();
    let out = script("advance 3\n", &["--inputs", inputs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inputs[1]"));
    let bad = dir.join("loop.json");
    std::fs::write(&bad, r#"{"seed": 1, "stepMs": 0}"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(["script", "--loop", bad.to_str().unwrap(), "--lifecycle"])
        .arg(config("island_lifecycle.json"))
        .arg("-")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`stepMs`"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn runs_from_any_directory_with_the_built_in_configs() {
    let dir = std::env::temp_dir().join(format!("tickwise-anywhere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(["script", "-"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"frames 100 16\npause\nresume-after 5000\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let l = lines(&out);
    // The island's golden digest after 100 ticks of 16 ms, then the capped
    // resume after 5 s: 312 steps owed, 300 caught up.
    assert_eq!(l[0]["digest"], "100|-131|5050|18|100|323|3492529440|0");
    assert_eq!(
        (&l[2]["wantedSteps"], &l[2]["catchUpSteps"]),
        (&312.into(), &300.into())
    );
}
