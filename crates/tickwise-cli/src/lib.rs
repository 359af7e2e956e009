//! The `tickwise` command-line tool, as a library.
//!
//! A game gets the replay tools for its own sim with a three-line binary:
//!
//! ```no_run
//! use tickwise_cli::Catalog;
//! # type MySim = tickwise_sims::island::IslandWorld;
//!
//! fn main() -> std::process::ExitCode {
//!     tickwise_cli::main_with(Catalog::builtin().with::<MySim>())
//! }
//! ```
//!
//! Every command that takes a sim (`record`, `verify`, `compare`,
//! `sync-test`, `budget`, `verifyd`, `worker`) looks it up in the [`Catalog`] passed in, by the
//! id a replay stores or `--sim ID` names. The `tickwise` binary itself is
//! `main_with(Catalog::builtin())`. Tests and fuzz targets reach the same
//! code through [`main_with_args`] and the parsers in [`cmd`] and [`script`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
pub use tickwise_catalog::{Catalog, CatalogSim};

pub mod bounded;
pub mod cmd;
mod hints;
pub mod script;

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    /// Process exit code.
    pub code: u8,
    /// What went wrong.
    pub error: anyhow::Error,
}

impl Failure {
    /// Usage or input error: exit code 2.
    pub fn usage(error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: 2,
            error: error.into(),
        }
    }
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure {
            code: 2,
            error: e.into(),
        }
    }
}

/// Deterministic fixed-timestep simulation: scripts, replays, budgets and the game-loop lab.
#[derive(Debug, Parser)]
#[command(name = "tickwise", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive the island world from a text script; one JSON line per command.
    Script(script::ScriptArgs),
    /// Run a sim with scripted or generated inputs and write a replay.
    Record(cmd::record::Args),
    /// Re-simulate replays (files or directories) and report OK or the first divergence.
    Verify(cmd::verify::Args),
    /// Compare two replays, or a replay against a live run: first divergent tick and fields.
    Compare(cmd::compare::Args),
    /// GGRS-style sync test: run, roll back, re-simulate, compare checksums every tick.
    SyncTest(cmd::sync_test::Args),
    /// Measure a sim's per-tick cost and recommend a tick rate.
    Budget(cmd::budget::Args),
    /// Run the horde sim headless for T ticks; print digest and timing.
    Horde(cmd::horde::Args),
    /// The game-loop lab: strategies against machine profiles, with charts.
    Lab(cmd::lab::Args),
    /// Run the real-clock loop on this machine and report frame times and CPU use.
    Run(cmd::run::Args),
    /// Serve the browser pages on 127.0.0.1.
    Serve(cmd::serve::Args),
    /// Rollback netplay: every player in one process over a simulated network.
    Netplay(cmd::netplay::Args),
    /// One player of a real rollback session over UDP.
    Peer(cmd::peer::Args),
    /// The replay verification service: HTTP API, embedded queue or Redis Streams.
    Verifyd(cmd::verifyd::Args),
    /// Verify jobs from the Redis queue of `verifyd --queue redis://…`.
    Worker(cmd::worker::Args),
    /// Upload replays to a running verifyd on this machine; print throughput and latency.
    Loadtest(cmd::loadtest::Args),
}

/// The whole tool over `catalog`, with the process's own arguments: what a
/// game's replay-tool binary calls from `main`.
#[must_use]
pub fn main_with(catalog: Catalog) -> ExitCode {
    main_with_args(&catalog, std::env::args_os())
}

/// Parses `args` (the first is the program name) and runs the command over
/// `catalog`; never panics on bad input. Exit codes: 0 success, 1 a replay
/// diverged or a check failed, 2 bad input. Errors go to stderr prefixed
/// with the program's name (a game's `duel` binary says `duel: ...`).
pub fn main_with_args<I, T>(catalog: &Catalog, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let program = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_stem())
        .map_or_else(|| "tickwise".into(), |s| s.to_string_lossy().into_owned());
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli, catalog) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("{program}: {}", hints::render(&f.error));
            ExitCode::from(f.code)
        }
    }
}

/// Runs a parsed command over `catalog`; `Ok` carries the exit code
/// (verify uses 1 for divergence).
///
/// # Errors
///
/// A [`Failure`] with its exit code.
pub fn run(cli: Cli, catalog: &Catalog) -> Result<u8, Failure> {
    match cli.command {
        Command::Script(a) => script::run(&a),
        Command::Record(a) => cmd::record::run(&a, catalog),
        Command::Verify(a) => cmd::verify::run(&a, catalog),
        Command::Compare(a) => cmd::compare::run(&a, catalog),
        Command::SyncTest(a) => cmd::sync_test::run(&a, catalog),
        Command::Budget(a) => cmd::budget::run(&a, catalog),
        Command::Horde(a) => cmd::horde::run(&a),
        Command::Lab(a) => cmd::lab::run(&a),
        Command::Run(a) => cmd::run::run(&a),
        Command::Serve(a) => cmd::serve::run(&a),
        Command::Netplay(a) => cmd::netplay::run(&a, catalog),
        Command::Peer(a) => cmd::peer::run(&a, catalog),
        Command::Verifyd(a) => cmd::verifyd::run(&a, catalog),
        Command::Worker(a) => cmd::worker::run(&a, catalog),
        Command::Loadtest(a) => cmd::loadtest::run(&a, catalog),
    }
}

/// The README's code blocks, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
