//! The fixed numbers of the file layout and the rule for names: what the
//! reader, the writer and the builder from parts must agree on, kept in one
//! place that none of them owns.

use alloc::string::String;

use crate::codec::Reader;
use crate::replay::error::ReplayError;

/// The first eight bytes of every replay file.
pub const MAGIC: [u8; 8] = *b"TWREPLAY";
/// The format version this build reads and writes. Version 2 added the
/// host events section; version 3 stores the inputs as blocks of runs or of
/// packed symbols (random inputs cost 2 bits a tick instead of about 11);
/// version 4 stores one input stream per player, with the player count in
/// the header. Files of other versions are refused
/// ([`ReplayError::UnsupportedVersion`]) and must be recorded again.
pub const FORMAT_VERSION: u16 = 4;
/// Host event kind byte of [`HostEventKind::TimeDropped`](super::HostEventKind::TimeDropped).
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

/// Whether `name` is a valid sim id or field name.
#[must_use]
pub fn is_valid_name(name: &[u8]) -> bool {
    (1..=MAX_NAME_BYTES).contains(&name.len())
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

pub(super) fn name(r: &mut Reader<'_>, what: &'static str) -> Result<String, ReplayError> {
    let offset = r.offset();
    let bytes = r.bytes_in(what, 1, MAX_NAME_BYTES)?;
    if !is_valid_name(bytes) {
        return Err(ReplayError::BadName { what, offset });
    }
    Ok(bytes.iter().map(|&b| char::from(b)).collect())
}
