//! Running a target's check over a folder of inputs, for the regression
//! tests that run seeds and kept findings under plain `cargo test`: the
//! CLI's (`crates/tickwise-cli/tests/fuzz_regressions.rs`, through
//! `lib.rs`) and the duel example's (`examples/duel/tests/fuzz_regressions.rs`,
//! which includes this file alone with `#[path]`, as it does `duel.rs`).

use std::path::{Path, PathBuf};

/// The regular files in `dir` but its README, sorted (none if it does not
/// exist).
///
/// # Panics
///
/// If an entry of `dir` cannot be read.
#[must_use]
pub fn files(dir: &Path) -> Vec<PathBuf> {
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

/// Runs every input in `dir` through `check`; returns how many ran (0 when
/// `dir` does not exist).
///
/// # Errors
///
/// A folder that exists but holds no input (a runner that checks nothing
/// would pass if the files were moved or lost), or an input whose check
/// panics (a finding), named.
///
/// # Panics
///
/// If an input cannot be read.
pub fn run_dir(dir: &Path, check: impl Fn(&[u8])) -> Result<usize, String> {
    let inputs = files(dir);
    if dir.is_dir() && inputs.is_empty() {
        return Err(format!("{} holds no input", dir.display()));
    }
    for path in &inputs {
        let data = std::fs::read(path).expect("readable input");
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&data))).is_err() {
            return Err(format!("{} fails its check", path.display()));
        }
    }
    Ok(inputs.len())
}
