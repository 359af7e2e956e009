//! The crate's integration tests, one module per file, built as one test
//! binary. As separate binaries each file compiled and linked the crate's code
//! again (docs/testing.md has the figures). One module's tests: `cargo test -p
//! tickwise-catalog --test suite horde_pin::`. state_bytes.rs measures heap
//! bytes through a global allocator, so it stays a binary of its own: tests
//! running beside it would count too.

mod catalog_builtin;
mod horde_pin;
mod inputs_file;
mod run_limits;
mod sim_versions;
mod user_sim;
