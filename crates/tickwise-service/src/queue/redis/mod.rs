//! The Redis Streams engine: jobs in a stream with a consumer group,
//! verdicts in keys named by job id, `tickwise worker` processes anywhere.
//!
//! Keys, under a prefix `P` (default `tickwise`):
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:jobs` | stream, group `P:workers` | one entry per queued job: `id`, `meta`, `bytes` |
//! | `P:job:ID` | hash | `status` (queued / running), `attempts`, `lastError` while the job is open |
//! | `P:result:ID` | string | the verdict record (JSON), written once with `SET NX` |
//! | `P:dead` | stream | dead-lettered jobs: `id`, `deliveries`, `error` |
//! | `P:stats` | hash | counters for `/metrics`, shared by every process |
//! | `P:verdicts` | pub/sub channel | one message per verdict script call: wakes the front ends' waiting requests |
//!
//! Delivery is at least once. A worker reads with `XREADGROUP`; the entry
//! stays pending until the verdict is stored. The verdict, the `XACK`, the
//! `XDEL` and the counters are one Lua script, so a verdict is never stored
//! without its job being acknowledged, nor acknowledged without a verdict.
//! A worker that dies leaves the entry pending; another takes it over with
//! `XAUTOCLAIM` once it has been idle for the claim timeout. A long job
//! refreshes its claim (`XCLAIM … JUSTID` by its own consumer) so nobody
//! takes it over while it runs. An entry delivered more than
//! [`MAX_DELIVERIES`](super::MAX_DELIVERIES) times goes to `P:dead` with its last error and gets an
//! `invalid` verdict, so a poison job cannot loop forever.
//!
//! Round trips are shared where the rules allow: a batch upload is one
//! script call, a worker loop reads up to [`MAX_BATCH`] new entries at once
//! (as many as it verifies in about [`BATCH_BUDGET`]) and stores all their
//! verdicts in one script call; claims, delivery counts, dead letters and
//! the first-verdict-wins rule stay per entry.
//!
//! The producer (the front end's [`RedisQueue`]) and the consumer (the
//! worker loop, [`RedisWorker`]) are rooms of their own; the Lua scripts
//! they share are `.lua` files next to this one, loaded with
//! `include_str!`.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Script, Value};

use super::{QueueError, Submitted};
use crate::job::{JobId, JobRecord, JobStatus, unix_ms};

mod consumer;
mod producer;

pub use consumer::{BATCH_BUDGET, MAX_BATCH, RedisWorker, batch_size};
pub use producer::RedisQueue;

/// Where the queue lives and how big it may grow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisConfig {
    /// `redis://HOST:PORT[/DB]`.
    pub url: String,
    /// Key prefix (several services can share one Redis).
    pub prefix: String,
    /// The most jobs waiting or running; more uploads get `429`.
    pub capacity: u64,
    /// The most replay bytes waiting or running; more uploads get `429`.
    pub max_queued_bytes: u64,
    /// Work units one client (source address) may have waiting or running
    /// (a client with nothing queued may always queue one job).
    pub max_client_work: u64,
    /// Jobs estimated at up to this many work units go to the small-job
    /// stream, larger ones to the large-job stream; each worker process
    /// reads each with loops of its own.
    pub small_job_work: u64,
}

impl RedisConfig {
    /// Defaults for `url`: prefix `tickwise`, capacity 10 000, 256 MiB of
    /// queued replays, the memory engine's per-client work bound and
    /// small-job limit.
    #[must_use]
    pub fn new(url: impl Into<String>) -> RedisConfig {
        RedisConfig {
            url: url.into(),
            prefix: String::from("tickwise"),
            capacity: 10_000,
            max_queued_bytes: 256 * 1024 * 1024,
            max_client_work: super::memory::DEFAULT_MAX_CLIENT_WORK,
            small_job_work: super::memory::DEFAULT_SMALL_JOB_WORK,
        }
    }
}

/// Settings of a `tickwise worker` process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerConfig {
    /// Jobs verified at once (one per core is right: verification is
    /// CPU-bound).
    pub jobs: usize,
    /// A pending entry idle this long is taken over from its worker.
    pub claim_idle: Duration,
    /// How long one `XREADGROUP` blocks waiting for a new job.
    pub block: Duration,
    /// A name for this process's consumers (unique per process).
    pub name: String,
    /// On shutdown, how long the jobs in hand may run on before they are
    /// left (unacknowledged) for other workers.
    pub shutdown_grace: Duration,
}

impl Default for WorkerConfig {
    /// One job per core, 5 s claim timeout, 1 s blocking reads, 5 s of
    /// shutdown grace.
    fn default() -> WorkerConfig {
        WorkerConfig {
            jobs: std::thread::available_parallelism().map_or(1, usize::from),
            claim_idle: Duration::from_secs(5),
            block: Duration::from_secs(1),
            name: format!("worker-{}-{}", std::process::id(), unix_ms()),
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Keys {
    pub(super) stream: String,
    /// The large jobs' stream (same group name).
    pub(super) large: String,
    pub(super) group: String,
    pub(super) dead: String,
    pub(super) stats: String,
    pub(super) verdicts: String,
    /// Bytes of the replays waiting or running (a counter).
    pub(super) bytes: String,
    pub(super) prefix: String,
}

impl Keys {
    pub(super) fn new(prefix: &str) -> Keys {
        Keys {
            stream: format!("{prefix}:jobs"),
            large: format!("{prefix}:jobs:large"),
            group: format!("{prefix}:workers"),
            dead: format!("{prefix}:dead"),
            stats: format!("{prefix}:stats"),
            verdicts: format!("{prefix}:verdicts"),
            bytes: format!("{prefix}:bytes"),
            prefix: prefix.to_string(),
        }
    }
    pub(super) fn job(&self, id: &str) -> String {
        format!("{}:job:{id}", self.prefix)
    }
    pub(super) fn result(&self, id: &str) -> String {
        format!("{}:result:{id}", self.prefix)
    }
    /// Work units a client has waiting or running (a counter).
    pub(super) fn client(&self, source: Option<std::net::IpAddr>) -> String {
        match source {
            Some(ip) => format!("{}:client:{ip}", self.prefix),
            None => format!("{}:client:-", self.prefix),
        }
    }
}

pub(super) fn backend(e: &redis::RedisError) -> QueueError {
    QueueError::Backend {
        message: e.to_string(),
    }
}

/// Errors worth one more try: the connection dropped (Redis restarted),
/// was refused for a moment, timed out, or Redis is still loading its data.
pub(super) fn transient(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.to_string().contains("LOADING")
}

/// Runs `f` on a clone of `con`, retrying transient failures up to three
/// times (100, 200, 300 ms apart). Every caller is idempotent: a submit
/// retried after an unknown outcome finds its own job as a duplicate.
pub(super) async fn retry<T, F, Fut>(con: &ConnectionManager, mut f: F) -> Result<T, QueueError>
where
    F: FnMut(ConnectionManager) -> Fut,
    Fut: std::future::Future<Output = redis::RedisResult<T>>,
{
    let mut attempt = 0u64;
    loop {
        match f(con.clone()).await {
            Ok(v) => return Ok(v),
            Err(e) if attempt < 3 && transient(&e) => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
            }
            Err(e) => return Err(backend(&e)),
        }
    }
}

/// Runs a prepared script invocation, retrying transient failures.
pub(super) async fn invoke<T: redis::FromRedisValue>(
    con: &ConnectionManager,
    call: &redis::ScriptInvocation<'_>,
) -> Result<T, QueueError> {
    retry(
        con,
        |mut con| async move { call.invoke_async(&mut con).await },
    )
    .await
}

/// A batch script's reply must have one row per item asked about.
pub(super) fn expect_rows(
    rows: &[Value],
    expected: usize,
    what: &str,
    unit: &str,
) -> Result<(), QueueError> {
    if rows.len() == expected {
        return Ok(());
    }
    Err(QueueError::Backend {
        message: format!("{what} answered {} rows for {expected} {unit}", rows.len()),
    })
}

pub(super) async fn connect(
    url: &str,
    response_timeout: Duration,
) -> Result<ConnectionManager, QueueError> {
    let client = Client::open(url).map_err(|e| backend(&e))?;
    let config = ConnectionManagerConfig::new()
        .set_response_timeout(Some(response_timeout))
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_number_of_retries(3)
        .set_max_delay(Duration::from_secs(1));
    ConnectionManager::new_with_config(client, config)
        .await
        .map_err(|e| backend(&e))
}

/// Creates the stream and its group if missing (idempotent: an existing
/// group is fine). Reads from id 0, so entries added before the group
/// existed are delivered too.
pub(super) async fn ensure_group(
    con: &mut ConnectionManager,
    keys: &Keys,
) -> Result<(), QueueError> {
    for stream in [&keys.stream, &keys.large] {
        let r: redis::RedisResult<Value> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(stream)
            .arg(&keys.group)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(con)
            .await;
        match r {
            Ok(_) => {}
            Err(e) if e.to_string().contains("BUSYGROUP") => {}
            Err(e) => return Err(backend(&e)),
        }
    }
    Ok(())
}

/// One upload. KEYS: result, job, small-job stream, bytes counter, client
/// counter, large-job stream. ARGV: capacity, id, meta, bytes, byte limit,
/// work, client work bound, small-job work limit (which stream it joins).
pub(super) const SUBMIT: &str = include_str!("scripts/submit.lua");

pub(super) const STATUS: &str = include_str!("scripts/status.lua");

/// Many uploads in one round trip, all or nothing. KEYS: small-job
/// stream, bytes counter, client counter, large-job stream, then result and
/// job key per upload. ARGV: capacity, meta JSON, byte limit, client work
/// bound, small-job work limit, then id, bytes and work per upload. Answers one entry per upload, like `SUBMIT`, or
/// `{'full', depth}` / `{'bytes', held}` / `{'client', work}` when the new
/// jobs do not all fit.
pub(super) const SUBMIT_MANY: &str = include_str!("scripts/submit_many.lua");

/// Many statuses in one round trip. KEYS: result and job key per id.
pub(super) const STATUS_MANY: &str = include_str!("scripts/status_many.lua");

/// Stores verdicts, one or many per round trip. KEYS: stream, stats, then
/// result and job key per verdict. ARGV: group, notification channel,
/// bytes counter, then per verdict: record JSON, entry id (empty for a
/// verdict reached at upload), outcome field, ticks, nanos, latency bucket
/// field, latency ms. Per verdict, atomically: `SET NX` (first verdict
/// wins), the counters, the job's bytes and work given back (read from its
/// hash, so a duplicate delivery gives nothing back twice), `DEL` of the
/// job hash, `XACK` + `XDEL`; then one `PUBLISH` for the whole call, which
/// wakes the front ends' waiting requests. Answers how many verdicts were
/// new.
pub(super) const FINISH: &str = include_str!("scripts/finish.lua");

/// One verdict for [`FINISH`].
pub(super) struct Verdict<'a> {
    pub(super) id: &'a str,
    pub(super) json: String,
    pub(super) entry_id: &'a str,
    pub(super) outcome: &'static str,
    pub(super) ticks: u64,
    pub(super) nanos: u64,
    pub(super) bucket: String,
    pub(super) latency_ms: u64,
}

/// The `FINISH` invocation storing `verdicts`.
pub(super) fn finish_call<'s>(
    script: &'s Script,
    keys: &Keys,
    stream: &str,
    verdicts: &[Verdict<'_>],
) -> redis::ScriptInvocation<'s> {
    let mut call = script.prepare_invoke();
    call.key(stream)
        .key(&keys.stats)
        .arg(&keys.group)
        .arg(&keys.verdicts)
        .arg(&keys.bytes);
    for v in verdicts {
        call.key(keys.result(v.id))
            .key(keys.job(v.id))
            .arg(&v.json)
            .arg(v.entry_id)
            .arg(v.outcome)
            .arg(v.ticks)
            .arg(v.nanos)
            .arg(&v.bucket)
            .arg(v.latency_ms);
    }
    call
}

/// KEYS: stream. ARGV: group, consumer, entry ids. Refreshes each claim
/// only while this consumer still owns the entry; answers how many it
/// refreshed.
pub(super) const REFRESH: &str = include_str!("scripts/refresh.lua");

/// KEYS: dead stream, job. ARGV: id, deliveries, error.
pub(super) const DEAD: &str = include_str!("scripts/dead.lua");

pub(super) fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::Okay => Some("OK".into()),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

pub(super) fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) | Value::Set(a) => a,
        _ => &[],
    }
}

pub(super) fn parse_open(id: JobId, status: &str, attempts: &str) -> JobRecord {
    let status = if status == "running" {
        JobStatus::Running
    } else {
        JobStatus::Queued
    };
    let mut r = JobRecord::bare(id.to_string(), status);
    r.attempts = attempts.parse().ok();
    r
}

pub(super) fn parse_record(text: &str) -> Result<JobRecord, QueueError> {
    JobRecord::from_json(text.as_bytes()).map_err(|e| QueueError::Backend {
        message: format!("a stored verdict is not a record: {e}"),
    })
}

/// A submit's answer (`queued`, `done RECORD` or `dup STATUS ATTEMPTS`, one
/// reply or one row of a batch's); `None` for any other.
pub(super) fn parse_submitted(
    id: JobId,
    parts: &[String],
) -> Option<Result<Submitted, QueueError>> {
    let part = |i: usize| parts.get(i).map_or("", String::as_str);
    Some(match part(0) {
        "queued" => Ok(Submitted::Queued),
        "done" => parse_record(part(1)).map(Submitted::Done),
        "dup" => Ok(Submitted::Duplicate(parse_open(id, part(1), part(2)))),
        _ => return None,
    })
}

/// A status answer (`done RECORD` or `open STATUS ATTEMPTS`, one reply or
/// one row of a batch's); unknown for any other.
pub(super) fn parse_status(id: JobId, parts: &[String]) -> Result<Option<JobRecord>, QueueError> {
    let part = |i: usize| parts.get(i).map_or("", String::as_str);
    match part(0) {
        "done" => parse_record(part(1)).map(Some),
        "open" => Ok(Some(parse_open(id, part(1), part(2)))),
        _ => Ok(None),
    }
}

pub(super) const fn outcome_field(status: JobStatus) -> &'static str {
    match status {
        JobStatus::Ok => "ok",
        JobStatus::Diverged => "diverged",
        _ => "refused",
    }
}
