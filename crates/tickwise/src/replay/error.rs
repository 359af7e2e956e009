//! Why a replay could not be read or built.

use core::fmt;

/// A replay that could not be read (or a replay that could not be built
/// from parts). Every malformed file maps to one of these; none panics.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReplayError {
    /// The file is larger than [`super::ReplayLimits::max_file_bytes`]
    /// (checked before it is read or parsed).
    FileTooLarge {
        /// The file's size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The bytes end before the part named by `what` does.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// File offset where it starts.
        offset: u64,
        /// Bytes it needs.
        needed: u64,
        /// Bytes that were left.
        available: u64,
    },
    /// The file does not start with [`super::MAGIC`]: not a tickwise replay.
    BadMagic {
        /// The first bytes found (up to 8).
        found: [u8; 8],
        /// How many of `found` are real (files shorter than 8 bytes).
        len: u8,
    },
    /// A format version this reader does not know.
    UnsupportedVersion {
        /// The version in the file.
        found: u16,
        /// The version this reader reads.
        supported: u16,
    },
    /// Reserved header flags are set (a future format feature).
    UnsupportedFlags {
        /// The flags found.
        found: u16,
    },
    /// The file is longer than its header says: bytes were appended.
    TrailingBytes {
        /// The length the header declares.
        declared: u64,
        /// The file's actual length.
        actual: u64,
    },
    /// The integrity checksum (FNV-1a 64 over every byte before it) does not
    /// match: the file was corrupted after it was written.
    ChecksumMismatch {
        /// The checksum stored in the file.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },
    /// The declared tick count is above [`super::ReplayLimits::max_ticks`].
    TooManyTicks {
        /// Ticks the file declares.
        declared: u64,
        /// The limit.
        limit: u64,
    },
    /// A declared length or count outside its accepted range.
    LengthOutOfRange {
        /// What the length is of.
        what: &'static str,
        /// The value in the file.
        declared: u64,
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A varint longer than needed, or past 64 bits.
    BadVarint {
        /// What was being read.
        what: &'static str,
        /// File offset of its first byte.
        offset: u64,
    },
    /// A sim id or field name that is not 1 to 64 bytes of `a-z A-Z 0-9 _ - .`.
    BadName {
        /// What the name is of.
        what: &'static str,
        /// File offset of the name (0 when building from parts).
        offset: u64,
    },
    /// The final digest text is not UTF-8.
    BadText {
        /// What the text is of.
        what: &'static str,
        /// File offset of the text.
        offset: u64,
    },
    /// The file's inputs are of another kind than the reader asked for.
    InputKindMismatch {
        /// The kind the reader decodes.
        expected: u8,
        /// The kind in the file.
        found: u8,
    },
    /// One encoded input is invalid.
    BadInput {
        /// File offset of the input.
        offset: u64,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A run of zero ticks (runs cover at least one tick).
    EmptyRun {
        /// File offset of the run.
        offset: u64,
    },
    /// An input block breaks the block rules (format version 3): see
    /// [`super::BlockFault`] for each rule.
    BadInputBlock {
        /// File offset of the faulty part: the block's first byte for its
        /// tick count, its mode byte, the run, the palette size or entry, or
        /// the byte holding the faulty symbol or padding.
        offset: u64,
        /// What is wrong.
        fault: super::BlockFault,
    },
    /// The input runs do not add up to the declared tick count.
    RunsDoNotCoverTicks {
        /// Ticks the header declares.
        declared: u64,
        /// Ticks the runs cover (read up to the point of failure).
        covered: u64,
    },
    /// A section's declared byte length does not match what its contents use.
    SectionLength {
        /// The section.
        what: &'static str,
        /// Its declared length.
        declared: u64,
        /// The bytes its contents used.
        used: u64,
    },
    /// The stored config hash is not the FNV-1a 64 of the stored config bytes.
    ConfigHashMismatch {
        /// The hash in the file.
        stored: u64,
        /// The hash of the config bytes.
        computed: u64,
    },
    /// A checkpoint list or field list of the wrong size (building from parts).
    CountMismatch {
        /// What was counted.
        what: &'static str,
        /// How many the other parts require.
        expected: u64,
        /// How many there are.
        found: u64,
    },
    /// While recording, the sim described its state with other fields than
    /// at the start (a sim's field list must be fixed).
    FieldsChanged {
        /// The first checkpoint tick where they differed.
        tick: u64,
    },
    /// A host event of a kind this reader does not know.
    UnknownHostEvent {
        /// File offset of its kind byte.
        offset: u64,
        /// The kind byte.
        kind: u8,
    },
    /// A host event after the replay's last tick (or a tick past `u64`).
    HostEventAfterEnd {
        /// The event's index (0-based) in the host events.
        index: u64,
        /// Its tick.
        tick: u64,
        /// The replay's tick count.
        ticks: u64,
    },
    /// A host event whose tick is before the previous event's (building
    /// from parts; in a file, ticks are stored as non-negative deltas).
    HostEventsOutOfOrder {
        /// The event's index (0-based).
        index: u64,
        /// Its tick.
        tick: u64,
        /// The previous event's tick.
        previous: u64,
    },
    /// A live recording was started after the sim had already run (or had
    /// already been told about dropped time): a verifier starts from the
    /// state built from the config, so the recording must start there too.
    RecordingStartedLate {
        /// The loop's tick when recording was asked for.
        tick: u64,
        /// Host events (calls to `Sim::on_time_dropped`) already made.
        host_events: u64,
    },
    /// A replay was asked of a loop that is not recording.
    NotRecording,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::FileTooLarge { bytes, limit } => {
                write!(f, "file is {bytes} bytes, above the limit of {limit}")
            }
            ReplayError::Truncated {
                what,
                offset,
                needed,
                available,
            } => write!(
                f,
                "truncated: {what} at byte {offset} needs {needed} bytes, only {available} left"
            ),
            ReplayError::BadMagic { found, len } => write!(
                f,
                "not a tickwise replay: starts with {:02x?} instead of \"TWREPLAY\"",
                &found[..usize::from(*len).min(8)]
            ),
            ReplayError::UnsupportedVersion { found, supported } => {
                write!(
                    f,
                    "replay format version {found} is not supported (this build reads version {supported})"
                )?;
                if found < supported {
                    f.write_str(
                        "; the file was written by an older build and must be recorded again",
                    )?;
                }
                Ok(())
            }
            ReplayError::UnsupportedFlags { found } => {
                write!(f, "replay header flags {found:#06x} are not supported")
            }
            ReplayError::TrailingBytes { declared, actual } => write!(
                f,
                "file is {actual} bytes but its header declares {declared}: extra bytes after the end"
            ),
            ReplayError::ChecksumMismatch { stored, computed } => write!(
                f,
                "integrity checksum mismatch: file says {stored:016x}, bytes hash to {computed:016x} (corrupted)"
            ),
            ReplayError::TooManyTicks { declared, limit } => write!(
                f,
                "replay declares {declared} ticks, above the limit of {limit}"
            ),
            ReplayError::LengthOutOfRange {
                what,
                declared,
                min,
                max,
            } => write!(f, "{what} is {declared}, outside {min}..={max}"),
            ReplayError::BadVarint { what, offset } => write!(
                f,
                "{what} at byte {offset} is not a minimal 64-bit LEB128 varint"
            ),
            ReplayError::BadName { what, offset } => write!(
                f,
                "{what} at byte {offset} must be 1 to 64 bytes of a-z A-Z 0-9 _ - ."
            ),
            ReplayError::BadText { what, offset } => {
                write!(f, "{what} at byte {offset} is not UTF-8")
            }
            ReplayError::InputKindMismatch { expected, found } => write!(
                f,
                "replay inputs are of kind {found}, but this sim reads kind {expected}"
            ),
            ReplayError::BadInput { offset, reason } => {
                write!(f, "invalid input at byte {offset}: {reason}")
            }
            ReplayError::EmptyRun { offset } => {
                write!(f, "input run at byte {offset} covers zero ticks")
            }
            ReplayError::BadInputBlock { offset, fault } => {
                write!(f, "invalid input block at byte {offset}: {fault}")
            }
            ReplayError::RunsDoNotCoverTicks { declared, covered } => write!(
                f,
                "input runs cover {covered} ticks but the replay declares {declared}"
            ),
            ReplayError::SectionLength {
                what,
                declared,
                used,
            } => write!(
                f,
                "{what} declares {declared} bytes but its contents use {used}"
            ),
            ReplayError::ConfigHashMismatch { stored, computed } => write!(
                f,
                "config hash mismatch: file says {stored:016x}, config bytes hash to {computed:016x}"
            ),
            ReplayError::CountMismatch {
                what,
                expected,
                found,
            } => write!(f, "{what}: expected {expected}, found {found}"),
            ReplayError::FieldsChanged { tick } => write!(
                f,
                "the sim's state fields changed at tick {tick}; a sim must describe its state with the same fields every tick"
            ),
            ReplayError::UnknownHostEvent { offset, kind } => write!(
                f,
                "host event at byte {offset} has kind {kind}, which this build does not know (known: 1 = time dropped)"
            ),
            ReplayError::HostEventAfterEnd { index, tick, ticks } => write!(
                f,
                "host event {index} is at tick {tick}, after the replay's last tick {ticks}"
            ),
            ReplayError::HostEventsOutOfOrder {
                index,
                tick,
                previous,
            } => write!(
                f,
                "host event {index} is at tick {tick}, before the previous event's tick {previous}; events must be in tick order"
            ),
            ReplayError::RecordingStartedLate { tick, host_events } => write!(
                f,
                "recording must start at tick 0 before any host event, but the loop is at tick {tick} after {host_events} host events; a verifier starts from the state the config builds"
            ),
            ReplayError::NotRecording => {
                f.write_str("the loop is not recording: call start_recording at tick 0 first")
            }
        }
    }
}

impl core::error::Error for ReplayError {}

/// A read of the byte codec that failed inside a replay: the same facts,
/// under the replay's names (offsets are file offsets there).
impl From<crate::codec::DecodeError> for ReplayError {
    fn from(e: crate::codec::DecodeError) -> ReplayError {
        use crate::codec::DecodeError;
        match e {
            DecodeError::Truncated {
                what,
                offset,
                needed,
                available,
            } => ReplayError::Truncated {
                what,
                offset,
                needed,
                available,
            },
            DecodeError::BadVarint { what, offset } => ReplayError::BadVarint { what, offset },
            DecodeError::OutOfRange {
                what,
                value,
                min,
                max,
                ..
            } => ReplayError::LengthOutOfRange {
                what,
                declared: value,
                min,
                max,
            },
            DecodeError::Invalid { offset, reason, .. } => ReplayError::BadInput { offset, reason },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::DecodeError;

    #[test]
    fn codec_errors_keep_their_facts_under_replay_names() {
        let cases = [
            (
                DecodeError::Truncated {
                    what: "a",
                    offset: 7,
                    needed: 4,
                    available: 1,
                },
                ReplayError::Truncated {
                    what: "a",
                    offset: 7,
                    needed: 4,
                    available: 1,
                },
            ),
            (
                DecodeError::BadVarint {
                    what: "b",
                    offset: 9,
                },
                ReplayError::BadVarint {
                    what: "b",
                    offset: 9,
                },
            ),
            (
                DecodeError::OutOfRange {
                    what: "c",
                    offset: 3,
                    value: 70,
                    min: 1,
                    max: 64,
                },
                ReplayError::LengthOutOfRange {
                    what: "c",
                    declared: 70,
                    min: 1,
                    max: 64,
                },
            ),
            (
                DecodeError::Invalid {
                    what: "input",
                    offset: 12,
                    reason: "r",
                },
                ReplayError::BadInput {
                    offset: 12,
                    reason: "r",
                },
            ),
        ];
        for (from, to) in cases {
            assert_eq!(ReplayError::from(from), to);
        }
    }
}
