//! The `duel_snapshot` fuzz target's checks under plain `cargo test`:
//! every seed in `fuzz/seeds/duel_snapshot/` and every kept finding in
//! `fuzz/regressions/duel_snapshot/` goes through exactly the check the
//! fuzzer runs (`fuzz/src/duel.rs`, included below). The CLI's regression
//! test runs every other target; it cannot link this crate (which depends
//! on the CLI), so it lists this target as delegated here and checks that
//! this file exists.

use std::path::{Path, PathBuf};

use tickwise::SnapshotError;

#[allow(unreachable_pub, dead_code)]
#[path = "../../../fuzz/src/duel.rs"]
mod duel_checks;

const TARGET: &str = "duel_snapshot";

fn fuzz_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(kind)
        .join(TARGET)
}

/// The regular files in `dir` but its README, sorted (none if it does not
/// exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    out.sort();
    out
}

/// Runs every input in `dir` through the target's check; returns how many
/// ran. A folder that exists but holds no input is an error, not a pass.
fn run_dir(dir: &Path) -> Result<usize, String> {
    let inputs = files(dir);
    if dir.is_dir() && inputs.is_empty() {
        return Err(format!("{} holds no input", dir.display()));
    }
    for path in &inputs {
        let data = std::fs::read(path).expect("readable input");
        let outcome = std::panic::catch_unwind(|| duel_checks::duel_snapshot(&data));
        if outcome.is_err() {
            return Err(format!("{TARGET}: {} fails its check", path.display()));
        }
    }
    Ok(inputs.len())
}

#[test]
fn every_seed_passes_the_targets_check() {
    let dir = fuzz_dir("seeds");
    let n = run_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    // No silent skip: the seeds are there (a moved folder fails here).
    assert!(n >= 10, "{n} seeds in {}", dir.display());
}

#[test]
fn every_kept_finding_passes_the_targets_check() {
    // The folder is optional (no finding kept yet); if it is there, it
    // holds at least one input and every one passes.
    let dir = fuzz_dir("regressions");
    let n = run_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, files(&dir).len());
}

#[test]
fn the_seeds_are_read_or_refused_as_their_names_say() {
    // fuzz/gen_duel_snapshot_seeds.py writes each seed from the documented
    // layout and ranges, and names it `<config>-ok-…` (the reader must take
    // it) or `<config>-refused-<field>-…` (the reader must refuse it,
    // naming that field): an expectation that does not come from the
    // reader.
    let (mut ok, mut refused) = (0, 0);
    for path in files(&fuzz_dir("seeds")) {
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
fn an_empty_folder_fails_the_runner() {
    let root = std::env::temp_dir().join(format!("tickwise-duel-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("README.md"), "notes").unwrap();
    let e = run_dir(&root).unwrap_err();
    assert!(e.contains("holds no input"), "{e}");
    // A missing folder runs nothing (allowed for kept findings only: the
    // seed test asks for inputs); one input runs.
    assert_eq!(run_dir(&root.join("missing")), Ok(0));
    std::fs::write(root.join("empty_input"), b"").unwrap();
    assert_eq!(run_dir(&root), Ok(1));
    std::fs::remove_dir_all(&root).unwrap();
}
