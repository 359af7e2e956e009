//! The `RoomMatch` class for `web/src/room.js`: a [`RoomMatchPage`] over
//! the browser transport ([`RoomTransport`]).

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Value, json};
use wasm_bindgen::JsError;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::{RtcDataChannel, WebSocket};

use super::{RoomMatchPage, Welcome};
use crate::base64;
use crate::bindings::js_err;
use crate::horde::draw_info_json;
use crate::room_link::{RoomLinks, RoomTransport};

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    fn get_random_values(buf: &mut [u8]);
}

/// A random epoch for a rejoin (a new one per page).
fn epoch() -> u64 {
    let mut b = [0u8; 8];
    #[cfg(target_arch = "wasm32")]
    get_random_values(&mut b);
    #[cfg(not(target_arch = "wasm32"))]
    if getrandom::fill(&mut b).is_err() {
        b = 1u64.to_le_bytes();
    }
    u64::from_le_bytes(b)
}

/// One tab's match in a room, for JavaScript: `new RoomMatch(welcomeJson,
/// ws, relayOnly)`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct RoomMatch {
    page: RoomMatchPage<RoomTransport>,
    links: Rc<RefCell<RoomLinks>>,
}

#[wasm_bindgen]
impl RoomMatch {
    /// The match of the room's `welcome` (its JSON text), relayed over
    /// the room's WebSocket `ws` until a data channel is attached;
    /// `relay_only` never uses data channels.
    ///
    /// # Errors
    ///
    /// A welcome this page cannot play (another sim, a bad field).
    #[wasm_bindgen(constructor)]
    pub fn new(welcome: &str, ws: WebSocket, relay_only: bool) -> Result<RoomMatch, JsError> {
        let w = Welcome::parse(welcome).map_err(js_err)?;
        let mut links = RoomLinks::new(relay_only);
        links.attach_relay(ws);
        let links = Rc::new(RefCell::new(links));
        let page = RoomMatchPage::new(w, RoomTransport::new(Rc::clone(&links)), epoch())
            .map_err(js_err)?;
        Ok(RoomMatch { page, links })
    }

    /// The horde version this page plays (the room's `version`).
    #[wasm_bindgen(js_name = simVersion)]
    #[must_use]
    pub fn sim_version() -> u32 {
        <tickwise_sims::horde::HordeWorld as tickwise_catalog::CatalogSim>::VERSION
    }

    /// Uses `dc` for player `slot` (ignored, `false`, for relay-only
    /// matches and slots that are not another player's).
    #[wasm_bindgen(js_name = addChannel)]
    pub fn add_channel(&mut self, slot: u8, dc: RtcDataChannel) -> bool {
        let w = self.page.welcome();
        if slot >= w.players || slot == w.slot {
            return false;
        }
        let mut l = self.links.borrow_mut();
        !l.relay_only() && l.attach_channel(slot, dc)
    }

    /// Stops using player `slot`'s channel (it left the room).
    #[wasm_bindgen(js_name = dropChannel)]
    pub fn drop_channel(&mut self, slot: u8) {
        self.links.borrow_mut().detach_channel(slot);
    }

    /// Detaches every handler: this match is over for the page.
    pub fn close(&mut self) {
        self.links.borrow_mut().detach_all();
    }

    /// A display frame at browser time `ms`: ticks run, or `undefined`
    /// for a refused time.
    #[wasm_bindgen(js_name = frameAt)]
    pub fn frame_at(&mut self, ms: f64) -> Option<u32> {
        self.page.frame_at(ms).ok().map(|r| r.steps)
    }

    /// Forgets the browser-clock anchor (the tab is visible again).
    pub fn reanchor(&mut self) {
        self.page.reanchor();
    }

    /// A key event; whether the key moves the hero.
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> bool {
        let _ = self.page.key(code, down, ms);
        crate::horde::button_for_key(code).is_some()
    }

    /// Releases the held keys at browser time `ms`.
    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&mut self, ms: f64) {
        let _ = self.page.release_all(ms);
    }

    /// The state as JSON text (`window.__tickwiseNet.state()`).
    #[wasm_bindgen(js_name = stateJson)]
    #[must_use]
    pub fn state_json(&self) -> String {
        let l = self.links.borrow();
        let w = self.page.welcome();
        let inbox = l.inbox();
        let peers: Vec<Value> = (0..w.players)
            .filter(|&p| p != w.slot)
            .map(|p| {
                let c = inbox.counts(p);
                json!({
                    "slot": p,
                    "path": l.path(p).as_str(),
                    "sentDirect": c.sent_direct.datagrams,
                    "sentDirectBytes": c.sent_direct.bytes,
                    "sentRelay": c.sent_relay.datagrams,
                    "sentRelayBytes": c.sent_relay.bytes,
                    "receivedDirect": c.received_direct.datagrams,
                    "receivedRelay": c.received_relay.datagrams,
                    "unsent": c.unsent,
                })
            })
            .collect();
        let conn = json!({
            "relayOnly": l.relay_only(),
            "peers": peers,
            "inboxOverflow": inbox.overflow(),
            "badFrames": inbox.bad_frames(),
        });
        drop(inbox);
        drop(l);
        self.page.state_json(conn).to_string()
    }

    /// The match replay, base64.
    ///
    /// # Errors
    ///
    /// For a tab that rejoined (it does not record).
    pub fn replay(&self) -> Result<String, JsError> {
        self.page
            .replay_bytes()
            .map(|b| base64::encode(&b))
            .map_err(js_err)
    }

    /// The view's drawing positions in px.
    pub fn interpolated(&mut self) -> Vec<f32> {
        self.page.interpolated().to_vec()
    }

    /// Sizes for drawing, JSON.
    #[wasm_bindgen(js_name = drawInfo)]
    #[must_use]
    pub fn draw_info(&self) -> String {
        draw_info_json(self.page.config())
    }
}
