//! Determinism rule, checked by a plain `cargo test` (issue 22, item 5).
//!
//! The README promised that "the build fails" on a float, a clock, OS
//! randomness or a hash map in sim code; only `cargo clippy -D warnings`
//! did (an `f32` added to a sim built fine with `cargo build`). This test
//! scans the source of the sim crates (the kernel, the built-in sims and the
//! example game's sim) and fails on any such token outside the documented
//! boundary functions, so `cargo test` enforces the rule too. Comments,
//! string literals and `#[cfg(test)]` modules are not scanned.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What is banned in sim code, and why.
const BANNED: &[(&str, &str)] = &[
    ("f32", "floats: sim code is integer or fixed point only"),
    ("f64", "floats: sim code is integer or fixed point only"),
    ("Instant", "wall clock: sim time comes from the clock"),
    ("SystemTime", "wall clock: sim time comes from the clock"),
    ("HashMap", "random iteration order; use BTreeMap or a Vec"),
    ("HashSet", "random iteration order; use BTreeSet or a Vec"),
    ("RandomState", "seeded from the OS"),
    (
        "DefaultHasher",
        "unspecified algorithm; use tickwise::Fnv1a64",
    ),
    (
        "getrandom",
        "OS randomness; use tickwise::Pcg32 with a seed",
    ),
    (
        "thread_rng",
        "OS randomness; use tickwise::Pcg32 with a seed",
    ),
];

/// The boundary functions where a float or a clock type is the point
/// (docs/determinism.md): a host's float milliseconds in, a renderer's
/// alpha out, a desktop host's `Instant`s in. Each carries a local
/// `#[allow]` with its reason.
const BOUNDARIES: &[(&str, &str)] = &[
    ("crates/tickwise/src/time.rs", "try_from_millis_f64"),
    ("crates/tickwise/src/time.rs", "from_instants"),
    ("crates/tickwise/src/clock.rs", "as_f32"),
];

/// The source trees held to the rule.
const SIM_SOURCES: &[&str] = &[
    "crates/tickwise/src",
    "crates/tickwise-sims/src",
    "crates/tickwise-config/src",
    "examples/duel/src",
];

/// `src` without comments, string and char literals (each replaced by
/// spaces, so line numbers stay), and without `#[cfg(test)]` items from
/// that line on when it opens a `mod` (test modules close their file).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(if b[i] == b'\n' { b'\n' } else { b' ' });
                    i += 1;
                }
            }
        } else if rest.starts_with(b"r#\"") || rest.starts_with(b"r\"") || rest.starts_with(b"br\"")
        {
            // Raw string: r"..." or r#"..."#.
            let start = rest.iter().position(|&c| c == b'"').unwrap_or(0);
            let hashes = rest[..start].iter().filter(|&&c| c == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            out.extend(std::iter::repeat_n(b' ', start + 1));
            i += start + 1;
            while i < b.len() && !b[i..].starts_with(&close) {
                out.push(if b[i] == b'\n' { b'\n' } else { b' ' });
                i += 1;
            }
            out.extend(std::iter::repeat_n(b' ', close.len()));
            i += close.len();
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    out.push(b' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(if b[i] == b'\n' { b'\n' } else { b' ' });
                    i += 1;
                }
            }
            out.push(b' ');
            i += 1;
        } else if b[i] == b'\'' && rest.len() >= 3 && (rest[2] == b'\'' || rest[1] == b'\\') {
            // A char literal ('x' or '\n'); lifetimes ('a) are left alone.
            let len = rest[1..]
                .iter()
                .position(|&c| c == b'\'')
                .map_or(1, |p| p + 2);
            out.extend(std::iter::repeat_n(b' ', len));
            i += len;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    // A `#[cfg(test)]` module runs only in tests: blank it, from its
    // attribute to its closing brace (braces counted in code only).
    let mut kept = String::new();
    let mut lines = text.lines().peekable();
    let mut depth: Option<i64> = None;
    while let Some(line) = lines.next() {
        if depth.is_none()
            && line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|n| n.trim_start().starts_with("mod "))
        {
            depth = Some(0);
        }
        if let Some(d) = depth.as_mut() {
            let opened = i64::try_from(line.matches('{').count()).unwrap_or(0);
            let closed = i64::try_from(line.matches('}').count()).unwrap_or(0);
            let was_open = *d > 0 || opened > 0;
            *d += opened - closed;
            kept.push('\n');
            if was_open && *d <= 0 {
                depth = None;
            }
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    kept
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Each banned token (a whole identifier) or float literal in `code`:
/// (line number, token, enclosing `fn` if any).
fn findings(code: &str) -> Vec<(usize, String, Option<String>)> {
    let mut out = Vec::new();
    let mut current_fn: Option<String> = None;
    for (n, line) in code.lines().enumerate() {
        let bytes = line.as_bytes();
        if let Some(p) = line
            .find("fn ")
            .filter(|&p| p == 0 || !is_ident(bytes[p - 1]))
        {
            let name: String = line[p + 3..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                current_fn = Some(name);
            }
        }
        let mut i = 0;
        while i < bytes.len() {
            if is_ident(bytes[i]) && (i == 0 || (!is_ident(bytes[i - 1]) && bytes[i - 1] != b'.')) {
                let end = (i..bytes.len())
                    .find(|&j| !is_ident(bytes[j]))
                    .unwrap_or(bytes.len());
                let word = &line[i..end];
                if BANNED.iter().any(|(t, _)| *t == word) {
                    out.push((n + 1, word.to_owned(), current_fn.clone()));
                } else if bytes[i].is_ascii_digit()
                    && end < bytes.len()
                    && bytes[end] == b'.'
                    && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
                {
                    // A float literal such as `0.5` (not `x.0.1`, a field).
                    out.push((
                        n + 1,
                        format!("{word}.… (a float literal)"),
                        current_fn.clone(),
                    ));
                }
                i = end;
            } else {
                i += 1;
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            // Tool binaries are hosts, not sims.
            if p.file_name().is_some_and(|n| n == "bin") {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn sim_code_has_no_floats_clocks_os_randomness_or_hash_maps() {
    let root = root();
    let mut files = Vec::new();
    for dir in SIM_SOURCES {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "too few files scanned: {files:?}");
    let mut bad = Vec::new();
    let mut boundaries_seen = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for (line, token, func) in findings(&code) {
            let allowed = BOUNDARIES
                .iter()
                .any(|(file, name)| *file == rel && func.as_deref() == Some(*name));
            if allowed {
                boundaries_seen.push((rel.clone(), func.clone()));
                continue;
            }
            let why = BANNED.iter().find(|(t, _)| *t == token).map_or(
                "floats: sim code is integer or fixed point only",
                |(_, w)| w,
            );
            bad.push(format!("{rel}:{line}: `{token}` ({why})"));
        }
    }
    assert!(
        bad.is_empty(),
        "sim code must stay deterministic (docs/determinism.md):\n{}",
        bad.join("\n")
    );
    // Every boundary still exists where it is listed (a renamed function
    // would otherwise leave a stale exception).
    for (file, name) in BOUNDARIES {
        assert!(
            boundaries_seen
                .iter()
                .any(|(f, n)| f == file && n.as_deref() == Some(*name)),
            "boundary {file}: fn {name} no longer uses a float or clock type: remove it from BOUNDARIES"
        );
    }
}

#[test]
fn the_scan_finds_what_it_bans_and_skips_comments_strings_and_tests() {
    let src = r#"
// an f32 in a comment
/* a HashMap in a block comment */
fn step(x: i32) -> i32 {
    let s = "f64 in a string";
    let t = x.0.1;
    let v: f32 = 0.5;
    let m = std::collections::HashMap::<u8, u8>::new();
    let now = std::time::Instant::now();
    x
}
#[cfg(test)]
mod tests {
    fn helper() -> f64 { 1.0 }
}
fn after_the_tests() -> f64 { 2.0 }
"#;
    let found: Vec<(usize, String)> = findings(&code_only(src))
        .into_iter()
        .map(|(l, t, _)| (l, t))
        .collect();
    assert_eq!(
        found,
        [
            (7, "f32".to_owned()),
            (7, "0.… (a float literal)".to_owned()),
            (8, "HashMap".to_owned()),
            (9, "Instant".to_owned()),
            (16, "f64".to_owned()),
            (16, "2.… (a float literal)".to_owned()),
        ]
    );
    let fns: Vec<Option<String>> = findings(&code_only(src))
        .into_iter()
        .map(|(_, _, f)| f)
        .collect();
    assert!(
        fns[..4].iter().all(|f| f.as_deref() == Some("step")),
        "{fns:?}"
    );
    assert_eq!(fns[4].as_deref(), Some("after_the_tests"));
}
