//! # tickwise-service
//!
//! Replay verification as a service: clients upload replays over HTTP,
//! verdicts come back, a crash loses nothing, and the work spreads over
//! many machines when one is not enough.
//!
//! * [`http`]: the API (`POST /v1/replays`, `POST /v1/batches`,
//!   `GET /v1/replays/{id}`, `GET /v1/replays?ids=`, `/healthz`,
//!   `/metrics`) on axum + hyper + tokio: its limits and the byte budget
//!   of bodies in flight ([`budget`]), handlers, long polling; the batch
//!   codec is [`batch`], shared with the load generator.
//! * [`conn`]: the connection layer shared with `serve`: caps per source
//!   and in all, shedding of stale connections, deadlines, shutdown.
//! * [`queue`]: one [`Queue`](queue::Queue) interface, two engines: the
//!   embedded [`MemoryQueue`](queue::MemoryQueue) (one process, threads on
//!   every core) and [`RedisQueue`](queue::RedisQueue) +
//!   [`RedisWorker`](queue::RedisWorker) (Redis Streams consumer groups,
//!   at-least-once delivery, idempotent verdicts, dead letters).
//! * [`mod@verifier`]: bytes in, verdict record out, with the catalog's
//!   verify API; generic over the [`Catalog`], so a game's own binary
//!   verifies its own sims.
//! * [`mod@pages`]: the static page server behind `tickwise serve`.
//! * [`mod@loadtest`]: the load generator behind `tickwise loadtest`.
//!
//! The CPU-bound re-simulation never runs on the async executor's threads:
//! the memory engine has its own threads, the Redis worker uses tokio's
//! blocking pool.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::future::Future;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tickwise::ReplayLimits;
use tickwise_catalog::Catalog;
use tokio::net::{TcpListener, TcpSocket};

pub mod batch;
pub mod budget;
pub mod conn;
pub mod error;
pub mod http;
pub mod job;
pub mod loadtest;
pub mod metrics;
pub mod pages;
pub mod queue;
pub mod rooms;
pub mod verifier;

pub use conn::ConnLimits;
pub use error::ServiceError;
pub use http::ApiLimits;
pub use job::{JobId, JobIdError, JobMeta, JobRecord, JobStatus};
pub use queue::{
    MemoryConfig, QueueKind, QueueUrl, QueueUrlError, RedisConfig, RedisUrl, WorkerConfig,
};
pub use verifier::Verifier;

/// Which queue `verifyd` uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueChoice {
    /// The embedded queue with its own verification threads.
    Memory(MemoryConfig),
    /// A Redis stream; `tickwise worker` processes verify.
    Redis(RedisConfig),
}

/// Everything `verifyd` needs besides the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifydConfig {
    /// Where to listen.
    pub bind: SocketAddr,
    /// The queue.
    pub queue: QueueChoice,
    /// API limits (upload size, body deadline, longest wait).
    pub api: ApiLimits,
    /// Connection limits.
    pub conn: ConnLimits,
    /// Replay reader and work limits (`--max-work` and friends).
    pub replay: ReplayLimits,
}

/// Runs `future` on a new multi-threaded tokio runtime (one executor
/// thread per core; verification has its own threads). Once `future` is
/// done, the runtime is given [`RUNTIME_SHUTDOWN`] to end its tasks: a
/// verification still running on the blocking pool (a Redis worker's job
/// past its grace period) is left behind rather than waited for.
///
/// # Errors
///
/// [`ServiceError::Runtime`] when the runtime cannot start.
pub fn block_on<F: Future>(future: F) -> Result<F::Output, ServiceError> {
    block_on_with(None, future)
}

/// [`block_on`] with `io_threads` executor threads (`None`: one per core).
///
/// Why fewer: `verifyd`, `worker` and `loadtest` do their heavy work on
/// threads of their own (verification) or hardly any (a load generator);
/// their executor threads only move bytes. One per core made them compete
/// with the verification threads for the same cores: on 2 cores, `verifyd`
/// and `loadtest` with one executor thread each served 10-minute island
/// replays in batches of 8 at 3831 a second against 3592 with two each
/// (`scripts/bench_service.py`, docs/benchmarks.md). See
/// [`default_io_threads`].
///
/// # Errors
///
/// [`ServiceError::Runtime`] when the runtime cannot start.
pub fn block_on_with<F: Future>(
    io_threads: Option<NonZeroUsize>,
    future: F,
) -> Result<F::Output, ServiceError> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = io_threads {
        builder.worker_threads(n.get());
    }
    let rt = builder
        .enable_all()
        .thread_name("tickwise-io")
        .build()
        .map_err(ServiceError::Runtime)?;
    let out = rt.block_on(future);
    rt.shutdown_timeout(RUNTIME_SHUTDOWN);
    Ok(out)
}

/// Executor threads for a process whose heavy work has threads of its own
/// (see [`block_on_with`]): one per four cores, at least one.
#[must_use]
pub fn default_io_threads() -> NonZeroUsize {
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    NonZeroUsize::new(cores / 4).unwrap_or(NonZeroUsize::MIN)
}

/// How long [`block_on`] waits for the runtime's tasks once its future is
/// done.
pub const RUNTIME_SHUTDOWN: Duration = Duration::from_millis(500);

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                let _ = s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

/// Binds `addr` with a listen backlog of `backlog` connections (the
/// connection cap: the accept loop takes every connection at once and
/// decides there, so a deeper backlog would only hide clients from it).
async fn bind(addr: SocketAddr, backlog: usize) -> Result<TcpListener, ServiceError> {
    let fail = |source| ServiceError::Bind {
        addr: addr.to_string(),
        source,
    };
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(fail)?;
    // As `std::net::TcpListener::bind` does: a restart may bind the port
    // while old connections are in TIME_WAIT.
    #[cfg(unix)]
    socket.set_reuseaddr(true).map_err(fail)?;
    socket.bind(addr).map_err(fail)?;
    socket
        .listen(u32::try_from(backlog.max(1)).unwrap_or(u32::MAX))
        .map_err(fail)
}

/// Runs the verification service until `shutdown` resolves; `ready` is
/// called with the bound address once it accepts connections.
///
/// # Errors
///
/// [`ServiceError::Bind`], or [`ServiceError::Queue`] when the queue
/// cannot start (Redis unreachable, threads refused).
pub async fn verifyd(
    catalog: Arc<Catalog>,
    config: VerifydConfig,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let verifier = Verifier::new(catalog, config.replay);
    let listener = bind(config.bind, config.conn.max_connections).await?;
    let addr = listener.local_addr().map_err(|source| ServiceError::Bind {
        addr: config.bind.to_string(),
        source,
    })?;
    match config.queue {
        QueueChoice::Memory(m) => {
            let queue = queue::MemoryQueue::start(verifier.clone(), m)?;
            let closer = queue.closer();
            let router = http::app(queue, verifier, config.api, &config.conn);
            ready(addr);
            // Returns as soon as `shutdown` resolves, closing the listener.
            let _ = http::serve(listener, router, config.conn, shutdown).await;
            // Running jobs get the grace period to store their verdicts
            // (answering requests still waiting for them); queued jobs are
            // not started.
            closer.close(m.shutdown_grace).await;
        }
        QueueChoice::Redis(r) => {
            let queue = queue::RedisQueue::connect(&r).await?;
            let router = http::app(queue, verifier, config.api, &config.conn);
            ready(addr);
            let _ = http::serve(listener, router, config.conn, shutdown).await;
        }
    }
    Ok(())
}

/// Runs a Redis worker process until `shutdown` resolves. Then no new job
/// is taken; the jobs in hand get [`WorkerConfig::shutdown_grace`] to
/// finish and store their verdicts, and those still running after it are
/// left unacknowledged: another worker takes them over once their claim
/// has been idle for its claim timeout.
///
/// # Errors
///
/// [`ServiceError::Queue`] when Redis cannot be reached at start.
pub async fn worker(
    catalog: Arc<Catalog>,
    redis: RedisConfig,
    config: WorkerConfig,
    replay: ReplayLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServiceError> {
    let stop = Arc::new(AtomicBool::new(false));
    let grace = config.shutdown_grace;
    let w = queue::RedisWorker::new(redis, config, Verifier::new(catalog, replay));
    let mut run = tokio::spawn(w.run(Arc::clone(&stop)));
    tokio::select! {
        r = &mut run => return finished(r),
        () = shutdown => {}
    }
    stop.store(true, Ordering::Relaxed);
    match tokio::time::timeout(grace, &mut run).await {
        Ok(r) => finished(r),
        Err(_) => {
            // Dropping the loops ends their claim refreshes: the entries
            // they hold go idle and are claimed by other workers.
            run.abort();
            Ok(())
        }
    }
}

fn finished(
    r: Result<Result<(), queue::QueueError>, tokio::task::JoinError>,
) -> Result<(), ServiceError> {
    match r {
        Ok(r) => Ok(r?),
        Err(e) => Err(ServiceError::Queue(queue::QueueError::Backend {
            message: format!("the worker stopped: {e}"),
        })),
    }
}

/// Serves the static pages in `root` and the rooms of `rooms` (for the
/// sims of its catalog, docs/rooms.md) on `addr` until `shutdown`. At
/// shutdown every room connection is told `shutdown` and closed.
///
/// # Errors
///
/// [`ServiceError::Bind`].
pub async fn pages(
    root: PathBuf,
    addr: SocketAddr,
    conn: ConnLimits,
    rooms: Arc<rooms::RoomServer>,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let listener = bind(addr, conn.max_connections).await?;
    let bound = listener.local_addr().map_err(|source| ServiceError::Bind {
        addr: addr.to_string(),
        source,
    })?;
    let router = rooms::router(&rooms, conn.request_deadline).merge(pages::app(root, &conn));
    ready(bound);
    let _ = http::serve(listener, router, conn, shutdown).await;
    rooms.shutdown();
    // The connection tasks write their close frames.
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(())
}
