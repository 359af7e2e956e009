//! Long polling: a request with `?wait=` sleeps on the queue's verdict
//! notification (or its poll interval) and re-reads its open records.

use std::time::Duration;

use crate::job::{JobId, JobRecord};
use crate::queue::{Queue, QueueError};

/// Waits up to `wait` until every record in `records` (those of `ids`, in
/// order) is final, refreshing them in place.
///
/// The waiter sleeps until the queue announces a stored verdict (or
/// [`Queue::poll_interval`] passes without one), then re-reads. Where a
/// status is a lock away (memory) it reads the records in order, stopping
/// at the first still open: verdicts come roughly in upload order, so each
/// wake-up costs about one lookup however large the batch. Where it is a
/// round trip (Redis) every open record is read in one call. Either way the
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
    let mut push = queue.verdicts();
    let local = queue.status_is_local();
    let mut next = 0;
    loop {
        if let Some(rx) = push.as_mut() {
            // Everything stored before this point is seen below; anything
            // later wakes `changed()`.
            rx.borrow_and_update();
        }
        if local {
            while next < ids.len() {
                if !records[next].status.is_final() {
                    match queue.status(ids[next]).await? {
                        Some(r) if r.status.is_final() => records[next] = r,
                        _ => break,
                    }
                }
                next += 1;
            }
        } else {
            refresh_open(queue, ids, records).await?;
            next = records.iter().take_while(|r| r.status.is_final()).count();
        }
        if next >= ids.len() {
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
