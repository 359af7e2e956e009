//! The replay byte layout, checked against files written out by hand from
//! `docs/replay-format.md`, and every hostile-file case with its specific error.
//!
//! The expected bytes here are built field by field by this test (with its
//! own FNV-1a and LEB128 helpers), not by the code under test.

use tickwise::{
    Recorder, Replay, ReplayError, ReplayHeader, ReplayLimits, Sim, StateVisitor, Verdict,
    read_header, verify,
};

/// A two-field sim: `steps` counts ticks, `total` sums the inputs.
#[derive(Clone, Debug, Default)]
struct Counter {
    steps: u64,
    total: i64,
}

impl Sim for Counter {
    type Input = i32;
    fn step(&mut self, input: &i32) {
        self.steps += 1;
        self.total += i64::from(*input);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("steps");
        v.value(self.steps);
        v.field("total");
        v.value_i64(self.total);
    }
    fn digest(&self) -> String {
        format!("{}|{}", self.steps, self.total)
    }
}

/// FNV-1a 64, written out again from the spec (offset basis, prime).
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A state's checksum: FNV-1a over the 8 little-endian bytes of each value.
fn state_sum(values: &[u64]) -> u64 {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    fnv(&bytes)
}

fn short(v: u64) -> [u8; 4] {
    #[allow(clippy::cast_possible_truncation)]
    let h = fnv(&v.to_le_bytes()) as u32;
    h.to_le_bytes()
}

/// Builds a file section by section; `finish` patches the length and appends
/// the integrity checksum, so hostile variants stay past the envelope checks.
#[derive(Clone)]
struct FileBuilder {
    bytes: Vec<u8>,
}

impl FileBuilder {
    fn new() -> FileBuilder {
        let mut bytes = b"TWREPLAY".to_vec();
        bytes.extend([0x01, 0x00, 0x00, 0x00]); // version 1, flags 0
        bytes.extend([0u8; 8]); // length, patched by finish
        FileBuilder { bytes }
    }
    fn raw(mut self, b: &[u8]) -> Self {
        self.bytes.extend_from_slice(b);
        self
    }
    fn varint(mut self, mut v: u64) -> Self {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.bytes.push(byte);
                return self;
            }
            self.bytes.push(byte | 0x80);
        }
    }
    fn lp(self, b: &[u8]) -> Self {
        self.varint(b.len() as u64).raw(b)
    }
    fn u64(self, v: u64) -> Self {
        self.raw(&v.to_le_bytes())
    }
    fn finish(mut self) -> Vec<u8> {
        let len = (self.bytes.len() + 8) as u64;
        self.bytes[12..20].copy_from_slice(&len.to_le_bytes());
        let sum = fnv(&self.bytes);
        self.bytes.extend_from_slice(&sum.to_le_bytes());
        self.bytes
    }
}

/// The header of the golden file up to and including the input kind.
fn golden_header(ticks: u64, every: u64) -> FileBuilder {
    FileBuilder::new()
        .lp(b"ctr")
        .raw(&7u32.to_le_bytes())
        .lp(b"{}")
        .u64(fnv(b"{}"))
        .u64(42)
        .varint(ticks)
        .varint(every)
        .raw(&[0x01])
}

/// The golden file: 5 ticks of inputs 1, 1, -1, 0, 0, a checkpoint every 2.
fn golden() -> Vec<u8> {
    golden_header(5, 2)
        // runs: (2 × +1) (1 × -1) (2 × 0); zigzag(1) = 2, zigzag(-1) = 1
        .lp(&[0x02, 0x02, 0x01, 0x01, 0x02, 0x00])
        .varint(2)
        .lp(b"steps")
        .lp(b"total")
        // tick 2: steps 2, total 2
        .u64(state_sum(&[2, 2]))
        .raw(&short(2))
        .raw(&short(2))
        // tick 4: steps 4, total 1
        .u64(state_sum(&[4, 1]))
        .raw(&short(4))
        .raw(&short(1))
        // final, tick 5: steps 5, total 1
        .u64(state_sum(&[5, 1]))
        .raw(&short(5))
        .raw(&short(1))
        .lp(b"5|1")
        .finish()
}

fn header(every: u64) -> ReplayHeader {
    ReplayHeader {
        sim_id: "ctr".into(),
        sim_version: 7,
        config: b"{}".to_vec(),
        seed: 42,
        ticks: 0,
        checkpoint_every: every,
        input_kind: 0,
    }
}

fn record(inputs: &[i32], every: u64) -> Replay<i32> {
    let mut rec = Recorder::new(Counter::default(), header(every)).unwrap();
    for &i in inputs {
        rec.step(i);
    }
    rec.finish().unwrap().1
}

fn read(bytes: &[u8]) -> Result<Replay<i32>, ReplayError> {
    Replay::<i32>::from_bytes(bytes, &ReplayLimits::DEFAULT)
}

#[test]
fn recorder_writes_the_documented_bytes() {
    let expected = golden();
    assert_eq!(
        expected.len(),
        130,
        "the layout in docs/replay-format.md adds up to 130 bytes"
    );
    let written = record(&[1, 1, -1, 0, 0], 2).to_bytes();
    assert_eq!(written, expected);
}

#[test]
fn reader_reads_the_documented_bytes() {
    let r = read(&golden()).unwrap();
    let h = r.header();
    assert_eq!((h.sim_id.as_str(), h.sim_version, h.seed), ("ctr", 7, 42));
    assert_eq!((h.ticks, h.checkpoint_every, h.input_kind), (5, 2, 1));
    assert_eq!(h.config, b"{}");
    assert_eq!(r.inputs().copied().collect::<Vec<_>>(), [1, 1, -1, 0, 0]);
    assert_eq!(r.runs().len(), 3);
    assert_eq!(r.field_names(), ["steps", "total"]);
    assert_eq!(r.checkpoint_count(), 2);
    let c = r.checkpoint(1).unwrap();
    assert_eq!((c.tick, c.checksum), (4, state_sum(&[4, 1])));
    assert_eq!(r.final_state().tick, 5);
    assert_eq!(r.final_digest(), "5|1");
    assert_eq!(
        verify(Counter::default(), &r).verdict,
        Verdict::Match {
            digest: "5|1".into()
        }
    );
    assert_eq!(read_header(&golden(), &ReplayLimits::DEFAULT).unwrap(), *h);
}

#[test]
fn an_empty_replay_is_valid() {
    let bytes = golden_header(0, 60)
        .lp(&[])
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
    f[8] = 2;
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::UnsupportedVersion {
            found: 2,
            supported: 1
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
            declared: 130,
            actual: 134
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
    let stored = u64::from_le_bytes(f[122..130].try_into().unwrap());
    assert_eq!(
        read(&f).unwrap_err(),
        ReplayError::ChecksumMismatch {
            stored,
            computed: fnv(&f[..122])
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
    // An input runs section longer than the file.
    let f = golden_header(5, 2).varint(1 << 50).finish();
    assert!(matches!(
        read(&f).unwrap_err(),
        ReplayError::Truncated {
            what: "input runs",
            needed: 1_125_899_906_842_624,
            ..
        }
    ));
    // A million fields.
    let f = golden_header(1, 2)
        .lp(&[0x01, 0x02])
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
        .lp(&[0x80, 0xad, 0xe2, 0x04, 0x00]) // one run of 10,000,000 zeros
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
    let short = golden_header(5, 2).lp(&[0x02, 0x02]).finish();
    assert_eq!(
        read(&short).unwrap_err(),
        ReplayError::RunsDoNotCoverTicks {
            declared: 5,
            covered: 2
        }
    );
    let long = golden_header(5, 2).lp(&[0x02, 0x02, 0x09, 0x00]).finish();
    assert_eq!(
        read(&long).unwrap_err(),
        ReplayError::RunsDoNotCoverTicks {
            declared: 5,
            covered: 11
        }
    );
    let empty_run = golden_header(5, 2).lp(&[0x00, 0x02]).finish();
    assert!(matches!(
        read(&empty_run).unwrap_err(),
        ReplayError::EmptyRun { .. }
    ));
}

#[test]
fn malformed_fields() {
    let overlong = golden_header(5, 2).lp(&[0x85, 0x00, 0x02]).finish();
    assert!(matches!(
        read(&overlong).unwrap_err(),
        ReplayError::BadVarint {
            what: "run length",
            ..
        }
    ));
    let bad_input = golden_header(5, 2)
        .lp(&[0x05, 0x80, 0x80, 0x80, 0x80, 0x10])
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
        bytes: other_kind[..122].to_vec(),
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
fn errors_say_what_is_wrong() {
    let f = golden_header(u64::MAX, 2).finish();
    let msg = read(&f).unwrap_err().to_string();
    assert!(
        msg.contains("18446744073709551615") && msg.contains("--max-ticks"),
        "{msg}"
    );
    let msg = read(b"TWREPL").unwrap_err().to_string();
    assert!(msg.contains("truncated") && msg.contains("magic"), "{msg}");
}
