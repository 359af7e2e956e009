//! Long polling: a request with `?wait=` sleeps on the queue's verdict
//! notifications (or its poll interval) and re-reads its open records.

use std::time::Duration;

use crate::job::{JobId, JobRecord};
use crate::queue::{Queue, QueueError, Watch};

/// Waits up to `wait` until every record in `records` (those of `ids`, in
/// order) is final, refreshing them in place.
///
/// Where a status is a lock away (memory) the waiter reads the records in
/// order and sleeps on the first one still open until exactly its verdict
/// is stored ([`Queue::watch`]): verdicts come roughly in upload order, so
/// each wake-up costs about one lookup however large the batch, and a
/// verdict wakes only the requests waiting for it. Where it is a round
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

/// The records in order, each waited for on its own ([`Queue::watch`])
/// until `deadline`. A job the queue does not know (or an engine that
/// cannot watch) ends the wait: nothing would wake it.
async fn await_each<Q: Queue>(
    queue: &Q,
    ids: &[JobId],
    records: &mut [JobRecord],
    deadline: tokio::time::Instant,
) {
    for (id, record) in ids.iter().zip(records.iter_mut()) {
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
