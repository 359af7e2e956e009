//! Fuzz target `horde_config`: the checks are `tickwise_fuzz::horde_config` (fuzz/src/horde.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::horde_config(data));
