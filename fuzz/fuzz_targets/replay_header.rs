//! Fuzz target `replay_header`: the checks are `tickwise_fuzz::replay_header` (fuzz/src/replay.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::replay_header(data));
