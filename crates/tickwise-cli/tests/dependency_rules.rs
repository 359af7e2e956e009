//! Determinism by construction: which crates the kernel and the sims may
//! depend on, and that their float bans are still in place.
//!
//! The kernel may depend on nothing; the sims only on the kernel and a JSON
//! parser (and rayon, optional, behind their `parallel` feature); the netplay core only on the kernel; the catalog (which
//! re-simulates replays and runs netplay) only on the kernel, the sims, the
//! netplay core and the JSON parser. A rendering, platform, CLI or randomness crate
//! showing up in any of them fails this test (and CI with it).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn normal_deps(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pkg = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == package)
        .unwrap_or_else(|| panic!("package {package} not in the workspace"));
    pkg["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"].is_null()) // normal dependencies, not dev/build
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The optional normal dependencies of `package` (enabled by a feature).
fn optional_deps(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == package)
        .unwrap()["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"].is_null() && d["optional"] == true)
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn kernel_depends_on_nothing() {
    assert_eq!(normal_deps("tickwise"), BTreeSet::new());
}

#[test]
fn config_reader_depends_only_on_json() {
    // serde: the data-model traits serde_json is built on, which the strict
    // config reader needs to see every key of an object (duplicates included).
    let allowed: BTreeSet<String> = ["serde_json", "serde"].map(String::from).into();
    let deps = normal_deps("tickwise-config");
    assert!(
        deps.is_subset(&allowed),
        "tickwise-config may not depend on {:?}",
        deps.difference(&allowed).collect::<Vec<_>>()
    );
}

#[test]
fn sims_depend_only_on_kernel_and_json() {
    let allowed: BTreeSet<String> = ["tickwise", "tickwise-config", "serde_json"]
        .map(String::from)
        .into();
    let mut deps = normal_deps("tickwise-sims");
    // rayon: only as an optional dependency, behind the `parallel` feature
    // (the horde's tick on every core; fixed partitioning and commutative
    // sums keep it bit-identical at any thread count). The default build
    // stays no_std with no thread pool.
    assert!(
        optional_deps("tickwise-sims").contains("rayon") || !deps.contains("rayon"),
        "tickwise-sims may use rayon only as an optional dependency"
    );
    deps.remove("rayon");
    assert!(
        deps.is_subset(&allowed),
        "tickwise-sims may not depend on {:?}",
        deps.difference(&allowed).collect::<Vec<_>>()
    );
}

#[test]
fn catalog_depends_only_on_kernel_sims_and_json() {
    let allowed: BTreeSet<String> = [
        "tickwise",
        "tickwise-config",
        "tickwise-sims",
        "tickwise-net",
        "serde_json",
    ]
    .map(String::from)
    .into();
    let deps = normal_deps("tickwise-catalog");
    assert!(
        deps.is_subset(&allowed),
        "tickwise-catalog may not depend on {:?}",
        deps.difference(&allowed).collect::<Vec<_>>()
    );
    // The built-in sims only behind the `builtin` feature: a game's catalog
    // carries its own sims and nothing else.
    assert!(
        optional_deps("tickwise-catalog").contains("tickwise-sims"),
        "tickwise-catalog may use tickwise-sims only as an optional dependency (feature `builtin`)"
    );
}

#[test]
fn cli_reaches_the_sims_only_through_the_catalog_and_the_lab() {
    // The CLI parses flags and prints (issue 19): the script language, the
    // horde's headless run and budgets are the lab's, every sim is reached
    // through the catalog. A direct dependency on the sims crate would let
    // domain logic creep back into the commands.
    let deps = normal_deps("tickwise-cli");
    assert!(
        !deps.contains("tickwise-sims"),
        "tickwise-cli may not depend on tickwise-sims directly (use the catalog's `builtin` feature or tickwise-lab)"
    );
    for through in ["tickwise-catalog", "tickwise-lab"] {
        assert!(
            deps.contains(through),
            "tickwise-cli reaches sims through {through}"
        );
    }
    // And no arrow back up: neither the lab nor the service depends on the CLI.
    for lib in ["tickwise-lab", "tickwise-service", "tickwise-catalog"] {
        assert!(
            !normal_deps(lib).contains("tickwise-cli"),
            "{lib} may not depend on tickwise-cli"
        );
    }
}

#[test]
fn netplay_depends_only_on_the_kernel_and_blake3() {
    // And the datagram MAC: blake3 (no_std, pure functions of its input: no
    // I/O, no clock, no randomness).
    let allowed: BTreeSet<String> = ["tickwise", "blake3"].map(String::from).into();
    let deps = normal_deps("tickwise-net");
    assert!(
        deps.is_subset(&allowed),
        "tickwise-net may not depend on {:?}",
        deps.difference(&allowed).collect::<Vec<_>>()
    );
}

#[test]
fn float_and_clock_bans_are_in_place() {
    for krate in [
        "tickwise",
        "tickwise-config",
        "tickwise-sims",
        "tickwise-catalog",
        "tickwise-net",
    ] {
        let dir = root().join("crates").join(krate);
        let clippy = std::fs::read_to_string(dir.join("clippy.toml")).unwrap();
        for banned in [
            "\"f32\"",
            "\"f64\"",
            "HashMap",
            "HashSet",
            "DefaultHasher",
            "Instant::now",
            "SystemTime::now",
        ] {
            assert!(
                clippy.contains(banned),
                "{krate}/clippy.toml must ban {banned}"
            );
        }
        let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
        assert!(
            lib.contains("#![deny(clippy::float_arithmetic)]"),
            "{krate} must deny float arithmetic"
        );
        assert!(lib.contains("no_std"), "{krate} must be no_std");
        assert!(
            lib.contains("#![forbid(unsafe_code)]"),
            "{krate} must forbid unsafe code"
        );
    }
}
