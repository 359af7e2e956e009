//! Fuzz target `island_loop_config`: the checks are `tickwise_fuzz::island_loop_config` (fuzz/src/config.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::island_loop_config(data));
