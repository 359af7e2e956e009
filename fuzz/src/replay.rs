//! The replay targets: `replay_reader` (the full reader and `verify`'s
//! re-simulation) and `replay_header` (what `verify` reads first to pick a
//! sim), with the small limits they run under and the envelope repair that
//! lets mutated bytes past the integrity check.

use tickwise::replay::is_valid_name;
use tickwise::{Fnv1a64, Replay, ReplayLimits, TickInput, read_header};
use tickwise_catalog::Catalog;

/// Limits small enough that one execution stays in the milliseconds: the
/// limits themselves are under test (a declared count above them must be
/// refused before anything is allocated or simulated). Every field is at
/// most [`ReplayLimits::DEFAULT`]'s, which [`replay_header`] relies on.
pub const LIMITS: ReplayLimits = ReplayLimits {
    max_file_bytes: 1 << 20,
    max_ticks: 2_000,
    max_work: 200_000,
    ..ReplayLimits::DEFAULT
};

/// `data` with its declared length and integrity checksum made right, so that
/// mutated bytes reach the header and body parsers instead of stopping at the
/// envelope (random bytes almost never carry a valid checksum). `None` when
/// `data` is too short to hold the fixed header and the trailer.
#[must_use]
pub fn repaired(data: &[u8]) -> Option<Vec<u8>> {
    const LEN_AT: usize = 12; // magic (8) + version (2) + flags (2)
    const TRAILER: usize = 8;
    if data.len() < LEN_AT + 8 + TRAILER {
        return None;
    }
    let mut fixed = data.to_vec();
    let len = fixed.len() as u64;
    fixed[LEN_AT..LEN_AT + 8].copy_from_slice(&len.to_le_bytes());
    let end = fixed.len() - TRAILER;
    let sum = Fnv1a64::hash(&fixed[..end]);
    fixed[end..].copy_from_slice(&sum.to_le_bytes());
    Some(fixed)
}

/// The bytes as given and, when they differ, with the envelope repaired.
fn variants(data: &[u8]) -> impl Iterator<Item = Vec<u8>> {
    let fixed = repaired(data).filter(|f| f.as_slice() != data);
    core::iter::once(data.to_vec()).chain(fixed)
}

/// Replay reader: a result or an error for any bytes, re-simulation bounded
/// by [`LIMITS`], and every accepted file writes back to the same bytes (one
/// encoding per replay, so a replay's hash identifies it).
pub fn replay_reader(data: &[u8]) {
    for bytes in variants(data) {
        if let Err(e) = Catalog::builtin().verify(&bytes, &LIMITS) {
            assert!(!e.to_string().is_empty(), "empty error message");
        }
        if let Ok(r) = Replay::<i32>::from_bytes(&bytes, &LIMITS) {
            assert!(r.to_bytes() == bytes, "i32 replay did not round-trip");
        }
        if let Ok(r) = Replay::<TickInput>::from_bytes(&bytes, &LIMITS) {
            assert!(r.to_bytes() == bytes, "TickInput replay did not round-trip");
        }
    }
}

/// Replay header reader (what `verify` reads to pick a sim): anything it
/// accepts is within the limits; it accepts every file the full reader
/// accepts, with the same header; and raising the limits never changes the
/// header it reads.
pub fn replay_header(data: &[u8]) {
    for bytes in variants(data) {
        let full_i32 = Replay::<i32>::from_bytes(&bytes, &LIMITS).ok();
        let full_tick = Replay::<TickInput>::from_bytes(&bytes, &LIMITS).ok();
        match read_header(&bytes, &LIMITS) {
            Ok(h) => {
                assert!(h.ticks <= LIMITS.max_ticks, "ticks above the limit");
                assert!(h.checkpoint_every >= 1, "checkpoint interval 0");
                assert!(
                    h.config.len() <= LIMITS.max_config_bytes,
                    "config too large"
                );
                assert!(
                    is_valid_name(h.sim_id.as_bytes()),
                    "invalid sim id accepted"
                );
                let loose = read_header(&bytes, &ReplayLimits::DEFAULT);
                assert!(
                    loose.as_ref() == Ok(&h),
                    "looser limits read another header"
                );
                if let Some(r) = &full_i32 {
                    assert!(r.header() == &h, "full reader (i32) read another header");
                }
                if let Some(r) = &full_tick {
                    assert!(
                        r.header() == &h,
                        "full reader (TickInput) read another header"
                    );
                }
            }
            Err(e) => {
                assert!(!e.to_string().is_empty(), "empty error message");
                assert!(
                    full_i32.is_none() && full_tick.is_none(),
                    "header refused ({e}) but the full reader accepted the file"
                );
            }
        }
    }
}
