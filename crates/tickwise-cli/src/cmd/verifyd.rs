//! `tickwise verifyd`: the replay verification service (HTTP API over an
//! embedded queue, or over Redis Streams with `tickwise worker`s).
//!
//! Flags only: the service itself is `tickwise_service::verifyd`.

use std::io::Write as _;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tickwise_catalog::Catalog;
use tickwise_service::{
    ApiLimits, ConnLimits, MemoryConfig, QueueChoice, QueueUrl, QueueUrlError, RedisConfig,
    VerifydConfig,
};

use super::verify::LimitArgs;
use crate::Failure;

/// Arguments of `tickwise verifyd`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8087")]
    pub bind: SocketAddr,
    /// `memory` (embedded, the default) or `redis://HOST:PORT` (run
    /// `tickwise worker --redis URL` processes to verify).
    #[arg(long, value_name = "QUEUE", default_value = "memory")]
    pub queue: String,
    /// Verification threads of the embedded queue (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// `--io-threads`.
    #[command(flatten)]
    pub io: super::IoThreadsArg,
    /// Jobs waiting or running before uploads are answered 429.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub capacity: u64,
    /// Verdicts kept in memory by the embedded queue (oldest forgotten).
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub max_results: usize,
    /// Key prefix in Redis.
    #[arg(long, value_name = "PREFIX", default_value = "tickwise")]
    pub redis_prefix: String,
    /// Largest upload accepted (413 above it, checked while receiving).
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_upload_bytes: usize,
    /// Largest batch upload (`POST /v1/batches`), in bytes; 413 above it,
    /// checked while receiving. Each replay in it is held to
    /// `--max-upload-bytes` as well.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    pub max_batch_bytes: usize,
    /// Most replays in one batch upload (and ids in one `GET
    /// /v1/replays?ids=`).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub max_batch_replays: u32,
    /// Open connections at most (also the listen backlog). A new
    /// connection past it sheds the stalest connection waiting on its
    /// client (silent for 100 ms), or gets 503 at once.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub max_connections: usize,
    /// Open connections from one source address at most (same policy).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_connections_per_source: usize,
    /// Bytes all upload bodies being received may hold together; uploads
    /// past it get 503 + Retry-After.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    pub upload_budget_bytes: usize,
    /// Replay bytes waiting or running in the queue at most; uploads past
    /// it get 429 + Retry-After.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    pub max_queued_bytes: u64,
    /// Work units (see --max-work) one client address may have waiting or
    /// running; its uploads past it get 429 + Retry-After.
    #[arg(long, value_name = "UNITS", default_value_t = tickwise_service::queue::memory::DEFAULT_MAX_CLIENT_WORK)]
    pub max_client_work: u64,
    /// Jobs estimated at up to this many work units are small: they have
    /// a lane of their own (embedded queue: and a verification thread;
    /// Redis: a stream, which every worker reads with loops of its own).
    #[arg(long, value_name = "UNITS", default_value_t = tickwise_service::queue::memory::DEFAULT_SMALL_JOB_WORK)]
    pub small_job_work: u64,
    /// Embedded queue: a lone upload waiting for its verdict (`?wait=`) and
    /// estimated at up to this many work units is verified on the executor
    /// thread that received it when no small job waits, with no hand-off
    /// to a verification thread. For servers with as many --io-threads as
    /// cores and short replays (a few ms of work): --io-threads then
    /// defaults to one per core, and fewer are refused. 0 turns it off.
    #[arg(long, value_name = "UNITS", default_value_t = 0)]
    pub inline_work: u64,
    /// On SIGTERM, how long running jobs may finish before the process
    /// exits anyway, in ms (embedded queue).
    #[arg(long, value_name = "MS", default_value_t = 5_000)]
    pub shutdown_grace_ms: u64,
    /// Deadline for a request head, in ms (also the keep-alive idle limit).
    #[arg(long, value_name = "MS", default_value_t = 5_000)]
    pub header_timeout_ms: u64,
    /// Deadline for an upload body, in ms.
    #[arg(long, value_name = "MS", default_value_t = 20_000)]
    pub body_timeout_ms: u64,
    /// Longest `?wait=` honoured, in seconds.
    #[arg(long, value_name = "S", default_value_t = 30)]
    pub max_wait: u64,
    /// Replay reader and work limits.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the service until Ctrl-C or SIGTERM.
///
/// # Errors
///
/// Exit code 2 for a bad `--queue`, an address in use, or Redis
/// unreachable.
pub fn run(args: &Args, tool: &crate::ToolInfo, catalog: &Catalog) -> Result<u8, Failure> {
    let url = QueueUrl::parse(&args.queue).map_err(|e| {
        Failure::usage(match e {
            // The message scripts and tests match on since before the type.
            QueueUrlError::UnknownQueue { given } => anyhow::anyhow!(
                "--queue must be `memory` or a redis://HOST:PORT URL, not {given:?}"
            ),
            other => anyhow::anyhow!("--queue: {other}"),
        })
    })?;
    let queue = match &url {
        QueueUrl::Memory => {
            let mut m = MemoryConfig {
                capacity: usize::try_from(args.capacity).unwrap_or(usize::MAX),
                max_results: args.max_results,
                max_queued_bytes: usize::try_from(args.max_queued_bytes).unwrap_or(usize::MAX),
                small_job_work: args.small_job_work,
                max_client_work: args.max_client_work,
                inline_work: args.inline_work,
                shutdown_grace: Duration::from_millis(args.shutdown_grace_ms),
                ..MemoryConfig::default()
            };
            if let Some(j) = args.jobs {
                m.jobs = usize::from(j);
            }
            QueueChoice::Memory(m)
        }
        QueueUrl::Redis(_) if args.inline_work > 0 => {
            return Err(Failure::usage(anyhow::anyhow!(
                "--inline-work applies to the embedded queue (--queue memory): Redis jobs are verified by workers"
            )));
        }
        QueueUrl::Redis(redis) => QueueChoice::Redis(RedisConfig {
            url: redis.as_str().to_owned(),
            prefix: args.redis_prefix.clone(),
            capacity: args.capacity,
            max_queued_bytes: args.max_queued_bytes,
            max_client_work: args.max_client_work,
            small_job_work: args.small_job_work,
        }),
    };
    let engine = match &queue {
        QueueChoice::Memory(m) if m.inline_work > 0 => format!(
            "memory queue, {} verification threads, lone waiting uploads up to {} work units verified inline",
            m.jobs, m.inline_work
        ),
        QueueChoice::Memory(m) => format!("memory queue, {} verification threads", m.jobs),
        QueueChoice::Redis(r) => format!("redis queue at {}", r.url),
    };
    let request_deadline = Duration::from_millis(args.body_timeout_ms)
        + Duration::from_secs(args.max_wait)
        + Duration::from_secs(10);
    let config = VerifydConfig {
        bind: args.bind,
        queue,
        api: ApiLimits {
            max_upload_bytes: args.max_upload_bytes,
            body_deadline: Duration::from_millis(args.body_timeout_ms),
            max_wait: Duration::from_secs(args.max_wait),
            max_batch_bytes: args.max_batch_bytes,
            max_batch_replays: usize::try_from(args.max_batch_replays).unwrap_or(usize::MAX),
            body_budget_bytes: args.upload_budget_bytes,
        },
        conn: ConnLimits {
            max_connections: args.max_connections.max(1),
            max_per_source: args.max_connections_per_source.max(1),
            header_deadline: Duration::from_millis(args.header_timeout_ms.max(1)),
            request_deadline,
            ..ConnLimits::default()
        },
        replay: args.limits.limits(),
    };
    let io_threads = io_threads(args)?;
    let catalog = Arc::new(catalog.clone());
    let ready = |addr: SocketAddr| {
        banner!(
            "{} verifyd listening on http://{addr}/ ({engine})",
            tool.name
        );
        let _ = std::io::stdout().flush();
    };
    tickwise_service::block_on_with(
        Some(io_threads),
        tickwise_service::verifyd(catalog, config, ready, tickwise_service::shutdown_signal()),
    )
    .context("verifyd")?
    .map_err(|e| match &url {
        QueueUrl::Redis(redis) => crate::hints::redis_start(e, redis),
        QueueUrl::Memory => anyhow::Error::new(e),
    })
    .context("verifyd")?;
    Ok(0)
}

/// The executor threads: `--io-threads`, except that `--inline-work`
/// verifies on them, so it wants one per core the process may use (its
/// default then) and refuses fewer: with one executor thread on two cores,
/// every lone upload would be verified on that thread while the
/// verification threads sat idle.
fn io_threads(args: &Args) -> Result<NonZeroUsize, Failure> {
    if args.inline_work == 0 {
        return Ok(args.io.get());
    }
    let cores = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    match args.io.io_threads {
        None => Ok(cores),
        Some(n) if usize::from(n) < cores.get() => Err(Failure::usage(anyhow::anyhow!(
            "--inline-work verifies on the executor threads, so it needs --io-threads of at least \
             the {cores} cores this process may use, not {n} (leave --io-threads out for one per core)"
        ))),
        Some(_) => Ok(args.io.get()),
    }
}
