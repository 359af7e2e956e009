//! # tickwise-sims
//!
//! Deterministic simulations on the [`tickwise`] kernel.
//!
//! * [`island`]: the merge-island world of the island rules (see
//!   `docs/background.md`), with its JSON
//!   configs and a play session shared by the CLI and the browser page.
//! * [`horde`]: the tick-rate budget article's survivors-style wave sim (up
//!   to a million enemies, uniform grid, separation, damage, respawn waves),
//!   with an O(n²) reference that must agree with it digest for digest.
//!
//! This crate is `no_std` + `alloc`: it cannot reach a wall clock, the OS's
//! randomness or `std`'s randomly-seeded hash maps, and the crate's
//! `clippy.toml` bans `f32`/`f64` outright (`cargo clippy -- -D warnings`),
//! and `cargo test` scans this source for them (docs/determinism.md).
//!
//! ```
//! use tickwise::Sim;
//! use tickwise_sims::island::{IslandConfig, IslandWorld, scripted_inputs};
//!
//! let cfg = IslandConfig::from_json(tickwise_sims::ISLAND_LOOP_JSON)?;
//! let mut world = IslandWorld::new(&cfg);
//! for input in scripted_inputs(100) {
//!     world.step(core::slice::from_ref(&input));
//! }
//! assert_eq!(world.digest(), "100|-131|5050|18|100|323|3492529440|0");
//! # Ok::<(), tickwise_config::ConfigError>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_arithmetic)]

extern crate alloc;

mod defaults;
pub mod horde;
pub mod island;

pub use defaults::{HORDE_JSON, ISLAND_LIFECYCLE_JSON, ISLAND_LOOP_JSON};
