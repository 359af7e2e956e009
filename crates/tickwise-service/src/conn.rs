//! The connection layer shared by `verifyd` and `serve`: the accept loop,
//! its caps and what happens when they are reached.
//!
//! Connections are accepted at once (never left waiting in the listen
//! backlog, where nobody can tell a slow client from a fast one). Each is
//! counted against two caps: one per source address
//! ([`ConnLimits::max_per_source`]) and one in all
//! ([`ConnLimits::max_connections`]). A new connection over a cap **sheds**
//! the stalest connection that is waiting on its client (a request head or
//! body not yet received, or an idle keep-alive) and has sent nothing for
//! at least [`ConnLimits::shed_idle`]: over the per-source cap, one of the
//! same source's; over the total, one of the source holding the most
//! connections. A client sending at network speed is never silent that
//! long, so what is shed is a trickling or idle connection. A connection that is being answered (verifying, waiting for
//! a verdict, writing its response) is never shed. When there is nobody to
//! shed, the new connection gets `503` + `Retry-After` at once and is
//! closed. So slow clients cost a slot each only until someone needs it,
//! and one address cannot take more than its share.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};

/// Connection-level limits, shared by `verifyd` and `serve`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// Open connections at most (also the listen backlog).
    pub max_connections: usize,
    /// Open connections from one source address at most.
    pub max_per_source: usize,
    /// A connection waiting on its client that has sent nothing for this
    /// long may be shed to make room for a new one.
    pub shed_idle: Duration,
    /// Deadline for receiving a request head (also the keep-alive idle
    /// limit between requests).
    pub header_deadline: Duration,
    /// Deadline for a whole request, from its head to the response.
    pub request_deadline: Duration,
    /// A connection is closed after this long, whatever it is doing.
    pub connection_lifetime: Duration,
}

impl Default for ConnLimits {
    /// 256 connections, 64 per source, sheddable after 100 ms without a
    /// byte, 5 s for a head, 60 s per request, 10 min per connection.
    fn default() -> ConnLimits {
        ConnLimits {
            max_connections: 256,
            max_per_source: 64,
            shed_idle: Duration::from_millis(100),
            header_deadline: Duration::from_secs(5),
            request_deadline: Duration::from_secs(60),
            connection_lifetime: Duration::from_secs(600),
        }
    }
}

/// What one connection is doing, for the shedding policy: waiting on its
/// client (sheddable once stale) or being answered (never shed). A request
/// extension, so the upload handlers can say when they read a body.
#[derive(Debug)]
pub struct ConnTrack {
    origin: Instant,
    waiting: AtomicBool,
    /// Milliseconds since `origin` of the last byte received or change of
    /// state.
    active_ms: AtomicU64,
}

impl ConnTrack {
    fn new(origin: Instant) -> Arc<ConnTrack> {
        let t = Arc::new(ConnTrack {
            origin,
            waiting: AtomicBool::new(true),
            active_ms: AtomicU64::new(0),
        });
        t.touch();
        t
    }

    fn touch(&self) {
        let ms = u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.active_ms.store(ms, Ordering::Relaxed);
    }

    fn set_waiting(&self, waiting: bool) {
        self.waiting.store(waiting, Ordering::Relaxed);
        self.touch();
    }

    /// Marks the connection as waiting on its client until the guard is
    /// dropped (an upload handler reading its body).
    #[must_use]
    pub fn reading(self: &Arc<ConnTrack>) -> ReadingGuard {
        self.set_waiting(true);
        ReadingGuard(Arc::clone(self))
    }

    /// How long it has been waiting on its client without a byte, or
    /// `None` while it is being answered.
    fn stale_for(&self, now_ms: u64) -> Option<u64> {
        self.waiting
            .load(Ordering::Relaxed)
            .then(|| now_ms.saturating_sub(self.active_ms.load(Ordering::Relaxed)))
    }
}

/// See [`ConnTrack::reading`].
#[derive(Debug)]
pub struct ReadingGuard(Arc<ConnTrack>);

impl Drop for ReadingGuard {
    fn drop(&mut self) {
        self.0.set_waiting(false);
    }
}

/// The TCP peer of a request's connection (a request extension).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer(pub SocketAddr);

/// A stream that notes the time of every byte received.
struct Tracked {
    inner: TcpStream,
    track: Arc<ConnTrack>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.track.touch();
        }
        r
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

struct Entry {
    source: IpAddr,
    track: Arc<ConnTrack>,
    shed: Arc<Notify>,
}

/// The open connections, for the caps and the choice of whom to shed.
#[derive(Default)]
struct Registry {
    conns: BTreeMap<u64, Entry>,
    per_source: BTreeMap<IpAddr, usize>,
    next: u64,
}

impl Registry {
    fn remove(&mut self, id: u64) -> Option<Entry> {
        let e = self.conns.remove(&id)?;
        if let Some(n) = self.per_source.get_mut(&e.source) {
            *n -= 1;
            if *n == 0 {
                self.per_source.remove(&e.source);
            }
        }
        Some(e)
    }

    /// The stalest sheddable connection (stale for at least `min_ms`),
    /// from `only` if given; else preferring the source with the most.
    fn victim(&self, only: Option<IpAddr>, now_ms: u64, min_ms: u64) -> Option<u64> {
        self.conns
            .iter()
            .filter(|(_, e)| only.is_none_or(|s| s == e.source))
            .filter_map(|(id, e)| {
                let stale = e.track.stale_for(now_ms)?;
                let share = self.per_source.get(&e.source).copied().unwrap_or(0);
                (stale >= min_ms).then_some(((share, stale), *id))
            })
            .max_by_key(|(key, _)| *key)
            .map(|(_, id)| id)
    }

    /// Admits a connection from `source` and registers it, shedding one
    /// if a cap is reached; `None` when nobody can be shed. A connection
    /// whose whole request (or head and first 16 KiB of body) has arrived
    /// already (`complete`) is admitted past the caps, up to twice the
    /// total: it is no slow client. It is counted from then on like any
    /// other, and shed like any other if it stalls.
    fn admit(
        &mut self,
        source: IpAddr,
        limits: &ConnLimits,
        origin: Instant,
        complete: bool,
    ) -> Option<(u64, Arc<ConnTrack>, Arc<Notify>)> {
        let now_ms = u64::try_from(origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        let min_ms = u64::try_from(limits.shed_idle.as_millis()).unwrap_or(u64::MAX);
        let cap = limits.max_connections.max(1);
        let mine = self.per_source.get(&source).copied().unwrap_or(0);
        let shed = if complete && self.conns.len() < cap.saturating_mul(2) {
            None
        } else if mine >= limits.max_per_source.max(1) {
            Some(self.victim(Some(source), now_ms, min_ms)?)
        } else if self.conns.len() >= cap {
            Some(self.victim(None, now_ms, min_ms)?)
        } else {
            None
        };
        if let Some(id) = shed
            && let Some(e) = self.remove(id)
        {
            e.shed.notify_one();
        }
        let id = self.next;
        self.next += 1;
        let track = ConnTrack::new(origin);
        let shed = Arc::new(Notify::new());
        *self.per_source.entry(source).or_default() += 1;
        self.conns.insert(
            id,
            Entry {
                source,
                track: Arc::clone(&track),
                shed: Arc::clone(&shed),
            },
        );
        Some((id, track, shed))
    }
}

/// Whether `peeked` (the first bytes of a connection, `PEEK_BYTES` at
/// most) shows a client sending at full speed: a whole request (its head
/// and, by its `Content-Length`, its body), or a whole head followed by
/// as much body as was looked at.
fn whole_request(peeked: &[u8]) -> bool {
    let Some(end) = peeked.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&peeked[..end]).to_ascii_lowercase();
    let mut length = 0usize;
    for line in head.lines().skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        match name.trim() {
            "content-length" => match value.trim().parse() {
                Ok(n) => length = n,
                Err(_) => return false,
            },
            "transfer-encoding" => return false,
            _ => {}
        }
    }
    peeked.len() >= end + 4 + length || peeked.len() >= PEEK_BYTES
}

/// How long a new connection is given to show its whole request before it
/// is admitted (or not) as one that may wait on its client.
const PEEK_WAIT: Duration = Duration::from_millis(50);

/// Bytes looked at to find a whole request.
const PEEK_BYTES: usize = 16 * 1024;

/// The answer to a connection refused at once.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 59\r\n\r\n{\"error\":\"too many connections; retry in a second please\"}\n";

/// Answers `503` on a connection that was not admitted, then closes it;
/// at most `slots` of these at once (past that the connection is just
/// closed), each for at most 200 ms.
fn refuse(stream: TcpStream, slots: &Arc<Semaphore>) {
    let Ok(permit) = Arc::clone(slots).try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let mut stream = stream;
        let _ = tokio::time::timeout(Duration::from_millis(200), async {
            stream.write_all(REFUSAL).await?;
            stream.shutdown().await?;
            // Read what the client sent, so closing does not reset the
            // connection before it has read the answer.
            let mut sink = [0u8; 4096];
            loop {
                let n = tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await?;
                if n == 0 {
                    return Ok::<(), io::Error>(());
                }
            }
        })
        .await;
        drop(permit);
    });
}

/// Stops `listener` from taking connections at once: the socket itself is
/// shut down (new connections are refused, those not yet accepted are
/// reset), whoever else may still hold its descriptor.
fn stop_listening(listener: &TcpListener) {
    let _ = socket2::SockRef::from(listener).shutdown(std::net::Shutdown::Both);
}

/// Serves `router` on `listener` under `limits` until `shutdown` resolves,
/// then stops accepting at once (the listener is closed); connections
/// still open are ended by the runtime's shutdown.
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
    let ctx = Arc::new(Shared {
        registry: Mutex::new(Registry::default()),
        refusals: Arc::new(Semaphore::new(256)),
        limits,
        origin: Instant::now(),
        router,
    });
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer): (TcpStream, SocketAddr) = tokio::select! {
            () = &mut shutdown => {
                stop_listening(&listener);
                return Ok(());
            }
            a = listener.accept() => match a {
                Ok(a) => a,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let ctx = Arc::clone(&ctx);
        tokio::spawn(async move { connection(stream, peer, &ctx).await });
    }
}

/// What every connection task shares.
struct Shared {
    registry: Mutex<Registry>,
    refusals: Arc<Semaphore>,
    limits: ConnLimits,
    origin: Instant,
    router: Router,
}

/// One connection: admitted (or refused), then served until it ends, is
/// shed, or outlives its lifetime.
async fn connection(stream: TcpStream, peer: SocketAddr, ctx: &Shared) {
    let limits = ctx.limits;
    // A request sent whole with the connection (a health check, a small
    // upload), or at least its head and 16 KiB of body, is no slow client:
    // it does not compete for a slot.
    let mut peeked = vec![0u8; PEEK_BYTES];
    let complete = match tokio::time::timeout(PEEK_WAIT, stream.peek(&mut peeked)).await {
        Ok(Ok(n)) => whole_request(&peeked[..n]),
        _ => false,
    };
    drop(peeked);
    let admitted = ctx
        .registry
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .admit(peer.ip(), &limits, ctx.origin, complete);
    let Some((id, track, shed)) = admitted else {
        refuse(stream, &ctx.refusals);
        return;
    };
    let _ = stream.set_nodelay(true);
    let service = {
        let (router, track) = (ctx.router.clone(), Arc::clone(&track));
        tower::service_fn(move |mut r: Request<hyper::body::Incoming>| {
            let (router, track) = (router.clone(), Arc::clone(&track));
            async move {
                r.extensions_mut().insert(Peer(peer));
                r.extensions_mut().insert(Arc::clone(&track));
                track.set_waiting(false);
                let response =
                    tower::ServiceExt::oneshot(router, r.map(axum::body::Body::new)).await;
                track.set_waiting(true);
                response
            }
        })
    };
    let io = Tracked {
        inner: stream,
        track,
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_deadline)
        .max_buf_size(64 * 1024);
    // With upgrades: a WebSocket (a room connection) leaves this loop once
    // upgraded; the room server has its own caps and deadlines for it.
    let conn = builder
        .serve_connection(TokioIo::new(io), TowerToHyperService::new(service))
        .with_upgrades();
    tokio::select! {
        _ = tokio::time::timeout(limits.connection_lifetime, conn) => {}
        () = shed.notified() => {}
    }
    ctx.registry
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_request_is_its_head_and_its_declared_body() {
        assert!(whole_request(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(whole_request(
            b"POST /v1/replays HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
        ));
        assert!(!whole_request(
            b"POST /v1/replays HTTP/1.1\r\nContent-Length: 4\r\n\r\nabc"
        ));
        assert!(!whole_request(b"GET /healthz HTTP/1.1\r\nHost: x\r\n"));
        assert!(!whole_request(b"G"));
        assert!(!whole_request(
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        ));
        assert!(!whole_request(
            b"POST / HTTP/1.1\r\nContent-Length: many\r\n\r\n"
        ));
        // A head and as much body as is looked at: sending at full speed.
        let mut fast = b"POST / HTTP/1.1\r\nContent-Length: 100000\r\n\r\n".to_vec();
        fast.resize(PEEK_BYTES, b'x');
        assert!(whole_request(&fast));
        fast.pop();
        assert!(!whole_request(&fast));
    }

    /// Registers a connection from `source` silent for `stale_ms`
    /// (waiting on its client) or being answered.
    fn open(
        reg: &mut Registry,
        limits: &ConnLimits,
        origin: Instant,
        source: [u8; 4],
    ) -> Option<u64> {
        reg.admit(IpAddr::from(source), limits, origin, false)
            .map(|(id, _, _)| id)
    }

    fn age(reg: &Registry, id: u64, last_ms: u64, waiting: bool) {
        let t = &reg.conns[&id].track;
        t.waiting.store(waiting, Ordering::Relaxed);
        t.active_ms.store(last_ms, Ordering::Relaxed);
    }

    #[test]
    fn caps_shed_the_stalest_waiting_connection_or_refuse() {
        // Back-date the origin so "now" is about 10 s after it.
        let origin = Instant::now() - Duration::from_secs(10);
        let limits = ConnLimits {
            max_connections: 4,
            max_per_source: 2,
            shed_idle: Duration::from_millis(100),
            ..ConnLimits::default()
        };
        let mut reg = Registry::default();
        let a1 = open(&mut reg, &limits, origin, [10, 0, 0, 1]).unwrap();
        let a2 = open(&mut reg, &limits, origin, [10, 0, 0, 1]).unwrap();
        // Both of a's are fresh: a third from a is refused.
        assert_eq!(open(&mut reg, &limits, origin, [10, 0, 0, 1]), None);
        // a1 silent for 9 s: a third from a sheds it (and only it).
        age(&reg, a1, 1_000, true);
        let a3 = open(&mut reg, &limits, origin, [10, 0, 0, 1]).unwrap();
        assert!(!reg.conns.contains_key(&a1) && reg.conns.contains_key(&a2));
        // Fill the total with b's; a5 from c sheds a waiting one of the
        // address holding the most (a: 2, b: 2; both stale: the stalest).
        let b1 = open(&mut reg, &limits, origin, [10, 0, 0, 2]).unwrap();
        let b2 = open(&mut reg, &limits, origin, [10, 0, 0, 2]).unwrap();
        for id in [a2, a3, b1] {
            age(&reg, id, 9_000, true);
        }
        age(&reg, b2, 5_000, true);
        let _c1 = open(&mut reg, &limits, origin, [10, 0, 0, 3]).unwrap();
        assert!(
            !reg.conns.contains_key(&b2),
            "the stalest of the largest shares"
        );
        // Connections being answered are never shed.
        for id in reg.conns.keys().copied().collect::<Vec<_>>() {
            age(&reg, id, 0, false);
        }
        assert_eq!(open(&mut reg, &limits, origin, [10, 0, 0, 4]), None);
        // A whole request gets in past the cap, up to twice it.
        for _ in 0..4 {
            assert!(
                reg.admit(IpAddr::from([10, 0, 0, 5]), &limits, origin, true)
                    .is_some()
            );
        }
        assert!(
            reg.admit(IpAddr::from([10, 0, 0, 5]), &limits, origin, true)
                .is_none()
        );
    }
}
