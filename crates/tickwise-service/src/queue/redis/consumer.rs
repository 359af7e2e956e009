//! The worker's side of the Redis engine (`tickwise worker`): loops that
//! read jobs (new ones, or ones taken over from dead workers), verify them
//! on the blocking pool while keeping their claims fresh, and store their
//! verdicts, acknowledging them in the same script.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use redis::{Script, Value};

use super::{
    DEAD, FINISH, Keys, REFRESH, RedisConfig, Verdict, WorkerConfig, backend, connect,
    ensure_group, finish_call, items, outcome_field, text,
};
use crate::job::{JobId, JobIdError, JobMeta, JobRecord, unix_ms};
use crate::queue::{MAX_DELIVERIES, QueueError, QueueStats};
use crate::verifier::Verifier;

/// One stream entry: a job as delivered.
#[derive(Debug)]
struct Entry {
    entry_id: String,
    /// The job id, or the text that did not parse as one and why.
    id: Result<JobId, (String, JobIdError)>,
    meta: JobMeta,
    bytes: Vec<u8>,
}

/// `v`'s items, mutable (empty for anything but an array or a set).
fn items_mut(v: &mut Value) -> &mut [Value] {
    match v {
        Value::Array(a) | Value::Set(a) => a,
        _ => &mut [],
    }
}

/// One entry of a reply; its bytes are moved out of the reply, not copied.
fn parse_entry(v: &mut Value) -> Option<Entry> {
    let parts = items_mut(v);
    let entry_id = text(parts.first()?)?;
    let mut e = Entry {
        entry_id,
        id: Err((String::new(), JobIdError::Malformed)),
        meta: JobMeta::default(),
        bytes: Vec::new(),
    };
    let fields = parts.get_mut(1)?;
    let pairs: Vec<(&Value, &mut Value)> = match fields {
        Value::Map(m) => m.iter_mut().map(|(k, v)| (&*k, v)).collect(),
        other => items_mut(other)
            .chunks_exact_mut(2)
            .filter_map(|c| match c {
                [k, v] => Some((&*k, v)),
                _ => None,
            })
            .collect(),
    };
    for (k, v) in pairs {
        match text(k).as_deref() {
            Some("id") => {
                let s = text(v).unwrap_or_default();
                e.id = JobId::parse(&s).map_err(|why| (s, why));
            }
            Some("meta") => {
                if let Some(m) = text(v).and_then(|s| serde_json::from_str(&s).ok()) {
                    e.meta = m;
                }
            }
            Some("bytes") => {
                if let Value::BulkString(b) = v {
                    e.bytes = std::mem::take(b);
                }
            }
            _ => {}
        }
    }
    Some(e)
}

/// Entries from an `XREADGROUP` reply (RESP2 arrays or RESP3 maps).
fn read_entries(reply: &mut Value) -> Vec<Entry> {
    let streams: Vec<&mut Value> = match reply {
        Value::Map(m) => m.iter_mut().map(|(_, v)| v).collect(),
        other => items_mut(other)
            .iter_mut()
            .filter_map(|s| items_mut(s).get_mut(1))
            .collect(),
    };
    streams
        .into_iter()
        .flat_map(|s| items_mut(s).iter_mut().filter_map(parse_entry))
        .collect()
}

/// A `tickwise worker` process: `jobs` loops on the small jobs' stream and
/// `jobs` on the large jobs', each reading jobs and verifying them in turn
/// on the blocking thread pool.
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
        // `jobs` loops on each lane: a small job never waits behind a
        // large one in this process (the large ones take at most `jobs`
        // cores; small ones, short by definition, share them meanwhile).
        for (lane, stream) in [("small", &keys.stream), ("large", &keys.large)] {
            for n in 0..self.config.jobs.max(1) {
                let reader = connect(&self.redis.url, response).await?;
                let ctx = Loop {
                    keys: Arc::clone(&keys),
                    stream: stream.clone(),
                    consumer: format!("{}-{lane}-{n}", self.config.name),
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
        }
        while tasks.join_next().await.is_some() {}
        Ok(())
    }
}

struct Loop {
    keys: Arc<Keys>,
    /// The stream this loop reads: the small jobs' or the large jobs'.
    stream: String,
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
            let mut reply: Value = redis::cmd("XAUTOCLAIM")
                .arg(&self.stream)
                .arg(&self.keys.group)
                .arg(&self.consumer)
                .arg(u64::try_from(self.config.claim_idle.as_millis()).unwrap_or(u64::MAX))
                .arg("0-0")
                .arg("COUNT")
                .arg(1)
                .query_async(&mut self.shared)
                .await
                .map_err(|e| backend(&e))?;
            let claimed: Vec<Entry> = items_mut(&mut reply)
                .get_mut(1)
                .map(|v| items_mut(v).iter_mut().filter_map(parse_entry).collect())
                .unwrap_or_default();
            if let Some(e) = claimed.into_iter().next() {
                return Ok(Taken::Claimed(e));
            }
            // Nothing idle: look again in a fraction of the timeout.
            *next_claim = Instant::now() + self.config.claim_idle / 4;
        }
        let mut reply: Value = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(&self.keys.group)
            .arg(&self.consumer)
            .arg("COUNT")
            .arg(batch_size(self.per_job_nanos))
            .arg("BLOCK")
            .arg(u64::try_from(self.config.block.as_millis()).unwrap_or(1000))
            .arg("STREAMS")
            .arg(&self.stream)
            .arg(">")
            .query_async(&mut self.reader)
            .await
            .map_err(|e| backend(&e))?;
        let entries = read_entries(&mut reply);
        Ok(if entries.is_empty() {
            Taken::Nothing
        } else {
            Taken::Fresh(entries)
        })
    }

    async fn deliveries(&mut self, entry_id: &str) -> Result<u32, QueueError> {
        let reply: Value = redis::cmd("XPENDING")
            .arg(&self.stream)
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
            let id = match &entry.id {
                Ok(id) => Some(*id),
                Err((text, why)) => {
                    // Not one of ours (or mangled), or queued by a front
                    // end of before the `b3-` ids (docs/service.md,
                    // "Job ids"): acknowledge and drop it, and say so.
                    eprintln!(
                        "tickwise worker {}: dropped stream entry {} with job id {text:?}: {why}",
                        self.consumer, entry.entry_id
                    );
                    None
                }
            };
            let Some(id) = id else {
                piped = true;
                pipe.cmd("XACK")
                    .arg(&self.stream)
                    .arg(&self.keys.group)
                    .arg(&entry.entry_id)
                    .ignore()
                    .cmd("XDEL")
                    .arg(&self.stream)
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
                self.stream.clone(),
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
                    let r = verifier.verify_vec(id, bytes, &meta, deliveries);
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
            let call = finish_call(&self.finish, &self.keys, &self.stream, &verdicts);
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
                id: Ok(id),
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
        let mut r = JobRecord::dead_lettered(id, deliveries, error);
        r.latency_ms = Some(unix_ms().saturating_sub(entry.meta.submitted_ms));
        let latency = r.latency_ms.unwrap_or(0);
        let verdicts = [Verdict {
            id: &ids,
            json: r.to_json(),
            entry_id: &entry.entry_id,
            outcome: "refused",
            ticks: 0,
            nanos: 0,
            bucket: format!("latency_{}", QueueStats::bucket(latency)),
            latency_ms: latency,
        }];
        let _: i64 = finish_call(&self.finish, &self.keys, &self.stream, &verdicts)
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
