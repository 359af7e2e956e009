//! # tickwise-service
//!
//! Replay verification as a service: clients upload replays over HTTP,
//! verdicts come back, a crash loses nothing, and the work spreads over
//! many machines when one is not enough.
//!
//! * [`http`]: the API (`POST /v1/replays`, `POST /v1/batches`,
//!   `GET /v1/replays/{id}`, `GET /v1/replays?ids=`, `/healthz`,
//!   `/metrics`) on axum + hyper + tokio, with connection caps,
//!   head/body/request deadlines and upload limits.
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
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tickwise::ReplayLimits;
use tickwise_catalog::Catalog;
use tokio::net::TcpListener;

pub mod error;
pub mod http;
pub mod job;
pub mod loadtest;
pub mod metrics;
pub mod pages;
pub mod queue;
pub mod verifier;

pub use error::ServiceError;
pub use http::{ApiLimits, ConnLimits};
pub use job::{JobId, JobMeta, JobRecord, JobStatus};
pub use queue::{MemoryConfig, RedisConfig, WorkerConfig};
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
/// thread per core; verification has its own threads).
///
/// # Errors
///
/// [`ServiceError::Runtime`] when the runtime cannot start.
pub fn block_on<F: Future>(future: F) -> Result<F::Output, ServiceError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("tickwise-io")
        .build()
        .map_err(ServiceError::Runtime)?;
    Ok(rt.block_on(future))
}

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

async fn bind(addr: SocketAddr) -> Result<TcpListener, ServiceError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServiceError::Bind {
            addr: addr.to_string(),
            source,
        })
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
    let listener = bind(config.bind).await?;
    let addr = listener.local_addr().map_err(|source| ServiceError::Bind {
        addr: config.bind.to_string(),
        source,
    })?;
    match config.queue {
        QueueChoice::Memory(m) => {
            let queue = queue::MemoryQueue::start(verifier.clone(), m)?;
            let router = http::app(queue, verifier, config.api, &config.conn);
            ready(addr);
            let _ = http::serve(listener, router, config.conn, shutdown).await;
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

/// Runs a Redis worker process until `shutdown` resolves (the job in hand
/// is finished first).
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
    let flag = Arc::clone(&stop);
    tokio::spawn(async move {
        shutdown.await;
        flag.store(true, Ordering::Relaxed);
    });
    let w = queue::RedisWorker::new(redis, config, Verifier::new(catalog, replay));
    w.run(stop).await?;
    Ok(())
}

/// Serves the static pages in `root` on `addr` until `shutdown`.
///
/// # Errors
///
/// [`ServiceError::Bind`].
pub async fn pages(
    root: PathBuf,
    addr: SocketAddr,
    conn: ConnLimits,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServiceError> {
    let listener = bind(addr).await?;
    let bound = listener.local_addr().map_err(|source| ServiceError::Bind {
        addr: addr.to_string(),
        source,
    })?;
    let router = pages::app(root, &conn);
    ready(bound);
    let _ = http::serve(listener, router, conn, shutdown).await;
    Ok(())
}
