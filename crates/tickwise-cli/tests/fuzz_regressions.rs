//! The fuzz targets' checks under plain `cargo test`: every seed in
//! `fuzz/seeds/<target>/` and every kept finding in
//! `fuzz/regressions/<target>/` goes through exactly the checks the fuzzer
//! runs (`fuzz/src/lib.rs`, included below), so a fixed crash stays fixed
//! without cargo-fuzz, and a seed that stops parsing is noticed here.

use std::path::{Path, PathBuf};

#[allow(unreachable_pub, dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod fuzz_checks;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The regular files in `dir`, sorted (none if it does not exist).
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

fn run_all(kind: &str) -> usize {
    let mut n = 0;
    for target in fuzz_checks::TARGETS {
        for path in files(&repo().join("fuzz").join(kind).join(target)) {
            let data = std::fs::read(&path).expect("readable input");
            let outcome = std::panic::catch_unwind(|| fuzz_checks::run(target, &data));
            assert!(
                outcome.is_ok(),
                "{target}: {} fails its check",
                path.display()
            );
            n += 1;
        }
    }
    n
}

#[test]
fn every_seed_passes_its_targets_checks() {
    for target in fuzz_checks::TARGETS {
        // replay_header shares replay_reader's seeds (see fuzz/README.md).
        let dir = if target == "replay_header" {
            "replay_reader"
        } else {
            target
        };
        let seeds = files(&repo().join("fuzz/seeds").join(dir));
        assert!(!seeds.is_empty(), "no seeds for fuzz target {target}");
    }
    assert!(run_all("seeds") >= fuzz_checks::TARGETS.len());
}

#[test]
fn every_kept_finding_passes_its_targets_checks() {
    let dir = repo().join("fuzz/regressions");
    for entry in std::fs::read_dir(&dir).expect("fuzz/regressions exists") {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            name == "README.md" || fuzz_checks::TARGETS.contains(&&*name),
            "fuzz/regressions/{name} is not a fuzz target"
        );
    }
    run_all("regressions");
}

#[test]
fn repairing_the_envelope_reaches_the_body() {
    // The replay targets also try each input with its length and checksum
    // made right; without that, mutated bytes would almost never get past
    // the integrity check. A seed with a wrong checksum is refused, and the
    // repaired copy is the original file again.
    let seed = std::fs::read(repo().join("fuzz/seeds/replay_reader/island_seed_100.twr"))
        .expect("seed replay");
    let mut broken = seed.clone();
    let last = broken.len() - 1;
    broken[last] ^= 0x55;
    assert!(tickwise::read_header(&broken, &fuzz_checks::LIMITS).is_err());
    assert_eq!(fuzz_checks::repaired(&broken).as_deref(), Some(&seed[..]));
    assert_eq!(fuzz_checks::repaired(&seed[..27]), None);
}
