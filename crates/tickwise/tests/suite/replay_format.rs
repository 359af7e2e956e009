//! The replay byte layout, checked against files written out by hand from
//! `docs/replay-format.md`, and every hostile-file case with its specific error.
//!
//! The expected bytes here are built field by field by this test (with the
//! test-side FNV-1a and LEB128 helpers of `replay_bytes`), not by the code
//! under test.

use crate::replay_bytes;

use replay_bytes::*;
use tickwise::{
    HeaderRead, HostEvent, HostEventKind, Nanos, Replay, ReplayError, ReplayLimits, ReplayVerdict,
    read_header, verify,
};

/// The golden file: 5 ticks of inputs 1, 1, -1, 0, 0, 300 ns of time
/// dropped after tick 3, a checkpoint every 2.
fn golden() -> Vec<u8> {
    golden_header(5, 2)
        // one block of 5 ticks, mode 0 (runs): (2 × +1) (1 × -1) (2 × 0);
        // zigzag(1) = 2, zigzag(-1) = 1
        .lp(&[0x05, 0x00, 0x02, 0x02, 0x01, 0x01, 0x02, 0x00])
        // host events: 1 event, tick delta 3, kind 1 (time dropped), 300 ns = ac 02
        .raw(&[0x01, 0x03, 0x01, 0xac, 0x02])
        .varint(2)
        .lp(b"steps")
        .lp(b"total")
        // tick 2: steps 2, total 2
        .u64(state_sum(&[2, 2]))
        .raw(&short(2))
        .raw(&short(2))
        // tick 4: steps 4, total 1 + 300
        .u64(state_sum(&[4, 301]))
        .raw(&short(4))
        .raw(&short(301))
        // final, tick 5: steps 5, total 301
        .u64(state_sum(&[5, 301]))
        .raw(&short(5))
        .raw(&short(301))
        .lp(b"5|301")
        .finish()
}

#[test]
fn recorder_writes_the_documented_bytes() {
    let expected = golden();
    assert_eq!(
        expected.len(),
        140,
        "the layout in docs/replay-format.md adds up to 140 bytes"
    );
    let written = record_with_drop(&[1, 1, -1, 0, 0], 2, Some((3, 300))).to_bytes();
    assert_eq!(written, expected);
}

#[test]
fn reader_reads_the_documented_bytes() {
    let r = read(&golden()).unwrap();
    let h = r.header();
    assert_eq!((h.sim_id.as_str(), h.sim_version, h.seed), ("ctr", 7, 42));
    assert_eq!((h.ticks, h.checkpoint_every, h.input_kind), (5, 2, 1));
    assert_eq!(h.config, b"{}");
    assert_eq!(r.inputs(0).copied().collect::<Vec<_>>(), [1, 1, -1, 0, 0]);
    assert_eq!(r.runs(0).len(), 3);
    assert_eq!(
        r.host_events(),
        [HostEvent {
            tick: 3,
            kind: HostEventKind::TimeDropped(Nanos::from_nanos(300))
        }]
    );
    assert_eq!(r.field_names(), ["steps", "total"]);
    assert_eq!(r.checkpoint_count(), 2);
    let c = r.checkpoint(1).unwrap();
    assert_eq!((c.tick, c.checksum), (4, state_sum(&[4, 301])));
    assert_eq!(r.final_state().tick, 5);
    assert_eq!(r.final_digest(), "5|301");
    assert_eq!(
        verify(Counter::default(), &r).verdict,
        ReplayVerdict::Match {
            digest: "5|301".into()
        }
    );
    assert_eq!(read_header(&golden(), &ReplayLimits::DEFAULT).unwrap(), *h);
}

#[test]
fn an_empty_replay_is_valid() {
    let bytes = golden_header(0, 60)
        .lp(&[])
        .varint(0) // no host events
        .varint(2)
        .lp(b"steps")
        .lp(b"total")
        .u64(state_sum(&[0, 0]))
        .raw(&short(0))
        .raw(&short(0))
        .lp(b"0|0")
        .finish();
    assert_eq!(record(&[], 60).to_bytes(), bytes);
    assert!(verify(Counter::default(), &read(&bytes).unwrap()).is_match());
}

// ---- hostile files: each gets its own specific error ----

#[test]
fn every_truncation_is_an_error() {
    let g = golden();
    for n in 0..g.len() {
        let e = read(&g[..n]).unwrap_err();
        match n {
            0..=7 => assert!(
                matches!(e, ReplayError::Truncated { what: "magic", .. }),
                "{n}: {e}"
            ),
            8..=19 => assert!(matches!(e, ReplayError::Truncated { .. }), "{n}: {e}"),
            _ => assert_eq!(
                e,
                ReplayError::Truncated {
                    what: "file (per its declared length)",
                    offset: n as u64,
                    needed: (g.len() - n) as u64,
                    available: 0
                },
                "{n}"
            ),
        }
    }
}

#[test]
fn every_bit_flip_is_an_error() {
    let g = golden();
    for byte in 0..g.len() {
        for bit in 0..8 {
            let mut f = g.clone();
            f[byte] ^= 1 << bit;
            let e = read(&f).unwrap_err();
            let ok = match byte {
                0..=7 => matches!(e, ReplayError::BadMagic { .. }),
                8..=9 => matches!(e, ReplayError::UnsupportedVersion { .. }),
                10..=11 => matches!(e, ReplayError::UnsupportedFlags { .. }),
                12..=19 => matches!(
                    e,
                    ReplayError::Truncated { .. }
                        | ReplayError::TrailingBytes { .. }
                        | ReplayError::LengthOutOfRange {
                            what: "declared file length",
                            ..
                        }
                ),
                _ => matches!(e, ReplayError::ChecksumMismatch { .. }),
            };
            assert!(ok, "byte {byte} bit {bit}: {e}");
        }
    }
}

/// The service's path: the header read once at upload ([`HeaderRead`]),
/// the rest decoded later without reading the header or hashing again.
#[test]
fn a_header_read_once_decodes_the_same_replay() {
    let g = golden();
    let limits = ReplayLimits::DEFAULT;
    let read = HeaderRead::of(&g, &limits).unwrap();
    assert_eq!(read.header(), &read_header(&g, &limits).unwrap());
    assert_eq!(read.file_len(), 140);
    let decoded = Replay::<i32>::from_header_read(&g, read.clone(), &limits).unwrap();
    assert_eq!(decoded, Replay::<i32>::from_bytes(&g, &limits).unwrap());
    assert_eq!(decoded.to_bytes(), g);
    assert!(verify(Counter::default(), &decoded).is_match());
    // Every bit flip past the fixed header: the header read refuses it
    // (checksum). Decoded with the intact file's `HeaderRead` instead
    // (the caller's mistake), it is an error or a replay, never a panic.
    for byte in 20..g.len() {
        for bit in 0..8 {
            let mut f = g.clone();
            f[byte] ^= 1 << bit;
            assert!(matches!(
                HeaderRead::of(&f, &limits),
                Err(ReplayError::ChecksumMismatch { .. })
            ));
            let _ = Replay::<i32>::from_header_read(&f, read.clone(), &limits);
        }
    }
    // Other bytes of another length are read whole: the checksum applies.
    let mut longer = g.clone();
    longer.push(0);
    assert!(matches!(
        Replay::<i32>::from_header_read(&longer, read.clone(), &limits),
        Err(ReplayError::TrailingBytes { .. })
    ));
    let mut cut = g[..g.len() - 1].to_vec();
    cut[30] ^= 1;
    assert!(Replay::<i32>::from_header_read(&cut, read, &limits).is_err());
}

#[test]
fn wrong_magic() {
    let mut f = golden();
    f[..8].copy_from_slice(b"PK\x03\x04zip!");
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::BadMagic {
            found: *b"PK\x03\x04zip!",
            len: 8
        }
    );
    assert_eq!(
        read(b"GIF").unwrap_err(),
        ReplayError::BadMagic {
            found: *b"GIF\0\0\0\0\0",
            len: 3
        }
    );
}

#[test]
fn wrong_version_and_flags() {
    let mut f = golden();
    f[8] = 5;
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::UnsupportedVersion {
            found: 5,
            supported: 4
        }
    );
    let mut f = golden();
    f[11] = 0x80;
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::UnsupportedFlags { found: 0x8000 }
    );
}

#[test]
fn appended_bytes() {
    let mut f = golden();
    f.extend_from_slice(b"junk");
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::TrailingBytes {
            declared: 140,
            actual: 144
        }
    );
}

#[test]
fn oversized_file_is_refused_before_parsing() {
    let limits = ReplayLimits {
        max_file_bytes: 100,
        ..ReplayLimits::DEFAULT
    };
    let junk = vec![0xffu8; 101];
    assert_eq!(
        Replay::<i32>::from_bytes(&junk, &limits).unwrap_err(),
        ReplayError::FileTooLarge {
            bytes: 101,
            limit: 100
        }
    );
}

#[test]
fn corrupted_body_fails_the_integrity_checksum() {
    let mut f = golden();
    f[60] ^= 0x10;
    let stored = u64::from_le_bytes(f[132..140].try_into().unwrap());
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::ChecksumMismatch {
            stored,
            computed: fnv(&f[..132])
        }
    );
}

#[test]
fn absurd_tick_count() {
    let f = golden_header(u64::MAX, 2).lp(&[0x02, 0x02]).finish();
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::TooManyTicks {
            declared: u64::MAX,
            limit: 10_000_000
        }
    );
    // The limit is configurable, and applies as `declared <= limit`.
    let f = golden_header(6, 2).lp(&[0x06, 0x02]).finish();
    let limits = ReplayLimits {
        max_ticks: 5,
        ..ReplayLimits::DEFAULT
    };
    assert_eq!(
        Replay::<i32>::from_bytes(&f, &limits).unwrap_err(),
        ReplayError::TooManyTicks {
            declared: 6,
            limit: 5
        }
    );
}

#[test]
fn absurd_lengths() {
    // A config length of 2^40 bytes.
    let f = FileBuilder::new()
        .lp(b"ctr")
        .raw(&[7, 0, 0, 0])
        .varint(1 << 40)
        .finish();
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::LengthOutOfRange {
            what: "config",
            declared: 1 << 40,
            min: 0,
            max: 65_536
        }
    );
    // A sim id of 200 bytes.
    let f = FileBuilder::new().varint(200).raw(&[b'a'; 200]).finish();
    assert!(matches!(
        read(&f).unwrap_err(),
        ReplayError::LengthOutOfRange {
            what: "sim id",
            declared: 200,
            ..
        }
    ));
    // An input blocks section longer than the file.
    let f = golden_header(5, 2).varint(1 << 50).finish();
    assert!(matches!(
        read(&f).unwrap_err(),
        ReplayError::Truncated {
            what: "input blocks",
            needed: 1_125_899_906_842_624,
            ..
        }
    ));
    // A million fields.
    let f = golden_header(1, 2)
        .lp(&[0x01, 0x00, 0x01, 0x02])
        .varint(0)
        .varint(1_000_000)
        .finish();
    assert!(matches!(
        read(&f).unwrap_err(),
        ReplayError::LengthOutOfRange {
            what: "field count",
            declared: 1_000_000,
            ..
        }
    ));
}

#[test]
fn checkpoints_missing_from_a_short_file() {
    // 10 million ticks at a checkpoint every tick: 240 MB of checkpoints that
    // are not there. Refused from the sizes alone, before any is read.
    let f = golden_header(10_000_000, 1)
        // one runs block of 10,000,000 ticks: one run of 10,000,000 zeros
        .lp(&[0x80, 0xad, 0xe2, 0x04, 0x00, 0x80, 0xad, 0xe2, 0x04, 0x00])
        .varint(0) // no host events
        .varint(2)
        .lp(b"steps")
        .lp(b"total")
        .finish();
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::Truncated {
            what: "checkpoints",
            offset: f.len() as u64 - 8,
            needed: 10_000_000 * 16,
            available: 0
        }
    );
}

#[test]
fn runs_that_do_not_cover_the_ticks() {
    let short = golden_header(5, 2).lp(&[0x02, 0x00, 0x02, 0x02]).finish();
    assert_eq!(
        read(&short).unwrap_err(),
        ReplayError::RunsDoNotCoverTicks {
            declared: 5,
            covered: 2
        }
    );
    // Blocks of 2 and 9 ticks: the second passes T = 5. The section starts
    // at 20 + 4 + 4 + 3 + 8 + 8 + 4 (T, K, kind, players) + 1 (its length) = 52.
    let long = golden_header(5, 2)
        .lp(&[0x02, 0x00, 0x02, 0x02, 0x09, 0x00, 0x09, 0x00])
        .finish();
    assert_eq!(
        read(&long).unwrap_err(),
        ReplayError::BadInputBlock {
            offset: 56,
            fault: tickwise::BlockFault::PastEnd {
                block_ticks: 9,
                ticks_left: 3
            }
        }
    );
    let empty_run = golden_header(5, 2).lp(&[0x05, 0x00, 0x00, 0x02]).finish();
    assert!(matches!(
        read(&empty_run).unwrap_err(),
        ReplayError::EmptyRun { .. }
    ));
}

#[test]
fn malformed_fields() {
    let overlong = golden_header(5, 2)
        .lp(&[0x05, 0x00, 0x85, 0x00, 0x02])
        .finish();
    assert!(matches!(
        read(&overlong).unwrap_err(),
        ReplayError::BadVarint {
            what: "run length",
            ..
        }
    ));
    let bad_input = golden_header(5, 2)
        .lp(&[0x05, 0x00, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10])
        .finish();
    assert!(matches!(
        read(&bad_input).unwrap_err(),
        ReplayError::BadInput { .. }
    ));
    let bad_id = FileBuilder::new().lp(b"is land").finish();
    assert!(matches!(
        read(&bad_id).unwrap_err(),
        ReplayError::BadName {
            what: "sim id",
            offset: 20
        }
    ));
    let zero_interval = golden_header(5, 0).finish();
    assert!(matches!(
        read(&zero_interval).unwrap_err(),
        ReplayError::LengthOutOfRange {
            what: "checkpoint interval",
            declared: 0,
            ..
        }
    ));
    let wrong_hash = FileBuilder::new()
        .lp(b"ctr")
        .raw(&[7, 0, 0, 0])
        .lp(b"{}")
        .u64(fnv(b"{ }"))
        .finish();
    assert_eq!(
        read(&wrong_hash).unwrap_err(),
        ReplayError::ConfigHashMismatch {
            stored: fnv(b"{ }"),
            computed: fnv(b"{}")
        }
    );
    let mut other_kind = golden();
    other_kind[49] = 0x02; // the input kind byte: TickInput
    let other_kind = FileBuilder {
        bytes: other_kind[..132].to_vec(),
    }
    .finish();
    assert_eq!(
        read(&other_kind).unwrap_err(),
        ReplayError::InputKindMismatch {
            expected: 1,
            found: 2
        }
    );
}

#[test]
fn version_1_2_and_3_files_are_refused_with_a_clear_error() {
    // Files of versions 1 to 3: the same envelope with the older version (a
    // version 2 body stores its inputs as bare runs, a version 3 body has no
    // player count, which the reader never gets to: the version decides first).
    for old in [1u16, 2, 3] {
        let mut f = golden();
        f[8..10].copy_from_slice(&old.to_le_bytes());
        let e = read(&f).unwrap_err();
        assert_eq!(
            e,
            ReplayError::UnsupportedVersion {
                found: old,
                supported: 4
            }
        );
        let msg = e.to_string();
        assert!(
            msg.contains(&format!(
                "replay format version {old} is not supported (this build reads version 4)"
            )),
            "{msg}"
        );
        assert!(msg.contains("must be recorded again"), "{msg}");
        assert_eq!(
            read_header(&f, &ReplayLimits::DEFAULT).unwrap_err(),
            ReplayError::UnsupportedVersion {
                found: old,
                supported: 4
            }
        );
    }
}

/// The golden file's header and runs, then `events` as the host events section.
fn with_events(events: &[u8]) -> Vec<u8> {
    golden_header(5, 2)
        .lp(&[0x05, 0x00, 0x02, 0x02, 0x01, 0x01, 0x02, 0x00])
        .raw(events)
        .varint(2)
        .lp(b"steps")
        .lp(b"total")
        .finish()
}

#[test]
fn malformed_host_events() {
    // Two events whose deltas (3, then 3) reach tick 6 > T = 5.
    assert_eq!(
        read(&with_events(&[0x02, 0x03, 0x01, 0x00, 0x03, 0x01, 0x00])).unwrap_err(),
        ReplayError::HostEventAfterEnd {
            index: 1,
            tick: 6,
            ticks: 5
        }
    );
    // A delta of u64::MAX after a delta of 1: past u64, reported saturated.
    let mut huge = vec![0x02, 0x01, 0x01, 0x00];
    huge.extend([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    huge.extend([0x01, 0x00]);
    assert_eq!(
        read(&with_events(&huge)).unwrap_err(),
        ReplayError::HostEventAfterEnd {
            index: 1,
            tick: u64::MAX,
            ticks: 5
        }
    );
    // Kind 9 at file offset: 20 + 4 + 4 + 3 + 8 + 8 + 4 (T, K, kind, players) + 9 (blocks) + 2 = 62.
    assert_eq!(
        read(&with_events(&[0x01, 0x00, 0x09, 0x00])).unwrap_err(),
        ReplayError::UnknownHostEvent {
            offset: 62,
            kind: 9
        }
    );
    // A count of 2^40 events in a file of a hundred bytes: refused before any is read.
    let e = read(&with_events(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x20])).unwrap_err();
    assert!(
        matches!(
            e,
            ReplayError::Truncated {
                what: "host events",
                offset: 60,
                needed: 3_298_534_883_328,
                ..
            }
        ),
        "{e}"
    );
    // An overlong payload varint.
    assert!(matches!(
        read(&with_events(&[0x01, 0x00, 0x01, 0x80, 0x00])).unwrap_err(),
        ReplayError::BadVarint {
            what: "time dropped",
            ..
        }
    ));
    // Events at the last tick and several at one tick are fine.
    let ok = golden_header(5, 2)
        .lp(&[0x05, 0x00, 0x05, 0x00])
        .raw(&[0x03, 0x05, 0x01, 0x07, 0x00, 0x01, 0x01, 0x00, 0x01, 0x02])
        .varint(2)
        .lp(b"steps")
        .lp(b"total")
        .u64(state_sum(&[2, 0]))
        .raw(&short(2))
        .raw(&short(0))
        .u64(state_sum(&[4, 0]))
        .raw(&short(4))
        .raw(&short(0))
        .u64(state_sum(&[5, 10]))
        .raw(&short(5))
        .raw(&short(10))
        .lp(b"5|10")
        .finish();
    let r = read(&ok).unwrap();
    assert_eq!(r.host_events().len(), 3);
    assert!(r.host_events().iter().all(|e| e.tick == 5));
    assert!(verify(Counter::default(), &r).is_match());
}

#[test]
fn host_events_from_parts_must_be_in_order_and_in_range() {
    let mut parts = record_with_drop(&[1, 1, -1, 0, 0], 2, Some((3, 300))).into_parts();
    let at = |tick| HostEvent {
        tick,
        kind: HostEventKind::TimeDropped(Nanos::from_nanos(1)),
    };
    parts.host_events = vec![at(4), at(2)];
    assert_eq!(
        Replay::from_parts(parts.clone()).unwrap_err(),
        ReplayError::HostEventsOutOfOrder {
            index: 1,
            tick: 2,
            previous: 4
        }
    );
    parts.host_events = vec![at(2), at(6)];
    assert_eq!(
        Replay::from_parts(parts).unwrap_err(),
        ReplayError::HostEventAfterEnd {
            index: 1,
            tick: 6,
            ticks: 5
        }
    );
}

#[test]
fn a_tampered_host_event_is_caught_by_verification() {
    // The honest golden replay, with its event edited to 301 ns and the
    // integrity checksum recomputed (a forgery, not corruption).
    let mut f = golden();
    assert_eq!(f[63..65], [0xac, 0x02]); // the payload: 60 count, 61 delta, 62 kind
    f[63] = 0xad;
    let forged = FileBuilder {
        bytes: f[..132].to_vec(),
    }
    .finish();
    let r = read(&forged).unwrap();
    let ReplayVerdict::Diverged(d) = verify(Counter::default(), &r).verdict else {
        panic!("a tampered event must not verify");
    };
    // The first checkpoint after the event (tick 4) names the field it changed.
    assert_eq!((d.checkpoint, d.tick, d.last_good_tick), (Some(1), 4, 2));
    assert_eq!(d.fields, ["total"]);
}

#[test]
fn errors_say_what_is_wrong() {
    let f = golden_header(u64::MAX, 2).finish();
    let msg = read(&f).unwrap_err().to_string();
    assert!(
        // The limit, not a CLI flag: the CLI adds its own hint.
        msg.contains("18446744073709551615") && !msg.contains("--max-ticks"),
        "{msg}"
    );
    let msg = read(b"TWREPL").unwrap_err().to_string();
    assert!(msg.contains("truncated") && msg.contains("magic"), "{msg}");
}
