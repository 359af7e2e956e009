//! The HTTP front end of `tickwise verifyd`, on axum + hyper + tokio: the
//! router over a [`Queue`], in rooms of one concept each.
//!
//! * [`limits`]: the API's limits and their enforcement while a body
//!   arrives (sizes, the shared byte budget, the body deadline);
//! * `handlers`: the endpoints;
//! * [`wait`]: long polling (`?wait=`) on the queue's verdict notifications;
//! * the batch codec is [`crate::batch`], shared with the load generator;
//! * the connection layer (caps, shedding, deadlines) is [`crate::conn`].
//!
//! Every connection is bounded: caps on open connections per source and in
//! all, a deadline for the request head (hyper's `header_read_timeout`,
//! which also bounds an idle keep-alive connection), a deadline for the
//! whole upload body, a deadline for the whole request (tower-http
//! `TimeoutLayer`), a lifetime per connection, the upload size limits
//! checked before and while the body arrives, and a byte budget shared by
//! all bodies in flight.

use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower_http::timeout::TimeoutLayer;

use crate::budget::ByteBudget;
use crate::queue::Queue;
use crate::verifier::Verifier;

mod handlers;
pub mod limits;
pub mod wait;

pub use crate::conn::{ConnLimits, Peer, serve};
pub use crate::metrics::HttpStats;
pub use handlers::{ManyQuery, UploadQuery};
pub use limits::ApiLimits;
pub use wait::await_verdicts;

/// The request header carrying the session's real duration in
/// milliseconds (the optional wall-clock plausibility check).
pub const SESSION_HEADER: &str = "tickwise-session-ms";

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
    /// The byte budget of the upload bodies in flight.
    pub budget: Arc<ByteBudget>,
}

/// The replay API as an axum router over `queue`.
pub fn app<Q: Queue>(queue: Q, verifier: Verifier, limits: ApiLimits, conn: &ConnLimits) -> Router {
    let state = Arc::new(AppState {
        queue,
        verifier,
        limits,
        stats: HttpStats::default(),
        budget: ByteBudget::new(limits.body_budget_bytes),
    });
    Router::new()
        // Body sizes are checked by the handlers themselves (the declared
        // length before reading, the bytes while receiving), so a `413`
        // is always the documented JSON and always counted.
        .route(
            "/v1/replays",
            post(handlers::upload::<Q>).get(handlers::many_status::<Q>),
        )
        .route("/v1/replays/{id}", get(handlers::job_status::<Q>))
        .route("/v1/batches", post(handlers::batch_upload::<Q>))
        .route("/healthz", get(handlers::healthz::<Q>))
        .route("/metrics", get(handlers::metrics_text::<Q>))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint") })
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
