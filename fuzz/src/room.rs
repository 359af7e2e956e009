//! The `room_message` target: the room protocol's parsers and the room
//! state machine (docs/rooms.md).

use tickwise_catalog::serde_json;

/// The room code of [`room_message`]'s room.
const ROOM_CODE: &str = "AAECAwQFBgcICQoLDA0ODw";

/// Target `room_message`: the room protocol's parsers and the room state
/// machine (docs/rooms.md).
///
/// * The whole input as a client's text frame (`ClientMsg::parse`): a
///   message that parses writes back to text that parses to the same
///   message (numbers to within serde_json's rounding); a refusal is `TooBig` exactly over the limit, else a short
///   `Invalid`. As a server's frame (`ServerMsg::parse`, the lenient
///   client side) and as a create body (`CreateRequest::parse`): accepted
///   values are in range and round-trip.
/// * Then the input drives a 2-player, 1-spectator room: records split at
///   `0xff`, the first byte of each an operation (low 3 bits: connect,
///   text, binary, disconnect, wait, join as player, ready, join as
///   spectator) and a connection (high bits), the rest its payload. After
///   every record: a seat holds a live connection that knows it is there,
///   nobody closed hears anything more, relay frames go to seated
///   connections from another seat and are at most 509 bytes, forwarded
///   signals at most 16 KiB and every server message parses, and the
///   match starts at most once.
///
/// # Panics
///
/// On a finding.
pub fn room_message(data: &[u8]) {
    use tickwise_rooms::{
        Action, ClientMsg, CreateRequest, MAX_RELAY_FRAME, MAX_SERVER_TEXT_BYTES, MAX_TEXT_BYTES,
        ParseError, RoomLimits, RoomSpec, Rooms, ServerMsg,
    };
    if let Ok(text) = std::str::from_utf8(data) {
        match ClientMsg::parse(text) {
            Ok(m) => {
                // Written back and read again it is the same message;
                // numbers to within serde_json's parsing, which is not
                // correctly rounded for long mantissas (the server forwards
                // signalling data verbatim, so it never re-rounds one).
                let t = m.to_text();
                let again = ClientMsg::parse(&t).expect("a parsed message writes back parsable");
                let (x, y): (serde_json::Value, serde_json::Value) = (
                    serde_json::from_str(&t).expect("JSON"),
                    serde_json::from_str(&again.to_text()).expect("JSON"),
                );
                assert!(json_close(&x, &y), "round trip of {text:?}: {x} / {y}");
            }
            Err(ParseError::TooBig { len, limit }) => {
                assert!(len == text.len() && len > limit && limit == MAX_TEXT_BYTES);
            }
            Err(ParseError::Invalid { detail }) => assert!(detail.len() <= 210, "{detail}"),
        }
        if let Ok(m) = ServerMsg::parse(text)
            && m != ServerMsg::Unknown
        {
            let t = m.to_text();
            let again = ServerMsg::parse(&t).expect("a server message writes back parsable");
            let (x, y): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(&t).expect("JSON"),
                serde_json::from_str(&again.to_text()).expect("JSON"),
            );
            assert!(json_close(&x, &y), "round trip of {text:?}: {x} / {y}");
        }
    }
    if let Ok(r) = CreateRequest::parse(data) {
        assert!((2..=4).contains(&r.players) && r.spectators <= 8, "{r:?}");
        assert!(r.ticks >= 1 && r.check_every >= 1 && r.disconnect_after >= 1);
        assert!(r.config.as_ref().is_none_or(|c| c.len() <= 16 * 1024));
    }

    let mut rooms = Rooms::new(RoomLimits {
        text_burst: 10_000,
        relay_burst_bytes: 4_096,
        relay_bytes_per_s: 10_000,
        ..RoomLimits::default()
    });
    let spec = RoomSpec {
        sim: "horde".into(),
        version: 3,
        config: "{}".into(),
        players: 2,
        spectators: 1,
        ticks: 60,
        check_every: 1,
        disconnect_after: 30,
    };
    rooms
        .create(spec, ROOM_CODE.into(), [7; 16], 0)
        .expect("one room");
    let ip = std::net::IpAddr::from([127, 0, 0, 1]);
    let mut conns: Vec<u64> = Vec::new();
    let mut closed: Vec<u64> = Vec::new();
    let mut seat_of = std::collections::BTreeMap::<u64, u8>::new();
    let mut now = 0u64;
    let mut out = Vec::new();
    for rec in data.split(|&b| b == 0xff).take(64) {
        let Some((&op, rest)) = rec.split_first() else {
            continue;
        };
        let pick = conns
            .get(usize::from(op >> 3) % conns.len().max(1))
            .copied();
        match (op & 7, pick) {
            (0, _) => {
                if let Ok(c) = rooms.connect(ROOM_CODE, ip, now) {
                    conns.push(c);
                }
            }
            (1, Some(c)) => rooms.on_text(c, &String::from_utf8_lossy(rest), now, &mut out),
            (2, Some(c)) => rooms.on_binary(c, rest, now, &mut out),
            (3, Some(c)) => {
                rooms.disconnect(c, now, &mut out);
                closed.push(c);
                seat_of.remove(&c);
            }
            (4, _) => {
                now += u64::from(rest.first().copied().unwrap_or(1)) * 100;
                rooms.tick(now, &mut out);
            }
            (5 | 7, Some(c)) => {
                let role = if op & 7 == 5 { "player" } else { "spectator" };
                let slot = rest
                    .first()
                    .map_or(String::new(), |s| format!(r#","slot":{s}"#));
                let t = format!(r#"{{"t":"join","role":"{role}"{slot}}}"#);
                rooms.on_text(c, &t, now, &mut out);
            }
            (6, Some(c)) => rooms.on_text(c, r#"{"t":"ready"}"#, now, &mut out),
            _ => {}
        }
        for a in out.drain(..) {
            match a {
                Action::Close { to, .. } => {
                    seat_of.remove(&to);
                    closed.push(to);
                }
                Action::Text { to, text } => {
                    assert!(!closed.contains(&to), "a message to a closed connection");
                    assert!(text.len() <= MAX_SERVER_TEXT_BYTES);
                    match ServerMsg::parse(&text).expect("server messages parse") {
                        ServerMsg::Welcome(w) => {
                            seat_of.insert(to, w.slot);
                        }
                        ServerMsg::Signal { .. } => assert!(text.len() <= MAX_TEXT_BYTES),
                        ServerMsg::Unknown => panic!("the server sent {text}"),
                        _ => {}
                    }
                }
                Action::Binary { to, frame } => {
                    assert!(frame.len() <= MAX_RELAY_FRAME);
                    let own = seat_of.get(&to).expect("frames go to seated connections");
                    assert_ne!(frame.first(), Some(own));
                }
            }
        }
        assert!(rooms.stats().starts <= 1, "the match started twice");
        if let Some(seats) = rooms.seats_of(ROOM_CODE) {
            for (s, c) in seats.iter().enumerate() {
                if let Some(c) = c {
                    assert_eq!(seat_of.get(c).map(|&x| usize::from(x)), Some(s));
                    assert_eq!(rooms.seat(*c).map(usize::from), Some(s));
                }
            }
            for (c, s) in &seat_of {
                assert_eq!(seats[usize::from(*s)], Some(*c));
            }
        }
    }
}

/// `a` and `b` are the same JSON value, numbers equal or within a relative
/// 1e-15 of each other (serde_json's best-effort float parsing).
fn json_close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                || match (x.as_f64(), y.as_f64()) {
                    (Some(p), Some(q)) => (p - q).abs() <= 1e-15 * p.abs().max(q.abs()),
                    _ => false,
                }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_close(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, p), (l, q))| k == l && json_close(p, q))
        }
        _ => a == b,
    }
}
