//! The embedded queue: one process, verification threads on every core,
//! nothing else to start.
//!
//! Jobs wait in two lanes, bounded in jobs and in bytes: **small** jobs
//! (estimated work up to [`MemoryConfig::small_job_work`]) and **large**
//! ones. Within a lane, clients (source addresses) take turns, one job
//! each, so one client's many uploads wait behind each other, not in front
//! of everyone. `jobs` plain OS threads (never the async executor's
//! threads) take a small job when there is one, else a large one; one more
//! thread takes small jobs only, so however many large jobs run, a small
//! one starts at once. A client's waiting and running work is bounded
//! ([`MemoryConfig::max_client_work`]). A request that waits for its one
//! small job's verdict may have it verified on the executor thread that
//! received it, with no hand-off, when nothing waits in the small lane
//! ([`MemoryConfig::inline_work`], off by default). Verdicts stay in memory, the oldest
//! dropped past `max_results`. Nothing survives a restart: that is what the
//! Redis engine is for.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tickwise_catalog::Admitted;

use super::{MAX_DELIVERIES, Queue, QueueError, QueueStats, Submitted, Watch};

mod state;

use crate::job::{JobId, JobMeta, JobRecord, JobStatus, unix_ms};
use crate::verifier::Verifier;
use state::{Job, Slot, State};

/// Settings of the embedded queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryConfig {
    /// Verification threads (one more takes small jobs only).
    pub jobs: usize,
    /// The most jobs waiting or running; more uploads get `429`.
    pub capacity: usize,
    /// Verdicts kept for `GET`; the oldest are forgotten past this.
    pub max_results: usize,
    /// The most replay bytes waiting or running; more uploads get `429`.
    pub max_queued_bytes: usize,
    /// Jobs estimated at up to this many work units go to the small lane
    /// (and its own thread); larger ones to the large lane.
    pub small_job_work: u64,
    /// Work units one client (source address) may have waiting or running;
    /// a job that would pass it gets `429` (a client with nothing queued
    /// may always queue one job).
    pub max_client_work: u64,
    /// Jobs estimated at up to this many work units (and small), uploaded
    /// alone by a request that waits for the verdict, are verified on the
    /// executor thread that received them when no small job waits
    /// ([`Queue::submit_waiting`]); `0`, the default, never.
    ///
    /// That saves two thread hand-offs a replay, but holds the executor
    /// thread for the job's time: it suits a server with as many executor
    /// threads as cores (`block_on_with`) and short jobs, a few
    /// milliseconds at most. Such jobs skip the lane's turns between
    /// clients, which is why a waiting small job turns it off.
    pub inline_work: u64,
    /// How long dropping the queue (the service shutting down) waits for
    /// running jobs before leaving them.
    pub shutdown_grace: Duration,
}

/// [`MemoryConfig::small_job_work`] by default: 10⁹ units, about a second
/// of CPU on the reference machine.
pub const DEFAULT_SMALL_JOB_WORK: u64 = 1_000_000_000;

/// [`MemoryConfig::max_client_work`] by default: two jobs at the default
/// work limit (`tickwise_catalog::DEFAULT_MAX_WORK`, 6·10¹⁰ units, about a
/// minute each).
pub const DEFAULT_MAX_CLIENT_WORK: u64 = 120_000_000_000;

impl Default for MemoryConfig {
    /// One thread per core (plus the small-job thread), 1024 jobs, 256 MiB
    /// of queued replays, 100 000 verdicts, small jobs up to 10⁹ units,
    /// 1.2·10¹¹ units per client, no inline verification, 5 s of shutdown
    /// grace.
    fn default() -> MemoryConfig {
        MemoryConfig {
            jobs: std::thread::available_parallelism().map_or(1, usize::from),
            capacity: 1024,
            max_results: 100_000,
            max_queued_bytes: 256 * 1024 * 1024,
            small_job_work: DEFAULT_SMALL_JOB_WORK,
            max_client_work: DEFAULT_MAX_CLIENT_WORK,
            inline_work: 0,
            shutdown_grace: Duration::from_secs(5),
        }
    }
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
                ..config
            },
            verifier,
            verdicts: tokio::sync::watch::Sender::new(0),
        });
        let mut queue = MemoryQueue {
            shared: Arc::clone(&shared),
            threads: Vec::new(),
        };
        // The last thread takes small jobs only.
        for n in 0..=shared.config.jobs {
            let s = Arc::clone(&shared);
            let small_only = n == shared.config.jobs;
            let name = if small_only {
                String::from("tickwise-verify-small")
            } else {
                format!("tickwise-verify-{n}")
            };
            let handle = std::thread::Builder::new()
                .name(name)
                .spawn(move || worker(&s, small_only))
                .map_err(|e| QueueError::Backend {
                    message: format!("cannot start a verification thread: {e}"),
                })?;
            queue.threads.push(handle);
        }
        Ok(queue)
    }

    /// A handle that stops the queue from the async side (see
    /// [`Closer::close`]).
    #[must_use]
    pub fn closer(&self) -> Closer {
        Closer {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Jobs that failed [`MAX_DELIVERIES`] times, with their last error.
    #[must_use]
    pub fn dead_letters(&self) -> Vec<(JobId, String)> {
        self.shared.lock().dead_letters.clone()
    }
}

/// Stops a [`MemoryQueue`] without dropping it (the HTTP handlers may
/// still hold it).
#[derive(Debug, Clone)]
pub struct Closer {
    shared: Arc<Shared>,
}

impl Closer {
    /// Takes no new job (uploads get `503`, idle threads end), then waits
    /// until no job runs or `grace` has passed, without blocking the async
    /// threads: requests waiting for a verdict are still answered meanwhile.
    pub async fn close(&self, grace: Duration) {
        self.shared.lock().closed = true;
        self.shared.work.notify_all();
        let deadline = tokio::time::Instant::now() + grace;
        while self.shared.lock().running > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for MemoryQueue {
    /// Stops the threads: idle ones at once, busy ones after their job,
    /// waiting at most [`MemoryConfig::shutdown_grace`]. A job still
    /// running then is left to finish or die with the process (its verdict
    /// is lost, as everything in this engine is on a restart).
    fn drop(&mut self) {
        let was_closed = std::mem::replace(&mut self.shared.lock().closed, true);
        self.shared.work.notify_all();
        // Closed already (by a `Closer`): its grace has been given.
        let grace = if was_closed {
            Duration::ZERO
        } else {
            self.shared.config.shutdown_grace
        };
        let deadline = Instant::now() + grace;
        while self.threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        for t in self.threads.drain(..) {
            if t.is_finished() {
                let _ = t.join();
            }
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
    for waiter in state.watchers.remove(&id).unwrap_or_default() {
        let _ = waiter.send(());
    }
    while state.done_order.len() > config.max_results {
        if let Some(old) = state.done_order.pop_front() {
            state.slots.remove(&old);
        }
    }
    record
}

fn worker(shared: &Shared, small_only: bool) {
    loop {
        let (job, attempts) = {
            let mut state = shared.lock();
            let job = loop {
                if state.closed {
                    return;
                }
                if let Some(job) = state.small.pop() {
                    break job;
                }
                if !small_only && let Some(job) = state.large.pop() {
                    break job;
                }
                state.idle += 1;
                state = shared
                    .work
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                state.idle -= 1;
            };
            let attempts = match state.slots.get(&job.id) {
                Some(Slot::Queued { attempts }) => attempts + 1,
                _ => 1,
            };
            state.slots.insert(job.id, Slot::Running { attempts });
            state.running += 1;
            (job, attempts)
        };
        let _ = run(shared, job, attempts);
    }
}

/// Verifies a job marked running (on a verification thread, or inline on
/// the thread that received it) and stores its verdict, its dead letter
/// after [`MAX_DELIVERIES`], or queues it again: the verdict stored, if
/// any.
fn run(shared: &Shared, job: Job, attempts: u32) -> Option<JobRecord> {
    let started = Instant::now();
    let result =
        shared
            .verifier
            .verify(job.id, &job.bytes, Some(&job.admitted), &job.meta, attempts);
    let mut state = shared.lock();
    state.running = state.running.saturating_sub(1);
    let stored = match result {
        Ok(record) => {
            let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
            state.release(&job);
            Some(finish(&mut state, &shared.config, job.id, record, nanos))
        }
        Err(failure) if attempts >= MAX_DELIVERIES => {
            state.release(&job);
            state.stats.dead_letters += 1;
            state.dead_letters.push((job.id, failure.message.clone()));
            let mut r = JobRecord::dead_lettered(job.id, attempts, &failure.message);
            r.latency_ms = Some(unix_ms().saturating_sub(job.meta.submitted_ms));
            Some(finish(&mut state, &shared.config, job.id, r, 0))
        }
        Err(_) => {
            state.stats.redeliveries += 1;
            state.slots.insert(job.id, Slot::Queued { attempts });
            state.requeue(&shared.config, job);
            shared.work.notify_all();
            None
        }
    };
    drop(state);
    if stored.is_some() {
        shared.announce();
    }
    stored
}

impl Queue for MemoryQueue {
    async fn submit(
        &self,
        id: JobId,
        bytes: Bytes,
        admitted: Admitted,
        meta: JobMeta,
    ) -> Result<Submitted, QueueError> {
        let mut out = self.submit_many(vec![(id, bytes, admitted)], meta).await?;
        Ok(out.pop().unwrap_or(Submitted::Queued))
    }

    async fn submit_waiting(
        &self,
        id: JobId,
        bytes: Bytes,
        admitted: Admitted,
        meta: JobMeta,
    ) -> Result<Submitted, QueueError> {
        let config = &self.shared.config;
        let inline = {
            let mut state = self.shared.lock();
            if state.closed {
                return Err(QueueError::Closed);
            }
            if state.takes_inline(config, admitted.work()) {
                match state.slots.get(&id) {
                    Some(slot @ Slot::Done(_)) => return Ok(Submitted::Done(record_of(id, slot))),
                    Some(slot) => return Ok(Submitted::Duplicate(record_of(id, slot))),
                    None => {}
                }
                let work = admitted.work();
                let per_client = BTreeMap::from([(meta.source, (1, work))]);
                state.admit(config, 1, bytes.len() as u64, &per_client)?;
                let job = Job {
                    id,
                    bytes,
                    meta,
                    work,
                    admitted,
                };
                state.account(&job);
                state.slots.insert(id, Slot::Running { attempts: 1 });
                state.running += 1;
                state.stats.inline += 1;
                Ok(job)
            } else {
                Err((bytes, admitted))
            }
        };
        let job = match inline {
            Ok(job) => job,
            Err((bytes, admitted)) => return self.submit(id, bytes, admitted, meta).await,
        };
        // Verification here, on the async thread: `inline_work` bounds it
        // to a short job, and the thread is one the server gave to this.
        Ok(match run(&self.shared, job, 1) {
            Some(record) => Submitted::Verified(record),
            // Failed once: queued again for a verification thread.
            None => Submitted::Queued,
        })
    }

    async fn store_verdict(&self, record: JobRecord) -> Result<JobRecord, QueueError> {
        let Ok(id) = JobId::parse(&record.id) else {
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
        jobs: Vec<(JobId, Bytes, Admitted)>,
        meta: JobMeta,
    ) -> Result<Vec<Submitted>, QueueError> {
        let mut state = self.shared.lock();
        if state.closed {
            return Err(QueueError::Closed);
        }
        let config = &self.shared.config;
        let mut fresh = 0u64;
        let mut bytes = 0u64;
        let mut work = 0u64;
        for (id, b, a) in &jobs {
            if !state.slots.contains_key(id) {
                fresh += 1;
                bytes += b.len() as u64;
                work = work.saturating_add(a.work());
            }
        }
        let per_client = BTreeMap::from([(meta.source, (fresh, work))]);
        state.admit(config, fresh, bytes, &per_client)?;
        let idle = state.idle as u64;
        let mut out = Vec::with_capacity(jobs.len());
        let mut large = false;
        for (id, bytes, admitted) in jobs {
            match state.slots.get(&id) {
                Some(slot @ Slot::Done(_)) => out.push(Submitted::Done(record_of(id, slot))),
                Some(slot) => out.push(Submitted::Duplicate(record_of(id, slot))),
                None => {
                    large |= admitted.work() > config.small_job_work;
                    state.slots.insert(id, Slot::Queued { attempts: 0 });
                    state.enqueue(
                        config,
                        Job {
                            id,
                            bytes,
                            meta,
                            work: admitted.work(),
                            admitted,
                        },
                    );
                    out.push(Submitted::Queued);
                }
            }
        }
        drop(state);
        if large {
            // Only some threads take large jobs: wake every sleeping one.
            if idle > 0 {
                self.shared.work.notify_all();
            }
        } else {
            // Any thread takes a small job: wake one per job, at most every
            // idle thread (not every thread for every upload).
            for _ in 0..fresh.min(idle) {
                self.shared.work.notify_one();
            }
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
            queued: state.waiting(),
            running: state.running,
            capacity: self.shared.config.capacity as u64,
            ..state.stats.clone()
        })
    }

    fn poll_interval(&self) -> Duration {
        // Only a safety net: every stored verdict notifies.
        Duration::from_millis(100)
    }

    fn watch(&self, id: JobId) -> Option<Watch> {
        let mut state = self.shared.lock();
        Some(match state.slots.get(&id) {
            None => Watch::Unknown,
            Some(Slot::Done(r)) => Watch::Final(r.clone()),
            Some(_) => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                let waiters = state.watchers.entry(id).or_default();
                waiters.retain(|w| !w.is_closed());
                waiters.push(tx);
                Watch::Open(rx)
            }
        })
    }

    fn status_is_local(&self) -> bool {
        true
    }

    fn engine(&self) -> &'static str {
        "memory"
    }
}
