//! Fuzz target `duel_snapshot`: the checks are `tickwise_fuzz::duel_snapshot` (fuzz/src/duel.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::duel_snapshot(data));
