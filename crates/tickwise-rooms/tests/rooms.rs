//! The room state machine driven by hand: seats, the start rule, rejoin of
//! an empty seat, signalling, the relay and its budget, caps, deadlines.
//! Expected values are worked out by hand from docs/rooms.md.

use std::net::IpAddr;

use proptest::prelude::*;
use tickwise_rooms::{
    Action, ConnId, CreateRefused, Reason, Role, RoomLimits, RoomSpec, Rooms, ServerMsg,
};

const CODE: &str = "AAECAwQFBgcICQoLDA0ODw";
const KEY: [u8; 16] = *b"0123456789abcdef";

fn spec(players: u8, spectators: u8) -> RoomSpec {
    RoomSpec {
        sim: "horde".into(),
        version: 3,
        config: "{}".into(),
        players,
        spectators,
        ticks: 600,
        check_every: 1,
        disconnect_after: 300,
    }
}

fn ip(n: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, n])
}

struct H {
    rooms: Rooms,
    now: u64,
    out: Vec<Action>,
}

impl H {
    fn new(players: u8, spectators: u8) -> H {
        H::with(players, spectators, RoomLimits::default())
    }

    fn with(players: u8, spectators: u8, limits: RoomLimits) -> H {
        let mut rooms = Rooms::new(limits);
        rooms
            .create(spec(players, spectators), CODE.into(), KEY, 0)
            .unwrap();
        H {
            rooms,
            now: 0,
            out: Vec::new(),
        }
    }

    fn connect(&mut self) -> ConnId {
        self.rooms.connect(CODE, ip(1), self.now).unwrap()
    }

    fn text(&mut self, c: ConnId, t: &str) {
        self.rooms.on_text(c, t, self.now, &mut self.out);
    }

    fn bin(&mut self, c: ConnId, f: &[u8]) {
        self.rooms.on_binary(c, f, self.now, &mut self.out);
    }

    fn join(&mut self, role: &str) -> ConnId {
        let c = self.connect();
        self.text(c, &format!(r#"{{"t":"join","role":"{role}"}}"#));
        c
    }

    /// Takes every action so far: (text messages per connection, binary
    /// frames per connection, closes).
    fn take(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.out)
    }

    fn msgs_to(actions: &[Action], c: ConnId) -> Vec<ServerMsg> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Text { to, text } if *to == c => Some(ServerMsg::parse(text).unwrap()),
                _ => None,
            })
            .collect()
    }

    fn closes(actions: &[Action]) -> Vec<(ConnId, u16, &'static str)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Close { to, code, reason } => Some((*to, *code, *reason)),
                _ => None,
            })
            .collect()
    }

    fn frames(actions: &[Action]) -> Vec<(ConnId, Vec<u8>)> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Binary { to, frame } => Some((*to, frame.clone())),
                _ => None,
            })
            .collect()
    }
}

fn welcome(msgs: &[ServerMsg]) -> &tickwise_rooms::Welcome {
    msgs.iter()
        .find_map(|m| match m {
            ServerMsg::Welcome(w) => Some(w),
            _ => None,
        })
        .expect("a welcome")
}

fn error_reason(msgs: &[ServerMsg]) -> Option<String> {
    msgs.iter().find_map(|m| match m {
        ServerMsg::Error { reason, .. } => Some(reason.clone()),
        _ => None,
    })
}

#[test]
fn two_players_get_seats_and_the_key_and_start_when_both_are_ready() {
    let mut h = H::new(2, 0);
    let a = h.join("player");
    let acts = h.take();
    let w = welcome(&H::msgs_to(&acts, a)).clone();
    assert_eq!((w.slot, w.role, w.started), (0, Role::Player, false));
    assert_eq!(w.session_key, "30313233343536373839616263646566");
    assert_eq!(w.code, CODE);
    assert_eq!(w.spec, spec(2, 0));
    assert!(w.peers.is_empty());

    h.text(a, r#"{"t":"ready"}"#);
    let acts = h.take();
    assert_eq!(H::msgs_to(&acts, a), [ServerMsg::Ready { slot: 0 }]);
    assert_eq!(h.rooms.started(CODE), Some(false), "one of two ready");

    let b = h.join("player");
    let acts = h.take();
    let wb = welcome(&H::msgs_to(&acts, b)).clone();
    assert_eq!(wb.slot, 1);
    assert_eq!(wb.session_key, w.session_key, "one key per room");
    assert_eq!(wb.peers.len(), 1);
    assert_eq!(
        (wb.peers[0].slot, wb.peers[0].ready),
        (0, true),
        "b sees a is ready"
    );
    assert_eq!(
        H::msgs_to(&acts, a),
        [ServerMsg::Joined {
            slot: 1,
            role: Role::Player
        }]
    );

    h.text(b, r#"{"t":"ready"}"#);
    let acts = h.take();
    for c in [a, b] {
        assert_eq!(
            H::msgs_to(&acts, c),
            [ServerMsg::Ready { slot: 1 }, ServerMsg::Start {}],
            "conn {c}"
        );
    }
    assert_eq!(h.rooms.started(CODE), Some(true));
    // Ready again after the start: nothing.
    h.text(a, r#"{"t":"ready"}"#);
    assert!(h.take().is_empty());
    assert_eq!(h.rooms.stats().starts, 1);

    // A third player: no seat.
    let c = h.join("player");
    let acts = h.take();
    assert_eq!(
        error_reason(&H::msgs_to(&acts, c)).as_deref(),
        Some("room-full")
    );
    assert_eq!(H::closes(&acts), [(c, 1013, "room-full")]);
}

#[test]
fn a_player_who_leaves_before_the_start_is_not_ready_any_more() {
    let mut h = H::new(2, 0);
    let a = h.join("player");
    let b = h.join("player");
    h.text(a, r#"{"t":"ready"}"#);
    h.rooms.disconnect(a, h.now, &mut h.out);
    let acts = h.take();
    assert!(H::msgs_to(&acts, b).contains(&ServerMsg::Left { slot: 0 }));
    // Seat 0 is free again; its new player must say ready itself.
    let a2 = h.join("player");
    let acts = h.take();
    let w = welcome(&H::msgs_to(&acts, a2)).clone();
    assert_eq!((w.slot, w.started), (0, false));
    h.text(b, r#"{"t":"ready"}"#);
    assert_eq!(h.rooms.started(CODE), Some(false), "a2 is not ready");
    h.text(a2, r#"{"t":"ready"}"#);
    assert_eq!(h.rooms.started(CODE), Some(true));
}

#[test]
fn an_empty_seat_of_a_started_room_is_taken_back() {
    let mut h = H::new(3, 0);
    let p: Vec<ConnId> = (0..3).map(|_| h.join("player")).collect();
    for &c in &p {
        h.text(c, r#"{"t":"ready"}"#);
    }
    assert_eq!(h.rooms.started(CODE), Some(true));
    h.take();
    // Player 1's process dies.
    h.rooms.disconnect(p[1], h.now, &mut h.out);
    let acts = h.take();
    for c in [p[0], p[2]] {
        assert_eq!(H::msgs_to(&acts, c), [ServerMsg::Left { slot: 1 }]);
    }
    // Asking for a taken seat, or one that is not a player seat.
    let x = h.connect();
    h.text(x, r#"{"t":"join","role":"player","slot":0}"#);
    let acts = h.take();
    assert_eq!(H::closes(&acts), [(x, 1013, "room-full")]);
    let y = h.connect();
    h.text(y, r#"{"t":"join","role":"player","slot":3}"#);
    let acts = h.take();
    assert_eq!(H::closes(&acts), [(y, 1008, "no-such-slot")]);
    // The new process takes seat 1 back, with the same key, no ready.
    let z = h.connect();
    h.text(z, r#"{"t":"join","role":"player","slot":1}"#);
    let acts = h.take();
    let w = welcome(&H::msgs_to(&acts, z)).clone();
    assert_eq!((w.slot, w.started), (1, true));
    assert_eq!(w.session_key, "30313233343536373839616263646566");
    assert_eq!(
        H::msgs_to(&acts, p[0]),
        [ServerMsg::Joined {
            slot: 1,
            role: Role::Player
        }]
    );
    assert_eq!(h.rooms.stats().rejoins, 1);
    assert_eq!(h.rooms.stats().starts, 1, "no second start");
}

#[test]
fn spectators_take_spectator_seats_and_are_never_waited_for() {
    let mut h = H::new(2, 1);
    let s = h.join("spectator");
    let acts = h.take();
    assert_eq!(welcome(&H::msgs_to(&acts, s)).slot, 4);
    h.text(s, r#"{"t":"ready"}"#);
    assert!(h.take().is_empty(), "a spectator's ready is ignored");
    let a = h.join("player");
    let b = h.join("player");
    h.text(a, r#"{"t":"ready"}"#);
    h.text(b, r#"{"t":"ready"}"#);
    let acts = h.take();
    assert!(H::msgs_to(&acts, s).contains(&ServerMsg::Start {}));
    let s2 = h.join("spectator");
    let acts = h.take();
    assert_eq!(H::closes(&acts), [(s2, 1013, "room-full")]);
}

#[test]
fn signals_are_forwarded_with_the_senders_seat() {
    let mut h = H::new(2, 0);
    let a = h.join("player");
    let b = h.join("player");
    h.take();
    h.text(
        a,
        r#"{"t":"signal","to":1,"data":{"type":"offer","sdp":"v=0"}}"#,
    );
    let acts = h.take();
    assert_eq!(
        H::msgs_to(&acts, b),
        [ServerMsg::Signal {
            from: 0,
            data: serde_json::json!({"type":"offer","sdp":"v=0"})
        }]
    );
    h.rooms.disconnect(b, h.now, &mut h.out);
    h.take();
    h.text(a, r#"{"t":"signal","to":1,"data":null}"#);
    assert!(h.take().is_empty(), "to an empty seat: dropped");
    assert_eq!(h.rooms.stats().signal_drops, 1);
    h.text(a, r#"{"t":"signal","to":0,"data":null}"#);
    let acts = h.take();
    assert_eq!(H::closes(&acts), [(a, 1008, "no-such-slot")]);
}

#[test]
fn relay_frames_are_forwarded_with_the_senders_seat_and_never_read() {
    let mut h = H::new(3, 0);
    let a = h.join("player");
    let b = h.join("player");
    let c = h.join("player");
    h.take();
    h.bin(a, &[2, 0xde, 0xad]);
    h.bin(c, &[1, 7]);
    h.bin(b, &[0]);
    let acts = h.take();
    assert_eq!(
        H::frames(&acts),
        [(c, vec![0, 0xde, 0xad]), (b, vec![2, 7]), (a, vec![1])]
    );
    let s = h.rooms.stats();
    assert_eq!((s.relay_frames, s.relay_bytes), (3, 3));
    // To an empty seat: dropped and counted, the sender stays.
    h.rooms.disconnect(c, h.now, &mut h.out);
    h.take();
    h.bin(a, &[2, 1, 2, 3]);
    assert!(h.take().is_empty());
    assert_eq!(h.rooms.stats().relay_drops.empty_seat, 1);
    // To a slot that is not a seat of the room: refused.
    h.bin(a, &[3, 1]);
    let acts = h.take();
    assert_eq!(H::closes(&acts), [(a, 1008, "no-such-slot")]);
    assert_eq!(H::msgs_to(&acts, b), [ServerMsg::Left { slot: 0 }]);
    // To its own seat: refused too.
    h.bin(b, &[1, 1]);
    assert_eq!(H::closes(&h.take()), [(b, 1008, "no-such-slot")]);
}

#[test]
fn bad_relay_frames_are_refused_with_their_reason() {
    let mut h = H::new(2, 0);
    // Before a seat.
    let x = h.connect();
    h.bin(x, &[1, 2]);
    assert_eq!(H::closes(&h.take()), [(x, 1008, "bad-message")]);
    let a = h.join("player");
    let _b = h.join("player");
    h.take();
    h.bin(a, &[]);
    assert_eq!(H::closes(&h.take()), [(a, 1008, "bad-message")]);
    let a = h.join("player");
    h.take();
    h.bin(a, &[1; 509]);
    assert_eq!(h.rooms.stats().relay_frames, 1, "509 bytes is the limit");
    h.bin(a, &[1; 510]);
    let acts = h.take();
    assert_eq!(
        error_reason(&H::msgs_to(&acts, a)).as_deref(),
        Some("too-big")
    );
    assert_eq!(H::closes(&acts), [(a, 1009, "too-big")]);
}

#[test]
fn the_relay_budget_is_a_token_bucket_per_room() {
    // Default: 262 144 bytes/s, 65 536 held. 500-byte datagrams: 131 fit
    // the burst (65 500), the 132nd does not (36 bytes left).
    let mut h = H::new(2, 0);
    let a = h.join("player");
    let b = h.join("player");
    h.take();
    let frame = [&[1u8][..], &[0u8; 500][..]].concat();
    for _ in 0..140 {
        h.bin(a, &frame);
    }
    let s = h.rooms.stats();
    assert_eq!((s.relay_frames, s.relay_drops.over_rate), (131, 9));
    // 100 ms later: 36 + 26 214.4 bytes = 52 frames of 500.
    h.now = 100;
    for _ in 0..60 {
        h.bin(b, &[&[0u8][..], &[0u8; 500][..]].concat());
    }
    let s = h.rooms.stats();
    assert_eq!((s.relay_frames, s.relay_drops.over_rate), (131 + 52, 9 + 8));
    // The room's budget is shared by its members, and the senders stay.
    assert!(H::closes(&h.take()).is_empty());
}

#[test]
fn bad_text_messages_close_with_a_reason() {
    for (text, code, reason) in [
        ("not json", 1008, "bad-message"),
        (r#"{"t":"join","role":"player","x":1}"#, 1008, "bad-message"),
        (r#"{"t":"ready"}"#, 1008, "bad-message"), // before join
        (r#"{"t":"signal","to":1,"data":1}"#, 1008, "bad-message"),
    ] {
        let mut h = H::new(2, 0);
        let c = h.connect();
        h.text(c, text);
        let acts = h.take();
        assert_eq!(H::closes(&acts), [(c, code, reason)], "{text}");
        assert_eq!(error_reason(&H::msgs_to(&acts, c)).as_deref(), Some(reason));
    }
    let mut h = H::new(2, 0);
    let c = h.join("player");
    h.text(c, r#"{"t":"join","role":"player"}"#);
    assert_eq!(H::closes(&h.take()), [(c, 1008, "bad-message")]);
    let c = h.join("player");
    h.text(
        c,
        &format!(r#"{{"t":"ping","id":1,"pad":"{}"}}"#, "x".repeat(16_400)),
    );
    assert_eq!(H::closes(&h.take()), [(c, 1009, "too-big")]);
}

#[test]
fn a_signal_that_grows_past_the_limit_when_forwarded_is_too_big() {
    // 3 600 × "1e9," is 14 400 bytes in, 3 600 × "1000000000.0," out.
    let mut h = H::new(2, 0);
    let a = h.join("player");
    let _b = h.join("player");
    h.take();
    let many = vec!["1e9"; 3_600].join(",");
    let text = format!(r#"{{"t":"signal","to":1,"data":[{many}]}}"#);
    assert!(text.len() < 16_384);
    h.text(a, &text);
    let acts = h.take();
    assert_eq!(H::closes(&acts), [(a, 1009, "too-big")]);
    assert_eq!(h.rooms.stats().signals, 0);
}

#[test]
fn ping_is_answered_before_and_after_join_and_leave_closes_cleanly() {
    let mut h = H::new(2, 0);
    let c = h.connect();
    h.text(c, r#"{"t":"ping","id":42}"#);
    h.text(c, r#"{"t":"ping"}"#);
    let acts = h.take();
    assert_eq!(
        H::msgs_to(&acts, c),
        [
            ServerMsg::Pong { id: Some(42) },
            ServerMsg::Pong { id: None }
        ]
    );
    h.text(c, r#"{"t":"join","role":"player"}"#);
    let d = h.join("player");
    h.take();
    h.text(c, r#"{"t":"leave"}"#);
    let acts = h.take();
    assert_eq!(H::closes(&acts), [(c, 1000, "leave")]);
    assert_eq!(H::msgs_to(&acts, d), [ServerMsg::Left { slot: 0 }]);
}

#[test]
fn a_text_flood_is_too_fast() {
    // 100 at once, then 20 a second.
    let mut h = H::new(2, 0);
    let c = h.connect();
    for _ in 0..100 {
        h.text(c, r#"{"t":"ping"}"#);
    }
    assert!(H::closes(&h.take()).is_empty());
    h.now = 50; // one more token
    h.text(c, r#"{"t":"ping"}"#);
    assert!(H::closes(&h.take()).is_empty());
    h.text(c, r#"{"t":"ping"}"#);
    assert_eq!(H::closes(&h.take()), [(c, 1008, "too-fast")]);
}

#[test]
fn caps_rooms_addresses_and_connections_per_room() {
    let limits = RoomLimits {
        max_rooms: 2,
        max_conns_per_ip: 5,
        ..RoomLimits::default()
    };
    let mut rooms = Rooms::new(limits);
    rooms.create(spec(2, 0), "a".repeat(22), KEY, 0).unwrap();
    rooms.create(spec(2, 0), "b".repeat(22), KEY, 0).unwrap();
    assert_eq!(
        rooms.create(spec(2, 0), "c".repeat(22), KEY, 0),
        Err(CreateRefused::TooManyRooms { limit: 2 })
    );
    assert_eq!(
        rooms.create(spec(2, 0), "a".repeat(22), KEY, 0).err(),
        Some(CreateRefused::TooManyRooms { limit: 2 })
    );
    // Room cap: 2 seats + 2 in their handshake.
    let a = "a".repeat(22);
    for _ in 0..4 {
        rooms.connect(&a, ip(1), 0).unwrap();
    }
    let r = rooms.connect(&a, ip(2), 0).unwrap_err();
    assert_eq!(r.reason, Reason::TooManyConnections);
    assert!(r.message.contains("limit of 4"), "{}", r.message);
    // Address cap: 5 per IP across rooms.
    let b = "b".repeat(22);
    rooms.connect(&b, ip(1), 0).unwrap();
    let r = rooms.connect(&b, ip(1), 0).unwrap_err();
    assert_eq!(r.reason, Reason::TooManyConnections);
    rooms.connect(&b, ip(3), 0).unwrap();
    let r = rooms.connect(&"z".repeat(22), ip(9), 0).unwrap_err();
    assert_eq!(r.reason, Reason::NoSuchRoom);
    let s = rooms.stats();
    assert_eq!(
        (s.rooms_open, s.connections_open, s.rooms_refused),
        (2, 6, 2)
    );
    assert_eq!(s.closes[Reason::TooManyConnections.index()], 2);
}

#[test]
fn deadlines_join_idle_and_room_expiry() {
    let limits = RoomLimits::default();
    let mut h = H::with(2, 0, limits);
    let slow = h.connect(); // never joins
    let quiet = h.join("player"); // joins, then says nothing
    let chatty = h.join("player");
    h.take();
    h.now = 4_999;
    h.rooms.tick(h.now, &mut h.out);
    assert!(h.take().is_empty());
    h.now = 5_000;
    h.rooms.tick(h.now, &mut h.out);
    assert_eq!(H::closes(&h.take()), [(slow, 1008, "join-deadline")]);
    h.now = 20_000;
    h.text(chatty, r#"{"t":"ping"}"#);
    h.take();
    h.now = 30_000;
    h.rooms.tick(h.now, &mut h.out);
    let acts = h.take();
    assert_eq!(H::closes(&acts), [(quiet, 1000, "idle")]);
    assert_eq!(H::msgs_to(&acts, chatty), [ServerMsg::Left { slot: 0 }]);
    // The room empties at 50 s and is removed 60 s later.
    h.now = 50_000;
    h.rooms.tick(h.now, &mut h.out);
    assert_eq!(H::closes(&h.take()), [(chatty, 1000, "idle")]);
    h.now = 109_999;
    h.rooms.tick(h.now, &mut h.out);
    assert!(h.rooms.has_room(CODE));
    h.now = 110_000;
    h.rooms.tick(h.now, &mut h.out);
    assert!(!h.rooms.has_room(CODE));
    assert_eq!(
        h.rooms.connect(CODE, ip(1), h.now).unwrap_err().reason,
        Reason::NoSuchRoom
    );
}

#[test]
fn an_old_room_closes_on_everyone() {
    let limits = RoomLimits {
        max_room_age_ms: 1_000,
        client_idle_ms: 10_000,
        ..RoomLimits::default()
    };
    let mut h = H::with(2, 0, limits);
    let a = h.join("player");
    h.now = 1_000;
    h.rooms.tick(h.now, &mut h.out);
    assert_eq!(H::closes(&h.take()), [(a, 1001, "expired")]);
    assert!(!h.rooms.has_room(CODE));
    assert_eq!(h.rooms.stats().rooms_closed, 1);
}

#[test]
fn metrics_name_every_drop_reason() {
    let h = H::new(2, 0);
    let text = h.rooms.stats().render();
    for line in [
        "tickwise_rooms_open 1",
        "tickwise_relay_drops_total{reason=\"over-rate\"} 0",
        "tickwise_relay_drops_total{reason=\"empty-seat\"} 0",
        "tickwise_relay_drops_total{reason=\"slow-receiver\"} 0",
        "tickwise_room_closes_total{reason=\"join-deadline\"} 0",
        "# TYPE tickwise_relay_bytes_total counter",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
}

#[derive(Clone, Debug)]
enum Ev {
    Connect,
    Join(usize, bool, Option<u8>),
    Ready(usize),
    Leave(usize),
    Drop(usize),
    Relay(usize, u8, u16),
    Signal(usize, u8),
    Garbage(usize),
    Wait(u16),
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        3 => Just(Ev::Connect),
        4 => (0..12usize, any::<bool>(), proptest::option::of(0u8..8)).prop_map(|(c, p, s)| Ev::Join(c, p, s)),
        3 => (0..12usize).prop_map(Ev::Ready),
        1 => (0..12usize).prop_map(Ev::Leave),
        1 => (0..12usize).prop_map(Ev::Drop),
        3 => (0..12usize, 0u8..8, 0u16..600).prop_map(|(c, t, n)| Ev::Relay(c, t, n)),
        1 => (0..12usize, 0u8..8).prop_map(|(c, t)| Ev::Signal(c, t)),
        1 => (0..12usize).prop_map(Ev::Garbage),
        1 => (0u16..3000).prop_map(Ev::Wait),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the clients do: a seat holds at most one connection and
    /// every seated connection is in its seat; the match starts once, and
    /// only when every player seat is taken and ready; frames go only to
    /// seated connections, from the sender's seat; nobody closed hears
    /// anything afterwards.
    #[test]
    fn seats_and_start_stay_consistent(players in 2u8..=4, spectators in 0u8..=2,
                                       evs in proptest::collection::vec(ev(), 1..120)) {
        let mut h = H::new(players, spectators);
        let mut conns: Vec<ConnId> = Vec::new();
        let mut closed: Vec<ConnId> = Vec::new();
        let mut starts = 0;
        let mut ready = [false; 12];
        let mut seat_of = std::collections::BTreeMap::<ConnId, u8>::new();
        for e in evs {
            let pick = |i: usize| conns.get(i % conns.len().max(1)).copied();
            match e {
                Ev::Connect => if let Ok(c) = h.rooms.connect(CODE, ip(1), h.now) { conns.push(c) },
                Ev::Join(i, p, s) => if let Some(c) = pick(i) {
                    let role = if p { "player" } else { "spectator" };
                    let t = match s { Some(s) => format!(r#"{{"t":"join","role":"{role}","slot":{s}}}"#),
                                      None => format!(r#"{{"t":"join","role":"{role}"}}"#) };
                    h.text(c, &t);
                },
                Ev::Ready(i) => if let Some(c) = pick(i) { h.text(c, r#"{"t":"ready"}"#) },
                Ev::Leave(i) => if let Some(c) = pick(i) { h.text(c, r#"{"t":"leave"}"#) },
                Ev::Drop(i) => if let Some(c) = pick(i) { h.rooms.disconnect(c, h.now, &mut h.out); closed.push(c); seat_of.remove(&c); },
                Ev::Relay(i, to, n) => if let Some(c) = pick(i) {
                    let mut f = vec![to]; f.resize(1 + usize::from(n), 9); h.bin(c, &f)
                },
                Ev::Signal(i, to) => if let Some(c) = pick(i) {
                    h.text(c, &format!(r#"{{"t":"signal","to":{to},"data":[1]}}"#))
                },
                Ev::Garbage(i) => if let Some(c) = pick(i) { h.text(c, "{\"t\":") },
                Ev::Wait(ms) => { h.now += u64::from(ms); h.rooms.tick(h.now, &mut h.out) },
            }
            let mut started_now = false;
            for a in h.take() {
                match a {
                    Action::Close { to, .. } => { seat_of.remove(&to); closed.push(to); }
                    Action::Text { to, text } => {
                        prop_assert!(!closed.contains(&to), "text to a closed connection");
                        match ServerMsg::parse(&text).unwrap() {
                            ServerMsg::Welcome(w) => { seat_of.insert(to, w.slot); ready[usize::from(w.slot)] = false; }
                            ServerMsg::Ready { slot } => ready[usize::from(slot)] = true,
                            ServerMsg::Left { slot } if h.rooms.started(CODE) == Some(false) => ready[usize::from(slot)] = false,
                            ServerMsg::Start {} => {
                                started_now = true;
                                for s in 0..players { prop_assert!(ready[usize::from(s)], "started with seat {s} not ready"); }
                            }
                            _ => {}
                        }
                    }
                    Action::Binary { to, frame } => {
                        prop_assert!(seat_of.contains_key(&to), "a frame to a connection without a seat");
                        prop_assert!(frame[0] != seat_of[&to], "a frame from the receiver's own seat");
                    }
                }
            }
            starts += u32::from(started_now);
            if let Some(seats) = h.rooms.seats_of(CODE) {
                for (s, c) in seats.iter().enumerate() {
                    if let Some(c) = c {
                        prop_assert_eq!(seat_of.get(c).copied(), Some(s as u8));
                        prop_assert!(seats.iter().filter(|x| *x == &Some(*c)).count() == 1);
                    }
                }
                for (c, s) in &seat_of {
                    prop_assert_eq!(seats[usize::from(*s)], Some(*c));
                }
            }
        }
        prop_assert!(starts <= 1, "started {} times", starts);
        prop_assert!(h.rooms.stats().starts <= 1);
    }
}
