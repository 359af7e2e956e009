//! Rooms on `tickwise serve` (docs/rooms.md): the thin axum adapter
//! around the pure room state machine [`tickwise_rooms::Rooms`].
//!
//! * `POST /v1/rooms` checks the request against the sim catalog (the sim,
//!   its version, its config for that many players), draws the room code
//!   and the session key from the OS's random source and opens the room;
//! * `GET /v1/rooms/{code}` upgrades to a WebSocket; one task per
//!   connection feeds its frames to the state machine and writes what the
//!   state machine sends it, from a bounded queue;
//! * a ticker runs the deadlines (join, idle, room expiry) four times a
//!   second;
//! * `GET /metrics` is the rooms' Prometheus text.
//!
//! Every request must name a loopback `Host`, and a browser's `Origin`
//! must be a loopback page, as for the pages themselves.

use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tickwise_catalog::Catalog;
use tickwise_rooms::{
    Action, ConnId, CreateRefused, CreateRequest, MAX_CREATE_BYTES, Reason, RoomLimits, RoomSpec,
    Rooms, encode_code, is_code,
};
use tokio::sync::mpsc;
use tower_http::timeout::TimeoutLayer;

use crate::conn::Peer;
use crate::pages::is_loopback_host;

/// The largest WebSocket message read at all; a larger one is refused as
/// `too-big` without being buffered (the room's own limits, 16 KiB text
/// and 509-byte relay frames, are checked by the state machine).
const MAX_WS_MESSAGE: usize = 64 * 1024;
/// How often the deadlines are checked.
const TICK: Duration = Duration::from_millis(250);
/// A message the client's connection does not take within this long ends
/// the connection (a client that stopped reading).
const SEND_DEADLINE: Duration = Duration::from_secs(10);

/// What a connection's task is told to do.
#[derive(Debug)]
enum Out {
    Msg(Message),
    Close(u16, &'static str),
}

struct Inner {
    rooms: Rooms,
    senders: std::collections::BTreeMap<ConnId, mpsc::Sender<Out>>,
}

/// The room server shared by the handlers and the connection tasks.
pub struct RoomServer {
    inner: Mutex<Inner>,
    catalog: Arc<Catalog>,
    origin: Instant,
    queue: usize,
}

impl std::fmt::Debug for RoomServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoomServer").finish_non_exhaustive()
    }
}

impl RoomServer {
    /// A server with no rooms, for the sims of `catalog`.
    #[must_use]
    pub fn new(catalog: Arc<Catalog>, limits: RoomLimits) -> Arc<RoomServer> {
        Arc::new(RoomServer {
            inner: Mutex::new(Inner {
                rooms: Rooms::new(limits),
                senders: std::collections::BTreeMap::new(),
            }),
            catalog,
            origin: Instant::now(),
            queue: limits.send_queue.max(1),
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The rooms' counters in the Prometheus text format.
    #[must_use]
    pub fn metrics(&self) -> String {
        self.lock().rooms.stats().render()
    }

    /// The rooms' counters.
    #[must_use]
    pub fn stats(&self) -> tickwise_rooms::RoomStats {
        self.lock().rooms.stats()
    }

    /// Runs `f` on the state machine and carries out its actions.
    fn drive(&self, f: impl FnOnce(&mut Rooms, u64, &mut Vec<Action>)) {
        let now = self.now();
        let mut out = Vec::new();
        let mut inner = self.lock();
        f(&mut inner.rooms, now, &mut out);
        dispatch(&mut inner, out);
    }

    /// Closes every room (the server is stopping).
    pub fn shutdown(&self) {
        self.drive(|r, now, out| r.shutdown(now, out));
    }

    /// Starts the deadline ticker; it ends when the server is dropped.
    fn start_ticker(self: &Arc<Self>) {
        let weak: Weak<RoomServer> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(TICK);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let Some(s) = weak.upgrade() else { return };
                s.drive(|r, now, out| r.tick(now, out));
            }
        });
    }
}

/// Carries out the state machine's actions: frames into the receivers'
/// queues (a full queue drops the frame, counted), closes as the last
/// item of a queue.
fn dispatch(inner: &mut Inner, out: Vec<Action>) {
    for a in out {
        match a {
            Action::Text { to, text } => {
                if let Some(tx) = inner.senders.get(&to)
                    && tx.try_send(Out::Msg(Message::text(text))).is_err()
                {
                    inner.rooms.note_slow_receiver();
                }
            }
            Action::Binary { to, frame } => {
                if let Some(tx) = inner.senders.get(&to)
                    && tx.try_send(Out::Msg(Message::binary(frame))).is_err()
                {
                    inner.rooms.note_slow_receiver();
                }
            }
            Action::Close { to, code, reason } => {
                // Dropping the sender after the close ends the task's
                // queue; a full queue ends it without the close frame.
                if let Some(tx) = inner.senders.remove(&to) {
                    let _ = tx.try_send(Out::Close(code, reason));
                }
            }
        }
    }
}

/// The rooms' routes (`/v1/rooms`, `/v1/rooms/{code}`, `/metrics`), and
/// the deadline ticker. Must be called inside the tokio runtime.
pub fn router(server: &Arc<RoomServer>, request_deadline: Duration) -> Router {
    server.start_ticker();
    Router::new()
        .route("/v1/rooms", post(create))
        .route("/v1/rooms/{code}", get(join))
        .route("/metrics", get(metrics))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            request_deadline,
        ))
        .with_state(Arc::clone(server))
}

fn json_error(status: StatusCode, message: &str) -> Response {
    crate::http::error(status, message)
}

/// Refuses a request that does not come from this machine's pages: a
/// non-loopback `Host` (`421`), or an `Origin` that is not a loopback page
/// (`403`).
#[allow(clippy::result_large_err, reason = "the error is the response")]
fn check_origin(headers: &HeaderMap) -> Result<(), Response> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !is_loopback_host(host) {
        return Err(json_error(
            StatusCode::MISDIRECTED_REQUEST,
            "only Host 127.0.0.1, localhost or [::1] is served",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .ok()
            .and_then(|o| {
                o.strip_prefix("http://")
                    .or_else(|| o.strip_prefix("https://"))
            })
            .is_some_and(is_loopback_host);
        if !ok {
            return Err(json_error(
                StatusCode::FORBIDDEN,
                "rooms are for pages served from 127.0.0.1, localhost or [::1]",
            ));
        }
    }
    Ok(())
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

fn random16() -> Result<[u8; 16], getrandom::Error> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)?;
    Ok(b)
}

/// Checks a create request against the catalog: the sim, its version, its
/// config for that many players.
fn room_spec(catalog: &Catalog, req: CreateRequest) -> Result<RoomSpec, (StatusCode, String)> {
    let info = catalog
        .get(&req.sim)
        .map_err(|e| (StatusCode::BAD_REQUEST, e.to_string()))?;
    if let Some(v) = req.version
        && v != info.version
    {
        return Err((
            StatusCode::CONFLICT,
            format!(
                "sim {} is version {} on this server, the request asks for version {v}",
                info.id, info.version
            ),
        ));
    }
    let config = catalog
        .config_for_players(
            info.id,
            req.config.as_deref().map(str::as_bytes),
            usize::from(req.players),
        )
        .map_err(|e| (StatusCode::BAD_REQUEST, e.to_string()))?;
    let config = String::from_utf8(config).map_err(|_| {
        (
            StatusCode::BAD_REQUEST,
            format!("sim {}'s config is not text", info.id),
        )
    })?;
    Ok(RoomSpec {
        sim: info.id.into(),
        version: info.version,
        config,
        players: req.players,
        spectators: req.spectators,
        ticks: req.ticks,
        check_every: req.check_every,
        disconnect_after: req.disconnect_after,
    })
}

async fn create(State(server): State<Arc<RoomServer>>, headers: HeaderMap, body: Body) -> Response {
    if let Err(r) = check_origin(&headers) {
        return r;
    }
    if !is_json(&headers) {
        return json_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a room request is Content-Type: application/json",
        );
    }
    let Ok(bytes): Result<Bytes, _> = axum::body::to_bytes(body, MAX_CREATE_BYTES).await else {
        return json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("a room request is at most {MAX_CREATE_BYTES} bytes"),
        );
    };
    let req = match CreateRequest::parse(&bytes) {
        Ok(r) => r,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    let catalog = Arc::clone(&server.catalog);
    // Building a sim from a config is CPU work: off the executor.
    let spec = match tokio::task::spawn_blocking(move || room_spec(&catalog, req)).await {
        Ok(Ok(s)) => s,
        Ok(Err((status, message))) => return json_error(status, &message),
        Err(_) => {
            return json_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "checking the config failed",
            );
        }
    };
    let (Ok(code), Ok(key)) = (random16(), random16()) else {
        return json_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the OS's random source failed",
        );
    };
    let code = encode_code(&code);
    let now = server.now();
    let created = server
        .lock()
        .rooms
        .create(spec.clone(), code.clone(), key, now);
    match created {
        Ok(()) => {}
        Err(e @ CreateRefused::TooManyRooms { .. }) => {
            let mut r = json_error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string());
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return r;
        }
        Err(e @ CreateRefused::CodeTaken) => {
            return json_error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string());
        }
    }
    let mut v = serde_json::to_value(&spec).unwrap_or_default();
    v["code"] = serde_json::Value::from(code.clone());
    v["path"] = serde_json::Value::from(format!("/v1/rooms/{code}"));
    (
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

async fn metrics(State(server): State<Arc<RoomServer>>, headers: HeaderMap) -> Response {
    if let Err(r) = check_origin(&headers) {
        return r;
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        server.metrics(),
    )
        .into_response()
}

async fn join(
    State(server): State<Arc<RoomServer>>,
    Path(code): Path<String>,
    peer: Option<axum::Extension<Peer>>,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    if let Err(r) = check_origin(&headers) {
        return r;
    }
    let Ok(ws) = ws else {
        return json_error(
            StatusCode::UPGRADE_REQUIRED,
            "a room is joined with a WebSocket (docs/rooms.md)",
        );
    };
    let ip = peer.map_or(IpAddr::from([127, 0, 0, 1]), |p| p.0.0.ip());
    ws.max_message_size(MAX_WS_MESSAGE)
        .max_frame_size(MAX_WS_MESSAGE)
        .on_upgrade(move |socket| connection(server, socket, code, ip))
}

async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await;
}

/// One room connection, from the upgrade to its end.
async fn connection(server: Arc<RoomServer>, mut socket: WebSocket, code: String, ip: IpAddr) {
    let (tx, mut rx) = mpsc::channel(server.queue);
    let now = server.now();
    let id = {
        let mut inner = server.lock();
        // A path that is not a code never reaches the table.
        let code = if is_code(&code) { code.as_str() } else { "" };
        match inner.rooms.connect(code, ip, now) {
            Ok(id) => {
                inner.senders.insert(id, tx);
                Ok(id)
            }
            Err(refusal) => Err(refusal),
        }
    };
    let id = match id {
        Ok(id) => id,
        Err(refusal) => {
            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                let _ = socket.send(Message::text(refusal.text())).await;
                close(
                    &mut socket,
                    refusal.reason.close_code(),
                    refusal.reason.as_str(),
                )
                .await;
            })
            .await;
            return;
        }
    };
    loop {
        tokio::select! {
            out = rx.recv() => match out {
                Some(Out::Msg(m)) => {
                    // A client that does not read cannot hold its task
                    // (and its socket) forever.
                    match tokio::time::timeout(SEND_DEADLINE, socket.send(m)).await {
                        Ok(Ok(())) => {}
                        Ok(Err(_)) | Err(_) => break,
                    }
                }
                Some(Out::Close(code, reason)) => {
                    // Close, then read (and drop) what the client still
                    // sends until its close, so that closing the socket
                    // with unread bytes does not reset the connection
                    // before the client has read the close frame.
                    let _ = tokio::time::timeout(Duration::from_secs(1), async {
                        close(&mut socket, code, reason).await;
                        while let Some(Ok(m)) = socket.recv().await {
                            if matches!(m, Message::Close(_)) {
                                break;
                            }
                        }
                    })
                    .await;
                    break;
                }
                // The state machine forgot this connection.
                None => break,
            },
            msg = socket.recv() => match msg {
                Some(Ok(Message::Text(t))) => {
                    server.drive(|r, now, out| r.on_text(id, t.as_str(), now, out));
                }
                Some(Ok(Message::Binary(b))) => {
                    server.drive(|r, now, out| r.on_binary(id, &b, now, out));
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Err(e)) if is_capacity(&e) => {
                    server.drive(|r, now, out| {
                        r.close(
                            id,
                            Reason::TooBig,
                            format!("a message over {MAX_WS_MESSAGE} bytes"),
                            now,
                            out,
                        );
                    });
                }
                // A close from the client, an error, or the end.
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
            },
        }
    }
    server.drive(|r, now, out| r.disconnect(id, now, out));
    server.lock().senders.remove(&id);
}

fn is_capacity(e: &axum::Error) -> bool {
    use std::error::Error as _;
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(t) = s.downcast_ref::<tungstenite::Error>() {
            return matches!(t, tungstenite::Error::Capacity(_));
        }
        source = s.source();
    }
    false
}
