//! Fuzz target `duel_config`: the checks are `tickwise_fuzz::duel_config` (fuzz/src/duel.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::duel_config(data));
