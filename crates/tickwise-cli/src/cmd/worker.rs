//! `tickwise worker`: verifies jobs from a Redis stream that `tickwise
//! verifyd --queue redis://…` fills. Run as many as there are machines.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tickwise_catalog::Catalog;
use tickwise_service::{QueueUrlError, RedisConfig, RedisUrl, WorkerConfig};

use super::verify::LimitArgs;
use crate::Failure;

/// Arguments of `tickwise worker`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Redis that `verifyd --queue` names: `redis://HOST:PORT`.
    #[arg(long, value_name = "URL")]
    pub redis: String,
    /// Jobs verified at once in each lane, small and large (default: one
    /// per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// `--io-threads`.
    #[command(flatten)]
    pub io: super::IoThreadsArg,
    /// A job whose worker has been silent this long is taken over, in ms.
    /// Running jobs refresh their claim every third of it.
    #[arg(long, value_name = "MS", default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(100..))]
    pub claim_idle_ms: u64,
    /// How long one read waits for a new job, in ms.
    #[arg(long, value_name = "MS", default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    pub block_ms: u64,
    /// On SIGTERM, how long the jobs in hand may finish before the worker
    /// exits anyway, leaving them unacknowledged for other workers, in ms.
    #[arg(long, value_name = "MS", default_value_t = 5_000)]
    pub shutdown_grace_ms: u64,
    /// Key prefix in Redis (as given to verifyd).
    #[arg(long, value_name = "PREFIX", default_value = "tickwise")]
    pub redis_prefix: String,
    /// Replay reader and work limits.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the worker until Ctrl-C or SIGTERM (the jobs in hand get
/// `--shutdown-grace-ms` to finish, the rest are left unacknowledged; a
/// `kill -9` loses nothing either: another worker takes them over).
///
/// # Errors
///
/// Exit code 2 for a bad URL or Redis unreachable at start.
pub fn run(args: &Args, tool: &crate::ToolInfo, catalog: &Catalog) -> Result<u8, Failure> {
    let url = RedisUrl::parse(&args.redis).map_err(|e| {
        Failure::usage(match e {
            QueueUrlError::NotRedis { given } => {
                anyhow::anyhow!("--redis must be a redis://HOST:PORT URL, not {given:?}")
            }
            other => anyhow::anyhow!("--redis: {other}"),
        })
    })?;
    let mut config = WorkerConfig {
        claim_idle: Duration::from_millis(args.claim_idle_ms),
        block: Duration::from_millis(args.block_ms),
        shutdown_grace: Duration::from_millis(args.shutdown_grace_ms),
        ..WorkerConfig::default()
    };
    if let Some(j) = args.jobs {
        config.jobs = usize::from(j);
    }
    let redis = RedisConfig {
        prefix: args.redis_prefix.clone(),
        capacity: 0,
        ..RedisConfig::new(url.as_str())
    };
    outln!(
        "{} worker {} on {} ({} jobs at once per lane: small and large)",
        tool.name,
        config.name,
        redis.url,
        config.jobs
    );
    let _ = std::io::stdout().flush();
    tickwise_service::block_on_with(
        Some(args.io.get()),
        tickwise_service::worker(
            Arc::new(catalog.clone()),
            redis,
            config,
            args.limits.limits(),
            tickwise_service::shutdown_signal(),
        ),
    )
    .context("worker")?
    .map_err(|e| crate::hints::redis_start(e, &url))
    .context("worker")?;
    Ok(0)
}
