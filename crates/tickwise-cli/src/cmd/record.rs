//! `tickwise record`: run a sim with scripted or generated inputs and write a replay.
//!
//! Also home of the flags `record`, `compare`, `sync-test` and `budget`
//! share: the sim, its config, and the input plan (`scripted`,
//! `random:SEED`, or a JSON file), and of the one reader of files named on
//! the command line.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use tickwise::DEFAULT_CHECKPOINT_EVERY;
use tickwise_catalog::{Catalog, InputPlan, SimInfo};

use super::verify::LimitArgs;
use crate::bounded::{self, InputKind};
use crate::{Failure, hints};

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sim and its inputs.
    #[command(flatten)]
    pub run: RunArgs,
    /// Record a sim of N players (1 to 4): the config (`--config` or the
    /// sim's default) is set to N players where the sim allows it (the
    /// horde's `players` key); a sim that cannot take N players is refused.
    /// Default: as many players as the config gives.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=4))]
    pub players: Option<u8>,
    /// Ticks to run and record.
    #[arg(long, value_name = "N")]
    pub ticks: u64,
    /// Store a checkpoint (state checksum and field hashes) every K ticks.
    #[arg(long, value_name = "K", default_value_t = DEFAULT_CHECKPOINT_EVERY,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: u64,
    /// The limits of the verifier the replay is for: a recording it would
    /// refuse (too many ticks, too much work, a file too large) is refused
    /// before running, with the verifier's message.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// The replay file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// The flags that choose a sim, its config and its inputs.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The sim id: any sim of the catalog (`tickwise`: `island` or `horde`).
    /// Default: the catalog's only sim if it has one, else `island`.
    #[arg(long, value_name = "ID")]
    pub sim: Option<String>,
    /// The sim's config file (default: the sim's own default config, built
    /// into the binary, so no file is needed).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Inputs: `scripted` (the sim's scripted input: for the island 20 ticks
    /// right then 20 left, for the horde a square walk; every player gets
    /// it), `random:SEED` (PCG32; player p draws from its own stream p), or
    /// a JSON file holding one array per player, one input per tick
    /// (island: integers; horde: objects with `held`, `pressed`,
    /// `released`, `axes`); a one-player sim also takes a flat array.
    /// Ticks past an array's end get the absent input.
    #[arg(
        long,
        value_name = "scripted|random:SEED|FILE",
        default_value = "scripted"
    )]
    pub inputs: String,
}

impl RunArgs {
    /// The sim, its config bytes (`None`: the sim's default) and the input
    /// plan, all read before anything runs.
    ///
    /// # Errors
    ///
    /// Unknown sim ids (listing the catalog's), unreadable or oversized
    /// files, malformed `random:` seeds.
    pub fn resolve(
        &self,
        catalog: &Catalog,
    ) -> anyhow::Result<(SimInfo, Option<Vec<u8>>, InputPlan)> {
        let info = choose_sim(catalog, self.sim.as_deref(), "island")?;
        let config = read_config(self.config.as_deref())?;
        Ok((info, config, parse_plan(&self.inputs)?))
    }
}

/// The sim `--sim` names; without the flag, the catalog's only sim (a game's
/// own tool binary need not repeat its one id), else `fallback`.
///
/// # Errors
///
/// Unknown sim ids, listing the catalog's.
pub fn choose_sim(
    catalog: &Catalog,
    given: Option<&str>,
    fallback: &str,
) -> anyhow::Result<SimInfo> {
    let mut sims = catalog.sims();
    let only = match (sims.next(), sims.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    };
    match (given, only) {
        (None, Some(one)) => Ok(one),
        (id, _) => catalog.get(id.unwrap_or(fallback)).map_err(hints::catalog),
    }
}

/// Reads a `--config` file, if one was given, through the bounded reader
/// (a regular file of at most [`bounded::MAX_CONFIG_BYTES`]).
///
/// # Errors
///
/// Missing, unreadable, non-regular or oversized files, naming the path.
pub fn read_config(path: Option<&Path>) -> anyhow::Result<Option<Vec<u8>>> {
    path.map(|p| read_input(p, InputKind::Config)).transpose()
}

/// Parses an `--inputs` value: `scripted`, `random:SEED`, or the path of an
/// inputs file (read here, up to [`MAX_INPUTS_BYTES`](tickwise_catalog::MAX_INPUTS_BYTES); its elements are
/// decoded by the sim when the plan is used).
///
/// # Errors
///
/// A `random:` seed that is not a `u64`, or an unreadable or oversized file.
pub fn parse_plan(spec: &str) -> anyhow::Result<InputPlan> {
    if spec == "scripted" {
        return Ok(InputPlan::Scripted);
    }
    if let Some(seed) = spec.strip_prefix("random:") {
        let seed = seed.parse::<u64>().map_err(|e| {
            anyhow::anyhow!(
                "`random:SEED` needs a u64 seed, found {}: {e}",
                bounded::quote_token(seed)
            )
        })?;
        return Ok(InputPlan::Random(seed));
    }
    Ok(InputPlan::Json(read_inputs_file(Path::new(spec))?))
}

/// Reads an inputs file (a JSON array, one element per tick) for any
/// command, with the catalog's one byte limit, [`MAX_INPUTS_BYTES`](tickwise_catalog::MAX_INPUTS_BYTES).
///
/// # Errors
///
/// Missing, unreadable, non-regular or oversized files, naming the path.
pub fn read_inputs_file(path: &Path) -> anyhow::Result<Vec<u8>> {
    read_input(path, InputKind::Inputs)
}

/// Reads the regular file `path` as a `kind` with that kind's limit
/// ([`bounded::read_file`]).
///
/// # Errors
///
/// The bounded reader's error, with a flag hint where one applies.
pub fn read_input(path: &Path, kind: InputKind) -> anyhow::Result<Vec<u8>> {
    bounded::read_file(path, kind, kind.default_limit()).map_err(hints::read)
}

/// Runs the command.
///
/// # Errors
///
/// Exit code 2 for bad flags, configs or inputs, or an unwritable output.
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let (info, config, plan) = args.run.resolve(catalog)?;
    let config = match args.players {
        Some(n) => Some(
            catalog
                .config_for_players(info.id, config.as_deref(), usize::from(n))
                .map_err(hints::catalog)?,
        ),
        None => config,
    };
    let rec = catalog
        .record_within(
            info.id,
            config.as_deref(),
            &plan,
            args.ticks,
            args.checkpoint_every,
            &args.limits.limits(),
        )
        .map_err(|e| {
            hints::catalog(e).context(
                "refusing to record a replay that `verify` with the same limits would refuse",
            )
        })?;
    std::fs::write(&args.out, &rec.bytes)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    #[allow(clippy::cast_precision_loss, reason = "a ratio for display")]
    let per_tick = rec.bytes.len() as f64 / rec.ticks.max(1) as f64;
    #[allow(clippy::cast_precision_loss, reason = "a ratio for display")]
    let inputs_per_tick = rec.input_bytes as f64 / rec.ticks.max(1) as f64;
    outln!(
        "wrote {}: {} {} ticks, {} player{}, {} input runs, {} bytes ({per_tick:.3} bytes/tick, of which inputs {inputs_per_tick:.3}), digest {}",
        args.out.display(),
        info.id,
        rec.ticks,
        rec.players,
        if rec.players == 1 { "" } else { "s" },
        rec.runs,
        rec.bytes.len(),
        rec.digest
    );
    Ok(0)
}
