//! The soak can fail: with `--inject-divergence T` the straight run gets
//! another input at tick T, and the soak must report `DIVERGED` at its first
//! checkpoint past T and exit 1, for the island and the horde. Without it
//! the same small soak passes (`scripts/soak.sh --quick` runs the same
//! self-check on the release build).

use std::process::{Command, Output};

fn soak(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_soak"))
        .args(args)
        .output()
        .expect("the soak runs")
}

/// The tick of `DIVERGED at tick N` in `stderr`.
fn diverged_at(stderr: &str) -> u64 {
    let rest = stderr
        .split("DIVERGED at tick ")
        .nth(1)
        .unwrap_or_else(|| panic!("no DIVERGED in {stderr:?}"));
    rest.split(':').next().unwrap().parse().unwrap()
}

fn check(sim_args: &[&str], check_every: u64, inject: u64) {
    let clean = soak(sim_args);
    let clean_out = String::from_utf8_lossy(&clean.stdout);
    assert!(clean.status.success(), "{clean_out}");
    assert!(clean_out.contains("soak: PASS"), "{clean_out}");

    let t = inject.to_string();
    let mut args = sim_args.to_vec();
    args.extend(["--inject-divergence", &t]);
    let bad = soak(&args);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{stderr}");
    assert!(!String::from_utf8_lossy(&bad.stdout).contains("PASS"));
    // Seen at the first checkpoint past the injected tick: the checkpoint at
    // the first frame end at or past the next multiple of K (a frame runs at
    // most a few hundred steps here, a resume's catch-up a few thousand).
    let at = diverged_at(&stderr);
    let next = (inject / check_every + 1) * check_every;
    assert!(at > inject, "{at} <= {inject}: {stderr}");
    assert!(
        at >= next && at < next + 3_000,
        "{at}, next checkpoint {next}: {stderr}"
    );
}

#[test]
fn the_island_soak_fails_on_an_injected_divergence() {
    check(
        &[
            "--island-ticks",
            "40000",
            "--island-check-every",
            "1000",
            "--horde-ticks",
            "0",
        ],
        1000,
        12_345,
    );
}

#[test]
fn the_horde_soak_fails_on_an_injected_divergence() {
    check(
        &[
            "--island-ticks",
            "0",
            "--horde-ticks",
            "1500",
            "--horde-check-every",
            "100",
        ],
        100,
        777,
    );
}

#[test]
fn an_injection_past_the_end_changes_nothing() {
    let out = soak(&[
        "--island-ticks",
        "5000",
        "--horde-ticks",
        "0",
        "--inject-divergence",
        "10000000",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
