//! The crate's integration tests, one module per file, built as one test
//! binary. As separate binaries each file compiled and linked the crate's code
//! again (docs/testing.md has the figures). One module's tests: `cargo test -p
//! tickwise-net --test suite leave::`. net_alloc.rs counts heap calls through
//! a global allocator, so it stays a binary of its own: tests running beside
//! it would count too.

mod chaos;
mod common;
mod desync;
mod fault_rates;
mod forged;
mod leave;
mod props;
mod stop;
mod watch;
