//! Fuzz target `inputs_file`: the checks are `tickwise_fuzz::inputs_file` (fuzz/src/config.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::inputs_file(data));
