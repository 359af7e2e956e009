//! What each fuzz target checks, one function per target.
//!
//! The functions live in this library, not in the target files, so that two
//! callers run exactly the same checks: the libFuzzer targets in
//! `fuzz_targets/` (three lines each) and the plain `cargo test` regression
//! test (`crates/tickwise-cli/tests/fuzz_regressions.rs`, which includes this
//! file with `#[path]`, and with it the modules below, which sit next to it
//! in `fuzz/src/`; it feeds them every file under `fuzz/seeds/<target>/` and
//! `fuzz/regressions/<target>/`). Each module holds one target or one family
//! of targets; this file re-exports their checks flat and dispatches by name
//! ([`run`]). A check either returns or panics; a panic is a finding.
//!
//! Every target asserts "no panic, bounded work" by construction (libFuzzer
//! reports panics, and `-timeout`/`-rss_limit_mb` in `run.sh` report the
//! rest). On top of that each asserts what its API lets it state: replays
//! that are accepted write back byte for byte, the header reader agrees with
//! the full reader, a parsed script renders back to the same commands,
//! accepted configs build worlds and loops that run, a resume under an
//! accepted lifecycle config conserves time, every netplay datagram is
//! accepted or counted under its reason and decoded messages re-encode to
//! their bytes, a batch upload splits the same however its bytes arrive, and
//! a rejoin snapshot that is read (the horde's, the duel example's) writes
//! back to the same state and plays on deterministically.
#![forbid(unsafe_code)]

// One module per concept, private; the targets and the regression test see
// the flat surface below (what they use: the regression test includes this
// file, and a re-export it does not use would warn there).
mod batch;
mod config;
// The regression tests' runner (not a target's check): public for them.
pub mod corpus;
// The duel example's snapshot target needs the duel crate, which the CLI's
// regression test (it includes this file) cannot link: the duel depends on
// the CLI. The fuzz crate's `duel` feature (on by default) brings the duel
// in; the CLI has no such feature, so there the module is left out and the
// target is in [`DELEGATED`] instead.
#[cfg(feature = "duel")]
mod duel;
mod horde;
mod net;
mod net_wire;
mod replay;
mod room;
mod script;

pub use batch::batch_upload;
pub use config::{inputs_file, island_lifecycle_config, island_loop_config};
#[cfg(feature = "duel")]
pub use duel::{duel_config, duel_snapshot};
pub use horde::{horde_config, rejoin_snapshot};
pub use net::{
    IslandPair, NET_KEY, join_datagrams, net_datagram, net_datagram_session, net_local_input,
    net_seal, net_session, net_world, split_datagrams,
};
pub use replay::{LIMITS, repaired, replay_header, replay_reader};
pub use room::room_message;
pub use script::script_parser;

/// Every target [`run`] dispatches, as named in `fuzz/Cargo.toml`,
/// `fuzz/seeds/` and `fuzz/regressions/`. With [`DELEGATED`], every target.
pub const TARGETS: [&str; 11] = [
    "replay_reader",
    "replay_header",
    "script_parser",
    "island_loop_config",
    "island_lifecycle_config",
    "horde_config",
    "inputs_file",
    "net_datagram",
    "batch_upload",
    "room_message",
    "rejoin_snapshot",
];

/// The targets whose seeds and kept findings the CLI's regression test
/// cannot run, each with the test that runs them instead (and that the CLI's
/// test checks is there): `duel_snapshot` and `duel_config` need the duel
/// example, which depends on the CLI, so the duel crate runs them.
pub const DELEGATED: [(&str, &str); 2] = [
    ("duel_snapshot", "examples/duel/tests/fuzz_regressions.rs"),
    ("duel_config", "examples/duel/tests/fuzz_regressions.rs"),
];

/// Runs target `name`'s checks on `data` (one of [`TARGETS`]).
///
/// # Panics
///
/// On a finding, or for an unknown target name.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "replay_reader" => replay_reader(data),
        "replay_header" => replay_header(data),
        "script_parser" => script_parser(data),
        "island_loop_config" => island_loop_config(data),
        "island_lifecycle_config" => island_lifecycle_config(data),
        "horde_config" => horde_config(data),
        "inputs_file" => inputs_file(data),
        "net_datagram" => net_datagram(data),
        "batch_upload" => batch_upload(data),
        "room_message" => room_message(data),
        "rejoin_snapshot" => rejoin_snapshot(data),
        other => panic!("unknown fuzz target {other:?}"),
    }
}
