//! The crate's integration tests, one module per file, built as one test
//! binary. As separate binaries each file compiled and linked the crate's code
//! again (docs/testing.md has the figures). One module's tests: `cargo test -p
//! tickwise --test suite replay_format::`.

mod replay_bytes;
mod sims;

mod input_frames;
mod lifecycle_boundaries;
mod lifecycle_loop;
mod replay_blocks;
mod replay_format;
mod replay_players;
mod replay_props;
mod replay_sync;
mod replay_verify;
mod simple_inputs;
mod speed;
