//! The replay header and reading it on its own: a registry picks the sim,
//! its input decoder and its config from the header before the rest of the
//! file is decoded, and a service prices an upload's work from it.

use alloc::string::String;
use alloc::vec::Vec;

use super::envelope::{envelope, envelope_checked};
use super::layout::name;
use super::limits::ReplayLimits;
use crate::codec::Reader;
use crate::digest::Fnv1a64;
use crate::replay::error::ReplayError;
use crate::sim::MAX_PLAYERS;

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
    /// The input encoding ([`ReplayInput::KIND`](crate::ReplayInput::KIND)).
    pub input_kind: u8,
    /// How many players' inputs the replay holds (1 to
    /// [`MAX_PLAYERS`]); the sim's [`Sim::players`](crate::Sim::players).
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

pub(super) fn header(
    r: &mut Reader<'_>,
    limits: &ReplayLimits,
) -> Result<ReplayHeader, ReplayError> {
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
/// For choosing a decoder right before [`Replay::from_bytes`](super::Replay::from_bytes) or
/// [`Replay::from_vec`](super::Replay::from_vec), which check the checksum: hashing a large file
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
/// that follows
/// ([`Replay::from_header_read`](super::Replay::from_header_read)) reads
/// neither again.
///
/// Why: a verification service reads the header when an upload arrives (to
/// refuse it at once or to price its work) and decodes the rest later, on
/// another thread. Reading the header and hashing the whole file a second
/// time there cost a sixth of verifying a 10-minute island replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderRead {
    pub(super) header: ReplayHeader,
    /// Offset of the first byte after the header.
    pub(super) body: usize,
    /// Length of the file it was read from.
    pub(super) len: usize,
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
