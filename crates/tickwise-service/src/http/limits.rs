//! The API's limits, and their enforcement while a body arrives: the
//! declared length checked before a byte is read, the bytes while they
//! come, the byte budget shared by every body in flight (see
//! [`crate::budget`]) and the body deadline.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use http_body_util::BodyExt as _;

use super::{HttpStats, error};
use crate::batch::{BATCH_CONTENT_TYPE, BatchError, BatchReader};
use crate::budget::{ByteBudget, Reservation};

/// The limits of the replay API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiLimits {
    /// Largest upload accepted (`413` above it).
    pub max_upload_bytes: usize,
    /// Deadline for receiving a whole upload body (`408` after it).
    pub body_deadline: Duration,
    /// The longest `?wait=` honoured.
    pub max_wait: Duration,
    /// Largest batch upload (`POST /v1/batches`), framing included
    /// (`413` above it, checked while receiving). Each replay in it is
    /// still held to `max_upload_bytes`.
    pub max_batch_bytes: usize,
    /// The most replays in one batch, and ids in one `GET /v1/replays?ids=`.
    pub max_batch_replays: usize,
    /// Bytes all upload bodies in flight may hold together (`503` +
    /// `Retry-After` when spent).
    pub body_budget_bytes: usize,
}

impl Default for ApiLimits {
    /// 16 MiB uploads, 20 s per body, waits up to 30 s, batches of at
    /// most 256 replays and 64 MiB, 256 MiB for all bodies in flight.
    fn default() -> ApiLimits {
        ApiLimits {
            max_upload_bytes: 16 * 1024 * 1024,
            body_deadline: Duration::from_secs(20),
            max_wait: Duration::from_secs(30),
            max_batch_bytes: 64 * 1024 * 1024,
            max_batch_replays: 256,
            body_budget_bytes: 256 * 1024 * 1024,
        }
    }
}

pub(super) enum BodyError {
    TooLarge,
    Timeout,
    Broken,
    /// The shared byte budget for bodies in flight is spent.
    Busy,
}

/// The `Content-Length` a request declares, if any (a malformed one is
/// left to hyper, which refuses it before the handler runs).
pub(super) fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// Grows `held` (and then the buffer, exactly) so that `need` bytes fit a
/// buffer holding `len` of `capacity`: a chunked body doubles its buffer
/// up to `limit`, and pays the budget for every byte of capacity first.
fn make_room(
    held: &mut Reservation,
    len: usize,
    capacity: usize,
    need: usize,
    limit: usize,
) -> Result<Option<usize>, BodyError> {
    if need <= capacity {
        return Ok(None);
    }
    let target = need
        .max(capacity.saturating_mul(2))
        .max(4096)
        .min(limit.max(need));
    let more = target - capacity;
    if !held.grow(more) {
        return Err(BodyError::Busy);
    }
    Ok(Some(target - len))
}

/// Reads the body, refusing it as soon as it passes `limit` bytes. A
/// declared length is reserved from `budget` at once and the buffer is
/// allocated at exactly that size; a chunked body reserves as it grows.
/// The reservation travels with the bytes until they are queued.
pub(super) async fn read_body(
    body: Body,
    declared: Option<u64>,
    limit: usize,
    budget: &Arc<ByteBudget>,
    deadline: Duration,
) -> Result<(Bytes, Reservation), BodyError> {
    let declared = declared.map(|d| usize::try_from(d).unwrap_or(usize::MAX));
    if declared.is_some_and(|d| d > limit) {
        return Err(BodyError::TooLarge);
    }
    let start = declared.unwrap_or(0);
    let mut held = budget.reserve(start).ok_or(BodyError::Busy)?;
    let read = async move {
        let mut body = body;
        let mut buf: Vec<u8> = Vec::with_capacity(start);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyError::Broken)?;
            if let Ok(data) = frame.into_data() {
                let need = buf.len() + data.len();
                if need > limit {
                    return Err(BodyError::TooLarge);
                }
                if let Some(extra) = make_room(&mut held, buf.len(), buf.capacity(), need, limit)? {
                    buf.reserve_exact(extra);
                }
                buf.extend_from_slice(&data);
            }
        }
        Ok((Bytes::from(buf), held))
    };
    tokio::time::timeout(deadline, read)
        .await
        .unwrap_or(Err(BodyError::Timeout))
}

/// `503` + `Retry-After` for an upload refused because the bodies in
/// flight hold the whole byte budget.
pub(super) fn busy(stats: &HttpStats, budget: &ByteBudget) -> Response {
    stats.busy.fetch_add(1, Ordering::Relaxed);
    let mut r = error(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!(
            "the upload bodies in flight hold the whole budget of {} bytes; retry shortly",
            budget.limit()
        ),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// `413` for an upload over `limit` bytes (declared or received), counted.
pub(super) fn too_large(stats: &HttpStats, what: &str, limit: usize) -> Response {
    stats.too_large.fetch_add(1, Ordering::Relaxed);
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("{what} is larger than the limit of {limit} bytes"),
    )
}

pub(super) enum BatchBodyError {
    Batch(BatchError),
    Timeout,
    Broken,
    Busy,
}

/// Reads a batch body through a [`BatchReader`] within `deadline`, its
/// buffer paid for from `held` (see [`read_body`]).
pub(super) async fn read_batch(
    body: Body,
    reader: BatchReader,
    mut held: Reservation,
    deadline: Duration,
) -> Result<(Vec<Bytes>, Reservation), BatchBodyError> {
    let limit = reader.max_total();
    let read = async move {
        let mut body = body;
        let mut reader = reader;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BatchBodyError::Broken)?;
            if let Ok(data) = frame.into_data() {
                let (len, capacity) = reader.buffer();
                // Only bytes within the total are buffered.
                let need = (len + data.len()).min(limit);
                match make_room(&mut held, len, capacity, need, limit) {
                    Ok(Some(extra)) => reader.reserve_exact(extra),
                    Ok(None) => {}
                    Err(_) => return Err(BatchBodyError::Busy),
                }
                reader.feed(&data).map_err(BatchBodyError::Batch)?;
            }
        }
        let replays = reader.finish().map_err(BatchBodyError::Batch)?;
        Ok((replays, held))
    };
    tokio::time::timeout(deadline, read)
        .await
        .unwrap_or(Err(BatchBodyError::Timeout))
}

/// Whether a batch upload says what it is: `Content-Type:
/// application/x-tickwise-batch` (parameters and case aside). Anything
/// else is refused with `415`, so a misdirected JSON or multipart body is
/// never parsed as frames.
pub(super) fn is_batch_type(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(BATCH_CONTENT_TYPE))
}
