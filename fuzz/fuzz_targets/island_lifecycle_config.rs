//! Fuzz target `island_lifecycle_config`: the checks are `tickwise_fuzz::island_lifecycle_config` (fuzz/src/config.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::island_lifecycle_config(data));
