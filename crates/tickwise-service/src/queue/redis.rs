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
//!
//! Delivery is at least once. A worker reads with `XREADGROUP`; the entry
//! stays pending until the verdict is stored. The verdict, the `XACK`, the
//! `XDEL` and the counters are one Lua script, so a verdict is never stored
//! without its job being acknowledged, nor acknowledged without a verdict.
//! A worker that dies leaves the entry pending; another takes it over with
//! `XAUTOCLAIM` once it has been idle for the claim timeout. A long job
//! refreshes its claim (`XCLAIM … JUSTID` by its own consumer) so nobody
//! takes it over while it runs. An entry delivered more than
//! [`MAX_DELIVERIES`] times goes to `P:dead` with its last error and gets an
//! `invalid` verdict, so a poison job cannot loop forever.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, Script, Value};

use super::{MAX_DELIVERIES, Queue, QueueError, QueueStats, Submitted};
use crate::job::{JobId, JobMeta, JobRecord, JobStatus, unix_ms};
use crate::verifier::Verifier;

/// Where the queue lives and how big it may grow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisConfig {
    /// `redis://HOST:PORT[/DB]`.
    pub url: String,
    /// Key prefix (several services can share one Redis).
    pub prefix: String,
    /// The most jobs waiting or running; more uploads get `429`.
    pub capacity: u64,
}

impl RedisConfig {
    /// Defaults for `url`: prefix `tickwise`, capacity 10 000.
    #[must_use]
    pub fn new(url: impl Into<String>) -> RedisConfig {
        RedisConfig {
            url: url.into(),
            prefix: String::from("tickwise"),
            capacity: 10_000,
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
}

impl Default for WorkerConfig {
    /// One job per core, 5 s claim timeout, 1 s blocking reads.
    fn default() -> WorkerConfig {
        WorkerConfig {
            jobs: std::thread::available_parallelism().map_or(1, usize::from),
            claim_idle: Duration::from_secs(5),
            block: Duration::from_secs(1),
            name: format!("worker-{}-{}", std::process::id(), unix_ms()),
        }
    }
}

#[derive(Clone, Debug)]
struct Keys {
    stream: String,
    group: String,
    dead: String,
    stats: String,
    prefix: String,
}

impl Keys {
    fn new(prefix: &str) -> Keys {
        Keys {
            stream: format!("{prefix}:jobs"),
            group: format!("{prefix}:workers"),
            dead: format!("{prefix}:dead"),
            stats: format!("{prefix}:stats"),
            prefix: prefix.to_string(),
        }
    }
    fn job(&self, id: &str) -> String {
        format!("{}:job:{id}", self.prefix)
    }
    fn result(&self, id: &str) -> String {
        format!("{}:result:{id}", self.prefix)
    }
}

fn backend(e: &redis::RedisError) -> QueueError {
    QueueError::Backend {
        message: e.to_string(),
    }
}

/// Errors worth one more try: the connection dropped (Redis restarted),
/// was refused for a moment, timed out, or Redis is still loading its data.
fn transient(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.to_string().contains("LOADING")
}

/// Runs `f` on a clone of `con`, retrying transient failures up to three
/// times (100, 200, 300 ms apart). Every caller is idempotent: a submit
/// retried after an unknown outcome finds its own job as a duplicate.
async fn retry<T, F, Fut>(con: &ConnectionManager, mut f: F) -> Result<T, QueueError>
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

async fn connect(url: &str, response_timeout: Duration) -> Result<ConnectionManager, QueueError> {
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
async fn ensure_group(con: &mut ConnectionManager, keys: &Keys) -> Result<(), QueueError> {
    let r: redis::RedisResult<Value> = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(&keys.stream)
        .arg(&keys.group)
        .arg("0")
        .arg("MKSTREAM")
        .query_async(con)
        .await;
    match r {
        Ok(_) => Ok(()),
        Err(e) if e.to_string().contains("BUSYGROUP") => Ok(()),
        Err(e) => Err(backend(&e)),
    }
}

const SUBMIT: &str = r"
local r = redis.call('GET', KEYS[1])
if r then return {'done', r} end
local s = redis.call('HGET', KEYS[2], 'status')
if s then return {'dup', s, redis.call('HGET', KEYS[2], 'attempts') or '0'} end
local depth = redis.call('XLEN', KEYS[3])
if depth >= tonumber(ARGV[1]) then return {'full', tostring(depth)} end
redis.call('HSET', KEYS[2], 'status', 'queued', 'attempts', '0')
redis.call('XADD', KEYS[3], '*', 'id', ARGV[2], 'meta', ARGV[3], 'bytes', ARGV[4])
return {'queued'}
";

const STATUS: &str = r"
local r = redis.call('GET', KEYS[1])
if r then return {'done', r} end
local s = redis.call('HGET', KEYS[2], 'status')
if s then return {'open', s, redis.call('HGET', KEYS[2], 'attempts') or '0'} end
return {'none'}
";

/// KEYS: result, job, stream, stats. ARGV: record JSON, entry id, group,
/// outcome field, ticks, nanos, latency bucket field, latency ms.
const FINISH: &str = r"
local set = redis.call('SET', KEYS[1], ARGV[1], 'NX')
if set then
  redis.call('HINCRBY', KEYS[4], ARGV[4], 1)
  redis.call('HINCRBY', KEYS[4], 'ticks', ARGV[5])
  redis.call('HINCRBY', KEYS[4], 'verify_nanos', ARGV[6])
  redis.call('HINCRBY', KEYS[4], ARGV[7], 1)
  redis.call('HINCRBY', KEYS[4], 'latency_sum_ms', ARGV[8])
else
  redis.call('HINCRBY', KEYS[4], 'duplicate_verdicts', 1)
end
redis.call('DEL', KEYS[2])
if ARGV[2] ~= '' then
  redis.call('XACK', KEYS[3], ARGV[3], ARGV[2])
  redis.call('XDEL', KEYS[3], ARGV[2])
end
if set then return 1 else return 0 end
";

/// KEYS: stream. ARGV: group, consumer, entry id. Refreshes the claim only
/// while this consumer still owns the entry.
const REFRESH: &str = r"
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if p[1] and p[1][2] == ARGV[2] then
  redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
  return 1
end
return 0
";

/// KEYS: dead stream, job. ARGV: id, deliveries, error.
const DEAD: &str = r"
redis.call('XADD', KEYS[1], '*', 'id', ARGV[1], 'deliveries', ARGV[2], 'error', ARGV[3])
return 1
";

fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::Okay => Some("OK".into()),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) | Value::Set(a) => a,
        _ => &[],
    }
}

fn parse_open(id: JobId, status: &str, attempts: &str) -> JobRecord {
    let status = if status == "running" {
        JobStatus::Running
    } else {
        JobStatus::Queued
    };
    let mut r = JobRecord::bare(id.to_string(), status);
    r.attempts = attempts.parse().ok();
    r
}

fn parse_record(text: &str) -> Result<JobRecord, QueueError> {
    JobRecord::from_json(text.as_bytes()).map_err(|e| QueueError::Backend {
        message: format!("a stored verdict is not a record: {e}"),
    })
}

/// The front end's side of the Redis engine (used by `verifyd`).
#[derive(Clone)]
pub struct RedisQueue {
    con: ConnectionManager,
    keys: Arc<Keys>,
    capacity: u64,
    submit: Arc<Script>,
    status: Arc<Script>,
    finish: Arc<Script>,
}

impl std::fmt::Debug for RedisQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisQueue")
            .field("prefix", &self.keys.prefix)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl RedisQueue {
    /// Connects and creates the stream's consumer group if missing.
    ///
    /// # Errors
    ///
    /// [`QueueError::Backend`] when Redis cannot be reached.
    pub async fn connect(config: &RedisConfig) -> Result<RedisQueue, QueueError> {
        let mut con = connect(&config.url, Duration::from_secs(5)).await?;
        let keys = Keys::new(&config.prefix);
        ensure_group(&mut con, &keys).await?;
        Ok(RedisQueue {
            con,
            keys: Arc::new(keys),
            capacity: config.capacity.max(1),
            submit: Arc::new(Script::new(SUBMIT)),
            status: Arc::new(Script::new(STATUS)),
            finish: Arc::new(Script::new(FINISH)),
        })
    }
}

impl Queue for RedisQueue {
    async fn submit(
        &self,
        id: JobId,
        bytes: Bytes,
        meta: JobMeta,
    ) -> Result<Submitted, QueueError> {
        let ids = id.to_string();
        let meta_json = serde_json::to_string(&meta).unwrap_or_else(|_| "{}".into());
        let (result_key, job_key) = (self.keys.result(&ids), self.keys.job(&ids));
        let (script, keys, capacity) = (&*self.submit, &*self.keys, self.capacity);
        let reply: Value = retry(&self.con, |mut con| {
            let (result_key, job_key, ids, meta_json) = (&result_key, &job_key, &ids, &meta_json);
            let bytes = &bytes;
            async move {
                script
                    .key(result_key)
                    .key(job_key)
                    .key(&keys.stream)
                    .arg(capacity)
                    .arg(ids)
                    .arg(meta_json)
                    .arg(bytes.as_ref())
                    .invoke_async(&mut con)
                    .await
            }
        })
        .await?;
        let parts: Vec<String> = items(&reply).iter().filter_map(text).collect();
        match parts.first().map(String::as_str) {
            Some("queued") => Ok(Submitted::Queued),
            Some("done") => Ok(Submitted::Done(parse_record(
                parts.get(1).map_or("", String::as_str),
            )?)),
            Some("dup") => Ok(Submitted::Duplicate(parse_open(
                id,
                parts.get(1).map_or("", String::as_str),
                parts.get(2).map_or("", String::as_str),
            ))),
            Some("full") => Err(QueueError::Full {
                depth: parts.get(1).and_then(|d| d.parse().ok()).unwrap_or(0),
                capacity: self.capacity,
                retry_after: Duration::from_secs(2),
            }),
            _ => Err(QueueError::Backend {
                message: format!("unexpected reply to submit: {reply:?}"),
            }),
        }
    }

    async fn store_verdict(&self, record: JobRecord) -> Result<JobRecord, QueueError> {
        let json = record.to_json();
        let (result_key, job_key) = (self.keys.result(&record.id), self.keys.job(&record.id));
        let (script, keys, field) = (&*self.finish, &*self.keys, outcome_field(record.status));
        let stored: i64 = retry(&self.con, |mut con| {
            let (result_key, job_key, json) = (&result_key, &job_key, &json);
            async move {
                script
                    .key(result_key)
                    .key(job_key)
                    .key(&keys.stream)
                    .key(&keys.stats)
                    .arg(json)
                    .arg("")
                    .arg(&keys.group)
                    .arg(field)
                    .arg(0)
                    .arg(0)
                    .arg("front_verdicts")
                    .arg(0)
                    .invoke_async(&mut con)
                    .await
            }
        })
        .await?;
        if stored == 1 {
            return Ok(record);
        }
        let Some(id) = JobId::parse(&record.id) else {
            return Ok(record);
        };
        Ok(self.status(id).await?.unwrap_or(record))
    }

    async fn status(&self, id: JobId) -> Result<Option<JobRecord>, QueueError> {
        let ids = id.to_string();
        let (result_key, job_key) = (self.keys.result(&ids), self.keys.job(&ids));
        let script = &*self.status;
        let reply: Value = retry(&self.con, |mut con| {
            let (result_key, job_key) = (&result_key, &job_key);
            async move {
                script
                    .key(result_key)
                    .key(job_key)
                    .invoke_async(&mut con)
                    .await
            }
        })
        .await?;
        let parts: Vec<String> = items(&reply).iter().filter_map(text).collect();
        match parts.first().map(String::as_str) {
            Some("done") => Ok(Some(parse_record(parts.get(1).map_or("", String::as_str))?)),
            Some("open") => Ok(Some(parse_open(
                id,
                parts.get(1).map_or("", String::as_str),
                parts.get(2).map_or("", String::as_str),
            ))),
            _ => Ok(None),
        }
    }

    async fn stats(&self) -> Result<QueueStats, QueueError> {
        let keys = &*self.keys;
        let (len, pending, stats): (u64, Value, Vec<(String, i64)>) =
            retry(&self.con, |mut con| async move {
                redis::pipe()
                    .cmd("XLEN")
                    .arg(&keys.stream)
                    .cmd("XPENDING")
                    .arg(&keys.stream)
                    .arg(&keys.group)
                    .cmd("HGETALL")
                    .arg(&keys.stats)
                    .query_async(&mut con)
                    .await
            })
            .await?;
        let running = items(&pending)
            .first()
            .and_then(|v| match v {
                Value::Int(i) => u64::try_from(*i).ok(),
                _ => None,
            })
            .unwrap_or(0);
        let mut out = QueueStats {
            queued: len.saturating_sub(running),
            running,
            capacity: self.capacity,
            ..QueueStats::default()
        };
        for (k, v) in stats {
            let v = u64::try_from(v).unwrap_or(0);
            match k.as_str() {
                "ok" => out.outcomes[0] = v,
                "diverged" => out.outcomes[1] = v,
                "invalid" => out.outcomes[2] = v,
                "ticks" => out.ticks = v,
                "verify_nanos" => out.verify_nanos = v,
                "redeliveries" => out.redeliveries = v,
                "dead_letters" => out.dead_letters = v,
                "duplicate_verdicts" => out.duplicate_verdicts = v,
                "latency_sum_ms" => out.latency_sum_ms = v,
                other => {
                    if let Some(i) = other
                        .strip_prefix("latency_")
                        .and_then(|b| b.parse::<usize>().ok())
                        && let Some(slot) = out.latency_counts.get_mut(i)
                    {
                        *slot = v;
                    }
                }
            }
        }
        Ok(out)
    }

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(20)
    }

    fn engine(&self) -> &'static str {
        "redis"
    }
}

const fn outcome_field(status: JobStatus) -> &'static str {
    match status {
        JobStatus::Ok => "ok",
        JobStatus::Diverged => "diverged",
        _ => "invalid",
    }
}

/// One stream entry: a job as delivered.
#[derive(Debug)]
struct Entry {
    entry_id: String,
    id: Option<JobId>,
    meta: JobMeta,
    bytes: Vec<u8>,
}

fn parse_entry(v: &Value) -> Option<Entry> {
    let parts = items(v);
    let entry_id = text(parts.first()?)?;
    let mut e = Entry {
        entry_id,
        id: None,
        meta: JobMeta::default(),
        bytes: Vec::new(),
    };
    let fields = parts.get(1)?;
    let pairs: Vec<(&Value, &Value)> = match fields {
        Value::Map(m) => m.iter().map(|(k, v)| (k, v)).collect(),
        other => items(other)
            .chunks_exact(2)
            .map(|c| (&c[0], &c[1]))
            .collect(),
    };
    for (k, v) in pairs {
        match text(k).as_deref() {
            Some("id") => e.id = text(v).and_then(|s| JobId::parse(&s)),
            Some("meta") => {
                if let Some(m) = text(v).and_then(|s| serde_json::from_str(&s).ok()) {
                    e.meta = m;
                }
            }
            Some("bytes") => {
                if let Value::BulkString(b) = v {
                    e.bytes.clone_from(b);
                }
            }
            _ => {}
        }
    }
    Some(e)
}

/// Entries from an `XREADGROUP` reply (RESP2 arrays or RESP3 maps).
fn read_entries(reply: &Value) -> Vec<Entry> {
    let streams: Vec<&Value> = match reply {
        Value::Map(m) => m.iter().map(|(_, v)| v).collect(),
        other => items(other)
            .iter()
            .filter_map(|s| items(s).get(1))
            .collect(),
    };
    streams
        .into_iter()
        .flat_map(|s| items(s).iter().filter_map(parse_entry))
        .collect()
}

/// A `tickwise worker` process: `jobs` loops, each reading one job at a
/// time and verifying it on the blocking thread pool.
#[derive(Debug)]
pub struct RedisWorker {
    redis: RedisConfig,
    config: WorkerConfig,
    verifier: Verifier,
}

impl RedisWorker {
    /// A worker for the queue at `redis`.
    #[must_use]
    pub fn new(redis: RedisConfig, config: WorkerConfig, verifier: Verifier) -> RedisWorker {
        RedisWorker {
            redis,
            config,
            verifier,
        }
    }

    /// Runs until `stop` is set (checked between jobs and after every
    /// blocking read). Connection failures are retried with a pause, so a
    /// Redis restart only delays work.
    ///
    /// # Errors
    ///
    /// [`QueueError::Backend`] when Redis cannot be reached at start.
    pub async fn run(self, stop: Arc<AtomicBool>) -> Result<(), QueueError> {
        let keys = Arc::new(Keys::new(&self.redis.prefix));
        let response = self.config.block + Duration::from_secs(5);
        let mut shared = connect(&self.redis.url, response).await?;
        ensure_group(&mut shared, &keys).await?;
        let mut tasks = tokio::task::JoinSet::new();
        for n in 0..self.config.jobs.max(1) {
            let reader = connect(&self.redis.url, response).await?;
            let ctx = Loop {
                keys: Arc::clone(&keys),
                consumer: format!("{}-{n}", self.config.name),
                reader,
                shared: shared.clone(),
                config: self.config.clone(),
                verifier: self.verifier.clone(),
                stop: Arc::clone(&stop),
                finish: Script::new(FINISH),
                refresh: Arc::new(Script::new(REFRESH)),
                dead: Script::new(DEAD),
            };
            tasks.spawn(ctx.run());
        }
        while tasks.join_next().await.is_some() {}
        Ok(())
    }
}

struct Loop {
    keys: Arc<Keys>,
    consumer: String,
    reader: ConnectionManager,
    shared: ConnectionManager,
    config: WorkerConfig,
    verifier: Verifier,
    stop: Arc<AtomicBool>,
    finish: Script,
    refresh: Arc<Script>,
    dead: Script,
}

impl Loop {
    async fn run(mut self) {
        let mut next_claim = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            match self.next_entry(&mut next_claim).await {
                Ok(Some(entry)) => {
                    if let Err(e) = self.process(entry).await {
                        eprintln!("tickwise worker {}: {e}", self.consumer);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    if e.to_string().contains("NOGROUP") {
                        let _ = ensure_group(&mut self.shared, &self.keys).await;
                    }
                    eprintln!("tickwise worker {}: {e}", self.consumer);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }

    /// A job taken over from a dead worker, else a new one (blocking up to
    /// `block`).
    async fn next_entry(&mut self, next_claim: &mut Instant) -> Result<Option<Entry>, QueueError> {
        if Instant::now() >= *next_claim {
            let reply: Value = redis::cmd("XAUTOCLAIM")
                .arg(&self.keys.stream)
                .arg(&self.keys.group)
                .arg(&self.consumer)
                .arg(u64::try_from(self.config.claim_idle.as_millis()).unwrap_or(u64::MAX))
                .arg("0-0")
                .arg("COUNT")
                .arg(1)
                .query_async(&mut self.shared)
                .await
                .map_err(|e| backend(&e))?;
            let claimed: Vec<Entry> = items(&reply)
                .get(1)
                .map(|v| items(v).iter().filter_map(parse_entry).collect())
                .unwrap_or_default();
            if let Some(e) = claimed.into_iter().next() {
                return Ok(Some(e));
            }
            // Nothing idle: look again in a fraction of the timeout.
            *next_claim = Instant::now() + self.config.claim_idle / 4;
        }
        let reply: Value = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(&self.keys.group)
            .arg(&self.consumer)
            .arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(u64::try_from(self.config.block.as_millis()).unwrap_or(1000))
            .arg("STREAMS")
            .arg(&self.keys.stream)
            .arg(">")
            .query_async(&mut self.reader)
            .await
            .map_err(|e| backend(&e))?;
        Ok(read_entries(&reply).into_iter().next())
    }

    async fn deliveries(&mut self, entry_id: &str) -> Result<u32, QueueError> {
        let reply: Value = redis::cmd("XPENDING")
            .arg(&self.keys.stream)
            .arg(&self.keys.group)
            .arg(entry_id)
            .arg(entry_id)
            .arg(1)
            .query_async(&mut self.shared)
            .await
            .map_err(|e| backend(&e))?;
        Ok(items(&reply)
            .first()
            .and_then(|p| items(p).get(3))
            .and_then(|v| match v {
                Value::Int(i) => u32::try_from(*i).ok(),
                _ => None,
            })
            .unwrap_or(1))
    }

    async fn process(&mut self, entry: Entry) -> Result<(), QueueError> {
        let Some(id) = entry.id else {
            // Not one of ours (or mangled): acknowledge and drop it.
            let _: Value = redis::pipe()
                .cmd("XACK")
                .arg(&self.keys.stream)
                .arg(&self.keys.group)
                .arg(&entry.entry_id)
                .cmd("XDEL")
                .arg(&self.keys.stream)
                .arg(&entry.entry_id)
                .query_async(&mut self.shared)
                .await
                .map_err(|e| backend(&e))?;
            return Ok(());
        };
        let ids = id.to_string();
        let deliveries = self.deliveries(&entry.entry_id).await?;
        let job_key = self.keys.job(&ids);
        if deliveries > MAX_DELIVERIES {
            let last: Option<String> = redis::cmd("HGET")
                .arg(&job_key)
                .arg("lastError")
                .query_async(&mut self.shared)
                .await
                .map_err(|e| backend(&e))?;
            let last = last.unwrap_or_else(|| {
                String::from("the workers that took it stopped before finishing (killed, crashed, or cut off from Redis)")
            });
            return self.dead_letter(id, &entry, deliveries - 1, &last).await;
        }
        let mut pipe = redis::pipe();
        pipe.cmd("HSET")
            .arg(&job_key)
            .arg("status")
            .arg("running")
            .arg("attempts")
            .arg(deliveries)
            .ignore();
        if deliveries > 1 {
            pipe.cmd("HINCRBY")
                .arg(&self.keys.stats)
                .arg("redeliveries")
                .arg(1)
                .ignore();
        }
        let () = pipe
            .query_async(&mut self.shared)
            .await
            .map_err(|e| backend(&e))?;

        // Keep the claim fresh while the job runs.
        let refresher = {
            let mut con = self.shared.clone();
            let script = Arc::clone(&self.refresh);
            let (stream, group, consumer, entry_id) = (
                self.keys.stream.clone(),
                self.keys.group.clone(),
                self.consumer.clone(),
                entry.entry_id.clone(),
            );
            let every = (self.config.claim_idle / 3).max(Duration::from_millis(50));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    let r: redis::RedisResult<i64> = script
                        .key(&stream)
                        .arg(&group)
                        .arg(&consumer)
                        .arg(&entry_id)
                        .invoke_async(&mut con)
                        .await;
                    if let Ok(0) = r {
                        return; // someone else owns it now
                    }
                }
            })
        };
        let verifier = self.verifier.clone();
        let meta = entry.meta;
        let bytes = entry.bytes;
        let started = Instant::now();
        let result =
            tokio::task::spawn_blocking(move || verifier.verify(id, &bytes, &meta, deliveries))
                .await;
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        refresher.abort();
        let record = match result {
            Ok(Ok(record)) => record,
            Ok(Err(failure)) => {
                return self
                    .failed(id, &entry.entry_id, deliveries, &failure.message)
                    .await;
            }
            Err(join) => {
                return self
                    .failed(
                        id,
                        &entry.entry_id,
                        deliveries,
                        &format!("verification task failed: {join}"),
                    )
                    .await;
            }
        };
        let latency = record.latency_ms.unwrap_or(0);
        let _: i64 = self
            .finish
            .key(self.keys.result(&ids))
            .key(&job_key)
            .key(&self.keys.stream)
            .key(&self.keys.stats)
            .arg(record.to_json())
            .arg(&entry.entry_id)
            .arg(&self.keys.group)
            .arg(outcome_field(record.status))
            .arg(record.ticks_run.unwrap_or(0))
            .arg(nanos)
            .arg(format!("latency_{}", QueueStats::bucket(latency)))
            .arg(latency)
            .invoke_async(&mut self.shared)
            .await
            .map_err(|e| backend(&e))?;
        Ok(())
    }

    /// A delivery that produced no verdict: remember the error; the entry
    /// stays pending and is taken over after the claim timeout, or
    /// dead-lettered if this was the last delivery.
    async fn failed(
        &mut self,
        id: JobId,
        entry_id: &str,
        deliveries: u32,
        message: &str,
    ) -> Result<(), QueueError> {
        if deliveries >= MAX_DELIVERIES {
            let entry = Entry {
                entry_id: entry_id.to_string(),
                id: Some(id),
                meta: JobMeta::default(),
                bytes: Vec::new(),
            };
            return self.dead_letter(id, &entry, deliveries, message).await;
        }
        let () = redis::cmd("HSET")
            .arg(self.keys.job(&id.to_string()))
            .arg("status")
            .arg("queued")
            .arg("lastError")
            .arg(message)
            .query_async(&mut self.shared)
            .await
            .map(|_: Value| ())
            .map_err(|e| backend(&e))?;
        Ok(())
    }

    async fn dead_letter(
        &mut self,
        id: JobId,
        entry: &Entry,
        deliveries: u32,
        error: &str,
    ) -> Result<(), QueueError> {
        let ids = id.to_string();
        let _: i64 = self
            .dead
            .key(&self.keys.dead)
            .arg(&ids)
            .arg(deliveries)
            .arg(error)
            .invoke_async(&mut self.shared)
            .await
            .map_err(|e| backend(&e))?;
        let mut r = JobRecord::invalid(
            id,
            format!("dead-lettered after {deliveries} deliveries; last error: {error}"),
        );
        r.attempts = Some(deliveries);
        r.latency_ms = Some(unix_ms().saturating_sub(entry.meta.submitted_ms));
        let latency = r.latency_ms.unwrap_or(0);
        let _: i64 = self
            .finish
            .key(self.keys.result(&ids))
            .key(self.keys.job(&ids))
            .key(&self.keys.stream)
            .key(&self.keys.stats)
            .arg(r.to_json())
            .arg(&entry.entry_id)
            .arg(&self.keys.group)
            .arg("invalid")
            .arg(0)
            .arg(0)
            .arg(format!("latency_{}", QueueStats::bucket(latency)))
            .arg(latency)
            .invoke_async(&mut self.shared)
            .await
            .map_err(|e| backend(&e))?;
        let () = redis::cmd("HINCRBY")
            .arg(&self.keys.stats)
            .arg("dead_letters")
            .arg(1)
            .query_async(&mut self.shared)
            .await
            .map(|_: Value| ())
            .map_err(|e| backend(&e))?;
        Ok(())
    }
}
