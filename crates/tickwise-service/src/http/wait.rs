//! Long polling: a request with `?wait=` sleeps on the queue's verdict
//! notifications (or its poll interval) and re-reads its open records.

use std::time::Duration;

use crate::job::{JobId, JobRecord};
use crate::queue::{Queue, QueueError, Watch};

/// Waits up to `wait` until every record in `records` (those of `ids`, in
/// order) is final, refreshing them in place.
///
/// Where a status is a lock away (memory) the waiter reads the records
/// from the last to the first and sleeps on the first one still open until
/// exactly its verdict is stored ([`Queue::watch`]): verdicts come roughly
/// in upload order, so by the time the last upload's verdict wakes it the
/// others are mostly stored, and a batch costs one or two wake-ups of the
/// executor, not one per replay (watching from the first, a batch of 8
/// cost 1.7 thread switches per replay, from the last 0.9). A verdict
/// wakes only the requests waiting for it. Where it is a round
/// trip (Redis) the waiter sleeps until the queue announces any stored
/// verdict ([`Queue::verdicts`]) and reads every open record in one call.
/// Either way it also re-reads every [`Queue::poll_interval`], and the
/// open records are read once more at the end, so a `202` shows whether
/// each is queued or running.
///
/// # Errors
///
/// The queue's error.
pub async fn await_verdicts<Q: Queue>(
    queue: &Q,
    ids: &[JobId],
    records: &mut [JobRecord],
    wait: Duration,
) -> Result<(), QueueError> {
    let deadline = tokio::time::Instant::now() + wait;
    if queue.status_is_local() {
        await_each(queue, ids, records, deadline).await;
        return refresh_open(queue, ids, records).await;
    }
    let mut push = queue.verdicts();
    loop {
        if let Some(rx) = push.as_mut() {
            // Everything stored before this point is seen below; anything
            // later wakes `changed()`.
            rx.borrow_and_update();
        }
        refresh_open(queue, ids, records).await?;
        if records.iter().all(|r| r.status.is_final()) {
            return Ok(());
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            break;
        }
        let nap = queue.poll_interval().min(deadline - now);
        match push.as_mut() {
            Some(rx) => {
                if let Ok(Err(_)) = tokio::time::timeout(nap, rx.changed()).await {
                    push = None; // the notifier is gone: poll from now on
                }
            }
            None => tokio::time::sleep(nap).await,
        }
    }
    refresh_open(queue, ids, records).await
}

/// The records from the last to the first, each waited for on its own
/// ([`Queue::watch`]) until `deadline`. A job the queue does not know (or
/// an engine that cannot watch) ends the wait: nothing would wake it.
async fn await_each<Q: Queue>(
    queue: &Q,
    ids: &[JobId],
    records: &mut [JobRecord],
    deadline: tokio::time::Instant,
) {
    for (id, record) in ids.iter().zip(records.iter_mut()).rev() {
        while !record.status.is_final() {
            match queue.watch(*id) {
                Some(Watch::Final(r)) => *record = *r,
                Some(Watch::Open(woken)) => {
                    let now = tokio::time::Instant::now();
                    if now >= deadline {
                        return;
                    }
                    // Woken, timed out, or the queue went away: look again.
                    let nap = queue.poll_interval().min(deadline - now);
                    let _ = tokio::time::timeout(nap, woken).await;
                }
                Some(Watch::Unknown) | None => return,
            }
        }
    }
}

/// Re-reads the records that are not final, in one queue call.
async fn refresh_open<Q: Queue>(
    queue: &Q,
    ids: &[JobId],
    records: &mut [JobRecord],
) -> Result<(), QueueError> {
    let open: Vec<usize> = (0..ids.len())
        .filter(|&i| !records[i].status.is_final())
        .collect();
    if open.is_empty() {
        return Ok(());
    }
    let asked: Vec<JobId> = open.iter().map(|&i| ids[i]).collect();
    let found = queue.status_many(&asked).await?;
    for (i, r) in open.into_iter().zip(found) {
        if let Some(r) = r {
            records[i] = r;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::oneshot;

    use super::*;
    use crate::job::JobStatus;
    use crate::queue::{QueueStats, Submitted};
    use tickwise_catalog::Admitted;

    /// Statuses in a map; counts the waits [`Queue::watch`] answered
    /// `Open`, each of which is a wake-up of the waiting request.
    #[derive(Default)]
    struct Fake {
        records: Mutex<BTreeMap<JobId, JobRecord>>,
        waiters: Mutex<BTreeMap<JobId, Vec<oneshot::Sender<()>>>>,
        opens: AtomicUsize,
    }

    impl Fake {
        fn finish(&self, id: JobId) {
            let mut r = self.records.lock().unwrap();
            r.insert(id, JobRecord::bare(id.to_string(), JobStatus::Ok));
            for w in self.waiters.lock().unwrap().remove(&id).unwrap_or_default() {
                let _ = w.send(());
            }
        }
    }

    impl Queue for Fake {
        async fn submit(
            &self,
            _: JobId,
            _: bytes::Bytes,
            _: Admitted,
            _: crate::job::JobMeta,
        ) -> Result<Submitted, QueueError> {
            unreachable!("waits only")
        }
        async fn store_verdict(&self, _: JobRecord) -> Result<JobRecord, QueueError> {
            unreachable!("waits only")
        }
        async fn status(&self, id: JobId) -> Result<Option<JobRecord>, QueueError> {
            Ok(self.records.lock().unwrap().get(&id).cloned())
        }
        async fn submit_many(
            &self,
            _: Vec<(JobId, bytes::Bytes, Admitted)>,
            _: crate::job::JobMeta,
        ) -> Result<Vec<Submitted>, QueueError> {
            unreachable!("waits only")
        }
        async fn status_many(&self, ids: &[JobId]) -> Result<Vec<Option<JobRecord>>, QueueError> {
            let r = self.records.lock().unwrap();
            Ok(ids.iter().map(|id| r.get(id).cloned()).collect())
        }
        fn verdicts(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
            None
        }
        fn status_is_local(&self) -> bool {
            true
        }
        fn watch(&self, id: JobId) -> Option<Watch> {
            let records = self.records.lock().unwrap();
            if let Some(r) = records.get(&id) {
                return Some(Watch::Final(Box::new(r.clone())));
            }
            let (tx, rx) = oneshot::channel();
            self.waiters.lock().unwrap().entry(id).or_default().push(tx);
            self.opens.fetch_add(1, Ordering::Relaxed);
            Some(Watch::Open(rx))
        }
        async fn stats(&self) -> Result<QueueStats, QueueError> {
            Ok(QueueStats::default())
        }
        fn poll_interval(&self) -> Duration {
            Duration::from_secs(60)
        }
        fn engine(&self) -> &'static str {
            "fake"
        }
    }

    /// A batch of 8 whose verdicts are stored in upload order, each while
    /// the waiter sleeps on a job: it wakes once (for the last), not once
    /// per replay, and ends with every verdict.
    #[tokio::test]
    async fn a_batch_in_upload_order_wakes_its_waiter_once() {
        let q = std::sync::Arc::new(Fake::default());
        let ids: Vec<JobId> = (0u8..8).map(|i| JobId::of(&[i])).collect();
        let mut records: Vec<JobRecord> = ids
            .iter()
            .map(|id| JobRecord::bare(id.to_string(), JobStatus::Queued))
            .collect();
        let (q2, ids2) = (std::sync::Arc::clone(&q), ids.clone());
        let store = tokio::spawn(async move {
            for id in ids2 {
                // Each verdict only once the waiter sleeps on some job: a
                // waiter that watched the first open job would have to come
                // back for the next one before it is stored.
                let asleep = async {
                    while q2.waiters.lock().unwrap().is_empty() {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                };
                tokio::time::timeout(Duration::from_secs(10), asleep)
                    .await
                    .expect("the waiter sleeps on a job");
                q2.finish(id);
            }
        });
        await_verdicts(&*q, &ids, &mut records, Duration::from_secs(20))
            .await
            .unwrap();
        store.await.unwrap();
        assert!(records.iter().all(|r| r.status == JobStatus::Ok));
        assert_eq!(q.opens.load(Ordering::Relaxed), 1);
    }
}
