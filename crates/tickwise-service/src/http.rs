//! The HTTP front end of `tickwise verifyd`, on axum + hyper + tokio.
//!
//! Every connection is bounded: a cap on open connections (the accept
//! loop waits for a free slot), a deadline for the request head (hyper's
//! `header_read_timeout`, which also bounds an idle keep-alive
//! connection), a deadline for the whole upload body, a deadline for the
//! whole request (tower-http `TimeoutLayer`), a lifetime per connection,
//! and the upload size limit checked while the body arrives (tower-http
//! `RequestBodyLimitLayer`: a `Content-Length` over it is refused before
//! a byte of the body is read).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde::Deserialize;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use crate::job::{JobId, JobMeta, JobRecord, JobStatus};
use crate::metrics;
use crate::queue::{Queue, QueueError, Submitted};
use crate::verifier::Verifier;

/// The request header carrying the session's real duration in
/// milliseconds (the optional wall-clock plausibility check).
pub const SESSION_HEADER: &str = "tickwise-session-ms";

/// Connection-level limits, shared by `verifyd` and `serve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// Open connections at most; the accept loop waits for a free slot.
    pub max_connections: usize,
    /// Deadline for receiving a request head (also the keep-alive idle
    /// limit between requests).
    pub header_deadline: Duration,
    /// Deadline for a whole request, from its head to the response.
    pub request_deadline: Duration,
    /// A connection is closed after this long, whatever it is doing.
    pub connection_lifetime: Duration,
}

impl Default for ConnLimits {
    /// 256 connections, 5 s for a head, 60 s per request, 10 min per
    /// connection.
    fn default() -> ConnLimits {
        ConnLimits {
            max_connections: 256,
            header_deadline: Duration::from_secs(5),
            request_deadline: Duration::from_secs(60),
            connection_lifetime: Duration::from_secs(600),
        }
    }
}

/// The limits of the replay API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiLimits {
    /// Largest upload accepted (`413` above it).
    pub max_upload_bytes: usize,
    /// Deadline for receiving a whole upload body (`408` after it).
    pub body_deadline: Duration,
    /// The longest `?wait=` honoured.
    pub max_wait: Duration,
}

impl Default for ApiLimits {
    /// 16 MiB uploads, 20 s per body, waits up to 30 s.
    fn default() -> ApiLimits {
        ApiLimits {
            max_upload_bytes: 16 * 1024 * 1024,
            body_deadline: Duration::from_secs(20),
            max_wait: Duration::from_secs(30),
        }
    }
}

/// Counters of the HTTP layer for `/metrics`.
#[derive(Debug, Default)]
pub struct HttpStats {
    /// Uploads accepted into the queue (new jobs).
    pub accepted: AtomicU64,
    /// Uploads of bytes already queued, running or verified.
    pub duplicates: AtomicU64,
    /// Uploads refused as too large (`413`).
    pub too_large: AtomicU64,
    /// Uploads refused because the queue was full (`429`).
    pub queue_full: AtomicU64,
    /// Uploads whose body did not arrive in time (`408`).
    pub body_timeouts: AtomicU64,
    /// Uploads given an `invalid` verdict without a worker.
    pub rejected_early: AtomicU64,
    /// Requests that failed on a queue backend error (`503`).
    pub backend_errors: AtomicU64,
}

/// What the handlers share.
#[derive(Debug)]
pub struct AppState<Q> {
    /// The queue.
    pub queue: Q,
    /// The cheap pre-checks (and the sim catalog).
    pub verifier: Verifier,
    /// API limits.
    pub limits: ApiLimits,
    /// HTTP counters.
    pub stats: HttpStats,
}

/// The replay API as an axum router over `queue`.
pub fn app<Q: Queue>(queue: Q, verifier: Verifier, limits: ApiLimits, conn: &ConnLimits) -> Router {
    let state = Arc::new(AppState {
        queue,
        verifier,
        limits,
        stats: HttpStats::default(),
    });
    Router::new()
        .route("/v1/replays", post(upload::<Q>))
        .route("/v1/replays/{id}", get(job_status::<Q>))
        .route("/healthz", get(healthz::<Q>))
        .route("/metrics", get(metrics_text::<Q>))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint") })
        .layer(RequestBodyLimitLayer::new(limits.max_upload_bytes))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            conn.request_deadline,
        ))
        .with_state(state)
}

/// A JSON error body.
pub fn error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn json(status: StatusCode, record: &JobRecord) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        record.to_json(),
    )
        .into_response()
}

fn queue_error(stats: &HttpStats, e: &QueueError) -> Response {
    match e {
        QueueError::Full { retry_after, .. } => {
            stats.queue_full.fetch_add(1, Ordering::Relaxed);
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

enum BodyError {
    TooLarge,
    Timeout,
    Broken,
}

/// Reads the body, refusing it as soon as it passes `limit` bytes.
async fn read_body(body: Body, limit: usize, deadline: Duration) -> Result<Bytes, BodyError> {
    let read = async move {
        let mut body = body;
        let mut buf = BytesMut::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                // The body-limit layer reports an overflow as an error.
                if format!("{e:?}").contains("LengthLimit") {
                    BodyError::TooLarge
                } else {
                    BodyError::Broken
                }
            })?;
            if let Ok(data) = frame.into_data() {
                if buf.len() + data.len() > limit {
                    return Err(BodyError::TooLarge);
                }
                buf.extend_from_slice(&data);
            }
        }
        Ok(buf.freeze())
    };
    tokio::time::timeout(deadline, read)
        .await
        .unwrap_or(Err(BodyError::Timeout))
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

async fn upload<Q: Queue>(
    State(state): State<Arc<AppState<Q>>>,
    Query(query): Query<UploadQuery>,
    request: Request,
) -> Response {
    let wait = match parse_wait(query.wait.as_deref(), state.limits.max_wait) {
        Ok(w) => w,
        Err(r) => return *r,
    };
    let session = match session_ms(request.headers()) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let body = request.into_body();
    let bytes = match read_body(
        body,
        state.limits.max_upload_bytes,
        state.limits.body_deadline,
    )
    .await
    {
        Ok(b) => b,
        Err(BodyError::TooLarge) => {
            state.stats.too_large.fetch_add(1, Ordering::Relaxed);
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "upload is larger than the limit of {} bytes",
                    state.limits.max_upload_bytes
                ),
            );
        }
        Err(BodyError::Timeout) => {
            state.stats.body_timeouts.fetch_add(1, Ordering::Relaxed);
            return error(
                StatusCode::REQUEST_TIMEOUT,
                "the upload did not arrive within the body deadline",
            );
        }
        Err(BodyError::Broken) => return error(StatusCode::BAD_REQUEST, "the upload broke off"),
    };
    let id = JobId::of(&bytes);
    let meta = JobMeta::now(session);

    // Known already? Then no need to even look at the bytes.
    let submitted = match state.queue.status(id).await {
        Ok(Some(record)) if record.status.is_final() => Submitted::Done(record),
        Ok(Some(record)) => Submitted::Duplicate(record),
        Ok(None) => {
            let verifier = state.verifier.clone();
            let checked = bytes.clone();
            // Header parsing is cheap but not free for a 16 MiB upload
            // (its checksum): keep it off the async threads.
            let pre = tokio::task::spawn_blocking(move || verifier.precheck(&checked)).await;
            match pre {
                Ok(Ok(())) => match state.queue.submit(id, bytes, meta).await {
                    Ok(s) => s,
                    Err(e) => return queue_error(&state.stats, &e),
                },
                Ok(Err(reason)) => {
                    state.stats.rejected_early.fetch_add(1, Ordering::Relaxed);
                    let mut record = JobRecord::invalid(id, reason);
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
    let pending = match submitted {
        Submitted::Done(record) => {
            state.stats.duplicates.fetch_add(1, Ordering::Relaxed);
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
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match state.queue.status(id).await {
                Ok(Some(r)) if r.status.is_final() => return json(StatusCode::OK, &r),
                Ok(_) => {}
                Err(e) => return queue_error(&state.stats, &e),
            }
            if tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(state.queue.poll_interval()).await;
        }
    }
    json(StatusCode::ACCEPTED, &pending)
}

async fn job_status<Q: Queue>(
    State(state): State<Arc<AppState<Q>>>,
    Path(id): Path<String>,
) -> Response {
    let Some(id) = JobId::parse(&id) else {
        return error(StatusCode::NOT_FOUND, "unknown job id");
    };
    match state.queue.status(id).await {
        Ok(Some(record)) => json(StatusCode::OK, &record),
        Ok(None) => error(StatusCode::NOT_FOUND, "unknown job id"),
        Err(e) => queue_error(&state.stats, &e),
    }
}

async fn healthz<Q: Queue>(State(state): State<Arc<AppState<Q>>>) -> Response {
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

async fn metrics_text<Q: Queue>(State(state): State<Arc<AppState<Q>>>) -> Response {
    match state.queue.stats().await {
        Ok(s) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            metrics::render(&s, &state.stats, state.queue.engine()),
        )
            .into_response(),
        Err(e) => queue_error(&state.stats, &e),
    }
}

/// Serves `router` on `listener` under `limits` until `shutdown` resolves.
/// Connections over the cap wait in the listen backlog until a slot frees.
///
/// # Errors
///
/// Never: accept errors (e.g. out of file descriptors) are retried after a
/// pause. The `Result` leaves room for a caller's own errors.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Infallible> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => return Ok(()),
            p = Arc::clone(&slots).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return Ok(()),
            },
        };
        let (stream, _peer): (tokio::net::TcpStream, SocketAddr) = tokio::select! {
            () = &mut shutdown => return Ok(()),
            a = listener.accept() => match a {
                Ok(a) => a,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_deadline)
                .max_buf_size(64 * 1024);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(limits.connection_lifetime, conn).await;
            drop(permit);
        });
    }
}
