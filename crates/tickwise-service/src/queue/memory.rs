//! The embedded queue: one process, verification threads on every core,
//! nothing else to start.
//!
//! Jobs wait in a bounded FIFO; `jobs` plain OS threads (a blocking pool,
//! never the async executor's threads) take them one at a time. Verdicts
//! stay in memory, the oldest dropped past `max_results`. Nothing survives
//! a restart: that is what the Redis engine is for.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::{MAX_DELIVERIES, Queue, QueueError, QueueStats, Submitted};
use crate::job::{JobId, JobMeta, JobRecord, JobStatus, unix_ms};
use crate::verifier::Verifier;

/// Settings of the embedded queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Verification threads.
    pub jobs: usize,
    /// The most jobs waiting or running; more uploads get `429`.
    pub capacity: usize,
    /// Verdicts kept for `GET`; the oldest are forgotten past this.
    pub max_results: usize,
}

impl Default for MemoryConfig {
    /// One thread per core, 1024 jobs, 100 000 verdicts.
    fn default() -> MemoryConfig {
        MemoryConfig {
            jobs: std::thread::available_parallelism().map_or(1, usize::from),
            capacity: 1024,
            max_results: 100_000,
        }
    }
}

#[derive(Debug)]
enum Slot {
    Queued { attempts: u32 },
    Running { attempts: u32 },
    Done(Box<JobRecord>),
}

#[derive(Debug)]
struct Job {
    id: JobId,
    bytes: Bytes,
    meta: JobMeta,
}

#[derive(Debug, Default)]
struct State {
    waiting: VecDeque<Job>,
    slots: BTreeMap<JobId, Slot>,
    done_order: VecDeque<JobId>,
    running: u64,
    stats: QueueStats,
    dead_letters: Vec<(JobId, String)>,
    closed: bool,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    work: Condvar,
    config: MemoryConfig,
    verifier: Verifier,
    /// Bumped after every stored verdict: waiting requests sleep on it
    /// instead of polling.
    verdicts: tokio::sync::watch::Sender<u64>,
}

impl Shared {
    fn announce(&self) {
        self.verdicts.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker never panics while holding the lock (verification runs
        // outside it), so a poisoned lock still holds consistent data.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The embedded queue and its verification threads. Dropping it stops the
/// threads after their current job.
#[derive(Debug)]
pub struct MemoryQueue {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl MemoryQueue {
    /// Starts `config.jobs` verification threads over `verifier`.
    ///
    /// # Errors
    ///
    /// [`QueueError::Backend`] when a thread cannot be started.
    pub fn start(verifier: Verifier, config: MemoryConfig) -> Result<MemoryQueue, QueueError> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            config: MemoryConfig {
                jobs: config.jobs.max(1),
                capacity: config.capacity.max(1),
                max_results: config.max_results.max(1),
            },
            verifier,
            verdicts: tokio::sync::watch::Sender::new(0),
        });
        let mut queue = MemoryQueue {
            shared: Arc::clone(&shared),
            threads: Vec::new(),
        };
        for n in 0..shared.config.jobs {
            let s = Arc::clone(&shared);
            let handle = std::thread::Builder::new()
                .name(format!("tickwise-verify-{n}"))
                .spawn(move || worker(&s))
                .map_err(|e| QueueError::Backend {
                    message: format!("cannot start a verification thread: {e}"),
                })?;
            queue.threads.push(handle);
        }
        Ok(queue)
    }

    /// Jobs that failed [`MAX_DELIVERIES`] times, with their last error.
    #[must_use]
    pub fn dead_letters(&self) -> Vec<(JobId, String)> {
        self.shared.lock().dead_letters.clone()
    }
}

impl Drop for MemoryQueue {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.work.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn record_of(id: JobId, slot: &Slot) -> JobRecord {
    match slot {
        Slot::Queued { attempts } | Slot::Running { attempts } => {
            let status = if matches!(slot, Slot::Queued { .. }) {
                JobStatus::Queued
            } else {
                JobStatus::Running
            };
            let mut r = JobRecord::bare(id.to_string(), status);
            r.attempts = Some(*attempts);
            r
        }
        Slot::Done(r) => (**r).clone(),
    }
}

/// Stores a verdict (first one wins) and counts it.
fn finish(
    state: &mut State,
    config: &MemoryConfig,
    id: JobId,
    record: JobRecord,
    verify_nanos: u64,
) -> JobRecord {
    if let Some(Slot::Done(existing)) = state.slots.get(&id) {
        state.stats.duplicate_verdicts += 1;
        return (**existing).clone();
    }
    let k = match record.status {
        JobStatus::Ok => 0,
        JobStatus::Diverged => 1,
        _ => 2,
    };
    state.stats.outcomes[k] += 1;
    state.stats.ticks += record.ticks_run.unwrap_or(0);
    state.stats.verify_nanos = state.stats.verify_nanos.saturating_add(verify_nanos);
    if let Some(latency) = record.latency_ms {
        state.stats.latency_counts[QueueStats::bucket(latency)] += 1;
        state.stats.latency_sum_ms += latency;
    }
    state.slots.insert(id, Slot::Done(Box::new(record.clone())));
    state.done_order.push_back(id);
    while state.done_order.len() > config.max_results {
        if let Some(old) = state.done_order.pop_front() {
            state.slots.remove(&old);
        }
    }
    record
}

fn worker(shared: &Shared) {
    loop {
        let (job, attempts) = {
            let mut state = shared.lock();
            let job = loop {
                if state.closed {
                    return;
                }
                if let Some(job) = state.waiting.pop_front() {
                    break job;
                }
                state = shared
                    .work
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            };
            let attempts = match state.slots.get(&job.id) {
                Some(Slot::Queued { attempts }) => attempts + 1,
                _ => 1,
            };
            state.slots.insert(job.id, Slot::Running { attempts });
            state.running += 1;
            (job, attempts)
        };
        let started = Instant::now();
        let result = shared
            .verifier
            .verify(job.id, &job.bytes, &job.meta, attempts);
        let mut state = shared.lock();
        state.running = state.running.saturating_sub(1);
        let stored = result.is_ok() || attempts >= MAX_DELIVERIES;
        match result {
            Ok(record) => {
                let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                let _ = finish(&mut state, &shared.config, job.id, record, nanos);
            }
            Err(failure) if attempts >= MAX_DELIVERIES => {
                state.stats.dead_letters += 1;
                state.dead_letters.push((job.id, failure.message.clone()));
                let mut r = JobRecord::invalid(
                    job.id,
                    format!(
                        "dead-lettered after {attempts} deliveries; last error: {}",
                        failure.message
                    ),
                );
                r.attempts = Some(attempts);
                r.latency_ms = Some(unix_ms().saturating_sub(job.meta.submitted_ms));
                let _ = finish(&mut state, &shared.config, job.id, r, 0);
            }
            Err(_) => {
                state.stats.redeliveries += 1;
                state.slots.insert(job.id, Slot::Queued { attempts });
                state.waiting.push_back(job);
                shared.work.notify_one();
            }
        }
        drop(state);
        if stored {
            shared.announce();
        }
    }
}

impl Queue for MemoryQueue {
    async fn submit(
        &self,
        id: JobId,
        bytes: Bytes,
        meta: JobMeta,
    ) -> Result<Submitted, QueueError> {
        let mut state = self.shared.lock();
        if state.closed {
            return Err(QueueError::Closed);
        }
        match state.slots.get(&id) {
            Some(slot @ Slot::Done(_)) => return Ok(Submitted::Done(record_of(id, slot))),
            Some(slot) => return Ok(Submitted::Duplicate(record_of(id, slot))),
            None => {}
        }
        let depth = state.waiting.len() as u64 + state.running;
        let capacity = self.shared.config.capacity as u64;
        if depth >= capacity {
            return Err(QueueError::Full {
                depth,
                capacity,
                retry_after: Duration::from_secs(1),
            });
        }
        state.slots.insert(id, Slot::Queued { attempts: 0 });
        state.waiting.push_back(Job { id, bytes, meta });
        drop(state);
        self.shared.work.notify_one();
        Ok(Submitted::Queued)
    }

    async fn store_verdict(&self, record: JobRecord) -> Result<JobRecord, QueueError> {
        let Some(id) = JobId::parse(&record.id) else {
            return Err(QueueError::Backend {
                message: format!("not a job id: {:?}", record.id),
            });
        };
        let stored = {
            let mut state = self.shared.lock();
            finish(&mut state, &self.shared.config, id, record, 0)
        };
        self.shared.announce();
        Ok(stored)
    }

    async fn submit_many(
        &self,
        jobs: Vec<(JobId, Bytes)>,
        meta: JobMeta,
    ) -> Result<Vec<Submitted>, QueueError> {
        let mut state = self.shared.lock();
        if state.closed {
            return Err(QueueError::Closed);
        }
        let fresh = jobs
            .iter()
            .filter(|(id, _)| !state.slots.contains_key(id))
            .count() as u64;
        let depth = state.waiting.len() as u64 + state.running;
        let capacity = self.shared.config.capacity as u64;
        if fresh > 0 && depth + fresh > capacity {
            return Err(QueueError::Full {
                depth,
                capacity,
                retry_after: Duration::from_secs(1),
            });
        }
        let mut out = Vec::with_capacity(jobs.len());
        for (id, bytes) in jobs {
            match state.slots.get(&id) {
                Some(slot @ Slot::Done(_)) => out.push(Submitted::Done(record_of(id, slot))),
                Some(slot) => out.push(Submitted::Duplicate(record_of(id, slot))),
                None => {
                    state.slots.insert(id, Slot::Queued { attempts: 0 });
                    state.waiting.push_back(Job { id, bytes, meta });
                    out.push(Submitted::Queued);
                }
            }
        }
        drop(state);
        if fresh > 0 {
            self.shared.work.notify_all();
        }
        Ok(out)
    }

    async fn status_many(&self, ids: &[JobId]) -> Result<Vec<Option<JobRecord>>, QueueError> {
        let state = self.shared.lock();
        Ok(ids
            .iter()
            .map(|id| state.slots.get(id).map(|slot| record_of(*id, slot)))
            .collect())
    }

    fn verdicts(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(self.shared.verdicts.subscribe())
    }

    async fn status(&self, id: JobId) -> Result<Option<JobRecord>, QueueError> {
        let state = self.shared.lock();
        Ok(state.slots.get(&id).map(|slot| record_of(id, slot)))
    }

    async fn stats(&self) -> Result<QueueStats, QueueError> {
        let state = self.shared.lock();
        Ok(QueueStats {
            queued: state.waiting.len() as u64,
            running: state.running,
            capacity: self.shared.config.capacity as u64,
            ..state.stats.clone()
        })
    }

    fn poll_interval(&self) -> Duration {
        // Only a safety net: every stored verdict notifies.
        Duration::from_millis(100)
    }

    fn status_is_local(&self) -> bool {
        true
    }

    fn engine(&self) -> &'static str {
        "memory"
    }
}
