//! `tickwise record`, `verify` and `compare` through the real binary: exit
//! codes 0 / 1 / 2, directories, limits, forgeries.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tickwise::{Replay, ReplayLimits};

const SEED_DIGEST_100: &str = "100|-131|5050|18|100|323|3492529440|0";

fn tickwise(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
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

fn record(out: &Path, ticks: u64, inputs: &str) {
    let o = tickwise(&[
        "record",
        "--sim",
        "island",
        "--ticks",
        &ticks.to_string(),
        "--inputs",
        inputs,
        "--out",
        s(out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

/// Replaces the input of `tick` and rewrites the file with a valid checksum.
fn forge(path: &Path, tick: usize, input: i32) {
    let bytes = std::fs::read(path).unwrap();
    let replay = Replay::<i32>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    let mut inputs: Vec<i32> = replay.inputs(0).copied().collect();
    inputs[tick] = input;
    let mut parts = replay.into_parts();
    parts.set_inputs(0, inputs);
    std::fs::write(path, Replay::from_parts(parts).unwrap().to_bytes()).unwrap();
}

#[test]
fn record_then_verify_ok_exit_0() {
    let d = scratch("verify_ok");
    let f = d.join("seed.twr");
    let o = tickwise(&["record", "--ticks", "100", "--out", s(&f)]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains(SEED_DIGEST_100), "{}", stdout(&o));
    let o = tickwise(&["verify", s(&f)]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("OK") && out.contains(SEED_DIGEST_100), "{out}");
    assert!(
        out.contains("verified 1 files, 100 ticks in") && out.contains("0 failed"),
        "{out}"
    );
}

#[test]
fn forged_replay_exit_1_names_range_and_fields() {
    let d = scratch("verify_forged");
    let f = d.join("forged.twr");
    record(&f, 600, "scripted");
    forge(&f, 130, -1);
    let o = tickwise(&["verify", s(&f)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("DIVERGED"), "{out}");
    assert!(out.contains("checkpoint 3 at tick 180"), "{out}");
    assert!(out.contains("within ticks 121..=180"), "{out}");
    assert!(out.contains("fields differ: posX, velX"), "{out}");
}

#[test]
fn unreadable_files_exit_2_with_specific_errors() {
    let d = scratch("verify_bad");
    let good = d.join("good.twr");
    record(&good, 200, "scripted");
    let bytes = std::fs::read(&good).unwrap();
    let truncated = d.join("truncated.twr");
    std::fs::write(&truncated, &bytes[..bytes.len() - 3]).unwrap();
    let flipped = d.join("flipped.twr");
    let mut f = bytes.clone();
    f[40] ^= 4;
    std::fs::write(&flipped, &f).unwrap();
    let magic = d.join("magic.twr");
    std::fs::write(&magic, b"not a replay at all").unwrap();
    for (path, reason, needle) in [
        (&truncated, "corrupt", "truncated"),
        (&flipped, "corrupt", "integrity checksum mismatch"),
        (&magic, "corrupt", "not a tickwise replay"),
        (&d.join("missing.twr"), "unreadable", "cannot read"),
    ] {
        let o = tickwise(&["verify", s(path)]);
        assert_eq!(o.status.code(), Some(2), "{path:?}: {o:?}");
        let out = stdout(&o);
        assert!(
            out.starts_with("REFUSED")
                && out.contains(&format!(": {reason}: "))
                && out.contains(needle),
            "{path:?}: {out}"
        );
    }
    let o = tickwise(&["verify", "--max-ticks", "199", s(&good)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains(": limit: ")
            && stdout(&o).contains("declares 200 ticks, above the limit of 199"),
        "{}",
        stdout(&o)
    );
    let o = tickwise(&["verify", "--max-file-bytes", "100", s(&good)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("above the limit of 100"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn directory_verifies_every_replay_and_summarises() {
    let d = scratch("verify_dir");
    for i in 0..3 {
        record(&d.join(format!("r{i}.twr")), 300, &format!("random:{i}"));
    }
    record(&d.join("x-forged.twr"), 300, "scripted");
    forge(&d.join("x-forged.twr"), 10, 0);
    std::fs::write(d.join("notes.txt"), "not a replay, ignored").unwrap();
    let o = tickwise(&["verify", "--jobs", "2", s(&d)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    assert_eq!(out.matches("OK ").count(), 3, "{out}");
    assert!(
        out.contains("x-forged.twr: checkpoint 1 at tick 60"),
        "{out}"
    );
    let summary = out.lines().last().unwrap();
    assert!(
        summary.starts_with("verified 4 files, 960 ticks in "),
        "{summary}"
    );
    assert!(
        summary.ends_with("1 failed (1 diverged, 0 refused)"),
        "{summary}"
    );
    // A truncated file among them turns the exit code into 2.
    std::fs::write(d.join("y-short.twr"), b"TWREPLAY\x01\x00").unwrap();
    let o = tickwise(&["verify", "--quiet", s(&d)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(!stdout(&o).contains("OK "), "--quiet prints only failures");
}

#[test]
fn record_refuses_what_verify_would_refuse() {
    let d = scratch("record_bad");
    let out = d.join("a.twr");
    for (args, needle) in [
        (
            &["--ticks", "11", "--max-ticks", "10"][..],
            "above the limit of 10 (raise it with --max-ticks)",
        ),
        (&["--ticks", "10", "--inputs", "random:x"], "u64 seed"),
        (&["--sim", "zombies", "--ticks", "10"], "unknown sim id"),
        (
            &["--ticks", "10", "--checkpoint-every", "0"],
            "checkpoint-every",
        ),
    ] {
        let o = tickwise(&[&["record", "--out", s(&out)][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{args:?}: {o:?}"
        );
        assert!(!out.exists(), "nothing is written on refusal");
    }
}

#[test]
fn compare_two_replays_and_a_live_run() {
    let d = scratch("compare");
    let a = d.join("a.twr");
    let b = d.join("b.twr");
    record(&a, 300, "scripted");
    record(&b, 300, "scripted");
    forge(&b, 57, 0);
    let o = tickwise(&["compare", s(&a), s(&b)]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("first divergent tick 58"), "{out}");
    assert!(out.contains("fields differ: posX, velX"), "{out}");
    assert!(out.contains("inputs first differ at tick 57"), "{out}");
    let o = tickwise(&["compare", s(&a), "--live"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        stdout(&o).contains("no divergence in 300 ticks"),
        "{}",
        stdout(&o)
    );
    let o = tickwise(&["compare", s(&a)]);
    assert_eq!(o.status.code(), Some(2), "B or --live is required");
}

#[test]
fn record_budget_and_horde_run_from_any_directory() {
    let d = scratch("anywhere");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_tickwise"))
            .args(args)
            .current_dir(&d)
            .output()
            .unwrap()
    };
    let o = run(&["record", "--ticks", "100", "--out", "here.twr"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(stdout(&o).contains(SEED_DIGEST_100), "{}", stdout(&o));
    let o = run(&[
        "record", "--sim", "horde", "--ticks", "10", "--out", "h.twr",
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = run(&["verify", "here.twr", "h.twr"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = run(&["budget", "--cost-ms", "9.2"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(stdout(&o).contains("recommended: 30 Hz"), "{}", stdout(&o));
    let o = run(&["horde", "--enemies", "10", "--ticks", "5"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

#[test]
fn limit_errors_carry_the_flag_that_raises_them() {
    let d = scratch("flag_hints");
    let f = d.join("w.twr");
    record(&f, 1000, "scripted");
    let o = tickwise(&["verify", "--max-work", "999", s(&f)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let out = stdout(&o);
    assert!(
        out.contains("exceeds the work limit of 999 (about 0.0 s) (raise it with --max-work)"),
        "{out}"
    );
    assert_eq!(out.matches("--max-work").count(), 1, "{out}");
    let o = tickwise(&["verify", "--max-ticks", "999", s(&f)]);
    assert_eq!(
        stdout(&o).matches("--max-ticks").count(),
        1,
        "{}",
        stdout(&o)
    );
    let o = tickwise(&["record", "--sim", "zombies", "--ticks", "1", "--out", s(&f)]);
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("unknown sim id \"zombies\" (known: island, horde)"),
        "{o:?}"
    );
}

/// Issue 22: `tickwise verify replays/ --progress` on a path that does not
/// exist exited 2 but summed up "verified 1 files". A missing path, or a
/// directory without replays, is named as such and verifies nothing.
#[test]
fn verify_of_a_missing_path_verifies_no_files() {
    let d = scratch("verify_missing_path");
    let missing = d.join("replays");
    let o = tickwise(&["verify", s(&missing), "--progress"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let out = stdout(&o);
    assert!(!out.contains("verified 1 files"), "{out}");
    assert!(out.contains("verified 0 files"), "{out}");
    assert!(
        out.contains(&format!(
            "1 path not found or without replays: {}",
            s(&missing)
        )),
        "{out}"
    );
    // Beside a real replay: one file verified, the missing path named.
    let good = d.join("good.twr");
    record(&good, 100, "scripted");
    let o = tickwise(&["verify", s(&good), s(&missing)]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("verified 1 files, 100 ticks in"), "{out}");
    assert!(out.contains("0 failed (0 diverged, 0 refused)"), "{out}");
    assert!(out.contains("1 path not found or without replays"), "{out}");
    let o = tickwise(&["verify", "--json", s(&missing)]);
    let last: serde_json::Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["replays"], &last["missing"]),
        (&0.into(), &1.into()),
        "{last}"
    );
    assert_eq!(last["exitCode"], 2);
}
