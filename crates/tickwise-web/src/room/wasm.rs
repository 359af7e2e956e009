//! The browser side of a room match: [`RoomMatchCore`], a
//! [`RoomMatchPage`] over the browser transport ([`RoomTransport`]) for any
//! [`RoomSim`], and the [`room_page!`](crate::room_page) macro that writes
//! its JavaScript class (`#[wasm_bindgen]` cannot export a generic type).

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Value, json};
use web_sys::{RtcDataChannel, WebSocket};

use super::{RoomMatchPage, RoomPageError, RoomSim, Welcome};
use crate::base64;
use crate::room_link::{RoomLinks, RoomTransport};

#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    fn get_random_values(buf: &mut [u8]);
}

/// A random epoch for a rejoin (a new one per page): the browser's
/// `crypto.getRandomValues`, or the OS's natively (1 if that fails: an
/// epoch only has to differ from the seat's previous one).
#[must_use]
pub fn epoch() -> u64 {
    let mut b = [0u8; 8];
    #[cfg(target_arch = "wasm32")]
    get_random_values(&mut b);
    #[cfg(not(target_arch = "wasm32"))]
    if getrandom::fill(&mut b).is_err() {
        b = 1u64.to_le_bytes();
    }
    u64::from_le_bytes(b)
}

/// One tab's match in a room, in the browser: what the class of
/// [`room_page!`](crate::room_page) wraps. Its methods are the class's.
pub struct RoomMatchCore<G: RoomSim> {
    page: RoomMatchPage<G, RoomTransport>,
    links: Rc<RefCell<RoomLinks>>,
}

impl<G: RoomSim> std::fmt::Debug for RoomMatchCore<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoomMatchCore")
            .field("page", &self.page)
            .field("links", &self.links)
            .finish()
    }
}

impl<G: RoomSim> RoomMatchCore<G> {
    /// The match of the room's `welcome` (its JSON text), relayed over
    /// the room's WebSocket `ws` until a data channel is attached;
    /// `relay_only` never uses data channels.
    ///
    /// # Errors
    ///
    /// A welcome this page cannot play (another sim, a bad field).
    pub fn new(welcome: &str, ws: WebSocket, relay_only: bool) -> Result<Self, RoomPageError> {
        let w = Welcome::parse(welcome, RoomMatchPage::<G, RoomTransport>::sim_info())?;
        let mut links = RoomLinks::new(relay_only);
        links.attach_relay(ws);
        let links = Rc::new(RefCell::new(links));
        let page = RoomMatchPage::new(w, RoomTransport::new(Rc::clone(&links)), epoch())?;
        Ok(RoomMatchCore { page, links })
    }

    /// The match model.
    #[must_use]
    pub const fn page(&self) -> &RoomMatchPage<G, RoomTransport> {
        &self.page
    }

    /// The match model, mutably.
    pub const fn page_mut(&mut self) -> &mut RoomMatchPage<G, RoomTransport> {
        &mut self.page
    }

    /// Uses `dc` for player `slot` (ignored, `false`, for relay-only
    /// matches and slots that are not another player's).
    pub fn add_channel(&mut self, slot: u8, dc: RtcDataChannel) -> bool {
        let w = self.page.welcome();
        if slot >= w.players || slot == w.slot {
            return false;
        }
        let mut l = self.links.borrow_mut();
        !l.relay_only() && l.attach_channel(slot, dc)
    }

    /// Stops using player `slot`'s channel (it left the room).
    pub fn drop_channel(&mut self, slot: u8) {
        self.links.borrow_mut().detach_channel(slot);
    }

    /// Detaches every handler: this match is over for the page.
    pub fn close(&mut self) {
        self.links.borrow_mut().detach_all();
    }

    /// The state as JSON text (`window.__tickwiseNet.state()`).
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
    pub fn replay(&self) -> Result<String, tickwise_net::SessionError> {
        self.page.replay_bytes().map(|b| base64::encode(&b))
    }
}

/// Writes the `#[wasm_bindgen]` class of a room page for a [`RoomSim`]:
/// the match the shared lobby script `web/src/room.js` starts when the room
/// says `start`.
///
/// ```ignore
/// use tickwise_web::wasm_bindgen; // the derive names the crate `wasm_bindgen`
///
/// pub struct DuelRoom;
/// impl tickwise_web::room::RoomSim for DuelRoom { /* keys, drawing, state */ }
///
/// tickwise_web::room_page! {
///     /// The duel's room match for JavaScript: `new RoomMatch(welcome, ws, relayOnly)`.
///     pub struct DuelRoomMatch(DuelRoom) as RoomMatch;
/// }
/// ```
///
/// The class (its JavaScript name is the one after `as`; `room.js`
/// expects `RoomMatch`):
///
/// | JS | does |
/// |---|---|
/// | `new RoomMatch(welcomeJson, ws, relayOnly)` | the match of the room's `welcome`; throws a message naming what this page cannot play |
/// | `RoomMatch.simId()`, `RoomMatch.simVersion()` | the sim this page plays (what the lobby creates rooms for) |
/// | `RoomMatch.ticksPerSecond()` | the default config's tick rate (the lobby's match lengths) |
/// | `addChannel(slot, dc)`, `dropChannel(slot)`, `close()` | the data channels the lobby opened; detach everything |
/// | `frameAt(ms)`, `reanchor()` | a display frame (ticks run, `undefined` for a refused time); forget the clock anchor |
/// | `key(code, down, ms)`, `releaseAll(ms)` | this tab's player's keys ([`RoomSim::button_for_key`]); whether the key is bound |
/// | `stateJson()`, `replay()` | the test API's state; the match replay, base64 (throws for a tab that rejoined) |
/// | `interpolated()`, `drawInfo()` | [`RoomSim::draw`]'s numbers; [`RoomSim::draw_info`] as JSON |
///
/// Needs the `room` feature of `tickwise-web` (no built-in sims) and, in
/// the module of the call, `use tickwise_web::wasm_bindgen;` as for
/// [`wasm_page!`](crate::wasm_page).
#[macro_export]
macro_rules! room_page {
    (
        $(#[$meta:meta])*
        $vis:vis struct $handle:ident($spec:ty) as $js:ident;
    ) => {
        $(#[$meta])*
        #[$crate::wasm_bindgen::prelude::wasm_bindgen(js_name = $js, wasm_bindgen = $crate::wasm_bindgen)]
        #[derive(Debug)]
        $vis struct $handle {
            core: $crate::room::RoomMatchCore<$spec>,
        }

        impl $handle {
            /// The match model and its links.
            #[must_use]
            #[allow(dead_code, reason = "for page-specific methods")]
            $vis const fn core(&self) -> &$crate::room::RoomMatchCore<$spec> {
                &self.core
            }
        }

        #[$crate::wasm_bindgen::prelude::wasm_bindgen(js_class = $js, wasm_bindgen = $crate::wasm_bindgen)]
        impl $handle {
            /// The match of the room's `welcome` (its JSON text) over the
            /// room's WebSocket `ws`; `relay_only` never uses data channels.
            ///
            /// # Errors
            ///
            /// A welcome this page cannot play (another sim, a bad field).
            #[wasm_bindgen(constructor)]
            pub fn new(
                welcome: &str,
                ws: $crate::web_sys::WebSocket,
                relay_only: bool,
            ) -> ::core::result::Result<$handle, $crate::wasm_bindgen::JsError> {
                $crate::room::RoomMatchCore::new(welcome, ws, relay_only)
                    .map(|core| $handle { core })
                    .map_err($crate::bindings::js_err)
            }

            /// The sim id this page plays.
            #[wasm_bindgen(js_name = simId)]
            #[must_use]
            pub fn sim_id() -> ::std::string::String {
                <<$spec as $crate::room::RoomSim>::Sim as $crate::room::CatalogSim>::ID.into()
            }

            /// The sim version this page plays (the room's `version`).
            #[wasm_bindgen(js_name = simVersion)]
            #[must_use]
            pub fn sim_version() -> u32 {
                <<$spec as $crate::room::RoomSim>::Sim as $crate::room::CatalogSim>::VERSION
            }

            /// Ticks per second under the sim's default config (the room's
            /// config when it is created without one).
            #[wasm_bindgen(js_name = ticksPerSecond)]
            #[must_use]
            pub fn ticks_per_second() -> f64 {
                $crate::room::default_ticks_per_second::<<$spec as $crate::room::RoomSim>::Sim>()
            }

            /// Uses `dc` for player `slot`; `false` when ignored.
            #[wasm_bindgen(js_name = addChannel)]
            pub fn add_channel(&mut self, slot: u8, dc: $crate::web_sys::RtcDataChannel) -> bool {
                self.core.add_channel(slot, dc)
            }

            /// Stops using player `slot`'s channel (it left the room).
            #[wasm_bindgen(js_name = dropChannel)]
            pub fn drop_channel(&mut self, slot: u8) {
                self.core.drop_channel(slot);
            }

            /// Detaches every handler: this match is over for the page.
            pub fn close(&mut self) {
                self.core.close();
            }

            /// A display frame at browser time `ms`: ticks run, or
            /// `undefined` for a refused time.
            #[wasm_bindgen(js_name = frameAt)]
            pub fn frame_at(&mut self, ms: f64) -> ::core::option::Option<u32> {
                self.core.page_mut().frame_at(ms).ok().map(|r| r.steps)
            }

            /// Forgets the browser-clock anchor (the tab is visible again).
            pub fn reanchor(&mut self) {
                self.core.page_mut().reanchor();
            }

            /// A key event of this tab's player; whether the key is bound.
            pub fn key(&mut self, code: &str, down: bool, ms: f64) -> bool {
                let _ = self.core.page_mut().key(code, down, ms);
                <$crate::room::RoomMatchPage<$spec, $crate::room_link::RoomTransport>>::binds(code)
            }

            /// Releases the held keys at browser time `ms`.
            #[wasm_bindgen(js_name = releaseAll)]
            pub fn release_all(&mut self, ms: f64) {
                let _ = self.core.page_mut().release_all(ms);
            }

            /// The state as JSON text (`window.__tickwiseNet.state()`).
            #[wasm_bindgen(js_name = stateJson)]
            #[must_use]
            pub fn state_json(&self) -> ::std::string::String {
                self.core.state_json()
            }

            /// The match replay, base64.
            ///
            /// # Errors
            ///
            /// For a tab that rejoined (it does not record).
            pub fn replay(&self) -> ::core::result::Result<::std::string::String, $crate::wasm_bindgen::JsError> {
                self.core.replay().map_err($crate::bindings::js_err)
            }

            /// What to draw, blended between the last two ticks.
            pub fn interpolated(&mut self) -> ::std::vec::Vec<f32> {
                self.core.page_mut().interpolated().to_vec()
            }

            /// Sizes for drawing, JSON.
            #[wasm_bindgen(js_name = drawInfo)]
            #[must_use]
            pub fn draw_info(&self) -> ::std::string::String {
                self.core.page().draw_info()
            }
        }
    };
}
