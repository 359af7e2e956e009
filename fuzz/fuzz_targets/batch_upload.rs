//! Fuzz target `batch_upload`: the checks are `tickwise_fuzz::batch_upload` (fuzz/src/batch.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::batch_upload(data));
