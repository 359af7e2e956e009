//! What waits, and its bounds: the two lanes (clients taking turns within
//! each), every job's slot from upload to verdict, and the admission checks
//! an upload passes before it is queued (jobs, bytes, a client's work).

use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;
use std::time::Duration;

use bytes::Bytes;
use tickwise_catalog::Admitted;

use super::MemoryConfig;
use crate::job::{JobId, JobMeta, JobRecord};
use crate::queue::{QueueError, QueueStats};

/// Jobs of one lane, in turns between clients: each client's jobs in
/// upload order, the clients round-robin.
#[derive(Debug, Default)]
pub(super) struct Lane {
    by_client: BTreeMap<Option<IpAddr>, VecDeque<Job>>,
    turns: VecDeque<Option<IpAddr>>,
    pub(super) len: usize,
}

impl Lane {
    pub(super) fn push(&mut self, job: Job) {
        let client = job.meta.source;
        let queue = self.by_client.entry(client).or_default();
        if queue.is_empty() {
            self.turns.push_back(client);
        }
        queue.push_back(job);
        self.len += 1;
    }

    pub(super) fn pop(&mut self) -> Option<Job> {
        let client = self.turns.pop_front()?;
        let queue = self.by_client.get_mut(&client)?;
        let job = queue.pop_front()?;
        if queue.is_empty() {
            self.by_client.remove(&client);
        } else {
            self.turns.push_back(client);
        }
        self.len -= 1;
        Some(job)
    }
}

#[derive(Debug)]
pub(super) enum Slot {
    Queued { attempts: u32 },
    Running { attempts: u32 },
    Done(Box<JobRecord>),
}

#[derive(Debug)]
pub(super) struct Job {
    pub(super) id: JobId,
    /// The upload, as received (shared, never copied).
    pub(super) bytes: Bytes,
    pub(super) meta: JobMeta,
    pub(super) work: u64,
    /// What the upload's checks read (its header): the worker does not
    /// read it or hash the file again.
    pub(super) admitted: Admitted,
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) small: Lane,
    pub(super) large: Lane,
    /// Bytes of the jobs waiting or running.
    pub(super) bytes: u64,
    /// Work units waiting or running, per client.
    pub(super) client_work: BTreeMap<Option<IpAddr>, u64>,
    pub(super) slots: BTreeMap<JobId, Slot>,
    pub(super) done_order: VecDeque<JobId>,
    pub(super) running: u64,
    /// Verification threads asleep on
    /// [`Shared::work`](super::Shared::work): an upload wakes at most this
    /// many (a wake-up of a thread that is busy anyway is a system call for
    /// nothing).
    pub(super) idle: usize,
    pub(super) stats: QueueStats,
    pub(super) dead_letters: Vec<(JobId, String)>,
    /// Requests waiting for a job's verdict
    /// ([`Queue::watch`](crate::queue::Queue::watch)), woken when it is
    /// stored. At most one live entry per waiting request: closed ones
    /// (requests gone) are dropped whenever the list grows.
    pub(super) watchers: BTreeMap<JobId, Vec<tokio::sync::oneshot::Sender<()>>>,
    pub(super) closed: bool,
}

impl State {
    pub(super) fn waiting(&self) -> u64 {
        (self.small.len + self.large.len) as u64
    }

    /// Refuses `fresh` new jobs of `bytes` bytes and the given work per
    /// client when they do not fit.
    pub(super) fn admit(
        &self,
        config: &MemoryConfig,
        fresh: u64,
        bytes: u64,
        work: &BTreeMap<Option<IpAddr>, (u64, u64)>,
    ) -> Result<(), QueueError> {
        let depth = self.waiting() + self.running;
        let capacity = config.capacity as u64;
        if fresh > 0 && depth + fresh > capacity {
            return Err(QueueError::Full {
                depth,
                capacity,
                retry_after: Duration::from_secs(1),
            });
        }
        let limit = config.max_queued_bytes as u64;
        if fresh > 0 && self.bytes > 0 && self.bytes.saturating_add(bytes) > limit {
            return Err(QueueError::BytesFull {
                bytes: self.bytes,
                limit,
                retry_after: Duration::from_secs(1),
            });
        }
        for (client, &(jobs, job)) in work {
            let had = self.client_work.get(client).copied().unwrap_or(0);
            // A client with nothing waiting may always queue one job.
            if (had > 0 || jobs > 1) && had.saturating_add(job) > config.max_client_work {
                return Err(QueueError::ClientBusy {
                    work: had,
                    job,
                    limit: config.max_client_work,
                    retry_after: Duration::from_secs(5),
                });
            }
        }
        Ok(())
    }

    pub(super) fn enqueue(&mut self, config: &MemoryConfig, job: Job) {
        self.account(&job);
        self.requeue(config, job);
    }

    /// A new job's bytes and work count from now until [`State::release`].
    pub(super) fn account(&mut self, job: &Job) {
        self.bytes += job.bytes.len() as u64;
        *self.client_work.entry(job.meta.source).or_default() += job.work;
    }

    /// Whether a job of `work` units, its request waiting, is verified on
    /// the thread that received it: inline verification is on, the job is
    /// small and within its limit, and no small job waits (it would jump
    /// the clients' turns).
    pub(super) fn takes_inline(&self, config: &MemoryConfig, work: u64) -> bool {
        config.inline_work > 0
            && work <= config.inline_work.min(config.small_job_work)
            && self.small.len == 0
    }

    /// Back into its lane (a retry keeps its accounting).
    pub(super) fn requeue(&mut self, config: &MemoryConfig, job: Job) {
        if job.work <= config.small_job_work {
            self.small.push(job);
        } else {
            self.large.push(job);
        }
    }

    /// The job is over (a verdict or a dead letter): its bytes and work
    /// no longer count.
    pub(super) fn release(&mut self, job: &Job) {
        self.bytes = self.bytes.saturating_sub(job.bytes.len() as u64);
        if let Some(w) = self.client_work.get_mut(&job.meta.source) {
            *w = w.saturating_sub(job.work);
            if *w == 0 {
                self.client_work.remove(&job.meta.source);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_verification_needs_the_setting_a_small_job_and_no_small_job_waiting() {
        let on = MemoryConfig {
            inline_work: 1_000,
            small_job_work: 5_000,
            ..MemoryConfig::default()
        };
        let off = MemoryConfig {
            inline_work: 0,
            ..on
        };
        let state = State::default();
        assert!(state.takes_inline(&on, 0));
        assert!(state.takes_inline(&on, 1_000));
        assert!(!state.takes_inline(&on, 1_001), "over the limit");
        assert!(!state.takes_inline(&off, 0), "0 is off, even for no work");
        let large_limit = MemoryConfig {
            inline_work: 10_000,
            ..on
        };
        assert!(state.takes_inline(&large_limit, 5_000));
        assert!(!state.takes_inline(&large_limit, 5_001), "a large job");
        let mut waiting = State::default();
        waiting.small.len = 1;
        assert!(
            !waiting.takes_inline(&on, 1),
            "a small job waits: its turn first"
        );
        waiting.small.len = 0;
        waiting.large.len = 3;
        assert!(
            waiting.takes_inline(&on, 1),
            "large jobs wait behind small ones anyway"
        );
    }
}
