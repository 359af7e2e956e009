//! Shared by the byte-level replay tests (`replay_format`, `replay_blocks`):
//! the `ctr` sim, and the spec's FNV-1a and LEB128 written out again from
//! `docs/replay-format.md` (offset basis, prime, 7-bit groups), so expected
//! bytes are built here field by field, never by the code under test.

use tickwise::{
    Nanos, Recorder, Replay, ReplayError, ReplayHeader, ReplayLimits, Sim, StateVisitor,
};

/// The golden file's sim: `steps` counts ticks, `total` sums the inputs and
/// the nanoseconds of any time dropped (so a host event changes the state).
#[derive(Clone, Debug, Default)]
pub(crate) struct Counter {
    steps: u64,
    total: i64,
}

impl Sim for Counter {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        self.steps += 1;
        self.total += i64::from(*input);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("steps");
        v.value(self.steps);
        v.field("total");
        v.value_i64(self.total);
    }
    fn on_time_dropped(&mut self, dropped: Nanos) {
        self.total += i64::try_from(dropped.as_nanos()).unwrap();
    }
    fn digest(&self) -> String {
        format!("{}|{}", self.steps, self.total)
    }
}

/// FNV-1a 64 (offset basis, prime).
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Unsigned LEB128.
pub(crate) fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A state's checksum: FNV-1a over the 8 little-endian bytes of each value.
pub(crate) fn state_sum(values: &[u64]) -> u64 {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    fnv(&bytes)
}

/// A field's short checksum: the low 4 bytes of FNV-1a over its value.
pub(crate) fn short(v: u64) -> [u8; 4] {
    #[allow(clippy::cast_possible_truncation)]
    let h = fnv(&v.to_le_bytes()) as u32;
    h.to_le_bytes()
}

/// Builds a file section by section; `finish` patches the length and appends
/// the integrity checksum, so hostile variants stay past the envelope checks.
#[derive(Clone)]
pub(crate) struct FileBuilder {
    pub(crate) bytes: Vec<u8>,
}

impl FileBuilder {
    pub(crate) fn new() -> FileBuilder {
        let mut bytes = b"TWREPLAY".to_vec();
        bytes.extend([0x04, 0x00, 0x00, 0x00]); // version 4, flags 0
        bytes.extend([0u8; 8]); // length, patched by finish
        FileBuilder { bytes }
    }
    pub(crate) fn raw(mut self, b: &[u8]) -> Self {
        self.bytes.extend_from_slice(b);
        self
    }
    pub(crate) fn varint(self, v: u64) -> Self {
        self.raw(&varint(v))
    }
    pub(crate) fn lp(self, b: &[u8]) -> Self {
        self.varint(b.len() as u64).raw(b)
    }
    pub(crate) fn u64(self, v: u64) -> Self {
        self.raw(&v.to_le_bytes())
    }
    pub(crate) fn finish(mut self) -> Vec<u8> {
        let len = (self.bytes.len() + 8) as u64;
        self.bytes[12..20].copy_from_slice(&len.to_le_bytes());
        let sum = fnv(&self.bytes);
        self.bytes.extend_from_slice(&sum.to_le_bytes());
        self.bytes
    }
}

/// The header of a file of the `ctr` sim (version 7, config `{}`, seed 42),
/// as in the golden file, up to and including the player count (1).
pub(crate) fn golden_header(ticks: u64, every: u64) -> FileBuilder {
    FileBuilder::new()
        .lp(b"ctr")
        .raw(&7u32.to_le_bytes())
        .lp(b"{}")
        .u64(fnv(b"{}"))
        .u64(42)
        .varint(ticks)
        .varint(every)
        .raw(&[0x01]) // input kind: i32
        .raw(&[0x01]) // players: 1
}

/// The header `record` gives the recorder (the one `golden_header` writes).
pub(crate) fn header(every: u64) -> ReplayHeader {
    ReplayHeader {
        sim_id: "ctr".into(),
        sim_version: 7,
        config: b"{}".to_vec(),
        seed: 42,
        ticks: 0,
        checkpoint_every: every,
        input_kind: 0,
        players: 1,
    }
}

pub(crate) fn record(inputs: &[i32], every: u64) -> Replay<i32> {
    record_with_drop(inputs, every, None)
}

/// Records `inputs`, with `drop = Some((tick, ns))` dropping time after that tick.
pub(crate) fn record_with_drop(
    inputs: &[i32],
    every: u64,
    drop: Option<(u64, u64)>,
) -> Replay<i32> {
    let mut rec = Recorder::new(Counter::default(), header(every)).unwrap();
    for &i in inputs {
        rec.step(&[i]);
        if let Some((t, ns)) = drop
            && rec.ticks() == t
        {
            rec.time_dropped(Nanos::from_nanos(ns));
        }
    }
    rec.finish().unwrap().1
}

pub(crate) fn read(bytes: &[u8]) -> Result<Replay<i32>, ReplayError> {
    Replay::<i32>::from_bytes(bytes, &ReplayLimits::DEFAULT)
}
