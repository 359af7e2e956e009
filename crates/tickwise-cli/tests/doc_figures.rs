//! Figures in README.md and docs/*.md that the code holds as constants
//! (issue 22, item 4): every quoted default limit must equal the constant
//! and the `[default: …]` that `--help` prints, every relative link must
//! reach a file of the repository, and no doc may cite files a user does
//! not have. Measured figures (sizes, memory) are checked against the build
//! by `scripts/check_figures.py` in `scripts/test-all.sh`.

use std::path::{Path, PathBuf};
use std::process::Command;

use tickwise::ReplayLimits;
use tickwise_catalog::{DEFAULT_MAX_SNAPSHOT_BYTES, DEFAULT_MAX_WORK};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every docs/*.md, as (relative path, text).
fn docs() -> Vec<(String, String)> {
    let root = root();
    let mut out = vec![(
        "README.md".to_owned(),
        std::fs::read_to_string(root.join("README.md")).unwrap(),
    )];
    let mut names: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    names.sort();
    for p in names {
        let rel = format!("docs/{}", p.file_name().unwrap().to_string_lossy());
        out.push((rel, std::fs::read_to_string(&p).unwrap()));
    }
    out
}

/// A figure as the docs write it: `6·10¹⁰`, `10⁷`, `64 MiB`, `60000000000`.
fn figure(text: &str) -> Option<u64> {
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let t = text.trim().replace([' ', '\u{202f}'], "");
    if let Some(n) = t.strip_suffix("MiB") {
        return n.parse::<u64>().ok().map(|n| n << 20);
    }
    let (mantissa, power) = match t.split_once("·10") {
        Some((m, p)) => (m.parse::<u64>().ok()?, p),
        None => match t.strip_prefix("10") {
            Some(p) if !p.is_empty() && p.chars().all(|c| SUP.contains(&c)) => (1, p),
            _ => return t.parse().ok(),
        },
    };
    let mut exp = 0u32;
    for c in power.chars() {
        exp = exp * 10 + u32::try_from(SUP.iter().position(|&s| s == c)?).ok()?;
    }
    mantissa.checked_mul(10u64.checked_pow(exp)?)
}

/// Every capture of `pattern`'s first group in the docs: (file, text).
fn quotes(pattern: &str) -> Vec<(String, String)> {
    // No regex crate: `pattern` is `BEFORE{}AFTER`; the capture is the
    // shortest text between the two.
    let (before, after) = pattern.split_once("{}").unwrap();
    let mut out = Vec::new();
    for (file, text) in docs() {
        let mut from = 0;
        while let Some(i) = text[from..].find(before) {
            let start = from + i + before.len();
            if let Some(len) = text[start..].find(after).filter(|&len| len <= 24) {
                out.push((file.clone(), text[start..start + len].to_owned()));
            }
            from = start;
        }
    }
    out
}

/// `tickwise COMMAND --help`'s `[default: N]` for `flag`.
fn help_default(command: &str, flag: &str) -> u64 {
    let out = Command::new(env!("CARGO_BIN_EXE_tickwise"))
        .args([command, "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    // The flag's entry: its line and, in long help, the lines under it.
    let lines: Vec<&str> = help.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(flag))
        .unwrap_or_else(|| panic!("{command} --help has no {flag}:\n{help}"));
    let line = lines[at..]
        .iter()
        .take_while(|l| !l.trim_start().starts_with("--") || l.trim_start().starts_with(flag))
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let d = line
        .split("[default: ")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no default in {line}"));
    d.parse().unwrap()
}

#[test]
fn figure_parses_the_forms_the_docs_use() {
    assert_eq!(figure("6·10¹⁰"), Some(60_000_000_000));
    assert_eq!(figure("10⁷"), Some(10_000_000));
    assert_eq!(figure("64 MiB"), Some(67_108_864));
    assert_eq!(figure("2·10⁹"), Some(2_000_000_000));
    assert_eq!(figure("about"), None);
}

/// Each default limit: the constant, the CLI's `--help`, and every place the
/// docs quote it (each pattern must still be found: rewording a sentence
/// fails here instead of leaving the figure unchecked).
#[test]
fn quoted_default_limits_equal_the_constants_and_help() {
    let limits = ReplayLimits::DEFAULT;
    let checks: [(&str, u64, u64, &[&str]); 4] = [
        (
            "work limit (--max-work)",
            DEFAULT_MAX_WORK,
            help_default("verify", "--max-work"),
            &[
                "`--max-work` (default {},",
                "`max_work` (default {},",
                "The default, **{} units",
                "the same default as `verify`) | {} units",
                "6·10¹⁰ units (about 60 s of CPU, `tickwise_catalog::DEFAULT_MAX_WORK`{}",
            ],
        ),
        (
            "tick limit (--max-ticks)",
            limits.max_ticks,
            help_default("verify", "--max-ticks"),
            &[
                "ticks ({}, `--max-ticks`)",
                "| refused | {} ticks by default",
            ],
        ),
        (
            "replay file size limit (--max-file-bytes)",
            limits.max_file_bytes,
            help_default("verify", "--max-file-bytes"),
            &[
                "`max_file_bytes` (default {})",
                "| replay | `verify`, `compare` | {}, `--max-file-bytes`",
            ],
        ),
        (
            "snapshot memory limit (--max-memory)",
            DEFAULT_MAX_SNAPSHOT_BYTES,
            help_default("sync-test", "--max-memory"),
            &["| {} (`tickwise_catalog::DEFAULT_MAX_SNAPSHOT_BYTES`)"],
        ),
    ];
    let mut bad = Vec::new();
    for (what, constant, help, patterns) in checks {
        assert_eq!(
            help, constant,
            "{what}: --help says {help}, the constant is {constant}"
        );
        for p in patterns {
            let found = quotes(p);
            if p.ends_with("DEFAULT_MAX_WORK`{}") {
                // The figure precedes the constant's name on that line.
                assert!(!found.is_empty(), "{what}: no doc quotes {p:?} any more");
                continue;
            }
            assert!(!found.is_empty(), "{what}: no doc quotes {p:?} any more");
            for (file, text) in found {
                if figure(&text) != Some(constant) {
                    bad.push(format!(
                        "{file}: {what} quoted as {text:?}, the build's is {constant}"
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Every relative link of README.md and docs/*.md reaches a file or folder
/// of the repository.
#[test]
fn relative_links_reach_files_of_the_repository() {
    let root = root();
    let mut bad = Vec::new();
    for (file, text) in docs() {
        let base = root.join(&file);
        let dir = base.parent().unwrap();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            rest = &rest[end..];
            if target.starts_with("http") || target.starts_with('#') || target.contains(' ') {
                continue;
            }
            let path = target.split('#').next().unwrap();
            if !dir.join(path).exists() {
                bad.push(format!(
                    "{file}: link to {target}, which is not in the repository"
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// No doc cites files a user of the repository does not have (the shared
/// folder beside it, a spec that is not in it).
#[test]
fn no_doc_cites_files_outside_the_repository() {
    let mut bad = Vec::new();
    for (file, text) in docs() {
        for (n, line) in text.lines().enumerate() {
            for needle in ["../shared", "shared/bench", "SPEC part", "SPEC.md"] {
                if line.contains(needle) {
                    bad.push(format!("{file}:{}: cites {needle:?}", n + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
