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
//! [`MAX_DELIVERIES`] times goes to `P:dead` with its last error and gets an
//! `invalid` verdict, so a poison job cannot loop forever.
//!
//! Round trips are shared where the rules allow: a batch upload is one
//! script call, a worker loop reads up to [`MAX_BATCH`] new entries at once
//! (as many as it verifies in about [`BATCH_BUDGET`]) and stores all their
//! verdicts in one script call; claims, delivery counts, dead letters and
//! the first-verdict-wins rule stay per entry.

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
    /// The most replay bytes waiting or running; more uploads get `429`.
    pub max_queued_bytes: u64,
    /// Work units one client (source address) may have waiting or running
    /// (a client with nothing queued may always queue one job).
    pub max_client_work: u64,
}

impl RedisConfig {
    /// Defaults for `url`: prefix `tickwise`, capacity 10 000, 256 MiB of
    /// queued replays, the memory engine's per-client work bound.
    #[must_use]
    pub fn new(url: impl Into<String>) -> RedisConfig {
        RedisConfig {
            url: url.into(),
            prefix: String::from("tickwise"),
            capacity: 10_000,
            max_queued_bytes: 256 * 1024 * 1024,
            max_client_work: super::memory::DEFAULT_MAX_CLIENT_WORK,
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
struct Keys {
    stream: String,
    group: String,
    dead: String,
    stats: String,
    verdicts: String,
    /// Bytes of the replays waiting or running (a counter).
    bytes: String,
    prefix: String,
}

impl Keys {
    fn new(prefix: &str) -> Keys {
        Keys {
            stream: format!("{prefix}:jobs"),
            group: format!("{prefix}:workers"),
            dead: format!("{prefix}:dead"),
            stats: format!("{prefix}:stats"),
            verdicts: format!("{prefix}:verdicts"),
            bytes: format!("{prefix}:bytes"),
            prefix: prefix.to_string(),
        }
    }
    fn job(&self, id: &str) -> String {
        format!("{}:job:{id}", self.prefix)
    }
    fn result(&self, id: &str) -> String {
        format!("{}:result:{id}", self.prefix)
    }
    /// Work units a client has waiting or running (a counter).
    fn client(&self, source: Option<std::net::IpAddr>) -> String {
        match source {
            Some(ip) => format!("{}:client:{ip}", self.prefix),
            None => format!("{}:client:-", self.prefix),
        }
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

/// Runs a prepared script invocation, retrying transient failures.
async fn invoke<T: redis::FromRedisValue>(
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
fn expect_rows(rows: &[Value], expected: usize, what: &str, unit: &str) -> Result<(), QueueError> {
    if rows.len() == expected {
        return Ok(());
    }
    Err(QueueError::Backend {
        message: format!("{what} answered {} rows for {expected} {unit}", rows.len()),
    })
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

/// One upload. KEYS: result, job, stream, bytes counter, client counter.
/// ARGV: capacity, id, meta, bytes, byte limit, work, client work bound.
const SUBMIT: &str = r"
local r = redis.call('GET', KEYS[1])
if r then return {'done', r} end
local s = redis.call('HGET', KEYS[2], 'status')
if s then return {'dup', s, redis.call('HGET', KEYS[2], 'attempts') or '0'} end
local depth = redis.call('XLEN', KEYS[3])
if depth >= tonumber(ARGV[1]) then return {'full', tostring(depth)} end
local size = string.len(ARGV[4])
local held = tonumber(redis.call('GET', KEYS[4]) or '0')
if held > 0 and held + size > tonumber(ARGV[5]) then return {'bytes', tostring(held)} end
local work = tonumber(redis.call('GET', KEYS[5]) or '0')
if work > 0 and work + tonumber(ARGV[6]) > tonumber(ARGV[7]) then return {'client', tostring(work)} end
redis.call('HSET', KEYS[2], 'status', 'queued', 'attempts', '0', 'size', size, 'work', ARGV[6], 'client', KEYS[5])
redis.call('INCRBY', KEYS[4], size)
redis.call('INCRBY', KEYS[5], ARGV[6])
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

/// Many uploads in one round trip, all or nothing. KEYS: stream, bytes
/// counter, client counter, then result and job key per upload. ARGV:
/// capacity, meta JSON, byte limit, client work bound, then id, bytes and
/// work per upload. Answers one entry per upload, like `SUBMIT`, or
/// `{'full', depth}` / `{'bytes', held}` / `{'client', work}` when the new
/// jobs do not all fit.
const SUBMIT_MANY: &str = r"
local n = (#KEYS - 3) / 2
local out = {}
local fresh, size, work = 0, 0, 0
for i = 1, n do
  local r = redis.call('GET', KEYS[2 * i + 2])
  if r then
    out[i] = {'done', r}
  else
    local s = redis.call('HGET', KEYS[2 * i + 3], 'status')
    if s then
      out[i] = {'dup', s, redis.call('HGET', KEYS[2 * i + 3], 'attempts') or '0'}
    else
      out[i] = false
      fresh = fresh + 1
      size = size + string.len(ARGV[3 * i + 3])
      work = work + tonumber(ARGV[3 * i + 4])
    end
  end
end
if fresh == 0 then return out end
local depth = redis.call('XLEN', KEYS[1])
if depth + fresh > tonumber(ARGV[1]) then return {{'full', tostring(depth)}} end
local held = tonumber(redis.call('GET', KEYS[2]) or '0')
if held > 0 and held + size > tonumber(ARGV[3]) then return {{'bytes', tostring(held)}} end
local had = tonumber(redis.call('GET', KEYS[3]) or '0')
if (had > 0 or fresh > 1) and had + work > tonumber(ARGV[4]) then return {{'client', tostring(had), tostring(work)}} end
for i = 1, n do
  if not out[i] then
    local len = string.len(ARGV[3 * i + 3])
    redis.call('HSET', KEYS[2 * i + 3], 'status', 'queued', 'attempts', '0', 'size', len, 'work', ARGV[3 * i + 4], 'client', KEYS[3])
    redis.call('INCRBY', KEYS[2], len)
    redis.call('INCRBY', KEYS[3], ARGV[3 * i + 4])
    redis.call('XADD', KEYS[1], '*', 'id', ARGV[3 * i + 2], 'meta', ARGV[2], 'bytes', ARGV[3 * i + 3])
    out[i] = {'queued'}
  end
end
return out
";

/// Many statuses in one round trip. KEYS: result and job key per id.
const STATUS_MANY: &str = r"
local out = {}
for i = 1, #KEYS / 2 do
  local r = redis.call('GET', KEYS[2 * i - 1])
  if r then
    out[i] = {'done', r}
  else
    local s = redis.call('HGET', KEYS[2 * i], 'status')
    if s then
      out[i] = {'open', s, redis.call('HGET', KEYS[2 * i], 'attempts') or '0'}
    else
      out[i] = {'none'}
    end
  end
end
return out
";

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
const FINISH: &str = r"
local stored = 0
for i = 1, (#KEYS - 2) / 2 do
  local a = 3 + (i - 1) * 7
  local set = redis.call('SET', KEYS[2 * i + 1], ARGV[a + 1], 'NX')
  if set then
    stored = stored + 1
    redis.call('HINCRBY', KEYS[2], ARGV[a + 3], 1)
    redis.call('HINCRBY', KEYS[2], 'ticks', ARGV[a + 4])
    redis.call('HINCRBY', KEYS[2], 'verify_nanos', ARGV[a + 5])
    redis.call('HINCRBY', KEYS[2], ARGV[a + 6], 1)
    redis.call('HINCRBY', KEYS[2], 'latency_sum_ms', ARGV[a + 7])
  else
    redis.call('HINCRBY', KEYS[2], 'duplicate_verdicts', 1)
  end
  local job = redis.call('HMGET', KEYS[2 * i + 2], 'size', 'work', 'client')
  if job[1] then
    if redis.call('DECRBY', ARGV[3], job[1]) <= 0 then redis.call('DEL', ARGV[3]) end
  end
  if job[2] and job[3] then
    if redis.call('DECRBY', job[3], job[2]) <= 0 then redis.call('DEL', job[3]) end
  end
  redis.call('DEL', KEYS[2 * i + 2])
  if ARGV[a + 2] ~= '' then
    redis.call('XACK', KEYS[1], ARGV[1], ARGV[a + 2])
    redis.call('XDEL', KEYS[1], ARGV[a + 2])
  end
end
redis.call('PUBLISH', ARGV[2], stored)
return stored
";

/// One verdict for [`FINISH`].
struct Verdict<'a> {
    id: &'a str,
    json: String,
    entry_id: &'a str,
    outcome: &'static str,
    ticks: u64,
    nanos: u64,
    bucket: String,
    latency_ms: u64,
}

/// The `FINISH` invocation storing `verdicts`.
fn finish_call<'s>(
    script: &'s Script,
    keys: &Keys,
    verdicts: &[Verdict<'_>],
) -> redis::ScriptInvocation<'s> {
    let mut call = script.prepare_invoke();
    call.key(&keys.stream)
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
const REFRESH: &str = r"
local n = 0
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    n = n + 1
  end
end
return n
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

/// A submit's answer (`queued`, `done RECORD` or `dup STATUS ATTEMPTS`, one
/// reply or one row of a batch's); `None` for any other.
fn parse_submitted(id: JobId, parts: &[String]) -> Option<Result<Submitted, QueueError>> {
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
fn parse_status(id: JobId, parts: &[String]) -> Result<Option<JobRecord>, QueueError> {
    let part = |i: usize| parts.get(i).map_or("", String::as_str);
    match part(0) {
        "done" => parse_record(part(1)).map(Some),
        "open" => Ok(Some(parse_open(id, part(1), part(2)))),
        _ => Ok(None),
    }
}

/// The front end's side of the Redis engine (used by `verifyd`).
#[derive(Clone)]
pub struct RedisQueue {
    con: ConnectionManager,
    keys: Arc<Keys>,
    capacity: u64,
    max_bytes: u64,
    max_client_work: u64,
    submit: Arc<Script>,
    status: Arc<Script>,
    finish: Arc<Script>,
    submit_many: Arc<Script>,
    status_many: Arc<Script>,
    /// Bumped by the subscriber task on every verdict notification.
    notified: Arc<tokio::sync::watch::Sender<u64>>,
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
        let notified = Arc::new(tokio::sync::watch::Sender::new(0u64));
        let client = Client::open(config.url.as_str()).map_err(|e| backend(&e))?;
        tokio::spawn(listen(
            client,
            keys.verdicts.clone(),
            Arc::downgrade(&notified),
        ));
        Ok(RedisQueue {
            con,
            keys: Arc::new(keys),
            capacity: config.capacity.max(1),
            max_bytes: config.max_queued_bytes,
            max_client_work: config.max_client_work,
            submit: Arc::new(Script::new(SUBMIT)),
            status: Arc::new(Script::new(STATUS)),
            finish: Arc::new(Script::new(FINISH)),
            submit_many: Arc::new(Script::new(SUBMIT_MANY)),
            status_many: Arc::new(Script::new(STATUS_MANY)),
            notified,
        })
    }
}

impl RedisQueue {
    /// The refusal a submit script answered (`full`, `bytes`, `client`),
    /// if any; `work` is the job's (a batch's row carries its own).
    fn refusal(&self, parts: &[String], work: u64) -> Option<QueueError> {
        let num = |i: usize| parts.get(i).and_then(|d| d.parse().ok()).unwrap_or(0);
        Some(match parts.first().map(String::as_str)? {
            "full" => QueueError::Full {
                depth: num(1),
                capacity: self.capacity,
                retry_after: Duration::from_secs(2),
            },
            "bytes" => QueueError::BytesFull {
                bytes: num(1),
                limit: self.max_bytes,
                retry_after: Duration::from_secs(2),
            },
            "client" => QueueError::ClientBusy {
                work: num(1),
                job: if parts.len() > 2 { num(2) } else { work },
                limit: self.max_client_work,
                retry_after: Duration::from_secs(5),
            },
            _ => return None,
        })
    }
}

impl Queue for RedisQueue {
    async fn submit(
        &self,
        id: JobId,
        bytes: Bytes,
        work: u64,
        meta: JobMeta,
    ) -> Result<Submitted, QueueError> {
        let ids = id.to_string();
        let meta_json = serde_json::to_string(&meta).unwrap_or_else(|_| "{}".into());
        let (result_key, job_key) = (self.keys.result(&ids), self.keys.job(&ids));
        let client_key = self.keys.client(meta.source);
        let (script, keys, capacity) = (&*self.submit, &*self.keys, self.capacity);
        let (max_bytes, max_work) = (self.max_bytes, self.max_client_work);
        let reply: Value = retry(&self.con, |mut con| {
            let (result_key, job_key, ids, meta_json) = (&result_key, &job_key, &ids, &meta_json);
            let (bytes, client_key) = (&bytes, &client_key);
            async move {
                script
                    .key(result_key)
                    .key(job_key)
                    .key(&keys.stream)
                    .key(&keys.bytes)
                    .key(client_key)
                    .arg(capacity)
                    .arg(ids)
                    .arg(meta_json)
                    .arg(bytes.as_ref())
                    .arg(max_bytes)
                    .arg(work)
                    .arg(max_work)
                    .invoke_async(&mut con)
                    .await
            }
        })
        .await?;
        let parts: Vec<String> = items(&reply).iter().filter_map(text).collect();
        if let Some(e) = self.refusal(&parts, work) {
            return Err(e);
        }
        parse_submitted(id, &parts).unwrap_or_else(|| {
            Err(QueueError::Backend {
                message: format!("unexpected reply to submit: {reply:?}"),
            })
        })
    }

    async fn store_verdict(&self, record: JobRecord) -> Result<JobRecord, QueueError> {
        let verdicts = [Verdict {
            id: &record.id,
            json: record.to_json(),
            entry_id: "",
            outcome: outcome_field(record.status),
            ticks: 0,
            nanos: 0,
            bucket: String::from("front_verdicts"),
            latency_ms: 0,
        }];
        let call = finish_call(&self.finish, &self.keys, &verdicts);
        let stored: i64 = invoke(&self.con, &call).await?;
        if stored == 1 {
            return Ok(record);
        }
        let Some(id) = JobId::parse(&record.id) else {
            return Ok(record);
        };
        Ok(self.status(id).await?.unwrap_or(record))
    }

    async fn submit_many(
        &self,
        jobs: Vec<(JobId, Bytes, u64)>,
        meta: JobMeta,
    ) -> Result<Vec<Submitted>, QueueError> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let meta_json = serde_json::to_string(&meta).unwrap_or_else(|_| "{}".into());
        let ids: Vec<String> = jobs.iter().map(|(id, _, _)| id.to_string()).collect();
        let mut call = self.submit_many.prepare_invoke();
        call.key(&self.keys.stream)
            .key(&self.keys.bytes)
            .key(self.keys.client(meta.source))
            .arg(self.capacity)
            .arg(&meta_json)
            .arg(self.max_bytes)
            .arg(self.max_client_work);
        for ((_, bytes, work), ids) in jobs.iter().zip(&ids) {
            call.key(self.keys.result(ids))
                .key(self.keys.job(ids))
                .arg(ids)
                .arg(bytes.as_ref())
                .arg(*work);
        }
        let reply: Value = invoke(&self.con, &call).await?;
        let rows = items(&reply);
        if let Some(parts) = rows
            .first()
            .map(|r| items(r).iter().filter_map(text).collect::<Vec<_>>())
            && let Some(e) = self.refusal(&parts, 0)
        {
            return Err(e);
        }
        expect_rows(rows, jobs.len(), "the batch submit", "jobs")?;
        jobs.iter()
            .zip(rows)
            .map(|((id, _, _), row)| {
                let parts: Vec<String> = items(row).iter().filter_map(text).collect();
                parse_submitted(*id, &parts).unwrap_or_else(|| {
                    Err(QueueError::Backend {
                        message: format!("unexpected reply to a batch submit: {row:?}"),
                    })
                })
            })
            .collect()
    }

    async fn status_many(&self, ids: &[JobId]) -> Result<Vec<Option<JobRecord>>, QueueError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = self.status_many.prepare_invoke();
        for id in ids {
            let s = id.to_string();
            call.key(self.keys.result(&s)).key(self.keys.job(&s));
        }
        let reply: Value = invoke(&self.con, &call).await?;
        let rows = items(&reply);
        expect_rows(rows, ids.len(), "a status batch", "ids")?;
        ids.iter()
            .zip(rows)
            .map(|(id, row)| {
                let parts: Vec<String> = items(row).iter().filter_map(text).collect();
                parse_status(*id, &parts)
            })
            .collect()
    }

    fn verdicts(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.notified.subscribe())
    }

    fn status_is_local(&self) -> bool {
        false
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
        parse_status(id, &parts)
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
        // The safety net behind the `PUBLISH` notifications (a message is
        // lost while the subscriber reconnects).
        Duration::from_millis(200)
    }

    fn engine(&self) -> &'static str {
        "redis"
    }
}

/// Subscribes to the verdict channel and bumps `notified` on every message,
/// reconnecting (every half second) when Redis goes away, until the queue
/// is dropped. After every (re)subscription it bumps once too, since
/// messages published while it was away are lost.
async fn listen(
    client: Client,
    channel: String,
    notified: std::sync::Weak<tokio::sync::watch::Sender<u64>>,
) {
    use futures_util::StreamExt as _;
    let bump = |n: &mut u64| *n = n.wrapping_add(1);
    loop {
        if let Ok(mut sub) = client.get_async_pubsub().await
            && sub.subscribe(&channel).await.is_ok()
        {
            let Some(tx) = notified.upgrade() else { return };
            tx.send_modify(bump);
            drop(tx);
            let mut messages = sub.into_on_message();
            while messages.next().await.is_some() {
                let Some(tx) = notified.upgrade() else { return };
                tx.send_modify(bump);
            }
        }
        if notified.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
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
                per_job_nanos: 0,
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
    /// Moving average of one verification, in nanoseconds (0: none yet).
    per_job_nanos: u64,
}

/// A worker loop takes as many new jobs per `XREADGROUP` as it can verify
/// in about this long (from the average verification time so far), so
/// short jobs share their round trips while long ones still spread over
/// every worker one at a time.
pub const BATCH_BUDGET: Duration = Duration::from_millis(20);

/// The most jobs one worker loop takes per `XREADGROUP`.
pub const MAX_BATCH: usize = 32;

/// Jobs per read for an average verification time of `per_job_nanos`
/// (0: not known yet, so one).
#[must_use]
pub fn batch_size(per_job_nanos: u64) -> usize {
    if per_job_nanos == 0 {
        return 1;
    }
    let budget = u64::try_from(BATCH_BUDGET.as_nanos()).unwrap_or(u64::MAX);
    usize::try_from(budget / per_job_nanos)
        .unwrap_or(MAX_BATCH)
        .clamp(1, MAX_BATCH)
}

/// What one read brought.
enum Taken {
    /// Nothing within the blocking time.
    Nothing,
    /// One entry taken over from a dead or stuck worker (its delivery
    /// count must be asked for).
    Claimed(Entry),
    /// New entries, never delivered before (delivery count 1).
    Fresh(Vec<Entry>),
}

impl Loop {
    async fn run(mut self) {
        let mut next_claim = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            let taken = self.next_entries(&mut next_claim).await;
            let done = match taken {
                Ok(Taken::Claimed(entry)) => self.process(vec![entry], false).await,
                Ok(Taken::Fresh(entries)) => self.process(entries, true).await,
                Ok(Taken::Nothing) => Ok(()),
                Err(e) => {
                    if e.to_string().contains("NOGROUP") {
                        let _ = ensure_group(&mut self.shared, &self.keys).await;
                    }
                    eprintln!("tickwise worker {}: {e}", self.consumer);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    Ok(())
                }
            };
            if let Err(e) = done {
                eprintln!("tickwise worker {}: {e}", self.consumer);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }

    /// A job taken over from a dead worker, else new ones (blocking up to
    /// `block`), as many as [`batch_size`] says.
    async fn next_entries(&mut self, next_claim: &mut Instant) -> Result<Taken, QueueError> {
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
                return Ok(Taken::Claimed(e));
            }
            // Nothing idle: look again in a fraction of the timeout.
            *next_claim = Instant::now() + self.config.claim_idle / 4;
        }
        let reply: Value = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(&self.keys.group)
            .arg(&self.consumer)
            .arg("COUNT")
            .arg(batch_size(self.per_job_nanos))
            .arg("BLOCK")
            .arg(u64::try_from(self.config.block.as_millis()).unwrap_or(1000))
            .arg("STREAMS")
            .arg(&self.keys.stream)
            .arg(">")
            .query_async(&mut self.reader)
            .await
            .map_err(|e| backend(&e))?;
        let entries = read_entries(&reply);
        Ok(if entries.is_empty() {
            Taken::Nothing
        } else {
            Taken::Fresh(entries)
        })
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

    /// Verifies `entries` in hand: one pipeline marks them running, one
    /// blocking task verifies them in turn while their claims are kept
    /// fresh, one script call stores every verdict. `fresh` entries come
    /// from `>` and were never delivered before, so their delivery count is
    /// 1 without asking; a claimed one asks `XPENDING`.
    async fn process(&mut self, entries: Vec<Entry>, fresh: bool) -> Result<(), QueueError> {
        let mut jobs: Vec<(JobId, Entry, u32)> = Vec::with_capacity(entries.len());
        let mut pipe = redis::pipe();
        let mut piped = false;
        for entry in entries {
            let Some(id) = entry.id else {
                // Not one of ours (or mangled): acknowledge and drop it.
                piped = true;
                pipe.cmd("XACK")
                    .arg(&self.keys.stream)
                    .arg(&self.keys.group)
                    .arg(&entry.entry_id)
                    .ignore()
                    .cmd("XDEL")
                    .arg(&self.keys.stream)
                    .arg(&entry.entry_id)
                    .ignore();
                continue;
            };
            let job_key = self.keys.job(&id.to_string());
            let deliveries = if fresh {
                1
            } else {
                self.deliveries(&entry.entry_id).await?
            };
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
                self.dead_letter(id, &entry, deliveries - 1, &last).await?;
                continue;
            }
            piped = true;
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
            jobs.push((id, entry, deliveries));
        }
        if piped {
            let () = pipe
                .query_async(&mut self.shared)
                .await
                .map_err(|e| backend(&e))?;
        }
        if jobs.is_empty() {
            return Ok(());
        }

        // Keep the claims fresh while the jobs run.
        let refresher = {
            let mut con = self.shared.clone();
            let script = Arc::clone(&self.refresh);
            let (stream, group, consumer) = (
                self.keys.stream.clone(),
                self.keys.group.clone(),
                self.consumer.clone(),
            );
            let entry_ids: Vec<String> = jobs.iter().map(|(_, e, _)| e.entry_id.clone()).collect();
            let every = (self.config.claim_idle / 3).max(Duration::from_millis(50));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    let mut call = script.prepare_invoke();
                    call.key(&stream).arg(&group).arg(&consumer);
                    for e in &entry_ids {
                        call.arg(e);
                    }
                    let r: redis::RedisResult<i64> = call.invoke_async(&mut con).await;
                    if let Ok(0) = r {
                        return; // someone else owns them all now
                    }
                }
            })
        };
        let verifier = self.verifier.clone();
        let work: Vec<(JobId, JobMeta, Vec<u8>, u32)> = jobs
            .iter_mut()
            .map(|(id, e, d)| (*id, e.meta, std::mem::take(&mut e.bytes), *d))
            .collect();
        let count = work.len();
        let results = tokio::task::spawn_blocking(move || {
            work.into_iter()
                .map(|(id, meta, bytes, deliveries)| {
                    let started = Instant::now();
                    let r = verifier.verify(id, &bytes, &meta, deliveries);
                    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                    (r, nanos)
                })
                .collect::<Vec<_>>()
        })
        .await;
        refresher.abort();
        let results = match results {
            Ok(r) => r,
            Err(join) => {
                let message = format!("verification task failed: {join}");
                for (id, entry, deliveries) in &jobs {
                    self.failed(*id, &entry.entry_id, *deliveries, &message)
                        .await?;
                }
                return Ok(());
            }
        };
        let total: u64 = results.iter().map(|(_, n)| *n).sum();
        let mean = total / u64::try_from(count).unwrap_or(1).max(1);
        // A moving average: a few slow jobs shrink the next reads quickly,
        // a run of fast ones grows them back.
        self.per_job_nanos = if self.per_job_nanos == 0 {
            mean
        } else {
            (self.per_job_nanos + mean) / 2
        };
        let mut verdicts = Vec::with_capacity(count);
        let id_texts: Vec<String> = jobs.iter().map(|(id, _, _)| id.to_string()).collect();
        for (((id, entry, deliveries), (result, nanos)), ids) in
            jobs.iter().zip(results).zip(&id_texts)
        {
            match result {
                Ok(record) => {
                    let latency = record.latency_ms.unwrap_or(0);
                    verdicts.push(Verdict {
                        id: ids,
                        json: record.to_json(),
                        entry_id: &entry.entry_id,
                        outcome: outcome_field(record.status),
                        ticks: record.ticks_run.unwrap_or(0),
                        nanos,
                        bucket: format!("latency_{}", QueueStats::bucket(latency)),
                        latency_ms: latency,
                    });
                }
                Err(failure) => {
                    self.failed(*id, &entry.entry_id, *deliveries, &failure.message)
                        .await?;
                }
            }
        }
        if !verdicts.is_empty() {
            let call = finish_call(&self.finish, &self.keys, &verdicts);
            let _: i64 = call
                .invoke_async(&mut self.shared)
                .await
                .map_err(|e| backend(&e))?;
        }
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
        let verdicts = [Verdict {
            id: &ids,
            json: r.to_json(),
            entry_id: &entry.entry_id,
            outcome: "invalid",
            ticks: 0,
            nanos: 0,
            bucket: format!("latency_{}", QueueStats::bucket(latency)),
            latency_ms: latency,
        }];
        let _: i64 = finish_call(&self.finish, &self.keys, &verdicts)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_size_fills_about_twenty_ms() {
        assert_eq!(batch_size(0), 1, "unknown cost: one at a time");
        // 20 ms / 5 ms = 4; 20 ms / 7 ms = 2.86 → 2.
        assert_eq!(batch_size(5_000_000), 4);
        assert_eq!(batch_size(7_000_000), 2);
        // A 0.3 ms island replay would make 66: capped at 32.
        assert_eq!(batch_size(300_000), 32);
        // A 250 ms horde replay: one, so long jobs spread over workers.
        assert_eq!(batch_size(250_000_000), 1);
    }
}
