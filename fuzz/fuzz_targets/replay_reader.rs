//! Fuzz target `replay_reader`: the checks are `tickwise_fuzz::replay_reader` (fuzz/src/replay.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::replay_reader(data));
