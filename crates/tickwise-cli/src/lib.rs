//! The `tickwise` command-line tool, as a library.
//!
//! A game gets the replay tools for its own sim with a three-line binary,
//! under its own name, version and description ([`ToolInfo`]):
//!
//! ```no_run
//! use tickwise_cli::{Catalog, ToolInfo};
//! # type MySim = tickwise_sims::island::IslandWorld;
//!
//! const TOOL: ToolInfo = ToolInfo::new("my-game", env!("CARGO_PKG_VERSION"), "My game's replay tools.");
//!
//! fn main() -> std::process::ExitCode {
//!     tickwise_cli::main_with(TOOL, Catalog::empty().with::<MySim>())
//! }
//! ```
//!
//! The name, version and description are what `--help`, `--version`, error
//! messages and every banner (`my-game verifyd listening on …`) show.
//! Commands the catalog cannot serve are not offered: `horde` needs the
//! catalog's `horde`, and `lab` and `run` (the toolkit's own island and lab
//! worlds) need its `island`; they are left out of `--help` and refused
//! with the reason. `script` drives any catalog sim.
//!
//! Every command that takes a sim (`record`, `verify`, `compare`,
//! `sync-test`, `budget`, `verifyd`, `worker`) looks it up in the [`Catalog`] passed in, by the
//! id a replay stores or `--sim ID` names. The `tickwise` binary itself is
//! `main_with(ToolInfo::TICKWISE, Catalog::builtin())`. Tests reach the same
//! code through [`main_with_args`]. The commands parse flags, read files and
//! print; what they do is the libraries' (the script language is
//! `tickwise_lab::script`, the queue URLs `tickwise_service::QueueUrl`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
pub use tickwise_catalog::{Catalog, CatalogSim};

#[macro_use]
mod out;
pub mod bounded;
pub mod cmd;
mod cpu;
mod hints;

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

/// Who a tool binary is: the name, version and one-line description shown
/// by `--help`, `--version`, errors and banners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolInfo {
    /// The command's name (`tickwise`, `duel`).
    pub name: &'static str,
    /// Its version (usually `env!("CARGO_PKG_VERSION")` of the game's crate).
    pub version: &'static str,
    /// One line saying what it is, the first line of `--help`.
    pub about: &'static str,
}

impl ToolInfo {
    /// The `tickwise` binary itself.
    pub const TICKWISE: ToolInfo = ToolInfo::new(
        "tickwise",
        env!("CARGO_PKG_VERSION"),
        "Deterministic fixed-timestep simulation: scripts, replays, budgets and the game-loop lab.",
    );

    /// A tool named `name`, at `version`, described by `about`.
    #[must_use]
    pub const fn new(name: &'static str, version: &'static str, about: &'static str) -> ToolInfo {
        ToolInfo {
            name,
            version,
            about,
        }
    }
}

/// Commands that drive a built-in sim directly, and the catalog id each
/// needs: without it the command is not offered.
const BUILTIN_COMMANDS: [(&str, &str); 3] =
    [("horde", "horde"), ("lab", "island"), ("run", "island")];

/// The sim `command` needs and `catalog` lacks, if any.
fn unserved(command: &str, catalog: &Catalog) -> Option<&'static str> {
    BUILTIN_COMMANDS
        .iter()
        .find(|(c, sim)| *c == command && catalog.get(sim).is_err())
        .map(|(_, sim)| *sim)
}

/// The command line of `tool` over `catalog`: its name, version and
/// description, and only the commands the catalog can serve.
#[must_use]
pub fn command(tool: &ToolInfo, catalog: &Catalog) -> clap::Command {
    let mut cmd = Cli::command()
        .name(tool.name)
        .bin_name(tool.name)
        .version(tool.version)
        .about(tool.about);
    for (sub, _) in BUILTIN_COMMANDS {
        if unserved(sub, catalog).is_some() {
            cmd = cmd.mut_subcommand(sub, |s| s.hide(true));
        }
    }
    cmd
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
    /// Drive a sim (default: the island) from a text script; one JSON line per command.
    Script(cmd::script::Args),
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

/// The whole tool `tool` over `catalog`, with the process's own
/// arguments: what a game's replay-tool binary calls from `main`.
#[must_use]
pub fn main_with(tool: ToolInfo, catalog: Catalog) -> ExitCode {
    main_with_args(&tool, &catalog, std::env::args_os())
}

/// Parses `args` (the first is the program name, ignored: the tool is
/// `tool.name`) and runs the command over `catalog`; never panics on bad
/// input. Exit codes: 0 success, 1 a replay diverged or a check failed, 2
/// bad input, 141 standard output closed by its reader (nothing printed). Errors go to stderr prefixed with the tool's name (a game's
/// `duel` tool says `duel: ...`).
pub fn main_with_args<I, T>(tool: &ToolInfo, catalog: &Catalog, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    if let Some(why) = cpu::unsupported(tool.name) {
        eprintln!("{why}");
        return ExitCode::from(2);
    }
    let parsed = command(tool, catalog)
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli, tool, catalog) {
        Ok(code) => ExitCode::from(code),
        Err(f)
            if f.error
                .downcast_ref()
                .is_some_and(out::StdoutClosed::is_broken_pipe) =>
        {
            ExitCode::from(141)
        }
        Err(f) => {
            eprintln!("{}: {}", tool.name, hints::render(&f.error));
            ExitCode::from(f.code)
        }
    }
}

/// Runs a parsed command of `tool` over `catalog`; `Ok` carries the exit
/// code (verify uses 1 for divergence).
///
/// # Errors
///
/// A [`Failure`] with its exit code; exit code 2 for a command the catalog
/// cannot serve.
pub fn run(cli: Cli, tool: &ToolInfo, catalog: &Catalog) -> Result<u8, Failure> {
    let name = match &cli.command {
        Command::Horde(_) => "horde",
        Command::Lab(_) => "lab",
        Command::Run(_) => "run",
        _ => "",
    };
    if let Some(sim) = unserved(name, catalog) {
        let known: Vec<&str> = catalog.ids().collect();
        return Err(Failure::usage(anyhow::anyhow!(
            "`{name}` drives the built-in {sim} sim, which is not in {}'s catalog (sims: {})",
            tool.name,
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    }
    match cli.command {
        Command::Script(a) => cmd::script::run(&a, catalog),
        Command::Record(a) => cmd::record::run(&a, catalog),
        Command::Verify(a) => cmd::verify::run(&a, catalog),
        Command::Compare(a) => cmd::compare::run(&a, catalog),
        Command::SyncTest(a) => cmd::sync_test::run(&a, catalog),
        Command::Budget(a) => cmd::budget::run(&a, catalog),
        Command::Horde(a) => cmd::horde::run(&a),
        Command::Lab(a) => cmd::lab::run(&a, tool),
        Command::Run(a) => cmd::run::run(&a, tool),
        Command::Serve(a) => cmd::serve::run(&a, catalog),
        Command::Netplay(a) => cmd::netplay::run(&a, catalog),
        Command::Peer(a) => cmd::peer::run(&a, catalog),
        Command::Verifyd(a) => cmd::verifyd::run(&a, tool, catalog),
        Command::Worker(a) => cmd::worker::run(&a, tool, catalog),
        Command::Loadtest(a) => cmd::loadtest::run(&a, catalog),
    }
}

/// The README's code blocks, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
