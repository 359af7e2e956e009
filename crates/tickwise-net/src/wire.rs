//! The wire format: one versioned, compact message per UDP datagram.
//!
//! Layout (every multi-byte fixed field little-endian; `varint` is unsigned
//! LEB128 as in the replay format, at most 10 bytes, canonical):
//!
//! ```text
//! offset size  field
//! 0      2     magic "TN"
//! 2      1     wire version (2)
//! 3      1     kind: 1 inputs, 2 field hashes, 3 spectator inputs, 4 spectator ack,
//!              5 departure (a leaver's last tick), 6 goodbye, 7 rejoin request,
//!              8 rejoin notice, 9 rejoin notice ack, 10 snapshot chunk,
//!              11 snapshot ack, 12 rejoin refused, 13 watch request,
//!              14 watch reply
//! 4      8     session id (u64 LE, derived from the session key)
//! 12     1     sender slot (players 0..=3, spectators 4..)
//! 13     var   sequence number (varint, strictly increasing per sender)
//! ..     body  per kind, see [`Body`]
//! len-16 16    MAC: keyed BLAKE3 of bytes 0..len-16, first 16 bytes
//! ```
//!
//! [`decode`] checks, in order: the length, the magic, the version, the
//! session id, then the MAC ([`crate::Auth`]); only a datagram whose MAC
//! matches is read any further, so no sequence number, ping, ack, input or
//! checksum of a forged datagram is ever used. `docs/netplay.md` lists the
//! body of every kind byte by byte and what the session does with each kind
//! of bad packet. Decoding never panics and never allocates: inputs stay as
//! encoded bytes inside the datagram until the session decodes them one by
//! one with [`tickwise::ReplayInput`].
//!
//! One concept per private module, re-exported flat here: `limits` (the
//! constants: magic, version, sizes, counts, kind bytes), `message` (the
//! decoded envelope and bodies), `error` ([`WireError`]), `buf` (the
//! fixed-size send buffer and the envelope writer), `authenticate` (the
//! checks that run before any field of a datagram is trusted, the MAC
//! last) and `decoding` (reading the bodies of authenticated bytes, every
//! count checked).

mod authenticate;
mod buf;
mod decoding;
mod error;
mod limits;
mod message;

pub use authenticate::open;
pub use buf::Buf;
pub(crate) use buf::write_envelope;
pub use decoding::decode;
pub use error::WireError;
pub use limits::{
    CHUNK_BYTES, MAX_CHECKS_PER_PACKET, MAX_FIELDS_PER_PACKET, MAX_INPUTS_PER_PACKET, MAX_PACKET,
    MAX_UNSEALED, MIN_PACKET, UNASSIGNED_SLOT, WIRE_MAGIC, WIRE_VERSION,
};
pub(crate) use limits::{
    KIND_CHUNK, KIND_CHUNK_ACK, KIND_DEPARTURE, KIND_FIELDS, KIND_GOODBYE, KIND_INPUTS,
    KIND_NOTICE, KIND_NOTICE_ACK, KIND_REFUSE, KIND_REJOIN, KIND_SPECTATE, KIND_SPECTATOR_ACK,
    KIND_WATCH, KIND_WATCH_REPLY,
};
pub use message::{
    Body, Checks, ChunkMsg, DepartureMsg, Envelope, FieldsMsg, InputsMsg, SpectateMsg,
    WATCH_ADMITTED, WATCH_BEHIND, WATCH_FULL, WATCH_NO_SNAPSHOT, WATCH_SILENT, WATCH_TOO_LARGE,
    WatchReplyMsg,
};
