//! The root README's "Bring your own sim" tutorial is built from this
//! example's files: every Rust and TOML block in that section must occur
//! verbatim in one of them, and the digest the tutorial quotes must be the
//! one the live session really ends with.

use std::path::{Path, PathBuf};

use tickwise::Sim;
use tickwise_example_duel::DEFAULT_CONFIG;
use tickwise_example_duel::session::{
    DEMO_POLICY, LIVE_CHECKPOINT_EVERY, LiveSession, live_demo_actions,
};

const SECTION: &str = "## Bring your own sim\n";

fn example_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The tutorial section of the root README.
fn tutorial() -> String {
    let readme = read(&example_dir().join("../../README.md"));
    let start = readme
        .find(SECTION)
        .expect("README has a \"Bring your own sim\" section");
    let rest = &readme[start + SECTION.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    rest[..end].to_owned()
}

/// The fenced blocks of `text` whose info string is `lang`, without fences.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```\n").expect("every block is closed");
        out.push(body[..end].to_owned());
        rest = &body[end..];
    }
    out
}

#[test]
fn every_tutorial_snippet_is_in_the_example_verbatim() {
    let dir = example_dir();
    let files = [
        "src/lib.rs",
        "src/catalog.rs",
        "src/config.rs",
        "src/session.rs",
        "src/bin/duel.rs",
        "src/bin/duel-live.rs",
        "Cargo.toml",
        "clippy.toml",
    ];
    let sources: Vec<(&str, String)> = files.iter().map(|f| (*f, read(&dir.join(f)))).collect();
    let text = tutorial();
    let snippets: Vec<String> = [blocks(&text, "rust,ignore"), blocks(&text, "toml")].concat();
    // The config reader, the inputs reader, the trait impl, the main, the
    // recording, the lifecycle arms; the lints and the feature.
    assert_eq!(snippets.len(), 8, "{snippets:#?}");
    for snippet in &snippets {
        assert!(
            sources
                .iter()
                .any(|(_, src)| src.contains(snippet.as_str())),
            "this README snippet is in none of {files:?}:\n{snippet}"
        );
    }
    // The tool binary really is three lines of main.
    let main = &sources[4].1;
    assert!(
        snippets
            .iter()
            .any(|s| s.contains("fn main() -> ExitCode {") && main.contains(s.as_str())),
        "a snippet is src/bin/duel.rs"
    );
    let body = main.split("fn main() -> ExitCode {\n").nth(1).unwrap_or("");
    assert_eq!(body.lines().take_while(|l| *l != "}").count(), 1, "{main}");
}

#[test]
fn the_tutorial_quotes_the_live_sessions_real_digest() {
    let mut session = LiveSession::new(DEFAULT_CONFIG, DEMO_POLICY, LIVE_CHECKPOINT_EVERY).unwrap();
    session.run(live_demo_actions()).unwrap();
    let digest = session.sim().digest();
    let text = tutorial();
    let quoted = text
        .split("# final digest: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .expect("the tutorial quotes duel-live's final digest");
    assert_eq!(quoted, digest);
    let chk = digest.rsplit("chk=").next().unwrap_or("");
    assert!(
        text.contains(&format!("digest t=143 ... chk={chk})")),
        "the verify line quotes another checksum"
    );
}

#[test]
fn the_block_reader_finds_blocks_and_only_of_their_language() {
    let text = "a\n```rust,ignore\nfn a() {}\n```\n```sh\nls\n```\n```rust,ignore\nb\nc\n```\n";
    assert_eq!(blocks(text, "rust,ignore"), ["fn a() {}\n", "b\nc\n"]);
    assert_eq!(blocks(text, "sh"), ["ls\n"]);
    assert!(blocks(text, "toml").is_empty());
}
