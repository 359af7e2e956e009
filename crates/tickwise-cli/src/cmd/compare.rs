//! `tickwise compare`: a desync report between two runs.
//!
//! Both runs are re-simulated in lockstep and their 64-bit state checksums
//! compared after every tick; the report names the first divergent tick,
//! the fields that differ there, and the first tick whose inputs differ.
//! Run B is a second replay, or (`--live`) a fresh run of the same sim.

use std::path::PathBuf;

use tickwise_catalog::{Catalog, field_players, owners_text};

use super::record::{parse_plan, read_config};
use super::verify::{LimitArgs, read_replay};
use crate::{Failure, hints};

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run A: a replay file.
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// Run B: another replay of the same sim.
    #[arg(
        value_name = "B",
        required_unless_present = "live",
        conflicts_with = "live"
    )]
    pub b: Option<PathBuf>,
    /// Run B is a live run of A's sim for A's tick count.
    #[arg(long)]
    pub live: bool,
    /// The live run's inputs (`scripted`, `random:SEED` or a JSON file).
    #[arg(
        long,
        value_name = "scripted|random:SEED|FILE",
        default_value = "scripted",
        requires = "live"
    )]
    pub inputs: String,
    /// The live run's config (default: A's embedded config).
    #[arg(long, value_name = "FILE", requires = "live")]
    pub config: Option<PathBuf>,
    /// Reader limits for the replay files.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
///
/// # Errors
///
/// Exit code 2 for unreadable or invalid replays, configs or inputs.
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let limits = args.limits.limits();
    let a = read_replay(&args.a, &limits)?;
    let (r, b_name) = match &args.b {
        Some(b_path) => {
            let b = read_replay(b_path, &limits)?;
            (
                catalog.compare(&a, &b, &limits).map_err(hints::catalog)?,
                b_path.display().to_string(),
            )
        }
        None => {
            let plan = parse_plan(&args.inputs)?;
            let config = read_config(args.config.as_deref())?;
            (
                catalog
                    .compare_live(&a, &limits, config.as_deref(), &plan)
                    .map_err(hints::catalog)?,
                format!("live run (inputs {})", args.inputs),
            )
        }
    };
    // Whose own fields differ, by the field-name rule (the comparison
    // already names the player whose inputs first differ).
    let players =
        tickwise::read_header_unchecked(&a, &limits).map_or(1, |h| usize::from(h.players));
    let owners = r
        .comparison
        .divergence
        .as_ref()
        .map(|d| owners_text(&field_players(&d.fields, players)))
        .unwrap_or_default();
    outln!(
        "A: {} ({} ticks)\nB: {b_name} ({} ticks)\n{}: {}{owners}",
        args.a.display(),
        r.ticks_a,
        r.ticks_b,
        r.sim.id,
        r.comparison
    );
    if r.comparison.divergence.is_none() && r.ticks_a != r.ticks_b {
        outln!(
            "note: only the first {} ticks were compared; the runs have different lengths",
            r.comparison.ticks
        );
    }
    Ok(u8::from(r.comparison.divergence.is_some()))
}
