//! The endpoints: uploads (one replay or a batch), statuses (one or many),
//! `/healthz` and `/metrics`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Deserialize;

use super::limits::{
    BatchBodyError, BodyError, busy, declared_length, is_batch_type, read_batch, read_body,
    too_large,
};
use super::wait::await_verdicts;
use super::{AppState, HttpStats, SESSION_HEADER, error};
use crate::batch::{BATCH_CONTENT_TYPE, BatchError, BatchReader};
use crate::conn::{ConnTrack, Peer};
use crate::job::{JobId, JobIdError, JobMeta, JobRecord, JobStatus};
use crate::metrics;
use crate::queue::{Queue, QueueError, Submitted};

/// Uploads (or batches) up to this many bytes are hashed and checked on
/// the async thread that received them; larger ones on the blocking pool.
/// At about 1 GB/s for the integrity checksum (the slower of the two
/// passes) that holds an async thread for at most ~0.15 ms, while the
/// hand-off to the pool and back costs two thread wake-ups for every
/// upload: for 10-minute island replays (33–72 KB, verified in ~0.4 ms)
/// it was a few percent of the service's CPU.
const INLINE_CHECK_BYTES: usize = 128 * 1024;

/// Batches up to this many bytes are hashed for their ids on the async
/// thread (BLAKE3 runs at several GB/s here: ~0.2 ms at most); larger ones
/// on the blocking pool.
const INLINE_HASH_BYTES: usize = 1024 * 1024;

fn json(status: StatusCode, record: &JobRecord) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        record.to_json(),
    )
        .into_response()
}

/// The client's address, as [`crate::conn::serve`] recorded it.
fn peer_ip(request: &Request) -> Option<std::net::IpAddr> {
    request.extensions().get::<Peer>().map(|p| p.0.ip())
}

/// Marks the connection as waiting on its client while the body is read
/// (see [`crate::conn`]: such a connection may be shed once stale).
fn reading(request: &Request) -> Option<crate::conn::ReadingGuard> {
    request
        .extensions()
        .get::<Arc<ConnTrack>>()
        .map(ConnTrack::reading)
}

fn queue_error(stats: &HttpStats, e: &QueueError) -> Response {
    match e {
        QueueError::Full { .. } | QueueError::BytesFull { .. } | QueueError::ClientBusy { .. } => {
            if matches!(e, QueueError::ClientBusy { .. }) {
                stats.client_busy.fetch_add(1, Ordering::Relaxed);
            } else {
                stats.queue_full.fetch_add(1, Ordering::Relaxed);
            }
            let retry_after = e.retry_after().unwrap_or(Duration::from_secs(1));
            let mut r = error(StatusCode::TOO_MANY_REQUESTS, &e.to_string());
            let secs = retry_after.as_secs().max(1).to_string();
            if let Ok(v) = HeaderValue::from_str(&secs) {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            r
        }
        _ => {
            stats.backend_errors.fetch_add(1, Ordering::Relaxed);
            let mut r = error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string());
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            r
        }
    }
}

/// The query of `POST /v1/replays`.
#[derive(Debug, Deserialize)]
pub struct UploadQuery {
    /// Seconds to wait for the verdict before answering.
    pub wait: Option<String>,
}

fn parse_wait(q: Option<&str>, max: Duration) -> Result<Duration, Box<Response>> {
    let Some(q) = q else {
        return Ok(Duration::ZERO);
    };
    let secs: u64 = q.parse().map_err(|_| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            "wait must be a whole number of seconds",
        ))
    })?;
    Ok(Duration::from_secs(secs).min(max))
}

fn session_ms(headers: &HeaderMap) -> Result<Option<u64>, Box<Response>> {
    match headers.get(SESSION_HEADER) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(Some)
            .ok_or_else(|| {
                Box::new(error(
                    StatusCode::BAD_REQUEST,
                    "tickwise-session-ms must be a whole number of milliseconds",
                ))
            }),
    }
}

/// An upload's (single or batch) `wait` query and session header, checked
/// in that order.
fn upload_params(
    query: &UploadQuery,
    headers: &HeaderMap,
    max_wait: Duration,
) -> Result<(Duration, Option<u64>), Box<Response>> {
    Ok((
        parse_wait(query.wait.as_deref(), max_wait)?,
        session_ms(headers)?,
    ))
}

pub(super) async fn upload<Q: Queue>(
    State(state): State<Arc<AppState<Q>>>,
    Query(query): Query<UploadQuery>,
    request: Request,
) -> Response {
    let (wait, session) = match upload_params(&query, request.headers(), state.limits.max_wait) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let declared = declared_length(request.headers());
    let source = peer_ip(&request);
    let reading = reading(&request);
    let body = request.into_body();
    let (bytes, held) = match read_body(
        body,
        declared,
        state.limits.max_upload_bytes,
        &state.budget,
        state.limits.body_deadline,
    )
    .await
    {
        Ok(b) => b,
        Err(BodyError::TooLarge) => {
            return too_large(&state.stats, "upload", state.limits.max_upload_bytes);
        }
        Err(BodyError::Busy) => return busy(&state.stats, &state.budget),
        Err(BodyError::Timeout) => {
            state.stats.body_timeouts.fetch_add(1, Ordering::Relaxed);
            return error(
                StatusCode::REQUEST_TIMEOUT,
                "the upload did not arrive within the body deadline",
            );
        }
        Err(BodyError::Broken) => return error(StatusCode::BAD_REQUEST, "the upload broke off"),
    };
    drop(reading);
    let id = JobId::of(&bytes);
    let mut meta = JobMeta::now(session);
    meta.source = source;

    // Known already? Then no need to even look at the bytes.
    let submitted = match state.queue.status(id).await {
        Ok(Some(record)) if record.status.is_final() => Submitted::Done(record),
        Ok(Some(record)) => Submitted::Duplicate(record),
        Ok(None) => {
            let verifier = state.verifier.clone();
            let checked = bytes.clone();
            // The checks hash the whole upload (its integrity checksum): a
            // 16 MiB upload goes off the async threads, but a small one is
            // checked here, since the hand-off to the blocking pool and back
            // (two thread wake-ups) cost more than hashing it.
            let pre = if bytes.len() <= INLINE_CHECK_BYTES {
                Ok(verifier.precheck(&checked))
            } else {
                tokio::task::spawn_blocking(move || verifier.precheck(&checked)).await
            };
            match pre {
                Ok(Ok(admitted)) => {
                    let submitted = if wait > Duration::ZERO {
                        state.queue.submit_waiting(id, bytes, admitted, meta).await
                    } else {
                        state.queue.submit(id, bytes, admitted, meta).await
                    };
                    match submitted {
                        Ok(s) => s,
                        Err(e) => return queue_error(&state.stats, &e),
                    }
                }
                Ok(Err(verdict)) => {
                    state.stats.rejected_early.fetch_add(1, Ordering::Relaxed);
                    let mut record = JobRecord::of_verdict(id, &verdict);
                    record.attempts = Some(0);
                    match state.queue.store_verdict(record).await {
                        Ok(r) => Submitted::Done(r),
                        Err(e) => return queue_error(&state.stats, &e),
                    }
                }
                Err(_) => {
                    return error(StatusCode::INTERNAL_SERVER_ERROR, "pre-check failed");
                }
            }
        }
        Err(e) => return queue_error(&state.stats, &e),
    };
    // Queued (the queue counts its bytes from here) or refused: the body
    // no longer counts against the in-flight budget.
    drop(held);
    let pending = match submitted {
        Submitted::Done(record) => {
            state.stats.duplicates.fetch_add(1, Ordering::Relaxed);
            return json(StatusCode::OK, &record);
        }
        Submitted::Verified(record) => {
            state.stats.accepted.fetch_add(1, Ordering::Relaxed);
            return json(StatusCode::OK, &record);
        }
        Submitted::Queued => {
            state.stats.accepted.fetch_add(1, Ordering::Relaxed);
            JobRecord::bare(id.to_string(), JobStatus::Queued)
        }
        Submitted::Duplicate(record) => {
            state.stats.duplicates.fetch_add(1, Ordering::Relaxed);
            JobRecord::bare(id.to_string(), record.status)
        }
    };
    if wait > Duration::ZERO {
        let mut records = [pending];
        if let Err(e) = await_verdicts(&state.queue, &[id], &mut records, wait).await {
            return queue_error(&state.stats, &e);
        }
        let [record] = records;
        let code = if record.status.is_final() {
            StatusCode::OK
        } else {
            StatusCode::ACCEPTED
        };
        return json(code, &record);
    }
    json(StatusCode::ACCEPTED, &pending)
}

fn records_json(records: &[&JobRecord]) -> String {
    let mut out = String::from("{\"replays\":[");
    for (i, r) in records.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&r.to_json());
    }
    out.push_str("]}");
    out
}

/// `POST /v1/batches`: many replays in one request, each its own job (id =
/// [`JobId::of`] its bytes, idempotent) with its own verdict. Answers
/// `{"replays": [record, …]}` in the order of the frames (a replay that
/// appears twice is one job and shows the same record twice): `200` when
/// every record is a verdict, else `202`.
pub(super) async fn batch_upload<Q: Queue>(
    State(state): State<Arc<AppState<Q>>>,
    Query(query): Query<UploadQuery>,
    request: Request,
) -> Response {
    let (wait, session) = match upload_params(&query, request.headers(), state.limits.max_wait) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    if !is_batch_type(request.headers()) {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &format!("a batch upload needs Content-Type: {BATCH_CONTENT_TYPE}"),
        );
    }
    let limits = state.limits;
    let source = peer_ip(&request);
    let declared =
        declared_length(request.headers()).map(|d| usize::try_from(d).unwrap_or(usize::MAX));
    if declared.is_some_and(|d| d > limits.max_batch_bytes) {
        return too_large(&state.stats, "the batch", limits.max_batch_bytes);
    }
    let start = declared.unwrap_or(0);
    let Some(held) = state.budget.reserve(start) else {
        return busy(&state.stats, &state.budget);
    };
    let reading = reading(&request);
    let reader = BatchReader::with_capacity(
        limits.max_upload_bytes,
        limits.max_batch_replays,
        limits.max_batch_bytes,
        start,
    );
    let (replays, held) = match read_batch(request.into_body(), reader, held, limits.body_deadline)
        .await
    {
        Ok(r) => r,
        Err(BatchBodyError::Batch(e @ BatchError::Truncated { .. } | e @ BatchError::Empty)) => {
            return error(StatusCode::BAD_REQUEST, &e.to_string());
        }
        Err(BatchBodyError::Batch(e)) => {
            state.stats.too_large.fetch_add(1, Ordering::Relaxed);
            return error(StatusCode::PAYLOAD_TOO_LARGE, &e.to_string());
        }
        Err(BatchBodyError::Timeout) => {
            state.stats.body_timeouts.fetch_add(1, Ordering::Relaxed);
            return error(
                StatusCode::REQUEST_TIMEOUT,
                "the batch did not arrive within the body deadline",
            );
        }
        Err(BatchBodyError::Busy) => return busy(&state.stats, &state.budget),
        Err(BatchBodyError::Broken) => {
            return error(StatusCode::BAD_REQUEST, "the batch broke off");
        }
    };
    drop(reading);
    state.stats.batches.fetch_add(1, Ordering::Relaxed);
    let mut meta = JobMeta::now(session);
    meta.source = source;
    // Hashing 16 MiB per replay is not free: off the async threads, unless
    // the batch is small (see `INLINE_HASH_BYTES`, `INLINE_CHECK_BYTES`).
    let total: usize = replays.iter().map(Bytes::len).sum();
    let hash = move || {
        let ids: Vec<JobId> = replays.iter().map(|b| JobId::of(b)).collect();
        let mut seen = std::collections::BTreeSet::new();
        let distinct: Vec<(JobId, Bytes)> = ids
            .iter()
            .zip(replays)
            .filter(|(id, _)| seen.insert(**id))
            .map(|(id, b)| (*id, b))
            .collect();
        (ids, distinct)
    };
    let hashed = if total <= INLINE_HASH_BYTES {
        Ok(hash())
    } else {
        tokio::task::spawn_blocking(hash).await
    };
    let Ok((ids, distinct)) = hashed else {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "hashing failed");
    };
    let dupes_in_batch = (ids.len() - distinct.len()) as u64;
    state
        .stats
        .duplicates
        .fetch_add(dupes_in_batch, Ordering::Relaxed);
    let order: Vec<JobId> = distinct.iter().map(|(id, _)| *id).collect();
    // Known already? Those need no look at their bytes (as for one upload).
    let known = match state.queue.status_many(&order).await {
        Ok(k) => k,
        Err(e) => return queue_error(&state.stats, &e),
    };
    let mut records: Vec<JobRecord> = Vec::with_capacity(order.len());
    let mut unknown = Vec::new();
    for ((id, bytes), k) in distinct.into_iter().zip(known) {
        if let Some(r) = k {
            state.stats.duplicates.fetch_add(1, Ordering::Relaxed);
            records.push(r);
        } else {
            unknown.push((records.len(), id, bytes));
            records.push(JobRecord::bare(id.to_string(), JobStatus::Queued));
        }
    }
    let unknown_bytes: usize = unknown.iter().map(|(_, _, b)| b.len()).sum();
    let verifier = state.verifier.clone();
    let check = move || {
        unknown
            .into_iter()
            .map(|(at, id, bytes)| {
                let pre = verifier.precheck(&bytes);
                (at, id, bytes, pre)
            })
            .collect::<Vec<_>>()
    };
    let checked = if unknown_bytes <= INLINE_CHECK_BYTES {
        Ok(check())
    } else {
        tokio::task::spawn_blocking(check).await
    };
    let Ok(checked) = checked else {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "pre-check failed");
    };
    let mut fresh = Vec::new();
    let mut fresh_at = Vec::new();
    for (at, id, bytes, pre) in checked {
        match pre {
            Ok(admitted) => {
                fresh.push((id, bytes, admitted));
                fresh_at.push(at);
            }
            Err(verdict) => {
                state.stats.rejected_early.fetch_add(1, Ordering::Relaxed);
                let mut record = JobRecord::of_verdict(id, &verdict);
                record.attempts = Some(0);
                match state.queue.store_verdict(record).await {
                    Ok(r) => records[at] = r,
                    Err(e) => return queue_error(&state.stats, &e),
                }
            }
        }
    }
    match state.queue.submit_many(fresh, meta).await {
        Ok(submitted) => {
            for (at, s) in fresh_at.into_iter().zip(submitted) {
                match s {
                    Submitted::Queued => {
                        state.stats.accepted.fetch_add(1, Ordering::Relaxed);
                    }
                    Submitted::Duplicate(r) => {
                        state.stats.duplicates.fetch_add(1, Ordering::Relaxed);
                        records[at].status = r.status;
                    }
                    Submitted::Done(r) => {
                        state.stats.duplicates.fetch_add(1, Ordering::Relaxed);
                        records[at] = r;
                    }
                    // `submit_many` queues; a verdict reached on receipt
                    // is still a new job.
                    Submitted::Verified(r) => {
                        state.stats.accepted.fetch_add(1, Ordering::Relaxed);
                        records[at] = r;
                    }
                }
            }
        }
        Err(e) => return queue_error(&state.stats, &e),
    }
    drop(held);
    if wait > Duration::ZERO
        && let Err(e) = await_verdicts(&state.queue, &order, &mut records, wait).await
    {
        return queue_error(&state.stats, &e);
    }
    answer_many(&order, &records, &ids)
}

/// The records of `ids` (in request order, repeats included) from the
/// distinct `order`/`records`.
fn answer_many(order: &[JobId], records: &[JobRecord], ids: &[JobId]) -> Response {
    let index: std::collections::BTreeMap<JobId, usize> =
        order.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let picked: Vec<&JobRecord> = ids
        .iter()
        .filter_map(|id| index.get(id).map(|&i| &records[i]))
        .collect();
    let code = if records.iter().all(|r| r.status.is_final()) {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        records_json(&picked),
    )
        .into_response()
}

/// The query of `GET /v1/replays?ids=…`.
#[derive(Debug, Deserialize)]
pub struct ManyQuery {
    /// Job ids, comma-separated.
    pub ids: Option<String>,
    /// Seconds to wait until every one has a verdict.
    pub wait: Option<String>,
}

/// `GET /v1/replays?ids=ID,ID,…[&wait=S]`: many records in one request
/// (at most `max_batch_replays` ids), `{"replays": [...], "unknown": [...]}`;
/// with `wait`, answered as soon as all known ones have verdicts.
pub(super) async fn many_status<Q: Queue>(
    State(state): State<Arc<AppState<Q>>>,
    Query(query): Query<ManyQuery>,
) -> Response {
    let wait = match parse_wait(query.wait.as_deref(), state.limits.max_wait) {
        Ok(w) => w,
        Err(r) => return *r,
    };
    let Some(list) = query.ids.as_deref() else {
        return error(StatusCode::BAD_REQUEST, "give ids=ID,ID,...");
    };
    let mut ids = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        if ids.len() >= state.limits.max_batch_replays {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("at most {} ids per request", state.limits.max_batch_replays),
            );
        }
        let id = match JobId::parse(part) {
            Ok(id) => id,
            Err(e @ JobIdError::Retired) => {
                return error(StatusCode::GONE, &format!("{part}: {e}"));
            }
            Err(e) => return error(StatusCode::BAD_REQUEST, &format!("{part:?}: {e}")),
        };
        ids.push(id);
    }
    let mut seen = std::collections::BTreeSet::new();
    ids.retain(|id| seen.insert(*id));
    let found = match state.queue.status_many(&ids).await {
        Ok(f) => f,
        Err(e) => return queue_error(&state.stats, &e),
    };
    let mut known = Vec::new();
    let mut records = Vec::new();
    let mut unknown = Vec::new();
    for (id, r) in ids.iter().zip(found) {
        match r {
            Some(r) => {
                known.push(*id);
                records.push(r);
            }
            None => unknown.push(id.to_string()),
        }
    }
    if wait > Duration::ZERO
        && let Err(e) = await_verdicts(&state.queue, &known, &mut records, wait).await
    {
        return queue_error(&state.stats, &e);
    }
    let refs: Vec<&JobRecord> = records.iter().collect();
    let mut body = records_json(&refs);
    body.pop(); // the closing brace
    body.push_str(",\"unknown\":");
    body.push_str(&serde_json::to_string(&unknown).unwrap_or_else(|_| "[]".into()));
    body.push('}');
    let code = if records.iter().all(|r| r.status.is_final()) {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

pub(super) async fn job_status<Q: Queue>(
    State(state): State<Arc<AppState<Q>>>,
    Path(id): Path<String>,
) -> Response {
    let id = match JobId::parse(&id) {
        Ok(id) => id,
        // An id of the old form names no job any more: say why (`410`),
        // rather than "unknown".
        Err(e @ JobIdError::Retired) => return error(StatusCode::GONE, &format!("{id}: {e}")),
        Err(_) => return error(StatusCode::NOT_FOUND, "unknown job id"),
    };
    match state.queue.status(id).await {
        Ok(Some(record)) => json(StatusCode::OK, &record),
        Ok(None) => error(StatusCode::NOT_FOUND, "unknown job id"),
        Err(e) => queue_error(&state.stats, &e),
    }
}

pub(super) async fn healthz<Q: Queue>(State(state): State<Arc<AppState<Q>>>) -> Response {
    match state.queue.stats().await {
        Ok(s) => {
            let body = serde_json::json!({
                "status": "ok",
                "queue": state.queue.engine(),
                "queued": s.queued,
                "running": s.running,
                "capacity": s.capacity,
                "sims": state.verifier.catalog().ids().collect::<Vec<_>>(),
            });
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response()
        }
        Err(e) => queue_error(&state.stats, &e),
    }
}

pub(super) async fn metrics_text<Q: Queue>(State(state): State<Arc<AppState<Q>>>) -> Response {
    match state.queue.stats().await {
        Ok(s) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            metrics::render(&s, &state.stats, &state.budget, state.queue.engine()),
        )
            .into_response(),
        Err(e) => queue_error(&state.stats, &e),
    }
}
