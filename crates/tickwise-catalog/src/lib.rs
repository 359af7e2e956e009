//! # tickwise-catalog
//!
//! An open catalog of sims for the replay tools. A replay names its sim by
//! id and version; a [`Catalog`] maps ids to the Rust types that can
//! re-simulate them, so `record`, `verify`, `compare`, `sync-test` and
//! `budget` work on any sim that implements [`CatalogSim`], not only the
//! built-in ones. The built-in island and horde are registered the same way
//! a game registers its own, in the `builtin` module, behind the `builtin`
//! feature (off by default: a game's catalog carries only its own sims).
//!
//! Why a value and not a global registry: a game's own tool binary builds
//! the catalog it wants (`Catalog::empty().with::<MySim>()`, or with the
//! `builtin` feature `Catalog::builtin().with::<MySim>()`) and hands it to `tickwise_cli::main_with`; nothing is linked in
//! by side effect, and tests can build catalogs with test-only sims.
//!
//! A sim's code is reached through one zero-sized, type-erased entry per
//! registered type; all generic work (config parsing, input decoding,
//! re-simulation) is compiled once per sim at [`Catalog::with`].
//!
//! Like the sims, this crate is `no_std` + `alloc` with floats banned: it
//! re-simulates replays, and a verifier must compute what the recorder did.
//!
//! ```
//! use tickwise::{ClockConfig, Pcg32, ReplayLimits, Sim, StateVisitor, StepLength};
//! use tickwise_catalog::serde_json::Value;
//! use tickwise_catalog::{Catalog, CatalogError, CatalogSim, InputPlan};
//!
//! /// A ball pushed by its input each tick; it bounces off walls at ±100.
//! #[derive(Clone, Debug)]
//! struct Ball {
//!     x: i64,
//!     v: i64,
//!     bounces: u64,
//! }
//!
//! impl Sim for Ball {
//!     type Input = i32;
//!     fn step(&mut self, inputs: &[i32]) {
//!         let push = &inputs[0];
//!         self.v = (self.v + i64::from(*push)).clamp(-8, 8);
//!         self.x += self.v;
//!         if self.x.abs() > 100 {
//!             self.v = -self.v;
//!             self.bounces += 1;
//!         }
//!     }
//!     fn visit_state(&self, s: &mut dyn StateVisitor) {
//!         s.field("x");
//!         s.value_i64(self.x);
//!         s.field("v");
//!         s.value_i64(self.v);
//!         s.field("bounces");
//!         s.value(self.bounces);
//!     }
//! }
//!
//! const STEP: StepLength = match StepLength::from_hz(60) {
//!     Ok(step) => step,
//!     Err(_) => panic!("60 Hz is a valid step"),
//! };
//!
//! impl CatalogSim for Ball {
//!     const ID: &'static str = "ball";
//!     const VERSION: u32 = 1;
//!     /// The config is the start position, as text.
//!     const DEFAULT_CONFIG: &'static [u8] = b"0";
//!     type Config = i64;
//!     type ConfigError = &'static str;
//!
//!     fn parse_config(bytes: &[u8]) -> Result<i64, &'static str> {
//!         core::str::from_utf8(bytes)
//!             .ok()
//!             .and_then(|s| s.trim().parse::<i64>().ok())
//!             .filter(|x| x.abs() <= 100)
//!             .ok_or("the start position, an integer from -100 to 100")
//!     }
//!     fn build(x: &i64) -> Ball {
//!         Ball { x: *x, v: 0, bounces: 0 }
//!     }
//!     fn seed(_: &i64) -> u64 {
//!         0
//!     }
//!     fn clock_config(_: &i64) -> ClockConfig {
//!         ClockConfig::new(STEP)
//!     }
//!     fn work_per_tick(_: &i64) -> u64 {
//!         1
//!     }
//!     fn scripted_input(tick: u64) -> i32 {
//!         if tick % 30 < 15 { 1 } else { -1 }
//!     }
//!     fn random_input(rng: &mut Pcg32) -> i32 {
//!         i32::try_from(rng.next_u32() % 3).unwrap_or(0) - 1
//!     }
//!     fn json_input(v: &Value) -> Result<i32, String> {
//!         v.as_i64()
//!             .and_then(|x| i32::try_from(x).ok())
//!             .ok_or_else(|| "an integer".into())
//!     }
//! }
//!
//! let catalog = Catalog::empty().with::<Ball>();
//! // Three ticks pushing right from x = 0: v = 1, 2, 3 and x = 1, 3, 6.
//! let rec = catalog.record("ball", None, &InputPlan::Json(b"[1, 1, 1]".to_vec()), 3, 60)?;
//! let report = catalog.verify(&rec.bytes, &ReplayLimits::DEFAULT)?;
//! assert!(report.is_match());
//! // The same run, stepped through a type-erased runner (what `budget` times).
//! let mut live = catalog.runner("ball", None, &InputPlan::Json(b"[1, 1, 1]".to_vec()))?;
//! live.run(3);
//! assert_eq!(live.digest(), rec.digest);
//!
//! // Ids the catalog does not have are refused, naming the ones it has.
//! let e = catalog.record("pong", None, &InputPlan::Scripted, 3, 60).unwrap_err();
//! assert_eq!(e.to_string(), "unknown sim id \"pong\" (known: ball)");
//! # Ok::<(), CatalogError>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_arithmetic)]

extern crate alloc;

#[cfg(feature = "builtin")]
pub mod builtin;
mod catalog;
mod entry;
mod error;
mod inputs;
pub mod limits;
mod netplay;
mod owner;
mod peer_io;
mod play;
mod runner;
mod sim;
mod tick_input_json;
mod units;
mod verdict;

pub use catalog::{Catalog, replay_header};
pub use entry::{Recorded, RunComparison};
pub use error::{CatalogError, InputsError};
pub use inputs::{InputPlan, MAX_INPUTS_BYTES, parse_inputs};
pub use limits::{
    DEFAULT_MAX_SNAPSHOT_BYTES, DEFAULT_MAX_WORK, RunLimits, check_snapshots, check_work,
};
pub use owner::{PLAYER_FIELD_PREFIXES, field_player, field_players};
pub use peer_io::{NetLimits, PeerIo, SpectateIo};
pub use play::Playable;
pub use runner::{SimProfile, TickRunner};
/// The JSON library of [`CatalogSim::json_input`], re-exported so a game
/// implements the trait against the same version.
pub use serde_json;
pub use sim::{CatalogSim, SimInfo, json_with_count};
pub use tick_input_json::TickInputJson;
/// The strict JSON config reader every sim's config parser can build on:
/// duplicate and unknown keys are refused by name (with "did you mean"),
/// every value is range-checked by key, required and optional alike
/// ([`ConfigObject`]). Its own crate, `tickwise-config`, which the built-in
/// sims use too.
pub use tickwise_config::{ConfigError, ConfigObject, MAX_CONFIG_BYTES, NOTE_KEYS};
/// The snapshot encoding a sim offers for rejoin and spectators
/// ([`CatalogSim::snapshot_codec`]); the rest of netplay is `tickwise-net`'s.
pub use tickwise_net::SnapshotCodec;
pub use verdict::{Admitted, Diverged, Outcome, Refusal, Verdict, owners_text};
