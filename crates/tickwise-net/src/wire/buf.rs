//! Encoding: [`Buf`], the fixed-size datagram buffer messages are written
//! into and sealed with their MAC, and the envelope writer every message
//! starts with.

use crate::auth::{Auth, MAC_LEN};

use super::limits::{MAX_PACKET, MAX_UNSEALED, WIRE_MAGIC, WIRE_VERSION};
use super::message::Envelope;

fn put_varint_buf(out: &mut Buf, mut v: u64) {
    loop {
        #[allow(clippy::cast_possible_truncation, reason = "seven bits at a time")]
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A fixed-size datagram buffer: writing past [`MAX_UNSEALED`] sets an
/// overflow flag instead of allocating or panicking; [`Buf::seal`] then
/// appends the MAC in the last [`MAC_LEN`] bytes.
#[derive(Clone, Debug)]
pub struct Buf {
    data: [u8; MAX_PACKET],
    len: usize,
    overflow: bool,
}

impl Default for Buf {
    fn default() -> Buf {
        Buf::new()
    }
}

impl Buf {
    /// An empty buffer.
    #[must_use]
    pub const fn new() -> Buf {
        Buf {
            data: [0; MAX_PACKET],
            len: 0,
            overflow: false,
        }
    }
    /// Empties it.
    pub const fn clear(&mut self) {
        self.len = 0;
        self.overflow = false;
    }
    /// Appends one byte.
    pub fn push(&mut self, b: u8) {
        match self
            .data
            .get_mut(self.len)
            .filter(|_| self.len < MAX_UNSEALED)
        {
            Some(slot) => {
                *slot = b;
                self.len += 1;
            }
            None => self.overflow = true,
        }
    }
    /// Appends bytes.
    pub fn extend(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(b);
        }
    }
    /// Appends a varint.
    pub fn varint(&mut self, v: u64) {
        put_varint_buf(self, v);
    }
    /// The bytes written.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.data.get(..self.len).unwrap_or(&[])
    }
    /// Bytes written.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }
    /// Nothing written.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Cuts back to `len` bytes (to undo a partial write).
    pub const fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.len = len;
        }
        self.overflow = false;
    }
    /// Overwrites the byte at `at` (a count written before its items).
    pub fn set(&mut self, at: usize, b: u8) {
        if at < self.len
            && let Some(slot) = self.data.get_mut(at)
        {
            *slot = b;
        }
    }
    /// Whether a write did not fit.
    #[must_use]
    pub const fn overflowed(&self) -> bool {
        self.overflow
    }
    /// Appends the MAC of everything written (the datagram is then
    /// complete). Returns `false`, writing nothing, when a write overflowed
    /// or the buffer is already sealed.
    pub fn seal(&mut self, auth: &Auth) -> bool {
        if self.overflow || self.len > MAX_UNSEALED {
            return false;
        }
        let tag = auth.tag(self.bytes());
        match self.data.get_mut(self.len..self.len + MAC_LEN) {
            Some(dst) => {
                dst.copy_from_slice(&tag);
                self.len += MAC_LEN;
                true
            }
            None => false,
        }
    }
}

/// Writes the envelope of a message of `kind`.
pub(crate) fn write_envelope(out: &mut Buf, kind: u8, env: &Envelope) {
    out.clear();
    out.extend(&WIRE_MAGIC);
    out.push(WIRE_VERSION);
    out.push(kind);
    out.extend(&env.session.to_le_bytes());
    out.push(env.sender);
    out.varint(env.seq);
}
