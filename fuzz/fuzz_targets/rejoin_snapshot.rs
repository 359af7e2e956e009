//! Fuzz target `rejoin_snapshot`: the checks are `tickwise_fuzz::rejoin_snapshot` (fuzz/src/horde.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::rejoin_snapshot(data));
