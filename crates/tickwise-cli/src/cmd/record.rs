//! `tickwise record`: run a sim with scripted or generated inputs and write a replay.
//!
//! Also home of the flags `record`, `compare` and `sync-test` share: the sim,
//! its config, and the input plan (`seed`, `random:SEED`, or a JSON file).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use tickwise::{DEFAULT_CHECKPOINT_EVERY, ReplayLimits};
use tickwise_sims::registry::{self, InputPlan, MAX_INPUTS_JSON_BYTES, SimKind};

use crate::Failure;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sim and its inputs.
    #[command(flatten)]
    pub run: RunArgs,
    /// Ticks to run and record.
    #[arg(long, value_name = "N")]
    pub ticks: u64,
    /// Store a checkpoint (state checksum and field hashes) every K ticks.
    #[arg(long, value_name = "K", default_value_t = DEFAULT_CHECKPOINT_EVERY,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: u64,
    /// Refuse to record more ticks than a verifier with this limit accepts.
    #[arg(long, value_name = "N", default_value_t = ReplayLimits::DEFAULT.max_ticks)]
    pub max_ticks: u64,
    /// The replay file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// The flags that choose a sim, its config and its inputs.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The sim id (`island` or `horde`).
    #[arg(long, value_name = "ID", default_value = "island")]
    pub sim: String,
    /// The sim's JSON config (default: the sim's config in `config/`, built in).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Inputs: `seed` (the sim's scripted pattern: for the island the seeds'
    /// `tick % 40 < 20 ? 1 : -1`, for the horde its demo walk), `random:SEED`
    /// (PCG32), or a JSON array file with one input per tick (island:
    /// integers; horde: objects with `held`, `pressed`, `released`, `axes`).
    /// Ticks past the array's end get the default input.
    #[arg(long, value_name = "seed|random:SEED|FILE", default_value = "seed")]
    pub inputs: String,
}

impl RunArgs {
    /// The sim, its config bytes and the input plan.
    ///
    /// # Errors
    ///
    /// Unknown sim ids, unreadable files, malformed `random:` seeds.
    pub fn resolve(&self) -> anyhow::Result<(SimKind, Vec<u8>, InputPlan)> {
        let kind = SimKind::from_id(&self.sim)?;
        let config = match &self.config {
            Some(p) => read_limited(p, tickwise_sims::MAX_CONFIG_BYTES as u64)?,
            None => kind.info().default_config.to_vec(),
        };
        Ok((kind, config, parse_plan(&self.inputs)?))
    }
}

/// Parses an `--inputs` value.
///
/// # Errors
///
/// A `random:` seed that is not a `u64`, or an unreadable file.
pub fn parse_plan(spec: &str) -> anyhow::Result<InputPlan> {
    if spec == "seed" {
        return Ok(InputPlan::Pattern);
    }
    if let Some(seed) = spec.strip_prefix("random:") {
        let seed = seed
            .parse::<u64>()
            .with_context(|| format!("`random:SEED` needs a u64 seed, found {seed:?}"))?;
        return Ok(InputPlan::Random(seed));
    }
    Ok(InputPlan::Json(read_limited(
        Path::new(spec),
        MAX_INPUTS_JSON_BYTES as u64,
    )?))
}

/// Reads a file of at most `limit` bytes, checking the size before reading
/// (and reading at most `limit + 1` bytes, should it grow meanwhile).
///
/// # Errors
///
/// Unreadable or oversized files, naming the path.
pub fn read_limited(path: &Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::Read as _;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let len = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    anyhow::ensure!(
        len <= limit,
        "{} is {len} bytes, more than the {limit} accepted",
        path.display()
    );
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    anyhow::ensure!(
        bytes.len() as u64 <= limit,
        "{} grew past {limit} bytes while being read",
        path.display()
    );
    Ok(bytes)
}

/// Runs the command.
///
/// # Errors
///
/// Exit code 2 for bad flags, configs or inputs, or an unwritable output.
pub fn run(args: &Args) -> Result<u8, Failure> {
    if args.ticks > args.max_ticks {
        return Err(Failure::usage(anyhow::anyhow!(
            "--ticks {} is above --max-ticks {} (verifiers refuse such replays by default)",
            args.ticks,
            args.max_ticks
        )));
    }
    let (kind, config, plan) = args.run.resolve()?;
    let rec = registry::record(kind, &config, &plan, args.ticks, args.checkpoint_every)?;
    std::fs::write(&args.out, &rec.bytes)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    #[allow(clippy::cast_precision_loss, reason = "a ratio for display")]
    let per_tick = rec.bytes.len() as f64 / rec.ticks.max(1) as f64;
    println!(
        "wrote {}: {} {} ticks, {} input runs, {} bytes ({per_tick:.3} bytes/tick), digest {}",
        args.out.display(),
        kind.info().id,
        rec.ticks,
        rec.runs,
        rec.bytes.len(),
        rec.digest
    );
    Ok(0)
}
