//! Fuzz target `room_message`: the checks are `tickwise_fuzz::room_message` (fuzz/src/room.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::room_message(data));
