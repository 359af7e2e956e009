//! The replay file: layout, limits, reading and writing.
//!
//! The byte layout is specified in `docs/replay-format.md`; this module is
//! the reference implementation. Reading is defensive: the size limit is
//! checked before anything else, every length is checked against the bytes
//! present and against [`ReplayLimits`] before it is used, and no loop runs
//! more times than the (limited) declared tick count or the bytes present.

use alloc::string::String;
use alloc::vec::Vec;
use core::cell::OnceCell;

use super::blocks::{BlockSection, RunDecoder, check_blocks, encode_blocks, merge_runs};
use super::codec::ReplayInput;
use super::error::ReplayError;
use super::run::Run;
use crate::codec::{Reader, put_varint};
use crate::digest::Fnv1a64;
use crate::sim::{MAX_PLAYERS, Sim};
use crate::time::Nanos;

/// The first eight bytes of every replay file.
pub const MAGIC: [u8; 8] = *b"TWREPLAY";
/// The format version this build reads and writes. Version 2 added the
/// host events section; version 3 stores the inputs as blocks of runs or of
/// packed symbols (random inputs cost 2 bits a tick instead of about 11);
/// version 4 stores one input stream per player, with the player count in
/// the header. Files of other versions are refused
/// ([`ReplayError::UnsupportedVersion`]) and must be recorded again.
pub const FORMAT_VERSION: u16 = 4;
/// Host event kind byte of [`HostEventKind::TimeDropped`].
pub(crate) const HOST_EVENT_TIME_DROPPED: u8 = 1;
/// The fewest bytes one host event takes in a file (tick delta, kind,
/// payload: one byte each at least), which bounds the count a file can declare.
pub(crate) const MIN_HOST_EVENT_BYTES: usize = 3;
/// The checkpoint interval used when none is given: one second at 60 Hz.
pub const DEFAULT_CHECKPOINT_EVERY: u64 = 60;
/// The longest sim id or field name, in bytes.
pub const MAX_NAME_BYTES: usize = 64;
/// Bytes before the first variable-length part: magic, version, flags, length.
pub(crate) const FIXED_HEADER_BYTES: usize = 20;
/// Bytes of the integrity checksum at the end of the file.
pub(crate) const TRAILER_BYTES: usize = 8;

/// Bounds on what a reader accepts, so that a hostile file cannot make it
/// allocate or work without limit. Every field can be raised by the caller
/// (the CLI has flags for the first two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayLimits {
    /// Largest file accepted (checked before parsing; callers reading from
    /// disk should check the file's size before reading it).
    pub max_file_bytes: u64,
    /// Largest declared tick count accepted; re-simulation never runs more
    /// ticks than the file declares, so this bounds verification work.
    pub max_ticks: u64,
    /// Largest embedded config.
    pub max_config_bytes: usize,
    /// Most state fields per checkpoint.
    pub max_fields: usize,
    /// Longest final text digest.
    pub max_digest_bytes: usize,
    /// Most work a re-simulation may take: declared ticks × the sim's work
    /// units per tick. The kernel cannot know what a tick costs, so the sim
    /// catalog checks this (`tickwise_catalog::limits`: units are calibrated
    /// to about one nanosecond of CPU each on a reference machine, per sim);
    /// it stops a small file with a huge world from buying hours of
    /// verification.
    pub max_work: u64,
}

impl ReplayLimits {
    /// The defaults: 64 MiB files, 10 million ticks (46 hours at 60 Hz),
    /// 64 KiB configs, 1024 fields, 4 KiB digests, 6·10¹⁰ work units
    /// (about a minute of CPU on the reference machine, whatever the sim).
    pub const DEFAULT: ReplayLimits = ReplayLimits {
        max_file_bytes: 64 * 1024 * 1024,
        max_ticks: 10_000_000,
        max_config_bytes: 64 * 1024,
        max_fields: 1024,
        max_digest_bytes: 4096,
        max_work: 60_000_000_000,
    };
}

impl Default for ReplayLimits {
    fn default() -> Self {
        ReplayLimits::DEFAULT
    }
}

/// Everything before the inputs: what a registry needs to pick the sim,
/// the input decoder and the config before decoding the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayHeader {
    /// Which sim recorded the replay (`"island"`, `"horde"`).
    pub sim_id: String,
    /// The sim's version; a sim bumps it whenever its step changes results.
    pub sim_version: u32,
    /// The config bytes exactly as the sim parsed them.
    pub config: Vec<u8>,
    /// The sim's seed as its config states it (for indexing and display;
    /// verifiers check it against the config).
    pub seed: u64,
    /// How many ticks the replay covers.
    pub ticks: u64,
    /// A checkpoint is stored after every this many ticks (at least 1).
    pub checkpoint_every: u64,
    /// The input encoding ([`ReplayInput::KIND`]).
    pub input_kind: u8,
    /// How many players' inputs the replay holds (1 to
    /// [`MAX_PLAYERS`]); the sim's [`Sim::players`].
    pub players: u8,
}

impl ReplayHeader {
    /// FNV-1a 64 of the config bytes, as stored in the file.
    #[must_use]
    pub const fn config_hash(&self) -> u64 {
        Fnv1a64::hash(self.config.as_slice())
    }

    /// The number of checkpoints (`ticks / checkpoint_every`), not counting
    /// the final state.
    #[must_use]
    pub const fn checkpoint_count(&self) -> u64 {
        match self.ticks.checked_div(self.checkpoint_every) {
            Some(n) => n,
            None => 0,
        }
    }
}

/// A fact from the host that changed the sim's state outside a step.
///
/// A loop's timing decides how many steps run, which the inputs of the
/// ticks already capture; but a sim that is told about the time its host
/// threw away ([`Sim::on_time_dropped`], the island's `droppedMs`) changes
/// state on a call no input records. Replays store those calls so that
/// re-simulation makes them at the same point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostEventKind {
    /// [`Sim::on_time_dropped`] was called with this duration (frame clamp,
    /// step cap).
    TimeDropped(Nanos),
}

impl HostEventKind {
    /// The kind byte stored in the file.
    #[must_use]
    pub const fn kind_byte(self) -> u8 {
        match self {
            HostEventKind::TimeDropped(_) => HOST_EVENT_TIME_DROPPED,
        }
    }

    /// Makes the call the event records.
    pub fn apply<S: Sim + ?Sized>(self, sim: &mut S) {
        match self {
            HostEventKind::TimeDropped(d) => sim.on_time_dropped(d),
        }
    }
}

/// A host event and the tick it happened at: after the step to state `tick`
/// (and its checkpoint, if one is due) and before the next step. Events at
/// tick 0 happened before the first step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HostEvent {
    /// The state's tick (steps run) when it happened.
    pub tick: u64,
    /// What happened.
    pub kind: HostEventKind,
}

/// A stored state summary: the 64-bit checksum and one 32-bit hash per
/// field (the low half of the field's FNV-1a 64), at `tick`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpoint<'a> {
    /// The state's tick (steps run).
    pub tick: u64,
    /// The whole-state checksum ([`crate::Sim::checksum`]).
    pub checksum: u64,
    /// Per-field hashes, in [`Replay::field_names`] order.
    pub fields: &'a [u32],
}

/// The parts of a replay, for building one from other sources (a server
/// converting formats, a test forging a file). [`Replay::from_parts`]
/// checks that they fit together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayParts<I> {
    /// The header; `input_kind` is overwritten with `I::KIND`.
    pub header: ReplayHeader,
    /// Each player's input runs, in slot order (`header.players` of
    /// them), each covering exactly `header.ticks` ticks.
    pub runs: Vec<Vec<Run<I>>>,
    /// Host events in non-decreasing tick order, none after `header.ticks`.
    pub host_events: Vec<HostEvent>,
    /// The sim's state field names.
    pub field_names: Vec<String>,
    /// Checksums at ticks `every, 2*every, ...` (`header.checkpoint_count()` of them).
    pub checkpoint_checksums: Vec<u64>,
    /// Field hashes of those checkpoints, flattened (`count * fields`).
    pub checkpoint_fields: Vec<u32>,
    /// The final state's checksum.
    pub final_checksum: u64,
    /// The final state's field hashes.
    pub final_fields: Vec<u32>,
    /// The final state's text digest ([`crate::Sim::digest`]).
    pub final_digest: String,
}

impl<I: PartialEq> ReplayParts<I> {
    /// Replaces `player`'s inputs with one per tick (merged into runs) and
    /// sets `header.ticks` to their count (adding empty streams up to
    /// `player` when there are fewer). Checkpoints, host events and the other
    /// players' inputs are left as they are, so [`Replay::from_parts`] accepts
    /// the result only for the same tick count, and [`super::verify`] then
    /// checks the new inputs against the old states: this is how tests forge
    /// replays.
    pub fn set_inputs(&mut self, player: usize, inputs: impl IntoIterator<Item = I>) {
        while self.runs.len() <= player {
            self.runs.push(Vec::new());
        }
        let runs = &mut self.runs[player];
        runs.clear();
        self.header.ticks = 0;
        for input in inputs {
            push_input(runs, input);
            self.header.ticks += 1;
        }
    }
}

/// Appends one tick's input, extending the last run when it is the same input.
pub(crate) fn push_input<I: PartialEq>(runs: &mut Vec<Run<I>>, input: I) {
    match runs.last_mut() {
        Some(run) if run.input == input => run.len += 1,
        _ => runs.push(Run { len: 1, input }),
    }
}

/// Checkpoint intervals start at 1.
pub(crate) const fn check_interval(every: u64) -> Result<(), ReplayError> {
    if every == 0 {
        return Err(ReplayError::LengthOutOfRange {
            what: "checkpoint interval",
            declared: 0,
            min: 1,
            max: u64::MAX,
        });
    }
    Ok(())
}

/// A replay: header, per-tick inputs, checkpoints and the final state.
/// Always internally consistent (built by [`Replay::from_bytes`],
/// [`Replay::from_parts`] or [`super::Recorder`]).
///
/// The inputs are kept encoded, as the file stores them (input blocks: about
/// 2 bytes a run, or 2 bits a tick for −1/0/1 inputs that change every tick,
/// instead of 16 bytes a run decoded), and decoded while [`super::verify`] and
/// [`super::compare_replays`] step through them: re-simulating a replay
/// needs memory for the encoded file, not for every run decoded. The
/// slice view [`Replay::runs`] (and [`Replay::inputs`]) decodes once, on
/// first use, and keeps the result.
#[derive(Clone, Debug)]
pub struct Replay<I> {
    /// Everything but the runs (`parts.runs` is always empty here).
    parts: ReplayParts<I>,
    /// The players' input blocks sections one after the other, each encoded
    /// exactly as in the file (checked), without their length prefixes.
    run_bytes: Vec<u8>,
    /// Where each player's section ends in `run_bytes`.
    stream_ends: Vec<usize>,
    /// Runs in each player's section (equal neighbours merged).
    run_counts: Vec<usize>,
    /// Each section decoded, filled by the first [`Replay::runs`] call.
    decoded: OnceCell<Vec<Vec<Run<I>>>>,
}

/// Equal when they would write the same file (whether the runs have been
/// decoded yet does not matter).
impl<I: PartialEq> PartialEq for Replay<I> {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
            && self.run_bytes == other.run_bytes
            && self.stream_ends == other.stream_ends
    }
}

impl<I: Eq> Eq for Replay<I> {}

/// Whether `name` is a valid sim id or field name.
#[must_use]
pub fn is_valid_name(name: &[u8]) -> bool {
    (1..=MAX_NAME_BYTES).contains(&name.len())
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn name(r: &mut Reader<'_>, what: &'static str) -> Result<String, ReplayError> {
    let offset = r.offset();
    let bytes = r.bytes_in(what, 1, MAX_NAME_BYTES)?;
    if !is_valid_name(bytes) {
        return Err(ReplayError::BadName { what, offset });
    }
    Ok(bytes.iter().map(|&b| char::from(b)).collect())
}

/// Checks the envelope (size limit, magic, version, flags, declared length,
/// integrity checksum) and returns a reader over the body.
fn envelope<'a>(bytes: &'a [u8], limits: &ReplayLimits) -> Result<Reader<'a>, ReplayError> {
    envelope_checked(bytes, limits, true)
}

/// [`envelope`], with the integrity checksum (one pass over every byte)
/// computed or not.
fn envelope_checked<'a>(
    bytes: &'a [u8],
    limits: &ReplayLimits,
    integrity: bool,
) -> Result<Reader<'a>, ReplayError> {
    let actual = bytes.len() as u64;
    if actual > limits.max_file_bytes {
        return Err(ReplayError::FileTooLarge {
            bytes: actual,
            limit: limits.max_file_bytes,
        });
    }
    let head = &bytes[..bytes.len().min(MAGIC.len())];
    if head != &MAGIC[..head.len()] {
        let mut found = [0u8; 8];
        found[..head.len()].copy_from_slice(head);
        #[allow(clippy::cast_possible_truncation, reason = "at most 8")]
        return Err(ReplayError::BadMagic {
            found,
            len: head.len() as u8,
        });
    }
    let mut r = Reader::new(bytes);
    r.take(MAGIC.len(), "magic")?;
    let version = r.u16_le("format version")?;
    if version != FORMAT_VERSION {
        return Err(ReplayError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let flags = r.u16_le("flags")?;
    if flags != 0 {
        return Err(ReplayError::UnsupportedFlags { found: flags });
    }
    let declared = r.u64_le("file length")?;
    let min = (FIXED_HEADER_BYTES + TRAILER_BYTES) as u64;
    if declared < min {
        return Err(ReplayError::LengthOutOfRange {
            what: "declared file length",
            declared,
            min,
            max: limits.max_file_bytes,
        });
    }
    if actual < declared {
        return Err(ReplayError::Truncated {
            what: "file (per its declared length)",
            offset: actual,
            needed: declared - actual,
            available: 0,
        });
    }
    if actual > declared {
        return Err(ReplayError::TrailingBytes { declared, actual });
    }
    let end = bytes.len() - TRAILER_BYTES;
    let mut stored = [0u8; 8];
    stored.copy_from_slice(&bytes[end..]);
    let stored = u64::from_le_bytes(stored);
    if integrity {
        let computed = Fnv1a64::hash(&bytes[..end]);
        if stored != computed {
            return Err(ReplayError::ChecksumMismatch { stored, computed });
        }
    }
    Ok(Reader::with_base(
        &bytes[FIXED_HEADER_BYTES..end],
        FIXED_HEADER_BYTES as u64,
    ))
}

fn header(r: &mut Reader<'_>, limits: &ReplayLimits) -> Result<ReplayHeader, ReplayError> {
    let sim_id = name(r, "sim id")?;
    let sim_version = r.u32_le("sim version")?;
    let config = r.bytes_in("config", 0, limits.max_config_bytes)?.to_vec();
    let stored = r.u64_le("config hash")?;
    let computed = Fnv1a64::hash(&config);
    if stored != computed {
        return Err(ReplayError::ConfigHashMismatch { stored, computed });
    }
    let seed = r.u64_le("seed")?;
    let ticks = r.varint("tick count")?;
    if ticks > limits.max_ticks {
        return Err(ReplayError::TooManyTicks {
            declared: ticks,
            limit: limits.max_ticks,
        });
    }
    let checkpoint_every = r.varint_in("checkpoint interval", 1, u64::MAX)?;
    let input_kind = r.u8("input kind")?;
    let players = r.u8("player count")?;
    if players == 0 || usize::from(players) > MAX_PLAYERS {
        return Err(ReplayError::LengthOutOfRange {
            what: "player count",
            declared: u64::from(players),
            min: 1,
            max: MAX_PLAYERS as u64,
        });
    }
    Ok(ReplayHeader {
        sim_id,
        sim_version,
        config,
        seed,
        ticks,
        checkpoint_every,
        input_kind,
        players,
    })
}

/// Reads and checks a replay's envelope and header without decoding its
/// inputs: enough to choose the sim (and its input type) from a registry.
///
/// # Errors
///
/// Any [`ReplayError`] of the envelope or header.
pub fn read_header(bytes: &[u8], limits: &ReplayLimits) -> Result<ReplayHeader, ReplayError> {
    let mut r = envelope(bytes, limits)?;
    header(&mut r, limits)
}

/// [`read_header`] without the integrity checksum: every other check of the
/// envelope and header, in the same order, but no pass over the whole file.
/// For choosing a decoder right before [`Replay::from_bytes`] or
/// [`Replay::from_vec`], which check the checksum: hashing a large file
/// once instead of twice is a third of the time a fast sim takes to
/// verify. A file whose header reads here may still be corrupt.
///
/// # Errors
///
/// Any [`ReplayError`] of the envelope or header but
/// [`ReplayError::ChecksumMismatch`].
pub fn read_header_unchecked(
    bytes: &[u8],
    limits: &ReplayLimits,
) -> Result<ReplayHeader, ReplayError> {
    let mut r = envelope_checked(bytes, limits, false)?;
    header(&mut r, limits)
}

/// A replay's envelope and header, read and checked once (the integrity
/// checksum included), kept with where its body starts so that the decode
/// that follows ([`Replay::from_header_read`]) reads neither again.
///
/// Why: a verification service reads the header when an upload arrives (to
/// refuse it at once or to price its work) and decodes the rest later, on
/// another thread. Reading the header and hashing the whole file a second
/// time there cost a sixth of verifying a 10-minute island replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderRead {
    header: ReplayHeader,
    /// Offset of the first byte after the header.
    body: usize,
    /// Length of the file it was read from.
    len: usize,
}

impl HeaderRead {
    /// Reads and checks `bytes`' envelope and header, as [`read_header`]
    /// does (one pass over every byte for the integrity checksum).
    ///
    /// # Errors
    ///
    /// Any [`ReplayError`] of the envelope or header.
    pub fn of(bytes: &[u8], limits: &ReplayLimits) -> Result<HeaderRead, ReplayError> {
        let mut r = envelope(bytes, limits)?;
        let header = header(&mut r, limits)?;
        Ok(HeaderRead {
            header,
            // Within the file, which is in memory: fits a usize.
            body: usize::try_from(r.offset()).unwrap_or(usize::MAX),
            len: bytes.len(),
        })
    }

    /// The header.
    #[must_use]
    pub const fn header(&self) -> &ReplayHeader {
        &self.header
    }

    /// The header, taken.
    #[must_use]
    pub fn into_header(self) -> ReplayHeader {
        self.header
    }

    /// The length of the file the header was read from.
    #[must_use]
    pub const fn file_len(&self) -> usize {
        self.len
    }
}

fn read_events(r: &mut Reader<'_>, ticks: u64) -> Result<Vec<HostEvent>, ReplayError> {
    let offset = r.offset();
    let count = r.varint("host event count")?;
    let needed = count.saturating_mul(MIN_HOST_EVENT_BYTES as u64);
    if needed > r.remaining() as u64 {
        return Err(ReplayError::Truncated {
            what: "host events",
            offset,
            needed,
            available: r.remaining() as u64,
        });
    }
    // count * 3 bytes are present, so the capacity is bounded by the file.
    let mut events = Vec::with_capacity(usize::try_from(count).unwrap_or(usize::MAX));
    let mut tick = 0u64;
    for index in 0..count {
        let delta = r.varint("host event tick delta")?;
        tick = match tick.checked_add(delta) {
            Some(t) if t <= ticks => t,
            _ => {
                return Err(ReplayError::HostEventAfterEnd {
                    index,
                    tick: tick.saturating_add(delta),
                    ticks,
                });
            }
        };
        let kind_offset = r.offset();
        let kind = match r.u8("host event kind")? {
            HOST_EVENT_TIME_DROPPED => {
                HostEventKind::TimeDropped(Nanos::from_nanos(r.varint("time dropped")?))
            }
            found => {
                return Err(ReplayError::UnknownHostEvent {
                    offset: kind_offset,
                    kind: found,
                });
            }
        };
        events.push(HostEvent { tick, kind });
    }
    Ok(events)
}

/// Host events must be in tick order and within the replay's ticks.
fn check_events(events: &[HostEvent], ticks: u64) -> Result<(), ReplayError> {
    let mut previous = 0u64;
    for (index, e) in events.iter().enumerate() {
        let index = index as u64;
        if e.tick > ticks {
            return Err(ReplayError::HostEventAfterEnd {
                index,
                tick: e.tick,
                ticks,
            });
        }
        if e.tick < previous {
            return Err(ReplayError::HostEventsOutOfOrder {
                index,
                tick: e.tick,
                previous,
            });
        }
        previous = e.tick;
    }
    Ok(())
}

fn read_hashes(r: &mut Reader<'_>, n: usize, out: &mut Vec<u32>) -> Result<(), ReplayError> {
    for _ in 0..n {
        out.push(r.u32_le("field hash")?);
    }
    Ok(())
}

/// Reads and checks a whole replay; the runs are checked, not kept (one
/// section per player).
fn parse<I: ReplayInput>(
    bytes: &[u8],
    limits: &ReplayLimits,
) -> Result<(ReplayParts<I>, Vec<BlockSection>), ReplayError> {
    let mut r = envelope(bytes, limits)?;
    let header = header(&mut r, limits)?;
    parse_body(&mut r, header, limits)
}

/// Reads and checks everything after the header (`r` is just past it).
fn parse_body<I: ReplayInput>(
    r: &mut Reader<'_>,
    header: ReplayHeader,
    limits: &ReplayLimits,
) -> Result<(ReplayParts<I>, Vec<BlockSection>), ReplayError> {
    if header.input_kind != I::KIND {
        return Err(ReplayError::InputKindMismatch {
            expected: I::KIND,
            found: header.input_kind,
        });
    }
    let mut runs = Vec::with_capacity(usize::from(header.players));
    for _ in 0..header.players {
        runs.push(check_blocks::<I>(r, header.ticks)?);
    }
    let host_events = read_events(r, header.ticks)?;
    let max_fields = limits.max_fields as u64;
    let n_fields = r.varint_in("field count", 1, max_fields)?;
    let n_fields = usize::try_from(n_fields).unwrap_or(usize::MAX);
    let mut field_names = Vec::with_capacity(n_fields.min(r.remaining() / 2));
    for _ in 0..n_fields {
        field_names.push(name(r, "field name")?);
    }
    let count = header.checkpoint_count();
    let per = 8 + 4 * n_fields as u64;
    let needed = count.saturating_mul(per);
    if needed > r.remaining() as u64 {
        return Err(ReplayError::Truncated {
            what: "checkpoints",
            offset: r.offset(),
            needed,
            available: r.remaining() as u64,
        });
    }
    // count * per fits the bytes present, so these capacities are bounded by the file.
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    let mut checkpoint_checksums = Vec::with_capacity(count);
    let mut checkpoint_fields = Vec::with_capacity(count * n_fields);
    for _ in 0..count {
        checkpoint_checksums.push(r.u64_le("checkpoint checksum")?);
        read_hashes(r, n_fields, &mut checkpoint_fields)?;
    }
    let final_checksum = r.u64_le("final checksum")?;
    let mut final_fields = Vec::with_capacity(n_fields);
    read_hashes(r, n_fields, &mut final_fields)?;
    let offset = r.offset();
    let text = r.bytes_in("final digest", 0, limits.max_digest_bytes)?;
    let final_digest = core::str::from_utf8(text)
        .map_err(|_| ReplayError::BadText {
            what: "final digest",
            offset,
        })?
        .into();
    if !r.is_empty() {
        return Err(ReplayError::SectionLength {
            what: "replay body",
            declared: r.offset() - FIXED_HEADER_BYTES as u64 + r.remaining() as u64,
            used: r.offset() - FIXED_HEADER_BYTES as u64,
        });
    }
    Ok((
        ReplayParts {
            header,
            runs: Vec::new(),
            host_events,
            field_names,
            checkpoint_checksums,
            checkpoint_fields,
            final_checksum,
            final_fields,
            final_digest,
        },
        runs,
    ))
}

impl<I: ReplayInput> Replay<I> {
    /// Reads a replay.
    ///
    /// # Errors
    ///
    /// A specific [`ReplayError`] for every way the bytes can be wrong:
    /// oversized, truncated, bad magic, unknown version, corrupted (integrity
    /// checksum), limits exceeded, inputs of another kind, malformed inputs,
    /// runs that do not cover the ticks, and so on. Never panics.
    pub fn from_bytes(bytes: &[u8], limits: &ReplayLimits) -> Result<Replay<I>, ReplayError> {
        let (parts, sections) = parse::<I>(bytes, limits)?;
        Ok(Replay::assemble(bytes, parts, &sections))
    }

    /// Reads a replay whose envelope and header `read` holds, read from
    /// these same `bytes` with the same `limits` ([`HeaderRead::of`]):
    /// neither is read again and the file is not hashed again (its
    /// integrity checksum was checked then), so this costs a pass over the
    /// inputs and checkpoints only. Only the input blocks are copied, as in
    /// [`Replay::from_bytes`]. Bytes of another length than the header was
    /// read from are read whole, as [`Replay::from_bytes`] does.
    ///
    /// Bytes of the same length but other contents than `read`'s are
    /// decoded without the checksum's check: every other check still
    /// applies, so they give an error or a replay, never a panic; keeping
    /// the bytes and their `HeaderRead` together is the caller's part.
    ///
    /// # Errors
    ///
    /// As [`Replay::from_bytes`], but for the envelope's and the header's.
    pub fn from_header_read(
        bytes: &[u8],
        read: HeaderRead,
        limits: &ReplayLimits,
    ) -> Result<Replay<I>, ReplayError> {
        if bytes.len() != read.len || read.len < FIXED_HEADER_BYTES + TRAILER_BYTES {
            return Replay::from_bytes(bytes, limits);
        }
        let end = bytes.len() - TRAILER_BYTES;
        let Some(body) = bytes.get(read.body..end) else {
            return Replay::from_bytes(bytes, limits);
        };
        let mut r = Reader::with_base(body, read.body as u64);
        let (parts, sections) = parse_body::<I>(&mut r, read.header, limits)?;
        Ok(Replay::assemble(bytes, parts, &sections))
    }

    /// The replay of checked parts, its input sections copied out of `bytes`.
    fn assemble(bytes: &[u8], parts: ReplayParts<I>, sections: &[BlockSection]) -> Replay<I> {
        let mut run_bytes = Vec::with_capacity(sections.iter().map(|s| s.end - s.start).sum());
        let mut stream_ends = Vec::with_capacity(sections.len());
        for s in sections {
            run_bytes.extend_from_slice(&bytes[s.start..s.end]);
            stream_ends.push(run_bytes.len());
        }
        Replay {
            parts,
            run_bytes,
            stream_ends,
            run_counts: sections.iter().map(|s| s.runs).collect(),
            decoded: OnceCell::new(),
        }
    }

    /// Reads a replay from a buffer it may keep: the input blocks are moved to
    /// the front of `bytes` and the rest is dropped, so reading a file costs
    /// no second copy of its largest section (what `tickwise verify` uses).
    ///
    /// # Errors
    ///
    /// As [`Replay::from_bytes`].
    pub fn from_vec(mut bytes: Vec<u8>, limits: &ReplayLimits) -> Result<Replay<I>, ReplayError> {
        let (parts, sections) = parse::<I>(&bytes, limits)?;
        // Sections lie in file order, so each moves to or before its place.
        let mut end = 0;
        let mut stream_ends = Vec::with_capacity(sections.len());
        for s in &sections {
            bytes.copy_within(s.start..s.end, end);
            end += s.end - s.start;
            stream_ends.push(end);
        }
        bytes.truncate(end);
        Ok(Replay {
            parts,
            run_bytes: bytes,
            stream_ends,
            run_counts: sections.iter().map(|s| s.runs).collect(),
            decoded: OnceCell::new(),
        })
    }

    /// Builds a replay from parts, checking that they fit together.
    ///
    /// # Errors
    ///
    /// [`ReplayError::BadName`] for an invalid sim id or field name,
    /// [`ReplayError::LengthOutOfRange`] for a zero checkpoint interval or no
    /// fields, [`ReplayError::EmptyRun`] / [`ReplayError::RunsDoNotCoverTicks`]
    /// for runs that do not cover the ticks,
    /// [`ReplayError::HostEventsOutOfOrder`] / [`ReplayError::HostEventAfterEnd`]
    /// for host events out of tick order or past the last tick,
    /// [`ReplayError::CountMismatch`] for checkpoint or field lists of the
    /// wrong size.
    pub fn from_parts(mut parts: ReplayParts<I>) -> Result<Replay<I>, ReplayError> {
        parts.header.input_kind = I::KIND;
        let h = &parts.header;
        if !is_valid_name(h.sim_id.as_bytes()) {
            return Err(ReplayError::BadName {
                what: "sim id",
                offset: 0,
            });
        }
        check_interval(h.checkpoint_every)?;
        let players = parts.runs.len();
        if players == 0 || players > MAX_PLAYERS || players != usize::from(h.players) {
            return Err(ReplayError::CountMismatch {
                what: "player input streams",
                expected: u64::from(h.players),
                found: players as u64,
            });
        }
        for runs in &parts.runs {
            let mut covered = 0u64;
            for run in runs {
                if run.len == 0 {
                    return Err(ReplayError::EmptyRun { offset: 0 });
                }
                covered = covered.saturating_add(run.len);
            }
            if covered != h.ticks {
                return Err(ReplayError::RunsDoNotCoverTicks {
                    declared: h.ticks,
                    covered,
                });
            }
        }
        check_events(&parts.host_events, h.ticks)?;
        let f = parts.field_names.len() as u64;
        if f == 0 {
            return Err(ReplayError::LengthOutOfRange {
                what: "field count",
                declared: 0,
                min: 1,
                max: u64::MAX,
            });
        }
        if parts
            .field_names
            .iter()
            .any(|n| !is_valid_name(n.as_bytes()))
        {
            return Err(ReplayError::BadName {
                what: "field name",
                offset: 0,
            });
        }
        let count = h.checkpoint_count();
        for (what, expected, found) in [
            (
                "checkpoint checksums",
                count,
                parts.checkpoint_checksums.len() as u64,
            ),
            (
                "checkpoint field hashes",
                count.saturating_mul(f),
                parts.checkpoint_fields.len() as u64,
            ),
            ("final field hashes", f, parts.final_fields.len() as u64),
        ] {
            if expected != found {
                return Err(ReplayError::CountMismatch {
                    what,
                    expected,
                    found,
                });
            }
        }
        let mut run_bytes = Vec::new();
        let mut stream_ends = Vec::with_capacity(players);
        let mut run_counts = Vec::with_capacity(players);
        for runs in &parts.runs {
            let (bytes, count) = encode_blocks(runs);
            run_bytes.extend_from_slice(&bytes);
            stream_ends.push(run_bytes.len());
            run_counts.push(count);
        }
        parts.runs = Vec::new();
        Ok(Replay {
            parts,
            run_bytes,
            stream_ends,
            run_counts,
            decoded: OnceCell::new(),
        })
    }

    /// Writes the replay in the current format version.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let p = &self.parts;
        let h = &p.header;
        let mut out = Vec::with_capacity(128 + h.config.len() + self.run_bytes.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // length, patched below
        put_bytes(&mut out, h.sim_id.as_bytes());
        out.extend_from_slice(&h.sim_version.to_le_bytes());
        put_bytes(&mut out, &h.config);
        out.extend_from_slice(&h.config_hash().to_le_bytes());
        out.extend_from_slice(&h.seed.to_le_bytes());
        put_varint(&mut out, h.ticks);
        put_varint(&mut out, h.checkpoint_every);
        out.push(I::KIND);
        out.push(h.players);
        for p in 0..self.stream_ends.len() {
            put_bytes(&mut out, self.stream(p));
        }
        put_varint(&mut out, p.host_events.len() as u64);
        let mut previous = 0u64;
        for e in &p.host_events {
            // from_parts and the reader keep events sorted: the delta is >= 0.
            put_varint(&mut out, e.tick.saturating_sub(previous));
            previous = e.tick;
            out.push(e.kind.kind_byte());
            match e.kind {
                HostEventKind::TimeDropped(d) => put_varint(&mut out, d.as_nanos()),
            }
        }
        put_varint(&mut out, p.field_names.len() as u64);
        for n in &p.field_names {
            put_bytes(&mut out, n.as_bytes());
        }
        let f = p.field_names.len();
        for (j, sum) in p.checkpoint_checksums.iter().enumerate() {
            out.extend_from_slice(&sum.to_le_bytes());
            put_hashes(&mut out, &p.checkpoint_fields[j * f..(j + 1) * f]);
        }
        out.extend_from_slice(&p.final_checksum.to_le_bytes());
        put_hashes(&mut out, &p.final_fields);
        put_bytes(&mut out, p.final_digest.as_bytes());
        let len = (out.len() + TRAILER_BYTES) as u64;
        out[12..20].copy_from_slice(&len.to_le_bytes());
        let sum = Fnv1a64::hash(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn put_hashes(out: &mut Vec<u8>, hashes: &[u32]) {
    for h in hashes {
        out.extend_from_slice(&h.to_le_bytes());
    }
}

impl<I> Replay<I> {
    /// The header.
    #[must_use]
    pub const fn header(&self) -> &ReplayHeader {
        &self.parts.header
    }

    /// Ticks covered.
    #[must_use]
    pub const fn ticks(&self) -> u64 {
        self.parts.header.ticks
    }

    /// How many players' inputs the replay holds.
    #[must_use]
    pub fn players(&self) -> usize {
        self.stream_ends.len()
    }

    /// How many input runs the replay holds, all players together (equal
    /// neighbours merged, also across blocks).
    #[must_use]
    pub fn run_count(&self) -> usize {
        self.run_counts.iter().sum()
    }

    /// How many input runs `player`'s stream holds (0 for a slot the
    /// replay does not have).
    #[must_use]
    pub fn player_run_count(&self, player: usize) -> usize {
        self.run_counts.get(player).copied().unwrap_or(0)
    }

    /// Bytes of the input blocks sections as stored in the file (without
    /// their length prefixes): what the inputs cost.
    #[must_use]
    pub const fn input_bytes(&self) -> usize {
        self.run_bytes.len()
    }

    /// `player`'s encoded section (empty for a slot the replay does not have).
    fn stream(&self, player: usize) -> &[u8] {
        let end = self.stream_ends.get(player).copied().unwrap_or(0);
        let start = match player.checked_sub(1) {
            Some(q) => self.stream_ends.get(q).copied().unwrap_or(0),
            None => 0,
        };
        self.run_bytes.get(start..end).unwrap_or(&[])
    }

    /// The host events, in tick order (see [`HostEvent`]).
    #[must_use]
    pub fn host_events(&self) -> &[HostEvent] {
        &self.parts.host_events
    }

    /// The sim's state field names.
    #[must_use]
    pub fn field_names(&self) -> &[String] {
        &self.parts.field_names
    }

    /// Checkpoints stored (not counting the final state).
    #[must_use]
    pub fn checkpoint_count(&self) -> usize {
        self.parts.checkpoint_checksums.len()
    }

    /// Checkpoint `j` (0-based), at tick `(j + 1) * checkpoint_every`.
    #[must_use]
    pub fn checkpoint(&self, j: usize) -> Option<Checkpoint<'_>> {
        let f = self.parts.field_names.len();
        let checksum = *self.parts.checkpoint_checksums.get(j)?;
        Some(Checkpoint {
            tick: (j as u64 + 1).saturating_mul(self.parts.header.checkpoint_every),
            checksum,
            fields: self.parts.checkpoint_fields.get(j * f..(j + 1) * f)?,
        })
    }

    /// The final state, at tick [`Replay::ticks`].
    #[must_use]
    pub fn final_state(&self) -> Checkpoint<'_> {
        Checkpoint {
            tick: self.parts.header.ticks,
            checksum: self.parts.final_checksum,
            fields: &self.parts.final_fields,
        }
    }

    /// The final state's text digest.
    #[must_use]
    pub fn final_digest(&self) -> &str {
        &self.parts.final_digest
    }
}

impl<I: ReplayInput> Replay<I> {
    /// `player`'s input runs, in tick order, decoded one at a time from the
    /// stored encoding: what re-simulation uses, in constant memory. Runs
    /// come out as stored, so two neighbours may have the same input (a run
    /// a writer split across blocks); [`Replay::runs`] joins them. A slot
    /// the replay does not have yields no runs.
    pub fn encoded_runs(&self, player: usize) -> impl Iterator<Item = Run<I>> + Clone + '_ {
        self.run_decoder(player)
    }

    /// [`Replay::encoded_runs`] as its concrete (private) type, for the
    /// re-simulation loops that store it.
    pub(crate) fn run_decoder(&self, player: usize) -> RunDecoder<'_, I> {
        RunDecoder::new(self.stream(player))
    }

    /// `player`'s input runs, in tick order, as a slice, equal neighbours
    /// joined ([`Replay::player_run_count`] of them): every stream is decoded
    /// on the first call and kept (16 bytes or more a run);
    /// [`Replay::encoded_runs`] streams them instead. Empty for a slot the
    /// replay does not have.
    #[must_use]
    pub fn runs(&self, player: usize) -> &[Run<I>] {
        self.all_runs().get(player).map_or(&[], Vec::as_slice)
    }

    fn all_runs(&self) -> &[Vec<Run<I>>] {
        self.decoded.get_or_init(|| {
            (0..self.players())
                .map(|p| merge_runs(self.encoded_runs(p)))
                .collect()
        })
    }

    /// `player`'s input of every tick, in order (runs expanded lazily; the
    /// runs are decoded as for [`Replay::runs`]).
    pub fn inputs(&self, player: usize) -> impl Iterator<Item = &I> + '_ {
        self.runs(player).iter().flat_map(|r| RepeatN {
            item: &r.input,
            left: r.len,
        })
    }

    /// Every tick's inputs, all players, in order: a cursor that walks the
    /// streams' runs in step (constant memory) and hands out each stretch
    /// of ticks in which no player's input changes.
    #[must_use]
    pub fn tick_inputs(&self) -> TickInputsCursor<'_, I> {
        TickInputsCursor::new(self)
    }

    /// The parts, for editing and rebuilding with [`Replay::from_parts`].
    #[must_use]
    pub fn into_parts(mut self) -> ReplayParts<I> {
        let runs = match self.decoded.take() {
            Some(runs) => runs,
            None => (0..self.players())
                .map(|p| merge_runs(self.encoded_runs(p)))
                .collect(),
        };
        ReplayParts { runs, ..self.parts }
    }
}

/// `repeat(item).take(n)` with a `u64` count (runs can be longer than a
/// 32-bit `usize`).
struct RepeatN<'a, I> {
    item: &'a I,
    left: u64,
}

impl<'a, I> Iterator for RepeatN<'a, I> {
    type Item = &'a I;
    fn next(&mut self) -> Option<&'a I> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.item)
    }
}

/// Walks every player's input runs in step: each call to
/// [`TickInputsCursor::next_stretch`] gives the inputs of all players (slot
/// order) and how many ticks in a row they hold, until the next change of
/// any player's input. Built by [`Replay::tick_inputs`].
#[derive(Debug)]
pub struct TickInputsCursor<'a, I> {
    decoders: Vec<RunDecoder<'a, I>>,
    left: Vec<u64>,
    current: Vec<I>,
}

impl<'a, I: ReplayInput> TickInputsCursor<'a, I> {
    fn new(replay: &'a Replay<I>) -> TickInputsCursor<'a, I> {
        let n = replay.players();
        TickInputsCursor {
            decoders: (0..n).map(|p| replay.run_decoder(p)).collect(),
            left: alloc::vec![0; n],
            current: alloc::vec![I::default(); n],
        }
    }

    /// The inputs of the next stretch of ticks and its length, or `None`
    /// after the last tick. The stretch is never empty; every player's
    /// stream covers the same ticks (the reader checked it).
    pub fn next_stretch(&mut self) -> Option<(&[I], u64)> {
        let len = self.advance(u64::MAX)?;
        Some((&self.current, len))
    }

    /// The next single tick's inputs, written into `out` (one entry per
    /// player, slot order), or `false` after the last tick (then `out` is
    /// left as it was). For callers that step tick by tick, such as a
    /// lockstep comparison.
    pub fn next_tick(&mut self, out: &mut [I]) -> bool {
        if self.advance(1).is_none() {
            return false;
        }
        for (o, c) in out.iter_mut().zip(&self.current) {
            o.clone_from(c);
        }
        true
    }

    /// Moves on by up to `max` ticks in which no player's input changes;
    /// returns how many (never 0), or `None` after the last tick.
    fn advance(&mut self, max: u64) -> Option<u64> {
        // One player (most replays): no loop over the streams, so a replay
        // of short runs costs what the single-stream reader cost.
        if let ([decoder], [left], [current]) = (
            self.decoders.as_mut_slice(),
            self.left.as_mut_slice(),
            self.current.as_mut_slice(),
        ) {
            if *left == 0 {
                let run = decoder.next()?;
                *current = run.input;
                *left = run.len;
            }
            let len = (*left).min(max);
            *left -= len;
            return (len > 0).then_some(len);
        }
        let mut len = max;
        for p in 0..self.decoders.len() {
            if self.left[p] == 0 {
                let run = self.decoders[p].next()?;
                self.current[p] = run.input;
                self.left[p] = run.len;
            }
            len = len.min(self.left[p]);
        }
        if self.decoders.is_empty() || len == 0 {
            return None;
        }
        for left in &mut self.left {
            *left -= len;
        }
        Some(len)
    }
}
