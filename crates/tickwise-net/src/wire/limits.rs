//! The wire format's constants: its magic and version, the size limits a
//! datagram is checked against, the most items one message carries, and
//! the kind bytes. Every other part of the format reads them from here.

use crate::auth::MAC_LEN;

/// The first two bytes of every message.
pub const WIRE_MAGIC: [u8; 2] = *b"TN";
/// The wire version this build speaks.
pub const WIRE_VERSION: u8 = 2;
/// The largest datagram sent or accepted (the safe UDP payload GGRS also
/// uses), MAC included.
pub const MAX_PACKET: usize = 508;
/// The most bytes before the MAC: what a [`Buf`](crate::wire::Buf) holds.
pub const MAX_UNSEALED: usize = MAX_PACKET - MAC_LEN;
/// The shortest datagram that can be authentic: the fixed envelope (13
/// bytes), a one-byte sequence number and the MAC.
pub const MIN_PACKET: usize = 14 + MAC_LEN;
/// The most ticks of input one message carries.
pub const MAX_INPUTS_PER_PACKET: usize = 64;
/// The most checksums one message carries.
pub const MAX_CHECKS_PER_PACKET: usize = 8;
/// The most field hashes one message carries.
pub const MAX_FIELDS_PER_PACKET: usize = 56;

/// Message kinds.
pub(crate) const KIND_INPUTS: u8 = 1;
pub(crate) const KIND_FIELDS: u8 = 2;
pub(crate) const KIND_SPECTATE: u8 = 3;
pub(crate) const KIND_SPECTATOR_ACK: u8 = 4;
pub(crate) const KIND_DEPARTURE: u8 = 5;
pub(crate) const KIND_GOODBYE: u8 = 6;
pub(crate) const KIND_REJOIN: u8 = 7;
pub(crate) const KIND_NOTICE: u8 = 8;
pub(crate) const KIND_NOTICE_ACK: u8 = 9;
pub(crate) const KIND_CHUNK: u8 = 10;
pub(crate) const KIND_CHUNK_ACK: u8 = 11;
pub(crate) const KIND_REFUSE: u8 = 12;
pub(crate) const KIND_WATCH: u8 = 13;
pub(crate) const KIND_WATCH_REPLY: u8 = 14;
/// The sender byte of a watch request (kind 13): a spectator process has
/// no slot until a player admits it and says which one in its reply.
pub const UNASSIGNED_SLOT: u8 = 255;
/// Snapshot bytes per chunk (the last chunk of a snapshot may be shorter).
pub const CHUNK_BYTES: usize = 400;
