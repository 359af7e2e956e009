//! One queue interface, two engines: [`MemoryQueue`] (embedded, the
//! default) and [`RedisQueue`] (Redis Streams, workers anywhere).
//!
//! The HTTP front end only submits jobs and reads records; who runs them is
//! the engine's business (the memory engine's own threads, or
//! `tickwise worker` processes for Redis).

use std::fmt;
use std::future::Future;
use std::time::Duration;

use tickwise_catalog::Admitted;

use crate::job::{JobId, JobMeta, JobRecord};

pub mod memory;
pub mod redis;
mod url;

pub use memory::{Closer, MemoryConfig, MemoryQueue};
pub use redis::{RedisConfig, RedisQueue, RedisWorker, WorkerConfig};
pub use url::{QueueKind, QueueUrl, QueueUrlError, RedisUrl};

/// A job is delivered at most this many times; a job that has not
/// finished by then goes to the dead-letter list with its last error.
pub const MAX_DELIVERIES: u32 = 5;

/// Upper bounds (in milliseconds) of the verdict-latency histogram.
pub const LATENCY_BUCKETS_MS: [u64; 14] = [
    5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000,
];

/// What a submission did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum Submitted {
    /// A new job was queued.
    Queued,
    /// The same bytes were already queued or running: nothing new.
    Duplicate(JobRecord),
    /// The same bytes already have a verdict.
    Done(JobRecord),
    /// A new job, verified at once on the thread that received it
    /// ([`Queue::submit_waiting`]): its verdict.
    Verified(JobRecord),
}

/// What [`Queue::watch`] found.
#[derive(Debug)]
pub enum Watch {
    /// The job has its verdict.
    Final(Box<JobRecord>),
    /// The job is queued or running: the receiver completes when its
    /// verdict is stored (or fails when the queue is dropped).
    Open(tokio::sync::oneshot::Receiver<()>),
    /// No such job (never uploaded, or its verdict was forgotten).
    Unknown,
}

/// Why a queue operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueueError {
    /// The queue holds its maximum of jobs; try again later.
    Full {
        /// Jobs waiting or running.
        depth: u64,
        /// The limit.
        capacity: u64,
        /// A suggested wait before retrying.
        retry_after: Duration,
    },
    /// The queue's backend could not be reached or answered wrongly.
    Backend {
        /// What happened.
        message: String,
    },
    /// The jobs waiting or running hold the queue's byte limit.
    BytesFull {
        /// Bytes of the jobs waiting or running.
        bytes: u64,
        /// The limit.
        limit: u64,
        /// A suggested wait before retrying.
        retry_after: Duration,
    },
    /// The client (source address) has this much work waiting or running
    /// already; its next job would pass the per-client bound.
    ClientBusy {
        /// Work units the client has waiting or running.
        work: u64,
        /// Work units of the job refused.
        job: u64,
        /// The bound.
        limit: u64,
        /// A suggested wait before retrying.
        retry_after: Duration,
    },
    /// The queue is shutting down.
    Closed,
}

impl QueueError {
    /// The wait to suggest (`Retry-After`) for a refusal that passes
    /// with time; `None` for the others.
    #[must_use]
    pub const fn retry_after(&self) -> Option<Duration> {
        match self {
            QueueError::Full { retry_after, .. }
            | QueueError::BytesFull { retry_after, .. }
            | QueueError::ClientBusy { retry_after, .. } => Some(*retry_after),
            QueueError::Backend { .. } | QueueError::Closed => None,
        }
    }
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueError::Full {
                depth, capacity, ..
            } => write!(f, "queue is full ({depth} jobs, capacity {capacity})"),
            QueueError::BytesFull { bytes, limit, .. } => write!(
                f,
                "queue is full ({bytes} bytes of replays waiting or running, limit {limit})"
            ),
            QueueError::ClientBusy {
                work, job, limit, ..
            } => write!(
                f,
                "this client already has {work} work units waiting or running; {job} more would pass the per-client limit of {limit}"
            ),
            QueueError::Backend { message } => write!(f, "queue backend error: {message}"),
            QueueError::Closed => f.write_str("queue is shutting down"),
        }
    }
}

impl std::error::Error for QueueError {}

/// Counters a queue exposes for `/metrics` (for Redis: over every
/// process that shares the stream).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Jobs waiting for a worker.
    pub queued: u64,
    /// Jobs delivered and not yet acknowledged.
    pub running: u64,
    /// The most jobs waiting or running before uploads get `429`.
    pub capacity: u64,
    /// Verdicts stored: `ok`, `diverged`, `refused` (by a worker).
    pub outcomes: [u64; 3],
    /// Ticks re-simulated by the verdicts above.
    pub ticks: u64,
    /// Nanoseconds spent re-simulating.
    pub verify_nanos: u64,
    /// Deliveries beyond the first (a worker died or failed).
    pub redeliveries: u64,
    /// Jobs moved to the dead-letter list.
    pub dead_letters: u64,
    /// Duplicate verdicts refused by the idempotent write.
    pub duplicate_verdicts: u64,
    /// Verdict latencies: counts per bucket of [`LATENCY_BUCKETS_MS`]
    /// (not cumulative), then the count above the last bucket.
    pub latency_counts: [u64; LATENCY_BUCKETS_MS.len() + 1],
    /// Sum of verdict latencies in milliseconds.
    pub latency_sum_ms: u64,
    /// Jobs whose first delivery ran on the thread that received them
    /// ([`Queue::submit_waiting`]); their verdicts count in `outcomes` too,
    /// and a retry after a failure runs on a verification thread.
    pub inline: u64,
}

impl QueueStats {
    /// The bucket index of a latency.
    #[must_use]
    pub fn bucket(latency_ms: u64) -> usize {
        LATENCY_BUCKETS_MS
            .iter()
            .position(|&b| latency_ms <= b)
            .unwrap_or(LATENCY_BUCKETS_MS.len())
    }
}

/// The queue as the HTTP front end sees it.
pub trait Queue: Send + Sync + 'static {
    /// Queues `bytes` as job `id`, admitted as `admitted` (its header and
    /// its work: the replay's declared ticks × its sim's cost per tick),
    /// unless the same bytes are queued, running or verified already.
    ///
    /// # Errors
    ///
    /// [`QueueError::Full`] when at capacity, [`QueueError::BytesFull`]
    /// past the byte limit, [`QueueError::ClientBusy`] past the client's
    /// work bound, [`QueueError::Backend`].
    fn submit(
        &self,
        id: JobId,
        bytes: bytes::Bytes,
        admitted: Admitted,
        meta: JobMeta,
    ) -> impl Future<Output = Result<Submitted, QueueError>> + Send;

    /// [`Queue::submit`] for an upload whose request waits for the verdict.
    /// An engine may verify such a job on the calling thread and answer
    /// [`Submitted::Verified`]: the embedded queue does for small jobs when
    /// nothing waits before them ([`MemoryConfig::inline_work`]). The
    /// default queues it as [`Queue::submit`] does.
    ///
    /// Why: one replay per request otherwise costs two thread hand-offs
    /// (to a verification thread and back to the request), which on a
    /// server with as many executor threads as cores is time taken from
    /// the verification itself.
    ///
    /// # Errors
    ///
    /// As [`Queue::submit`].
    fn submit_waiting(
        &self,
        id: JobId,
        bytes: bytes::Bytes,
        admitted: Admitted,
        meta: JobMeta,
    ) -> impl Future<Output = Result<Submitted, QueueError>> + Send {
        self.submit(id, bytes, admitted, meta)
    }

    /// Stores a verdict reached without a worker (an upload refused by the
    /// cheap checks); a verdict already stored is kept.
    ///
    /// # Errors
    ///
    /// [`QueueError::Backend`].
    fn store_verdict(
        &self,
        record: JobRecord,
    ) -> impl Future<Output = Result<JobRecord, QueueError>> + Send;

    /// The job's record, `None` for an unknown id.
    ///
    /// # Errors
    ///
    /// [`QueueError::Backend`].
    fn status(
        &self,
        id: JobId,
    ) -> impl Future<Output = Result<Option<JobRecord>, QueueError>> + Send;

    /// Queues many jobs (id, bytes, admission) sharing `meta` at once:
    /// one lock (memory) or one round trip (Redis) instead of one per job.
    /// `jobs` must hold distinct ids (the HTTP layer folds duplicates of a
    /// batch into one job). All or nothing: when the new jobs do not all
    /// fit, none is queued.
    ///
    /// # Errors
    ///
    /// As [`Queue::submit`], for the new jobs together.
    fn submit_many(
        &self,
        jobs: Vec<(JobId, bytes::Bytes, Admitted)>,
        meta: JobMeta,
    ) -> impl Future<Output = Result<Vec<Submitted>, QueueError>> + Send;

    /// The records of many jobs in one lock or round trip, in the order of
    /// `ids`; `None` for an unknown id.
    ///
    /// # Errors
    ///
    /// [`QueueError::Backend`].
    fn status_many(
        &self,
        ids: &[JobId],
    ) -> impl Future<Output = Result<Vec<Option<JobRecord>>, QueueError>> + Send;

    /// A receiver that changes whenever a verdict is stored (the memory
    /// engine: at once; Redis: when the verdict script's `PUBLISH` arrives),
    /// or `None` when waiting requests can only poll. Waiters still re-read
    /// every [`Queue::poll_interval`], so a lost notification (Redis
    /// restarting) only delays an answer.
    fn verdicts(&self) -> Option<tokio::sync::watch::Receiver<u64>>;

    /// Whether reading one status is as cheap as a lock (memory) rather
    /// than a network round trip (Redis): decides whether a waiter reads
    /// its open records one at a time, each woken by [`Queue::watch`], or
    /// all in one call, woken by [`Queue::verdicts`].
    fn status_is_local(&self) -> bool;

    /// The job's verdict, or a receiver woken when exactly this job's
    /// verdict is stored, in one look (nothing stored between them is
    /// missed); `None` where the engine cannot wake one waiter per job
    /// (Redis: every verdict wakes every waiter, [`Queue::verdicts`]).
    ///
    /// Why: with every verdict waking every waiting request, `C` requests
    /// in flight cost `C` wake-ups per verdict; here it is one.
    fn watch(&self, id: JobId) -> Option<Watch> {
        let _ = id;
        None
    }

    /// Counters for `/metrics`.
    ///
    /// # Errors
    ///
    /// [`QueueError::Backend`].
    fn stats(&self) -> impl Future<Output = Result<QueueStats, QueueError>> + Send;

    /// How often a waiting request (`?wait=`) re-reads the status when no
    /// notification came.
    fn poll_interval(&self) -> Duration;

    /// A short name for logs and `/healthz` (`memory`, `redis`).
    fn engine(&self) -> &'static str;
}
