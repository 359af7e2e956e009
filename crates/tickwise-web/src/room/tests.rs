//! Room matches natively: two pages (two "tabs") over the seeded network
//! simulator, built from `welcome` messages as the room sends them.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Value, json};
use tickwise::{Nanos, Timestamp};
use tickwise_catalog::CatalogSim;
use tickwise_net::{Datagram, NetworkConfig, SimNetwork, Transport};
use tickwise_sims::horde::HordeWorld;

use super::{RoomMatchPage, RoomPageError, Welcome};
use crate::horde_room::HordeRoom;
use crate::test_support::verified;

type Page = RoomMatchPage<HordeRoom, Port>;

fn parse(text: &str) -> Result<Welcome, RoomPageError> {
    Welcome::parse(text, Page::sim_info())
}

const KEY: &str = "000102030405060708090a0b0c0d0e0f";

/// One slot's port on a shared simulated network.
#[derive(Debug)]
struct Port {
    net: Rc<RefCell<SimNetwork>>,
    slot: u8,
}

impl Transport for Port {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        self.net.borrow_mut().port(self.slot).send(to, bytes);
    }
    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        self.net.borrow_mut().port(self.slot).recv(buf)
    }
}

fn two_player_config() -> String {
    let c = tickwise_catalog::Catalog::builtin()
        .config_for_players("horde", Some(crate::horde::HORDE_JSON), 2)
        .unwrap();
    String::from_utf8(c).unwrap()
}

fn welcome(slot: u8, ticks: u64, started: bool) -> Value {
    json!({
        "t": "welcome", "slot": slot, "role": "player", "code": "abc",
        "sim": "horde", "version": HordeWorld::VERSION, "config": two_player_config(),
        "players": 2, "spectators": 0, "ticks": ticks, "checkEvery": 1,
        "disconnectAfter": 60, "sessionKey": KEY, "started": started,
        "peers": [], "someFutureField": true,
    })
}

fn page(net: &Rc<RefCell<SimNetwork>>, slot: u8, ticks: u64, started: bool, epoch: u64) -> Page {
    let w = parse(&welcome(slot, ticks, started).to_string()).unwrap();
    let port = Port {
        net: Rc::clone(net),
        slot,
    };
    Page::new(w, port, epoch).unwrap()
}

fn network(rtt_ms: u64, loss_pct: u32) -> Rc<RefCell<SimNetwork>> {
    Rc::new(RefCell::new(SimNetwork::new(NetworkConfig {
        latency: Nanos::from_millis(rtt_ms / 2),
        loss_ppm: loss_pct * 10_000,
        seed: 5,
        ..NetworkConfig::PERFECT
    })))
}

/// Moves the network and every present page by `ms`, `frames` times.
fn run(
    net: &Rc<RefCell<SimNetwork>>,
    pages: &mut [Option<&mut Page>],
    frames: u64,
    ms: u64,
    clock: &mut u64,
) {
    for _ in 0..frames {
        *clock += ms;
        net.borrow_mut()
            .advance_to(Timestamp::from_nanos(*clock * 1_000_000));
        for p in pages.iter_mut().flatten() {
            let _ = p.advance(ms);
        }
    }
}

fn state(p: &Page) -> Value {
    p.state_json(Value::Null)
}

#[test]
fn the_welcome_is_read_and_bad_ones_name_the_field() {
    let w = parse(&welcome(1, 900, false).to_string()).unwrap();
    assert_eq!((w.slot, w.players, w.ticks, w.started), (1, 2, 900, false));
    assert_eq!(w.session_config().stop_at, Some(900));
    assert_eq!(w.session_config().disconnect_after, 60);
    let field = |mutate: &dyn Fn(&mut Value)| {
        let mut v = welcome(0, 900, false);
        mutate(&mut v);
        match parse(&v.to_string()) {
            Err(RoomPageError::Welcome { field, .. }) => field,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(field(&|v| v["slot"] = json!(2)), "slot");
    assert_eq!(field(&|v| v["slot"] = json!(-1)), "slot");
    assert_eq!(field(&|v| v["players"] = json!(5)), "players");
    assert_eq!(field(&|v| v["sessionKey"] = json!("00")), "sessionKey");
    assert_eq!(field(&|v| v["ticks"] = json!(0)), "ticks");
    assert_eq!(field(&|v| v["started"] = json!("no")), "started");
    assert_eq!(field(&|v| v["role"] = json!("spectator")), "role");
    assert_eq!(field(&|v| v["config"] = json!(7)), "config");
    assert_eq!(field(&|v| v["t"] = json!("start")), "t");
    assert!(matches!(
        parse("[1, 2]"),
        Err(RoomPageError::Welcome { field: "json", .. })
    ));
    assert!(matches!(
        parse("{"),
        Err(RoomPageError::Welcome { field: "json", .. })
    ));
    let mut v = welcome(0, 900, false);
    v["version"] = json!(HordeWorld::VERSION + 1);
    assert!(matches!(
        parse(&v.to_string()),
        Err(RoomPageError::Sim { .. })
    ));
    v["version"] = json!(HordeWorld::VERSION);
    v["sim"] = json!("duel");
    let e = parse(&v.to_string()).unwrap_err();
    assert!(e.to_string().contains("`duel`"), "{e}");
    // A config for three heroes in a room of two players is refused.
    let three = tickwise_catalog::Catalog::builtin()
        .config_for_players("horde", Some(crate::horde::HORDE_JSON), 3)
        .unwrap();
    v = welcome(0, 900, false);
    v["config"] = json!(String::from_utf8(three).unwrap());
    let w = parse(&v.to_string()).unwrap();
    let net = network(0, 0);
    let port = Port { net, slot: 0 };
    assert!(matches!(
        Page::new(w, port, 1),
        Err(RoomPageError::Welcome {
            field: "config",
            ..
        })
    ));
}

#[test]
fn two_tabs_each_move_only_their_own_hero_and_agree() {
    let net = network(80, 5);
    let (mut a, mut b) = (page(&net, 0, 240, false, 1), page(&net, 1, 240, false, 2));
    let start = state(&a)["heroes"].clone();
    let mut clock = 0;
    run(&net, &mut [Some(&mut a), Some(&mut b)], 5, 16, &mut clock);
    // Tab A holds Right, tab B holds Down, each on its own keyboard.
    a.key("ArrowRight", true, 100.0).unwrap();
    b.key("ArrowDown", true, 100.0).unwrap();
    run(&net, &mut [Some(&mut a), Some(&mut b)], 150, 16, &mut clock);
    a.key("ArrowRight", false, 2_500.0).unwrap();
    b.key("ArrowDown", false, 2_500.0).unwrap();
    run(&net, &mut [Some(&mut a), Some(&mut b)], 600, 16, &mut clock);
    let (sa, sb) = (state(&a), state(&b));
    for s in [&sa, &sb] {
        assert_eq!(s["finished"], true, "{s}");
        assert_eq!(s["confirmedTick"], 240);
        assert_eq!(s["desyncs"], 0);
        assert_eq!(s["phase"], "playing");
    }
    assert_eq!(sa["confirmedChecksum"], sb["confirmedChecksum"]);
    assert_eq!(sa["heroes"], sb["heroes"]);
    let at = |v: &Value, h: usize, k: &str| v[h][k].as_i64().unwrap();
    let h = &sa["heroes"];
    // Hero 0: right only, in whole steps of playerSpeed (768 / 256 px a
    // tick); hero 1: down only.
    let dx = at(h, 0, "x") - at(&start, 0, "x");
    assert!(dx > 0 && dx % 768 == 0, "hero 0 moved {dx}");
    assert_eq!(at(h, 0, "y"), at(&start, 0, "y"));
    let dy = at(h, 1, "y") - at(&start, 1, "y");
    assert!(dy > 0 && dy % 768 == 0, "hero 1 moved {dy}");
    assert_eq!(at(h, 1, "x"), at(&start, 1, "x"));
    // Both tabs' replays are the same bytes and verify to the checksum.
    let (ra, rb) = (a.replay_bytes().unwrap(), b.replay_bytes().unwrap());
    assert_eq!(ra, rb);
    let (ticks, digest) = verified(&ra);
    assert_eq!(ticks, 240);
    assert_eq!(digest.rsplit('|').next(), sa["confirmedChecksum"].as_str());
    // 40 ms each way at 30 Hz is 1.2 ticks: remote inputs arrive late.
    let lag = &sa["lag"];
    assert!(lag["samples"].as_u64().unwrap() > 200, "{lag}");
    assert!(lag["max"].as_u64().unwrap() >= 1, "{lag}");
}

#[test]
fn a_tab_away_past_disconnect_after_rejoins_and_the_match_ends_clean() {
    let net = network(40, 0);
    let (mut a, mut b) = (page(&net, 0, 600, false, 1), page(&net, 1, 600, false, 2));
    let mut clock = 0;
    run(&net, &mut [Some(&mut a), Some(&mut b)], 100, 33, &mut clock);
    // Tab B is hidden: its loop stops; A goes on and, after 60 silent
    // ticks, agrees that B left.
    run(&net, &mut [Some(&mut a), None], 120, 33, &mut clock);
    assert!(state(&a)["departed"][1].is_u64(), "{}", state(&a));
    // B comes back through the room: a new welcome with `started`.
    drop(b);
    let mut b2 = page(&net, 1, 600, true, 99);
    assert_eq!(state(&b2)["phase"], "rejoining");
    run(
        &net,
        &mut [Some(&mut a), Some(&mut b2)],
        900,
        33,
        &mut clock,
    );
    let (sa, sb) = (state(&a), state(&b2));
    assert_eq!(sb["phase"], "playing", "{sb}");
    for s in [&sa, &sb] {
        assert_eq!(s["finished"], true, "{s}");
        assert_eq!(s["confirmedTick"], 600);
        assert_eq!(s["desyncs"], 0);
    }
    assert_eq!(sa["confirmedChecksum"], sb["confirmedChecksum"]);
    assert!(sb["rejoinTicks"].as_u64().unwrap() > 0);
    // The rejoined tab does not record; the match replay is A's.
    assert!(b2.replay_bytes().is_err());
    let (ticks, digest) = verified(&a.replay_bytes().unwrap());
    assert_eq!(ticks, 600);
    assert_eq!(digest.rsplit('|').next(), sa["confirmedChecksum"].as_str());
}
