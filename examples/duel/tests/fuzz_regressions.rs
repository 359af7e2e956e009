//! The duel example's fuzz targets under plain `cargo test`: every seed in
//! `fuzz/seeds/<target>/` and every kept finding in
//! `fuzz/regressions/<target>/` goes through exactly the check the fuzzer
//! runs (`fuzz/src/duel.rs`, included below). The CLI's regression test
//! runs every other target; it cannot link this crate (which depends on the
//! CLI), so it lists these targets as delegated here and checks that this
//! file exists and names them.

use std::path::{Path, PathBuf};

use tickwise::SnapshotError;

#[allow(unreachable_pub, dead_code)]
#[path = "../../../fuzz/src/duel.rs"]
mod duel_checks;

#[allow(unreachable_pub)]
#[path = "../../../fuzz/src/corpus.rs"]
mod corpus;

/// A target's check: returns, or panics on a finding.
type Check = fn(&[u8]);

/// The targets this file runs, each with its check.
const TARGETS: [(&str, Check); 2] = [
    ("duel_snapshot", duel_checks::duel_snapshot),
    ("duel_config", duel_checks::duel_config),
];

fn fuzz_dir(kind: &str, target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(kind)
        .join(target)
}

use corpus::{files, run_dir};

#[test]
fn every_seed_passes_its_targets_check() {
    for (target, check) in TARGETS {
        let dir = fuzz_dir("seeds", target);
        let n = run_dir(&dir, check).unwrap_or_else(|e| panic!("{target}: {e}"));
        // No silent skip: the seeds are there (a moved folder fails here).
        assert!(n >= 10, "{n} seeds in {}", dir.display());
    }
}

#[test]
fn every_kept_finding_passes_its_targets_check() {
    // The folders are optional (no finding kept yet); one that is there
    // holds at least one input and every one passes.
    for (target, check) in TARGETS {
        let dir = fuzz_dir("regressions", target);
        let n = run_dir(&dir, check).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(n, files(&dir).len());
    }
}

#[test]
fn the_seeds_are_read_or_refused_as_their_names_say() {
    // fuzz/gen_duel_snapshot_seeds.py writes each seed from the documented
    // layout and ranges, and names it `<config>-ok-…` (the reader must take
    // it) or `<config>-refused-<field>-…` (the reader must refuse it,
    // naming that field): an expectation that does not come from the
    // reader.
    let (mut ok, mut refused) = (0, 0);
    for path in files(&fuzz_dir("seeds", "duel_snapshot")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        let read = duel_checks::read_input(&data).expect("a config byte");
        let parts: Vec<&str> = name.split('-').collect();
        match parts[1] {
            "ok" => {
                assert!(read.is_ok(), "{name}: {:?}", read.err());
                ok += 1;
            }
            "refused" => {
                let want = parts[2].replace('_', " ");
                assert!(
                    matches!(&read, Err(SnapshotError::Malformed { what }) if *what == want),
                    "{name}: {:?}",
                    read.err()
                );
                refused += 1;
            }
            other => panic!("{name}: neither ok nor refused ({other})"),
        }
    }
    assert!(ok >= 5 && refused >= 5, "{ok} accepted, {refused} refused");
}

#[test]
fn the_config_seeds_are_read_or_refused_as_their_names_say() {
    // fuzz/gen_duel_config_seeds.py writes each config from the documented
    // ranges and rules and names it `ok-…` (the reader must take it) or
    // `refused-<key>-…` (the reader must refuse it, naming that key; `json`
    // for bytes that are no JSON object).
    let (mut ok, mut refused) = (0, 0);
    for path in files(&fuzz_dir("seeds", "duel_config")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let read = tickwise_example_duel::DuelConfig::parse(&std::fs::read(&path).unwrap());
        let parts: Vec<&str> = name.split('-').collect();
        match (parts[0], &read) {
            ("ok", Ok(_)) => ok += 1,
            ("refused", Err(e)) => {
                let text = e.to_string();
                let key = parts[1];
                assert!(
                    text.contains(key) || (key == "json" && text.contains("JSON")),
                    "{name}: {text}"
                );
                refused += 1;
            }
            _ => panic!("{name}: {:?}", read.err()),
        }
    }
    assert!(ok >= 5 && refused >= 10, "{ok} accepted, {refused} refused");
}

#[test]
fn an_empty_folder_fails_the_runner() {
    let root = std::env::temp_dir().join(format!("tickwise-duel-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("README.md"), "notes").unwrap();
    let check = TARGETS[0].1;
    let e = run_dir(&root, check).unwrap_err();
    assert!(e.contains("holds no input"), "{e}");
    // A missing folder runs nothing (allowed for kept findings only: the
    // seed test asks for inputs); one input runs.
    assert_eq!(run_dir(&root.join("missing"), check), Ok(0));
    std::fs::write(root.join("empty_input"), b"").unwrap();
    assert_eq!(run_dir(&root, check), Ok(1));
    std::fs::remove_dir_all(&root).unwrap();
}
