//! `tickwise script`: drive any catalog sim from a text script.
//!
//! Flags, files and printing only: the language, its limits, the sessions
//! and the output lines are [`tickwise_lab::script`]'s. The island (the
//! default when the catalog has it) is built from its loop and lifecycle
//! configs; any other sim from its one config through the catalog.

use std::path::{Path, PathBuf};

use tickwise_catalog::Catalog;
use tickwise_lab::script::{
    IslandParts, IslandSetupError, Session, island_script_session, run_script,
};

use crate::bounded::{InputKind, read_path_or_stdin};
use crate::cmd::record::{choose_sim, parse_plan, read_config, read_inputs_file};
use crate::{Failure, hints};

/// The island's id in the catalog: the sim whose script session is its own.
const ISLAND: &str = "island";

/// Arguments of `tickwise script`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sim to drive: any sim of the catalog (default: `island` when the
    /// catalog has it, else the catalog's only sim).
    #[arg(long, value_name = "ID")]
    pub sim: Option<String>,
    /// The config of a sim other than the island (default: its built-in
    /// default config; the island takes `--loop` and `--lifecycle`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The island's loop config (default: `config/island_loop.json`, built in).
    #[arg(long = "loop", value_name = "FILE")]
    pub loop_config: Option<PathBuf>,
    /// The island's lifecycle config (default: `config/island_lifecycle.json`, built in).
    #[arg(long, value_name = "FILE")]
    pub lifecycle: Option<PathBuf>,
    /// Inputs: the island takes a JSON file of integer inputs by tick
    /// (default: its scripted input for ticks 0..99999); other sims
    /// `scripted` (the default), `random:SEED` or a JSON file, as `record`.
    #[arg(long, value_name = "FILE|scripted|random:SEED")]
    pub inputs: Option<String>,
    /// The script file, or `-` for stdin.
    #[arg(value_name = "SCRIPT|-")]
    pub script: PathBuf,
}

/// The island's session from its files (the built-in defaults when not
/// given); errors name the file they are about.
fn island_session(args: &Args) -> Result<Session, Failure> {
    let inputs_path = args.inputs.as_deref().map(Path::new);
    let inputs = inputs_path.map(read_inputs_file).transpose()?;
    let loop_bytes = read_config(args.loop_config.as_deref())?;
    let lc_bytes = read_config(args.lifecycle.as_deref())?;
    let parts = IslandParts {
        loop_config: loop_bytes.as_deref(),
        lifecycle: lc_bytes.as_deref(),
        inputs: inputs.as_deref(),
    };
    let name = |p: Option<&Path>, default: &str| {
        p.map_or_else(
            || format!("built-in {default}"),
            |p| p.display().to_string(),
        )
    };
    let loop_name = || name(args.loop_config.as_deref(), "island_loop.json");
    let lc_name = || name(args.lifecycle.as_deref(), "island_lifecycle.json");
    let session = island_script_session(&parts).map_err(|e| match e {
        IslandSetupError::Inputs(e) => anyhow::Error::new(e)
            .context(inputs_path.map_or_else(String::new, |p| p.display().to_string())),
        IslandSetupError::LoopConfig(e) => anyhow::Error::new(e).context(loop_name()),
        IslandSetupError::Lifecycle(e) => anyhow::Error::new(e).context(lc_name()),
        IslandSetupError::Inconsistent(e) => {
            anyhow::Error::new(e).context(format!("{} and {}", loop_name(), lc_name()))
        }
        other => anyhow::Error::new(other),
    })?;
    Ok(Session::Island(Box::new(session)))
}

/// Runs `tickwise script`.
///
/// # Errors
///
/// Exit code 2 for unreadable or invalid configs, inputs or scripts (nothing runs).
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let info = choose_sim(catalog, args.sim.as_deref(), ISLAND)?;
    let mut session = if info.id == ISLAND {
        if args.config.is_some() {
            return Err(Failure::usage(anyhow::anyhow!(
                "--config: the island's script takes --loop and --lifecycle"
            )));
        }
        island_session(args)?
    } else {
        if args.loop_config.is_some() || args.lifecycle.is_some() {
            return Err(Failure::usage(anyhow::anyhow!(
                "--loop and --lifecycle are the island's configs; {} takes --config",
                info.id
            )));
        }
        let config = read_config(args.config.as_deref())?;
        let plan = parse_plan(args.inputs.as_deref().unwrap_or("scripted"))?;
        Session::Other(
            catalog
                .play(info.id, config.as_deref(), &plan)
                .map_err(hints::catalog)?,
        )
    };
    // `-` is the one documented stream: stdin, read up to the script limit.
    let bytes = read_path_or_stdin(&args.script, InputKind::Script).map_err(hints::read)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        anyhow::anyhow!(
            "script {} is not UTF-8 text (invalid byte at offset {at})",
            if args.script.as_os_str() == "-" {
                "stdin".into()
            } else {
                args.script.display().to_string()
            }
        )
    })?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    run_script(&mut session, &text, &mut out)?;
    Ok(0)
}
