//! The front end's side of the Redis engine: uploads, verdicts reached at
//! upload, statuses and counters, and the subscriber that wakes waiting
//! requests when a verdict is stored.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use redis::aio::ConnectionManager;
use redis::{Client, Script, Value};
use tickwise_catalog::Admitted;

use super::{
    FINISH, Keys, RedisConfig, STATUS, STATUS_MANY, SUBMIT, SUBMIT_MANY, Verdict, backend, connect,
    ensure_group, expect_rows, finish_call, invoke, items, outcome_field, parse_status,
    parse_submitted, retry, text,
};
use crate::job::{JobId, JobMeta, JobRecord};
use crate::queue::{Queue, QueueError, QueueStats, Submitted};

/// The front end's side of the Redis engine (used by `verifyd`).
#[derive(Clone)]
pub struct RedisQueue {
    con: ConnectionManager,
    keys: Arc<Keys>,
    capacity: u64,
    max_bytes: u64,
    max_client_work: u64,
    small_job_work: u64,
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
            small_job_work: config.small_job_work,
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
        admitted: Admitted,
        meta: JobMeta,
    ) -> Result<Submitted, QueueError> {
        // Only the work travels: a worker reads the bytes back from Redis
        // and checks them whole (docs/verification-service.md).
        let work = admitted.work();
        let ids = id.to_string();
        let meta_json = serde_json::to_string(&meta).unwrap_or_else(|_| "{}".into());
        let (result_key, job_key) = (self.keys.result(&ids), self.keys.job(&ids));
        let client_key = self.keys.client(meta.source);
        let (script, keys, capacity) = (&*self.submit, &*self.keys, self.capacity);
        let (max_bytes, max_work, small) =
            (self.max_bytes, self.max_client_work, self.small_job_work);
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
                    .key(&keys.large)
                    .arg(capacity)
                    .arg(ids)
                    .arg(meta_json)
                    .arg(bytes.as_ref())
                    .arg(max_bytes)
                    .arg(work)
                    .arg(max_work)
                    .arg(small)
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
        let call = finish_call(&self.finish, &self.keys, &self.keys.stream, &verdicts);
        let stored: i64 = invoke(&self.con, &call).await?;
        if stored == 1 {
            return Ok(record);
        }
        let Ok(id) = JobId::parse(&record.id) else {
            return Ok(record);
        };
        Ok(self.status(id).await?.unwrap_or(record))
    }

    async fn submit_many(
        &self,
        jobs: Vec<(JobId, Bytes, Admitted)>,
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
            .key(&self.keys.large)
            .arg(self.capacity)
            .arg(&meta_json)
            .arg(self.max_bytes)
            .arg(self.max_client_work)
            .arg(self.small_job_work);
        for ((_, bytes, admitted), ids) in jobs.iter().zip(&ids) {
            call.key(self.keys.result(ids))
                .key(self.keys.job(ids))
                .arg(ids)
                .arg(bytes.as_ref())
                .arg(admitted.work());
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
        // Both lanes: the small jobs' stream and the large jobs'.
        let (len, pending, len_large, pending_large, stats): (
            u64,
            Value,
            u64,
            Value,
            Vec<(String, i64)>,
        ) = retry(&self.con, |mut con| async move {
            redis::pipe()
                .cmd("XLEN")
                .arg(&keys.stream)
                .cmd("XPENDING")
                .arg(&keys.stream)
                .arg(&keys.group)
                .cmd("XLEN")
                .arg(&keys.large)
                .cmd("XPENDING")
                .arg(&keys.large)
                .arg(&keys.group)
                .cmd("HGETALL")
                .arg(&keys.stats)
                .query_async(&mut con)
                .await
        })
        .await?;
        let count = |pending: &Value| {
            items(pending)
                .first()
                .and_then(|v| match v {
                    Value::Int(i) => u64::try_from(*i).ok(),
                    _ => None,
                })
                .unwrap_or(0)
        };
        let running = count(&pending) + count(&pending_large);
        let len = len + len_large;
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
                "refused" => out.outcomes[2] = v,
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
