//! `tickwise sync-test`: GGRS-style rollback check of a sim's determinism.
//!
//! Runs the sim; after every tick restores the snapshot of `--rollback`
//! ticks ago, re-simulates with the same inputs and compares checksums.
//! Exit code 0 when every re-simulated tick matched, 1 on a desync.

use tickwise_catalog::{Catalog, DEFAULT_MAX_SNAPSHOT_BYTES, DEFAULT_MAX_WORK, RunLimits};

use super::record::RunArgs;
use crate::{Failure, hints};

/// The largest `--rollback` accepted: the work is `ticks * (rollback + 1)` steps.
pub const MAX_ROLLBACK: u64 = 1000;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sim and its inputs.
    #[command(flatten)]
    pub run: RunArgs,
    /// Ticks to run.
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(..=100_000_000))]
    pub ticks: u64,
    /// Ticks to roll back and re-simulate after every tick.
    #[arg(long, value_name = "R", default_value_t = 8,
          value_parser = clap::value_parser!(u64).range(1..=MAX_ROLLBACK))]
    pub rollback: u64,
    /// Refuse a test whose steps (ticks × (rollback + 1)) would cost more
    /// work units than this (calibrated: about 1 per ns; docs/limits.md).
    #[arg(long, value_name = "UNITS", default_value_t = DEFAULT_MAX_WORK)]
    pub max_work: u64,
    /// Refuse a test whose rollback + 1 state snapshots would take more
    /// bytes than this (estimated from the sim's config).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_SNAPSHOT_BYTES)]
    pub max_memory: u64,
}

/// Runs the command.
///
/// # Errors
///
/// Exit code 2 for an unknown sim, bad config or inputs.
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let (info, config, plan) = args.run.resolve(catalog)?;
    let r = catalog
        .sync_test_within(
            info.id,
            config.as_deref(),
            &plan,
            args.ticks,
            args.rollback,
            &RunLimits {
                max_work: args.max_work,
                max_snapshot_bytes: args.max_memory,
            },
        )
        .map_err(hints::catalog)?;
    match r.mismatch {
        None => {
            outln!(
                "sync test passed: {} {} ticks, rollback {}, {} steps re-simulated, final checksum {:016x}",
                info.id,
                r.ticks,
                args.rollback,
                r.resimulated_steps,
                r.checksum
            );
            Ok(0)
        }
        Some(m) => {
            outln!("sync test FAILED: {} {m}", info.id);
            Ok(1)
        }
    }
}
