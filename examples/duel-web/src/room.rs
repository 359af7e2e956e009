//! The duel in a room: one paddle per tab, two browsers, one match over
//! WebRTC data channels or the relay of the duel's own `duel serve`
//! (docs/rooms.md). [`DuelRoom`] tells tickwise-web's generic room match
//! the duel's keys, catch-up rule, drawing and state fields; one
//! [`room_page!`](tickwise_web::room_page) call writes the JavaScript class
//! that the shared lobby script (`web/src/room.js`) drives
//! (`page/room-main.js` draws it).

use serde_json::{Value, json};
use tickwise::{Alpha, Button, CatchUpPolicy};
use tickwise_example_duel::session::DEMO_POLICY;
use tickwise_example_duel::{DOWN, Duel, DuelConfig, DuelFrame, SMASH, Side, UP};
use tickwise_web::room::RoomSim;
// The derive wasm-bindgen writes names its crate `wasm_bindgen`.
use tickwise_web::wasm_bindgen;

/// The button a `KeyboardEvent.code` presses for this tab's paddle, on
/// either side: `W` / `↑` up, `S` / `↓` down, `D` / `←` / `→` / Space smash
/// (each tab is one player: both hands' keys move the same paddle).
#[must_use]
pub fn room_button(code: &str) -> Option<Button> {
    match code {
        "KeyW" | "ArrowUp" => Some(UP),
        "KeyS" | "ArrowDown" => Some(DOWN),
        "KeyD" | "ArrowLeft" | "ArrowRight" | "Space" => Some(SMASH),
        _ => None,
    }
}

/// The duel in a room: one paddle per tab (see [`room_button`] for the keys).
#[derive(Debug)]
pub struct DuelRoom;

impl RoomSim for DuelRoom {
    type Sim = Duel;
    const CHECKPOINT_EVERY: u64 = crate::CHECKPOINT_EVERY;

    fn button_for_key(code: &str) -> Option<Button> {
        room_button(code)
    }

    /// The single-player page's rule.
    fn catch_up_policy(_config: &DuelConfig) -> CatchUpPolicy {
        DEMO_POLICY
    }

    /// `[ballX, ballY, leftY, rightY]` in field units, interpolated in
    /// integers ([`DuelFrame::interpolate`]).
    fn draw(prev: &DuelFrame, curr: &DuelFrame, alpha: Alpha, out: &mut Vec<f32>) {
        let f = DuelFrame::interpolate(prev, curr, alpha);
        // Field units are at most 10 000: exact in an f32.
        #[allow(clippy::cast_precision_loss, reason = "small integers")]
        out.extend([f.ball[0], f.ball[1], f.paddles[0], f.paddles[1]].map(|v| v as f32));
    }

    /// `width`, `height`, `paddleInset`, `paddleHalf`, `winScore` of the
    /// room's config.
    fn draw_info(config: &DuelConfig) -> Value {
        let (w, h) = config.field();
        let (inset, half) = config.paddle();
        json!({
            "width": w,
            "height": h,
            "paddleInset": inset,
            "paddleHalf": half,
            "winScore": config.win_score(),
        })
    }

    /// `ball`, `paddles` (left, right), `score`, `charged`, `winner`
    /// (`"left"`, `"right"` or `null`).
    fn state_json(d: &Duel) -> Value {
        json!({
            "ball": d.ball(),
            "paddles": d.paddles(),
            "score": d.score(),
            "charged": d.charged(),
            "winner": d.winner().map(|s| match s {
                Side::Left => "left",
                Side::Right => "right",
            }),
        })
    }
}

tickwise_web::room_page! {
    /// One tab's duel match in a room, for JavaScript: `new
    /// RoomMatch(welcomeJson, ws, relayOnly)` (see [`DuelRoom`]).
    pub struct DuelRoomMatch(DuelRoom) as RoomMatch;
}

#[cfg(test)]
mod tests {
    //! Two duel "tabs" natively over the seeded network simulator, built
    //! from `welcome` messages as `duel serve`'s room sends them.

    use std::cell::RefCell;
    use std::rc::Rc;

    use serde_json::json;
    use tickwise::{Nanos, ReplayLimits, ReplayVerdict, Timestamp};
    use tickwise_catalog::{Catalog, CatalogSim};
    use tickwise_example_duel::{DEFAULT_CONFIG, Duel};
    use tickwise_net::{Datagram, NetworkConfig, SimNetwork, Transport};
    use tickwise_web::room::{RoomMatchPage, RoomPageError, Welcome};

    use super::DuelRoom;

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

    type Page = RoomMatchPage<DuelRoom, Port>;

    fn welcome(slot: u8, ticks: u64, started: bool) -> String {
        json!({
            "t": "welcome", "slot": slot, "role": "player", "code": "abc",
            "sim": "duel", "version": Duel::VERSION,
            "config": String::from_utf8(DEFAULT_CONFIG.to_vec()).unwrap(),
            "players": 2, "spectators": 0, "ticks": ticks, "checkEvery": 1,
            "disconnectAfter": 60, "sessionKey": "000102030405060708090a0b0c0d0e0f",
            "started": started, "peers": [],
        })
        .to_string()
    }

    fn page(net: &Rc<RefCell<SimNetwork>>, slot: u8, ticks: u64, started: bool) -> Page {
        let w = Welcome::parse(&welcome(slot, ticks, started), Page::sim_info()).unwrap();
        let port = Port {
            net: Rc::clone(net),
            slot,
        };
        Page::new(w, port, 7 + u64::from(slot)).unwrap()
    }

    /// `frames` frames of 16 ms (one duel tick) on every present page.
    fn run(
        net: &Rc<RefCell<SimNetwork>>,
        pages: &mut [Option<&mut Page>],
        frames: u64,
        clock: &mut u64,
    ) {
        for _ in 0..frames {
            *clock += 16;
            net.borrow_mut()
                .advance_to(Timestamp::from_nanos(*clock * 1_000_000));
            for p in pages.iter_mut().flatten() {
                let _ = p.advance(16);
            }
        }
    }

    fn paddles(p: &Page) -> [i64; 2] {
        let s = p.state_json(serde_json::Value::Null);
        [
            s["paddles"][0].as_i64().unwrap(),
            s["paddles"][1].as_i64().unwrap(),
        ]
    }

    fn network() -> Rc<RefCell<SimNetwork>> {
        Rc::new(RefCell::new(SimNetwork::new(NetworkConfig {
            latency: Nanos::from_millis(30),
            loss_ppm: 20_000,
            seed: 3,
            ..NetworkConfig::PERFECT
        })))
    }

    #[test]
    fn a_room_of_another_sim_is_named_and_refused() {
        let text = welcome(0, 100, false).replace("\"duel\"", "\"horde\"");
        let e = Welcome::parse(&text, Page::sim_info()).unwrap_err();
        assert!(matches!(e, RoomPageError::Sim { .. }), "{e:?}");
        assert!(
            e.to_string().contains("this page plays `duel` version"),
            "{e}"
        );
    }

    #[test]
    fn each_tab_moves_only_its_own_paddle_and_both_replays_verify() {
        let net = network();
        let (mut a, mut b) = (page(&net, 0, 400, false), page(&net, 1, 400, false));
        let mut clock = 0;
        run(&net, &mut [Some(&mut a), Some(&mut b)], 10, &mut clock);
        let p0 = paddles(&a);
        assert_eq!(
            p0,
            [180, 180],
            "the default config's paddles start mid-field"
        );
        // Tab A holds W (up) for 10 frames; tab B presses nothing.
        a.key("KeyW", true, 170.0).unwrap();
        run(&net, &mut [Some(&mut a), Some(&mut b)], 10, &mut clock);
        a.key("KeyW", false, 330.0).unwrap();
        run(&net, &mut [Some(&mut a), Some(&mut b)], 40, &mut clock);
        let p1 = paddles(&b);
        assert_eq!(paddles(&a), p1);
        // paddleSpeed 6 units a tick: whole steps up, the right paddle still.
        assert!(p1[0] < 180 && (180 - p1[0]) % 6 == 0, "{p1:?}");
        assert_eq!(p1[1], 180, "A's key reached the right paddle");
        // Tab B holds S: the single-player page's LEFT key, B's own paddle here.
        b.key("KeyS", true, 1_000.0).unwrap();
        run(&net, &mut [Some(&mut a), Some(&mut b)], 10, &mut clock);
        b.key("KeyS", false, 1_160.0).unwrap();
        run(&net, &mut [Some(&mut a), Some(&mut b)], 400, &mut clock);
        let p2 = paddles(&a);
        assert_eq!(p2[0], p1[0], "B's key reached the left paddle");
        assert!(p2[1] > 180 && (p2[1] - 180) % 6 == 0, "{p2:?}");
        let (sa, sb) = (
            a.state_json(serde_json::Value::Null),
            b.state_json(serde_json::Value::Null),
        );
        for s in [&sa, &sb] {
            assert_eq!(s["finished"], true, "{s}");
            assert_eq!(s["confirmedTick"], 400);
            assert_eq!(s["desyncs"], 0);
            assert_eq!(s["sim"], "duel");
        }
        assert_eq!(sa["confirmedChecksum"], sb["confirmedChecksum"]);
        // 16 ms a tick: 62.5 Hz.
        assert_eq!(sa["tickHz"], 62.5);
        let (ra, rb) = (a.replay_bytes().unwrap(), b.replay_bytes().unwrap());
        assert_eq!(ra, rb);
        let report = Catalog::empty()
            .with::<Duel>()
            .verify(&ra, &ReplayLimits::DEFAULT)
            .unwrap();
        assert_eq!(report.ticks_run, 400);
        match report.verdict {
            ReplayVerdict::Match { digest } => {
                let chk = sa["confirmedChecksum"].as_str().unwrap();
                assert!(digest.ends_with(&format!("chk={chk}")), "{digest} vs {chk}");
            }
            other => panic!("the replay did not verify: {other:?}"),
        }
    }

    #[test]
    fn a_duel_tab_away_past_disconnect_after_rejoins_with_the_duel_codec() {
        let net = network();
        let (mut a, mut b) = (page(&net, 0, 700, false), page(&net, 1, 700, false));
        let mut clock = 0;
        run(&net, &mut [Some(&mut a), Some(&mut b)], 100, &mut clock);
        run(&net, &mut [Some(&mut a), None], 120, &mut clock);
        assert!(a.state_json(serde_json::Value::Null)["departed"][1].is_u64());
        drop(b);
        let mut b2 = page(&net, 1, 700, true);
        assert_eq!(b2.state_json(serde_json::Value::Null)["phase"], "rejoining");
        run(&net, &mut [Some(&mut a), Some(&mut b2)], 800, &mut clock);
        let (sa, sb) = (
            a.state_json(serde_json::Value::Null),
            b2.state_json(serde_json::Value::Null),
        );
        assert_eq!(sb["phase"], "playing", "{sb}");
        for s in [&sa, &sb] {
            assert_eq!(s["confirmedTick"], 700, "{s}");
            assert_eq!(s["desyncs"], 0);
        }
        assert_eq!(sa["confirmedChecksum"], sb["confirmedChecksum"]);
        assert!(b2.replay_bytes().is_err(), "a rejoined tab does not record");
    }
}
