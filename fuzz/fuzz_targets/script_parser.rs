//! Fuzz target `script_parser`: the checks are `tickwise_fuzz::script_parser` (fuzz/src/script.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::script_parser(data));
