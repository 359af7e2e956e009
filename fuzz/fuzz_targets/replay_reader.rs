//! Fuzzes the replay reader: any bytes must give a result or a specific
//! error, never a panic, and bounded work.
//!
//! Random bytes almost never carry a valid integrity checksum, so every input
//! is also tried with its declared length and checksum repaired: that lets
//! the fuzzer reach the body parser and re-simulation. Accepted files must
//! write back byte for byte (one encoding per replay).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tickwise::{Fnv1a64, Replay, ReplayLimits, TickInput};
use tickwise_cli::Catalog;

/// Small limits keep each execution fast; the limits themselves are what is
/// being tested (declared counts above them must be refused early).
const LIMITS: ReplayLimits = ReplayLimits {
    max_file_bytes: 1 << 20,
    max_ticks: 2_000,
    ..ReplayLimits::DEFAULT
};

fn check(bytes: &[u8]) {
    let _ = Catalog::builtin().verify(bytes, &LIMITS);
    if let Ok(r) = Replay::<i32>::from_bytes(bytes, &LIMITS) {
        assert_eq!(r.to_bytes(), bytes, "i32 replay did not round-trip");
    }
    if let Ok(r) = Replay::<TickInput>::from_bytes(bytes, &LIMITS) {
        assert_eq!(r.to_bytes(), bytes, "TickInput replay did not round-trip");
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    if data.len() >= 28 {
        let mut fixed = data.to_vec();
        let len = fixed.len() as u64;
        fixed[12..20].copy_from_slice(&len.to_le_bytes());
        let end = fixed.len() - 8;
        let sum = Fnv1a64::hash(&fixed[..end]);
        fixed[end..].copy_from_slice(&sum.to_le_bytes());
        check(&fixed);
    }
});
