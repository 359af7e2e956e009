//! The envelope around a replay's body: the fixed header (magic, version,
//! flags, declared length) in front and the integrity checksum at the end.
//! It is checked before anything else is read, so that a file of the wrong
//! kind, version or size, or a corrupted one, is refused before any of its
//! lengths is trusted.

use super::layout::{FIXED_HEADER_BYTES, FORMAT_VERSION, MAGIC, TRAILER_BYTES};
use super::limits::ReplayLimits;
use crate::codec::Reader;
use crate::digest::Fnv1a64;
use crate::replay::error::ReplayError;

/// Checks the envelope (size limit, magic, version, flags, declared length,
/// integrity checksum) and returns a reader over the body.
pub(super) fn envelope<'a>(
    bytes: &'a [u8],
    limits: &ReplayLimits,
) -> Result<Reader<'a>, ReplayError> {
    envelope_checked(bytes, limits, true)
}

/// [`envelope`], with the integrity checksum (one pass over every byte)
/// computed or not.
pub(super) fn envelope_checked<'a>(
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
