//! The CI scripts' own behaviour, run for real with stand-ins where a
//! script would install or build something:
//!
//! - `scripts/test-all.sh` prints every skipped step with the variable that
//!   skipped it, never ends "all tests passed" after a skip, refuses any
//!   skip under `CI=true` and refuses an unknown `TICKWISE_SKIP_*` (a dry
//!   run, `TICKWISE_TEST_ALL_DRY_RUN=1`, prints the steps without running
//!   them);
//! - `.ci/setup-base.sh` (run by `.ci/run`) installs node/npm, python3 and
//!   g++ with apt-get when they are missing, `apt-get update` first, and
//!   does nothing when they are there;
//! - `.ci/check-wasm-features.sh` (run by `.ci/build-web.sh`) fails closed:
//!   a `cargo tree` that fails or prints nothing is an error, not a pass.
//! - every file of a crate's one test binary (`tests/suite/`) is declared as
//!   one of its modules, so none is left out of the build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh temp directory for one test.
fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tickwise-ci-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The absolute path of `tool` on this process's PATH.
fn which(tool: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{tool} not on PATH"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `scripts/test-all.sh` as a dry run, with only the given `TICKWISE_SKIP_*`
/// and `CI` variables (those of the calling environment removed).
fn test_all(vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/test-all.sh"))
        .env("TICKWISE_TEST_ALL_DRY_RUN", "1")
        .env_remove("CI");
    for (k, _) in std::env::vars() {
        if k.starts_with("TICKWISE_SKIP_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().expect("bash runs")
}

#[test]
fn test_all_runs_every_step_when_nothing_is_skipped() {
    let out = test_all(&[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(!stdout.contains("SKIPPED"), "{stdout}");
    for command in [
        "bash .ci/setup-web.sh",
        "bash .ci/cross-aarch64.sh",
        "bash fuzz/run.sh 15",
        "bash .ci/build-web.sh",
        "npm --prefix web test",
        "bash scripts/soak.sh --quick",
        "bash scripts/bench-compare.sh --quick",
        "cargo test --workspace --locked",
        "bash scripts/publish-check.sh",
        "bash scripts/outside-crate.sh",
        "bash scripts/readme-blocks.sh",
        "python3 scripts/check_figures.py horde-rss",
        "python3 scripts/check_figures.py wasm",
        "bash scripts/outside-page.sh",
    ] {
        assert!(
            stdout.contains(&format!("(dry run) {command}\n")),
            "{command} missing:\n{stdout}"
        );
    }
    assert!(stdout.contains("\nall tests passed in "), "{stdout}");
    // Each step's time is listed at the end, so a slow CI run shows where
    // its time went.
    let times = stdout
        .split("\nstep times (longest first):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no step times:\n{stdout}"));
    for step in [
        "format",
        "unit, scenario, property and doc tests",
        "wasm build and headless-Chromium tests",
    ] {
        assert!(
            times
                .lines()
                .any(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())
                    && l.ends_with(&format!(" s  {step}"))),
            "{step} has no time:\n{times}"
        );
    }
}

#[test]
fn test_all_prints_each_skipped_step_and_why() {
    for (var, step, commands) in [
        (
            "TICKWISE_SKIP_BROWSER",
            "wasm build and headless-Chromium tests",
            &["bash .ci/setup-web.sh", "npm --prefix web test"][..],
        ),
        (
            "TICKWISE_SKIP_CROSS",
            "aarch64 build under qemu-user",
            &["bash .ci/cross-aarch64.sh"][..],
        ),
        (
            "TICKWISE_SKIP_FUZZ",
            "fuzzing: every target",
            &["bash fuzz/run.sh"][..],
        ),
    ] {
        let out = test_all(&[(var, "1")]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{var}: {stdout}{}", text(&out.stderr));
        assert!(
            stdout.contains(&format!("==> SKIPPED: {step}")),
            "{var}: no SKIPPED line for {step}:\n{stdout}"
        );
        assert!(
            stdout.contains(&format!("(because {var}=1)")),
            "{var}: {stdout}"
        );
        for c in commands {
            assert!(!stdout.contains(c), "{var} still runs {c}:\n{stdout}");
        }
        assert!(
            !stdout.contains("all tests passed"),
            "{var}: a run with a skip claims everything passed:\n{stdout}"
        );
        assert!(stdout.contains("SKIPPED (not tested):"), "{stdout}");
    }
}

#[test]
fn under_ci_any_skip_fails_the_run_before_it_starts() {
    for var in [
        "TICKWISE_SKIP_BROWSER",
        "TICKWISE_SKIP_CROSS",
        "TICKWISE_SKIP_FUZZ",
    ] {
        let out = test_all(&[("CI", "true"), (var, "1")]);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "CI=true {var}=1 passed");
        assert!(
            stderr.contains(&format!("CI=true and {var}=1")),
            "{var}: {stderr}"
        );
        assert!(
            !text(&out.stdout).contains("(dry run) cargo"),
            "a step ran before the refusal"
        );
    }
    // CI=true with nothing skipped runs everything.
    let out = test_all(&[("CI", "true")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("all tests passed"));
}

/// A fresh clone's run once wrote 7.5 GB and failed on a CI machine with
/// less free. Under CI each step's own build is removed after the step
/// that reads it, and before the next one starts; a developer's tree keeps
/// them for reruns.
#[test]
fn under_ci_each_steps_own_build_is_removed_once_no_later_step_reads_it() {
    let ci = text(&test_all(&[("CI", "true")]).stdout);
    let at = |command: &str| {
        ci.find(&format!("(dry run) {command}\n"))
            .unwrap_or_else(|| panic!("{command} missing:\n{ci}"))
    };
    for (uses, removal) in [
        (
            "cargo test --workspace --locked",
            "find target/debug/deps -maxdepth 1 -type f -perm -u+x ! -name *.so -delete",
        ),
        (
            "bash scripts/publish-check.sh",
            "rm -rf target/publish-check",
        ),
        ("bash scripts/outside-crate.sh", "rm -rf target/outside"),
        (
            "bash scripts/bench-compare.sh --quick",
            "rm -rf target/base-builds target/bench-compare",
        ),
        (
            "bash scripts/readme-blocks.sh",
            "rm -rf target/readme-blocks",
        ),
        (
            "bash .ci/cross-aarch64.sh",
            "rm -rf target/aarch64-unknown-linux-gnu",
        ),
        ("bash fuzz/run.sh 15", "rm -rf fuzz/target"),
    ] {
        let (u, r) = (at(uses), at(removal));
        // After the command, within the same step (no step header between).
        assert!(u < r && !ci[u..r].contains("\n==> "), "{removal}:\n{ci}");
    }
    // Each step's header names the disk's free space.
    assert!(ci.contains(" s so far, ") && ci.contains(" GiB free on the disk)"));
    let dev = text(&test_all(&[]).stdout);
    assert!(!dev.contains("(dry run) rm -rf"), "{dev}");
    assert!(!dev.contains("-delete"), "{dev}");
}

#[test]
fn an_unknown_skip_variable_is_an_error() {
    let out = test_all(&[("TICKWISE_SKIP_BROWSERS", "1")]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("unknown skip variable TICKWISE_SKIP_BROWSERS"),
        "{}",
        text(&out.stderr)
    );
}

/// A PATH of stand-ins for `.ci/setup-base.sh`: bash, env, sudo (runs its
/// arguments) and an apt-get that logs its arguments and, on `install`,
/// puts a stand-in for each package's tool in the same folder.
fn stub_path(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let bash = which("bash");
    for tool in ["bash", "env", "chmod"] {
        std::os::unix::fs::symlink(which(tool), bin.join(tool)).unwrap();
    }
    let log = dir.join("apt.log");
    let script = |body: &str| format!("#!{}\n{body}\n", bash.display());
    let write = |name: &str, body: String| {
        let p = bin.join(name);
        std::fs::write(&p, body).unwrap();
        let status = Command::new(which("chmod"))
            .arg("+x")
            .arg(&p)
            .status()
            .unwrap();
        assert!(status.success());
    };
    write("sudo", script(r#"exec "$@""#));
    write(
        "apt-get",
        script(&format!(
            r#"printf '%s\n' "$*" >> '{log}'
[ "$1" = install ] || exit 0
for p in "$@"; do
  case "$p" in
    -*|install) ;;
    nodejs) t=node ;;
    *) t="$p" ;;
  esac
  case "$p" in -*|install) continue ;; esac
  printf '#!/bin/sh\n' > '{bin}'/"$t"
  chmod +x '{bin}'/"$t"
done"#,
            log = log.display(),
            bin = bin.display()
        )),
    );
    (bin, log)
}

fn setup_base(bin: &Path) -> Output {
    Command::new(bin.join("bash"))
        .arg(root().join(".ci/setup-base.sh"))
        .env("PATH", bin)
        .output()
        .expect("bash runs")
}

#[test]
fn ci_run_installs_node_python_a_cpp_compiler_b3sum_and_valgrind_when_missing() {
    // .ci/run runs the installer first.
    let run = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(run.contains("bash .ci/setup-base.sh\n"), "{run}");
    let dir = temp("setup-base");
    let (bin, log) = stub_path(&dir);
    // Nothing there: one update, then one install of all six packages.
    let out = setup_base(&bin);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "update -qq\ninstall -y -qq --no-install-recommends nodejs npm python3 g++ b3sum valgrind\n"
    );
    for tool in ["node", "npm", "python3", "g++", "b3sum", "valgrind"] {
        assert!(bin.join(tool).is_file(), "{tool}");
    }
    // All there: apt-get is not called again.
    let out = setup_base(&bin);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("already installed"));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
    // Only the compiler missing: only g++, after an update.
    std::fs::remove_file(bin.join("g++")).unwrap();
    std::fs::write(&log, "").unwrap();
    let out = setup_base(&bin);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "update -qq\ninstall -y -qq --no-install-recommends g++\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `.ci/check-wasm-features.sh` with `cargo` replaced by a script with `body`.
fn check_features_with(dir: &Path, name: &str, body: &str) -> Output {
    let cargo = dir.join(name);
    std::fs::write(&cargo, format!("#!{}\n{body}\n", which("bash").display())).unwrap();
    let status = Command::new(which("chmod"))
        .arg("+x")
        .arg(&cargo)
        .status()
        .unwrap();
    assert!(status.success());
    Command::new("bash")
        .arg(root().join(".ci/check-wasm-features.sh"))
        .env("CARGO", &cargo)
        .output()
        .expect("bash runs")
}

#[test]
fn the_wasm_std_feature_guard_fails_closed() {
    // The real tree: tickwise-net without std, the check passes.
    let out = Command::new("bash")
        .arg(root().join(".ci/check-wasm-features.sh"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = temp("wasm-features");
    // cargo tree fails (a missing target, a bad flag): not a pass.
    let out = check_features_with(
        &dir,
        "failing",
        "echo 'error: no such target' >&2; exit 101",
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("failed"),
        "{}",
        text(&out.stderr)
    );
    // cargo tree succeeds but shows nothing (the old check passed this).
    let out = check_features_with(&dir, "silent", "exit 0");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("did not show tickwise-net"),
        "{}",
        text(&out.stderr)
    );
    // std reaches the wasm build: refused.
    let out = check_features_with(
        &dir,
        "with-std",
        r#"printf 'tickwise-net v0.1.0 (/x)\n├── tickwise-net feature "std"\n│   └── tickwise-web v0.1.0 (/y)\n'"#,
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("std feature (UDP) is enabled"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The names a suite's `main.rs` declares with `mod NAME;`.
fn declared_modules(main_rs: &str) -> Vec<String> {
    main_rs
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

/// A crate's integration tests build as one binary, `tests/suite/main.rs`
/// (docs/testing.md). A file in `tests/suite/` that `main.rs` does not
/// declare would compile nowhere and its tests would never run, silently:
/// every file there (and every module directory) must be declared.
#[test]
fn every_file_of_a_test_suite_is_one_of_its_modules() {
    let mut suites = 0;
    for krate in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = krate.unwrap().path().join("tests/suite");
        let Ok(main_rs) = std::fs::read_to_string(dir.join("main.rs")) else {
            continue;
        };
        suites += 1;
        let declared = declared_modules(&main_rs);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let module = if path.is_dir() {
                name.clone()
            } else if let Some(m) = name.strip_suffix(".rs") {
                m.to_owned()
            } else {
                continue; // proptest regression files
            };
            if module == "main" {
                continue;
            }
            assert!(
                declared.contains(&module),
                "{} is not declared in {} (`mod {module};`): its tests never run",
                path.display(),
                dir.join("main.rs").display()
            );
        }
    }
    assert!(
        suites >= 5,
        "found {suites} test suites under crates/*/tests/suite"
    );
    // The check itself: a main.rs without a module's line misses it.
    assert_eq!(declared_modules("//! doc\n\nmod a;\nmod b;\n"), ["a", "b"]);
    assert!(!declared_modules("mod a;\n").contains(&"b".to_owned()));
}
