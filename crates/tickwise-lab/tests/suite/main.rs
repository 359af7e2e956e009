//! The crate's integration tests, one module per file, built as one test
//! binary. As separate binaries each file compiled and linked the crate's code
//! again (docs/testing.md has the figures). One module's tests: `cargo test -p
//! tickwise-lab --test suite runner::`.

mod lab;
mod runner;
mod soak;
mod stats;
