//! The shipped default configs, compiled in.
//!
//! The files live inside this crate (`crates/tickwise-sims/config/`) so that
//! the published crate and every crate built on it (the catalog, the CLI, the
//! soak, the browser pages) carry them without reaching outside their own
//! package. The repository's top-level `config/` holds the same bytes for
//! the Python reference and for readers; `tests/suite/shipped_configs.rs` fails
//! when the two copies differ.

/// The island's loop config (`config/island_loop.json`): the island rules'
/// 16 ms step, step cap, friction and LCG constants.
pub const ISLAND_LOOP_JSON: &[u8] = include_bytes!("../config/island_loop.json");

/// The island's lifecycle config (`config/island_lifecycle.json`): the resume
/// rules' catch-up policy.
pub const ISLAND_LIFECYCLE_JSON: &[u8] = include_bytes!("../config/island_lifecycle.json");

/// The horde's config (`config/horde.json`): arena, enemies, waves, 30 Hz.
pub const HORDE_JSON: &[u8] = include_bytes!("../config/horde.json");
