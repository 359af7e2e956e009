//! The crate's integration tests, one module per file, built as one test
//! binary. As separate binaries each file compiled and linked the crate's code
//! again (docs/testing.md has the figures). One module's tests: `cargo test -p
//! tickwise-sims --test suite horde_frozen::`. horde_alloc.rs and
//! verify_memory.rs count heap calls and bytes through a global allocator, so
//! they stay binaries of their own: tests running beside them would count too.

mod horde;
mod horde_frozen;
mod horde_parallel;
mod horde_snapshot;
mod island_rules;
mod live_recording;
mod shipped_configs;
