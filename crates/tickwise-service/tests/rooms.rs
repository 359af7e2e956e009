//! The room server over real sockets (docs/rooms.md): a whole exchange,
//! then hostile clients: too many rooms, a flood of joins, oversized
//! messages, a client that never completes its handshake or its join, bad
//! JSON, a relay frame to a slot that does not exist, relay over the
//! room's bandwidth budget, foreign hosts and origins. Loopback only;
//! every loop is bounded.

mod support;

use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{http, http_with, metric};
use tickwise_catalog::Catalog;
use tickwise_rooms::{RoomLimits, ServerMsg};
use tickwise_service::ConnLimits;
use tickwise_service::rooms::RoomServer;
use tungstenite::{Message, WebSocket};

/// `serve` in-process; stops when dropped.
struct Server {
    addr: SocketAddr,
    rooms: Arc<RoomServer>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start(limits: RoomLimits, conn: ConnLimits) -> Server {
    // Under target/tmp: a rerun writes the same page again, runs leave no trail.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rooms-www");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.html"), "<h1>page</h1>").unwrap();
    let root = std::fs::canonicalize(&dir).unwrap();
    let rooms = RoomServer::new(Arc::new(Catalog::builtin()), limits);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let r = Arc::clone(&rooms);
    let thread = std::thread::spawn(move || {
        tickwise_service::block_on(tickwise_service::pages(
            root,
            "127.0.0.1:0".parse().unwrap(),
            conn,
            r,
            move |a| addr_tx.send(a).unwrap(),
            async move {
                let _ = rx.await;
            },
        ))
        .unwrap()
        .unwrap();
    });
    let addr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    Server {
        addr,
        rooms,
        stop: Some(tx),
        thread: Some(thread),
    }
}

fn serve_conn() -> ConnLimits {
    ConnLimits {
        max_connections: 256,
        max_per_source: 256,
        header_deadline: Duration::from_secs(1),
        request_deadline: Duration::from_secs(10),
        connection_lifetime: Duration::from_secs(60),
        ..ConnLimits::default()
    }
}

const JSON: &str = "Content-Type: application/json";

fn create(s: &Server, body: &str) -> String {
    let (status, body) = http_with(s.addr, "POST", "/v1/rooms", &[JSON], body.as_bytes());
    assert_eq!(status, 201, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    v["code"].as_str().unwrap().to_string()
}

type Ws = WebSocket<TcpStream>;

fn ws_with(addr: SocketAddr, path: &str, origin: Option<&str>) -> Result<Ws, tungstenite::Error> {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut req =
        tungstenite::client::IntoClientRequest::into_client_request(format!("ws://{addr}{path}"))
            .unwrap();
    if let Some(o) = origin {
        req.headers_mut().insert("Origin", o.parse().unwrap());
    }
    tungstenite::client::client(req, stream)
        .map(|(ws, _)| ws)
        .map_err(|e| match e {
            tungstenite::HandshakeError::Failure(e) => e,
            tungstenite::HandshakeError::Interrupted(_) => unreachable!("blocking"),
        })
}

fn ws(s: &Server, code: &str) -> Ws {
    ws_with(s.addr, &format!("/v1/rooms/{code}"), None).unwrap()
}

fn send(ws: &mut Ws, text: &str) {
    ws.send(Message::text(text)).unwrap();
}

/// The next text message.
fn next(ws: &mut Ws) -> ServerMsg {
    loop {
        match ws.read().unwrap() {
            Message::Text(t) => return ServerMsg::parse(t.as_str()).unwrap(),
            Message::Close(c) => panic!("closed: {c:?}"),
            _ => {}
        }
    }
}

/// Reads until the server closes: the `error` reason seen and the close
/// frame's code and reason.
fn until_close(ws: &mut Ws) -> (Option<String>, Option<(u16, String)>) {
    let mut reason = None;
    loop {
        match ws.read() {
            Ok(Message::Text(t)) => {
                if let Ok(ServerMsg::Error { reason: r, .. }) = ServerMsg::parse(t.as_str()) {
                    reason = Some(r);
                }
            }
            Ok(Message::Close(c)) => {
                return (
                    reason,
                    c.map(|c| (u16::from(c.code), c.reason.as_str().to_string())),
                );
            }
            Ok(_) => {}
            Err(_) => return (reason, None),
        }
    }
}

fn join_player(s: &Server, code: &str) -> (Ws, u8) {
    let mut w = ws(s, code);
    send(&mut w, r#"{"t":"join","role":"player"}"#);
    match next(&mut w) {
        ServerMsg::Welcome(wel) => (w, wel.slot),
        m => panic!("{m:?}"),
    }
}

const ROOM: &str = r#"{"sim":"horde","version":3,"players":2,"ticks":600}"#;

#[test]
fn a_room_hands_out_seats_and_the_key_forwards_signals_and_relays() {
    let s = start(RoomLimits::default(), serve_conn());
    let code = create(&s, ROOM);
    let (mut a, sa) = join_player(&s, &code);
    let mut b = ws(&s, &code);
    send(&mut b, r#"{"t":"join","role":"player"}"#);
    let ServerMsg::Welcome(wb) = next(&mut b) else {
        panic!()
    };
    assert_eq!((sa, wb.slot), (0, 1));
    assert_eq!(wb.session_key.len(), 32);
    assert!(wb.session_key.bytes().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(
        next(&mut a),
        ServerMsg::Joined {
            slot: 1,
            role: tickwise_rooms::Role::Player
        }
    );
    // Signalling, verbatim.
    send(
        &mut a,
        r#"{"t":"signal","to":1,"data":{"type":"offer","sdp":"v=0\r\n"}}"#,
    );
    assert_eq!(
        next(&mut b),
        ServerMsg::Signal {
            from: 0,
            data: serde_json::json!({"type":"offer","sdp":"v=0\r\n"})
        }
    );
    send(&mut a, r#"{"t":"ping","id":5}"#);
    assert_eq!(next(&mut a), ServerMsg::Pong { id: Some(5) });
    // Both ready: start.
    send(&mut a, r#"{"t":"ready"}"#);
    send(&mut b, r#"{"t":"ready"}"#);
    for w in [&mut a, &mut b] {
        let mut got = vec![next(w), next(w)];
        got.sort_by_key(|m| format!("{m:?}"));
        assert_eq!(
            got,
            [ServerMsg::Ready { slot: 0 }, ServerMsg::Ready { slot: 1 },]
        );
        assert_eq!(next(w), ServerMsg::Start {});
    }
    // The relay: [to][datagram] in, [from][datagram] out.
    a.send(Message::binary(vec![1, 0xab, 0xcd])).unwrap();
    match b.read().unwrap() {
        Message::Binary(f) => assert_eq!(&f[..], &[0, 0xab, 0xcd]),
        m => panic!("{m:?}"),
    }
    // Leave: the other sees the seat freed.
    send(&mut a, r#"{"t":"leave"}"#);
    let (_, close) = until_close(&mut a);
    assert_eq!(close, Some((1000, "leave".into())));
    assert_eq!(next(&mut b), ServerMsg::Left { slot: 0 });
    let m = s.rooms.metrics();
    assert_eq!(metric(&m, "tickwise_relay_frames_total "), 1);
    assert_eq!(metric(&m, "tickwise_room_signals_total "), 1);
}

#[test]
fn create_requests_are_checked_and_rooms_are_capped() {
    let limits = RoomLimits {
        max_rooms: 3,
        ..RoomLimits::default()
    };
    let s = start(limits, serve_conn());
    let post = |headers: &[&str], body: &str| {
        http_with(s.addr, "POST", "/v1/rooms", headers, body.as_bytes())
    };
    for (body, status, says) in [
        (r#"{"sim":"chess","players":2}"#, 400, "chess"),
        (r#"{"sim":"island","players":2}"#, 400, "island"),
        (
            r#"{"sim":"horde","version":99,"players":2}"#,
            409,
            "version 3",
        ),
        (r#"{"sim":"horde","players":9}"#, 400, "players"),
        (r#"{"sim":"horde","players":2,"x":1}"#, 400, "x"),
        (r#"{"sim":"horde","players":2,"config":"{"}"#, 400, "config"),
        ("not json", 400, "room request"),
    ] {
        let (got, text) = post(&[JSON], body);
        assert_eq!(got, status, "{body}: {text}");
        assert!(text.contains(says), "{body}: {text}");
    }
    let (got, _) = post(&[], ROOM);
    assert_eq!(got, 415, "no content type");
    let big = format!(
        r#"{{"sim":"horde","players":2,"pad":"{}"}}"#,
        "x".repeat(40_000)
    );
    assert_eq!(post(&[JSON], &big).0, 413);
    // Foreign pages and hosts are refused; a loopback page is fine.
    assert_eq!(post(&[JSON, "Origin: http://evil.example"], ROOM).0, 403);
    assert_eq!(post(&[JSON, "Origin: null"], ROOM).0, 403);
    let mut raw = TcpStream::connect(s.addr).unwrap();
    std::io::Write::write_all(
        &mut raw,
        format!(
            "POST /v1/rooms HTTP/1.1\r\nHost: evil.example\r\n{JSON}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ROOM}",
            ROOM.len()
        )
        .as_bytes(),
    )
    .unwrap();
    let mut out = Vec::new();
    let _ = std::io::Read::read_to_end(&mut raw, &mut out);
    assert_eq!(support::parse_response(&out).0, 421);
    assert_eq!(post(&[JSON, "Origin: http://localhost:5173"], ROOM).0, 201);
    // Three rooms is the cap: the fourth gets 503 + Retry-After.
    create(&s, ROOM);
    create(&s, ROOM);
    let (status, text) = post(&[JSON], ROOM);
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("limit of 3 open rooms"), "{text}");
    let m = s.rooms.metrics();
    assert_eq!(metric(&m, "tickwise_rooms_open "), 3);
    assert_eq!(metric(&m, "tickwise_rooms_refused_total "), 1);
    // A room is joined with a WebSocket, nothing else.
    let (status, _) = http(s.addr, "GET", "/v1/rooms/AAAAAAAAAAAAAAAAAAAAAA", b"");
    assert_eq!(status, 426);
}

#[test]
fn a_flood_of_joins_meets_the_caps_and_the_join_deadline() {
    let limits = RoomLimits {
        join_deadline_ms: 4_000,
        max_conns_per_ip: 12,
        ..RoomLimits::default()
    };
    let s = start(limits, serve_conn());
    let code = create(&s, ROOM);
    // 2 seats + 2: four connections wait in their handshake; the rest of
    // a flood of 20 is refused at once.
    let flood: Vec<Ws> = (0..20).map(|_| ws(&s, &code)).collect();
    let mut waiting = Vec::new();
    let mut refused = 0;
    for mut w in flood {
        w.get_mut()
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        match w.read() {
            Ok(Message::Text(t)) => {
                assert!(t.as_str().contains("too-many-connections"), "{t}");
                let (_, close) = until_close(&mut w);
                assert_eq!(close.map(|c| c.0), Some(1013));
                refused += 1;
            }
            Err(_) => waiting.push(w), // nothing to read: admitted
            Ok(m) => panic!("{m:?}"),
        }
    }
    assert_eq!((waiting.len(), refused), (4, 16));
    // They never join: closed at the join deadline.
    let t = Instant::now();
    for w in &mut waiting {
        w.get_mut()
            .set_read_timeout(Some(Duration::from_secs(8)))
            .unwrap();
        let (reason, close) = until_close(w);
        assert_eq!(reason.as_deref(), Some("join-deadline"));
        assert_eq!(close, Some((1008, "join-deadline".into())));
    }
    assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
    // The room is usable again.
    let (_a, sa) = join_player(&s, &code);
    let (_b, sb) = join_player(&s, &code);
    assert_eq!((sa, sb), (0, 1));
    // One address across many rooms: 12 connections, then refused.
    let codes: Vec<String> = (0..5).map(|_| create(&s, ROOM)).collect();
    let mut held = Vec::new();
    for code in codes.iter().cycle().take(10) {
        held.push(join_player(&s, code).0);
    }
    let mut w = ws(&s, &codes[0]);
    let (reason, close) = until_close(&mut w);
    assert_eq!(reason.as_deref(), Some("too-many-connections"));
    assert_eq!(close.map(|c| c.0), Some(1013));
    let m = s.rooms.metrics();
    assert_eq!(
        metric(
            &m,
            "tickwise_room_closes_total{reason=\"too-many-connections\"} "
        ),
        17
    );
    assert_eq!(
        metric(&m, "tickwise_room_closes_total{reason=\"join-deadline\"} "),
        4
    );
}

#[test]
fn oversized_and_malformed_messages_close_with_a_reason() {
    let s = start(RoomLimits::default(), serve_conn());
    let code = create(&s, ROOM);
    let cases: [(Message, u16, &str); 5] = [
        (Message::text("x".repeat(17_000)), 1009, "too-big"),
        (Message::text("x".repeat(100_000)), 1009, "too-big"),
        (
            Message::text("{\"t\":\"join\",\"role\":"),
            1008,
            "bad-message",
        ),
        (Message::text(r#"{"t":"dance"}"#), 1008, "bad-message"),
        (Message::binary(vec![1, 2, 3]), 1008, "bad-message"), // before a seat
    ];
    for (i, (msg, code_, reason)) in cases.into_iter().enumerate() {
        let mut w = ws(&s, &code);
        w.send(msg).unwrap();
        let (r, close) = until_close(&mut w);
        // Over the WebSocket layer's limit (64 KiB) the server stops
        // reading that message: the unread rest of it may make the
        // kernel reset the connection before the client reads the error
        // and the close (the server counts it all the same, below).
        if i == 1 && close.is_none() {
            assert!(matches!(r.as_deref(), None | Some("too-big")), "{r:?}");
            continue;
        }
        assert_eq!(r.as_deref(), Some(reason), "case {i}");
        assert_eq!(close, Some((code_, reason.to_string())), "case {i}");
    }
    // With a seat: a relay frame over 509 bytes, and to a slot that is not
    // a seat of this 2-player room.
    for (frame, code_, reason) in [
        (vec![1u8; 600], 1009, "too-big"),
        (vec![2u8, 0, 0], 1008, "no-such-slot"),
        (vec![9u8, 0, 0], 1008, "no-such-slot"),
    ] {
        let (mut w, _) = join_player(&s, &code);
        w.send(Message::binary(frame)).unwrap();
        let (r, close) = until_close(&mut w);
        assert_eq!(r.as_deref(), Some(reason));
        assert_eq!(close, Some((code_, reason.to_string())));
    }
    let m = s.rooms.metrics();
    assert_eq!(
        metric(&m, "tickwise_room_closes_total{reason=\"too-big\"} "),
        3
    );
    assert_eq!(
        metric(&m, "tickwise_room_closes_total{reason=\"bad-message\"} "),
        3
    );
    assert_eq!(
        metric(&m, "tickwise_room_closes_total{reason=\"no-such-slot\"} "),
        2
    );
    // An unknown code, or a path that is no code at all.
    for path in [
        "/v1/rooms/AAAAAAAAAAAAAAAAAAAAAA",
        "/v1/rooms/..%2f..%2fetc",
    ] {
        let mut w = ws_with(s.addr, path, None).unwrap();
        let (r, close) = until_close(&mut w);
        assert_eq!(r.as_deref(), Some("no-such-room"), "{path}");
        assert_eq!(close.map(|c| c.0), Some(1008));
    }
}

#[test]
fn a_client_that_never_finishes_its_http_handshake_is_cut_off() {
    let s = start(RoomLimits::default(), serve_conn());
    let code = create(&s, ROOM);
    let mut raw = TcpStream::connect(s.addr).unwrap();
    std::io::Write::write_all(
        &mut raw,
        format!("GET /v1/rooms/{code} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n")
            .as_bytes(),
    )
    .unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let t = Instant::now();
    let mut out = Vec::new();
    let _ = std::io::Read::read_to_end(&mut raw, &mut out);
    // The head deadline (1 s here) ends it; no room connection was made.
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(s.rooms.stats().connections_opened, 0);
}

#[test]
fn foreign_origins_cannot_open_a_room_socket() {
    let s = start(RoomLimits::default(), serve_conn());
    let code = create(&s, ROOM);
    let path = format!("/v1/rooms/{code}");
    match ws_with(s.addr, &path, Some("http://evil.example")) {
        Err(tungstenite::Error::Http(r)) => assert_eq!(r.status(), 403),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(ws_with(s.addr, &path, Some("http://127.0.0.1:8080")).is_ok());
}

#[test]
fn relay_over_the_rooms_budget_is_dropped_and_counted() {
    // 20 000 bytes/s, 5 000 held: 10 datagrams of 500 at once, then 40/s.
    let limits = RoomLimits {
        relay_bytes_per_s: 20_000,
        relay_burst_bytes: 5_000,
        ..RoomLimits::default()
    };
    let s = start(limits, serve_conn());
    let code = create(&s, ROOM);
    let (mut a, _) = join_player(&s, &code);
    let (mut b, _) = join_player(&s, &code);
    let _ = next(&mut a); // joined
    let t = Instant::now();
    let frame = [&[1u8][..], &[7u8; 500][..]].concat();
    for _ in 0..200 {
        a.send(Message::binary(frame.clone())).unwrap();
    }
    send(&mut a, r#"{"t":"ping","id":1}"#);
    assert_eq!(next(&mut a), ServerMsg::Pong { id: Some(1) });
    let elapsed = t.elapsed();
    // Everything was handled by the pong; count what reached b.
    b.get_mut()
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut got = 0u64;
    while let Ok(m) = b.read() {
        if let Message::Binary(f) = m {
            assert_eq!((f[0], f.len()), (0, 501));
            got += 1;
        }
    }
    let st = s.rooms.stats();
    let most = (5_000 + 20_000 * elapsed.as_millis() as u64 / 1000) / 500 + 1;
    assert!(
        got >= 10 && got <= most,
        "{got} forwarded in {elapsed:?} (at most {most})"
    );
    assert_eq!(st.relay_frames, got);
    assert_eq!(st.relay_drops.over_rate, 200 - got);
    assert_eq!(st.relay_bytes, got * 500);
    // The sender was not disconnected for it.
    send(&mut a, r#"{"t":"ping","id":2}"#);
    assert_eq!(next(&mut a), ServerMsg::Pong { id: Some(2) });
}

#[test]
fn members_hear_shutdown_when_the_server_stops() {
    let mut s = start(RoomLimits::default(), serve_conn());
    let code = create(&s, ROOM);
    let (mut a, _) = join_player(&s, &code);
    let _ = s.stop.take().unwrap().send(());
    let (r, close) = until_close(&mut a);
    assert_eq!(r.as_deref(), Some("shutdown"));
    assert_eq!(close, Some((1001, "shutdown".into())));
}
