//! Fuzz target `net_datagram`: the checks are `tickwise_fuzz::net_datagram` (fuzz/src/net.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tickwise_fuzz::net_datagram(data));
