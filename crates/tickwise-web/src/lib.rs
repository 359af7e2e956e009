//! # tickwise-web
//!
//! The tickwise kernel in the browser: a generic adapter from browser time
//! and page lifecycle to a [`tickwise::FixedLoop`], and the WebAssembly
//! bindings for the pages in `web/` (build them with `bash .ci/build-web.sh`).
//!
//! For any sim:
//!
//! * [`WebLoop`]: a `FixedLoop` driven by browser timestamps: real-time
//!   frames, `visibilitychange` wiring, pause and resume with the script's
//!   resume report, a synthetic-time test API, digest and state.
//! * [`WebPage`] and [`wasm_page!`]: a page model and the `#[wasm_bindgen]`
//!   class around it, with the same JavaScript method names on every page.
//!   A game's own page crate depends on this crate with
//!   `default-features = false` and needs no `wasm-bindgen` of its own,
//!   only `use tickwise_web::wasm_bindgen;` (`docs/browser.md`, "A page for
//!   your own sim"; `examples/duel-web` is one).
//! * [`host::HostClock`]: browser float milliseconds onto the loop's integer
//!   host clock; [`lifecycle`]: resume reports and visibility outcomes;
//!   [`args`]: the checks every JS number goes through; [`base64`];
//!   [`keys`]: key codes to buttons into a page's input buffer.
//!
//! The built-in pages (feature `pages`, on by default):
//!
//! * `island::IslandPage`: the island prototype (`web/src/island.html`, the
//!   `window.__tickwise` test API), over the same configs and inputs as
//!   `tickwise script`, with a speed selector.
//! * `horde::HordePage`: the horde sim at its fixed 30 Hz, drawn at the
//!   display rate with interpolation, keyboard input through the per-tick
//!   input buffer (`web/src/horde.html`).
//! * `netplay::NetplayPage`: two players of one `tickwise-net` rollback
//!   session side by side over the seeded network simulator, each a
//!   `FixedLoop` of a `NetGame`, with live round-trip, loss and input-delay
//!   controls (`web/src/netplay.html`, `window.__tickwiseNet`).
//!
//! * `room::RoomMatchPage`: one player of a co-op horde match per tab, in a
//!   room of `tickwise serve`, over WebRTC data channels or the room's
//!   relay (`room_link`; `web/src/room.html`, `window.__tickwiseNet`).
//!
//! Both record their session from tick 0 (`replay()`, "Download replay"):
//! `tickwise verify` on the file ends on the page's digest.
//!
//! The kernel and the sims know nothing of the web: this crate is the only one
//! that depends on `wasm-bindgen`, and it is the adapter, not the simulation.
//! Floats appear here only at the boundary (JS numbers in, drawing numbers out).
//! Everything but the generated classes is plain Rust with native tests.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod args;
pub mod base64;
pub mod bindings;
#[cfg(feature = "pages")]
pub mod horde;
#[cfg(feature = "pages")]
pub mod horde_room;
pub mod host;
#[cfg(feature = "pages")]
pub mod island;
pub mod keys;
pub mod lifecycle;
#[cfg(feature = "pages")]
pub mod netplay;
pub mod page;
#[cfg(feature = "room")]
pub mod room;
#[cfg(feature = "room")]
pub mod room_link;
#[cfg(all(test, feature = "pages"))]
mod test_support;
pub mod web_loop;

pub use page::WebPage;
/// The `wasm-bindgen` this crate is built with, for [`wasm_page!`]'s expansion
/// in other crates (which then need no `wasm-bindgen` dependency of their own).
pub use wasm_bindgen;
pub use web_loop::{WebError, WebLoop};
/// The `web-sys` this crate is built with, for [`room_page!`]'s expansion.
#[cfg(feature = "room")]
pub use web_sys;
