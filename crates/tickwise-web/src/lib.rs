//! # tickwise-web
//!
//! The tickwise kernel and sims in the browser: WebAssembly bindings for the
//! pages in `web/` (build them with `bash .ci/build-web.sh`).
//!
//! * [`island::IslandPage`]: seed 002's island prototype over our kernel, the
//!   model behind `web/src/island.html` and its `window.__tickwise` test API,
//!   with a real-time mode on `requestAnimationFrame` and `visibilitychange`.
//! * [`horde::HordePage`]: the horde sim at its fixed 30 Hz, drawn at the
//!   display rate with interpolation, keyboard input through the per-tick
//!   input buffer (`web/src/horde.html`).
//! * [`lifecycle`]: resume reports and visibility outcomes, with the keys of
//!   `tickwise script`.
//! * [`host::HostClock`]: the platform adapter's clock, mapping the browser's
//!   float milliseconds onto the loop's integer host clock.
//! * [`args`]: the checks every JS number goes through.
//! * `bindings`: thin `#[wasm_bindgen]` wrappers for JavaScript.
//!
//! The kernel and the sims know nothing of the web: this crate is the only one
//! that depends on `wasm-bindgen`, and it is the adapter, not the simulation.
//! Floats appear here only at the boundary (JS numbers in, drawing numbers out).
//! Everything but the wrappers is plain Rust with native tests.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod args;
pub mod bindings;
pub mod horde;
pub mod host;
pub mod island;
pub mod lifecycle;
