//! The session key and the datagram MAC.
//!
//! Every session has a 128-bit key, the same on every peer and spectator,
//! agreed outside the game (the `tickwise peer --session-key` flag, a
//! lobby, a room server). Two values are derived from it with BLAKE3's
//! `derive_key` and fixed context strings:
//!
//! * the 32-byte MAC key: every datagram ends with the first 16 bytes of
//!   the keyed BLAKE3 hash of everything before them, and a datagram whose
//!   tag does not match is dropped before any field of it is used;
//! * the 64-bit session id written in every datagram's envelope, so that
//!   two matches on one port are told apart (counted as `wrong_session`)
//!   without anyone sharing a constant.
//!
//! The key never appears in `Debug` output.

use core::fmt;

/// Bytes of the MAC tag at the end of every datagram.
pub const MAC_LEN: usize = 16;

/// The `derive_key` context of the MAC key (fixed for wire version 2).
const MAC_CONTEXT: &str = "tickwise-net 2026-12-01 datagram MAC (wire version 2)";
/// The `derive_key` context of the session id.
const ID_CONTEXT: &str = "tickwise-net 2026-12-01 session id (wire version 2)";

/// A session's 128-bit secret key.
///
/// Make one from 16 random bytes ([`SessionKey::from_bytes`]; the OS's
/// random source belongs to the front end, never to the sim) or from 32 hex
/// digits ([`SessionKey::from_hex`]), and give every peer the same one.
/// `Debug` prints `SessionKey(..)`, never the key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SessionKey([u8; 16]);

impl fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

/// Why a hex session key was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// Not 32 characters long.
    Length {
        /// The characters found.
        found: usize,
    },
    /// A character that is not a hex digit.
    NotHex {
        /// Its position (0-based, in characters).
        at: usize,
    },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::Length { found } => write!(
                f,
                "a session key is 32 hex digits (128 bits), found {found} characters"
            ),
            KeyError::NotHex { at } => write!(
                f,
                "a session key is 32 hex digits (128 bits): character {} is not a hex digit",
                at + 1
            ),
        }
    }
}

impl core::error::Error for KeyError {}

impl SessionKey {
    /// The key made of these 16 bytes.
    #[must_use]
    pub const fn from_bytes(bytes: [u8; 16]) -> SessionKey {
        SessionKey(bytes)
    }

    /// Parses 32 hex digits (either case).
    ///
    /// # Errors
    ///
    /// [`KeyError::Length`] unless there are exactly 32 characters,
    /// [`KeyError::NotHex`] for the first one that is not a hex digit.
    pub fn from_hex(text: &str) -> Result<SessionKey, KeyError> {
        let n = text.chars().count();
        if n != 32 {
            return Err(KeyError::Length { found: n });
        }
        let mut out = [0u8; 16];
        let digits = text.as_bytes();
        for (i, byte) in out.iter_mut().enumerate() {
            let hi = hex_digit(digits[2 * i]).ok_or(KeyError::NotHex { at: 2 * i })?;
            let lo = hex_digit(digits[2 * i + 1]).ok_or(KeyError::NotHex { at: 2 * i + 1 })?;
            *byte = (hi << 4) | lo;
        }
        Ok(SessionKey(out))
    }

    /// The key as 32 lowercase hex digits (to hand to the other peers).
    #[must_use]
    pub fn to_hex(&self) -> KeyHex {
        KeyHex(self.0)
    }

    /// The key's bytes.
    #[must_use]
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

const fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// A key written as hex ([`SessionKey::to_hex`]): `Display` prints it.
#[derive(Clone, Copy)]
pub struct KeyHex([u8; 16]);

impl fmt::Display for KeyHex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for KeyHex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyHex(..)")
    }
}

/// What a session derives from its key once: the MAC key and the session
/// id. Seals outgoing datagrams and checks incoming ones.
#[derive(Clone)]
pub struct Auth {
    mac_key: [u8; 32],
    session_id: u64,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Auth { .. }")
    }
}

impl Auth {
    /// Derives the MAC key and the session id from `key`.
    #[must_use]
    pub fn new(key: &SessionKey) -> Auth {
        let mac_key = blake3::derive_key(MAC_CONTEXT, &key.0);
        let id = blake3::derive_key(ID_CONTEXT, &key.0);
        let mut first = [0u8; 8];
        first.copy_from_slice(&id[..8]);
        Auth {
            mac_key,
            session_id: u64::from_le_bytes(first),
        }
    }

    /// The session id this key gives (the envelope's `session` field).
    #[must_use]
    pub const fn session_id(&self) -> u64 {
        self.session_id
    }

    /// The tag of `bytes`: the first [`MAC_LEN`] bytes of their keyed
    /// BLAKE3 hash.
    #[must_use]
    pub fn tag(&self, bytes: &[u8]) -> [u8; MAC_LEN] {
        let hash = blake3::keyed_hash(&self.mac_key, bytes);
        let mut out = [0u8; MAC_LEN];
        out.copy_from_slice(&hash.as_bytes()[..MAC_LEN]);
        out
    }

    /// Whether `tag` is the tag of `bytes` (compared in constant time).
    #[must_use]
    pub fn check(&self, bytes: &[u8], tag: &[u8]) -> bool {
        let want = self.tag(bytes);
        tag.len() == MAC_LEN && want.iter().zip(tag).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

    #[test]
    fn hex_round_trip_and_errors() {
        let k = SessionKey::from_hex("000102030405060708090a0B0c0D0e0F").unwrap();
        assert_eq!(
            k.as_bytes(),
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
        );
        assert_eq!(k.to_hex().to_string(), "000102030405060708090a0b0c0d0e0f");
        assert_eq!(
            SessionKey::from_hex("abc"),
            Err(KeyError::Length { found: 3 })
        );
        assert_eq!(
            SessionKey::from_hex("000102030405060708090a0b0c0d0e0g"),
            Err(KeyError::NotHex { at: 31 })
        );
        // 32 characters, but multi-byte: refused, never sliced mid-character.
        let wide = "é".repeat(16);
        assert_eq!(wide.chars().count(), 16);
        assert!(SessionKey::from_hex(&"é0".repeat(16)).is_err());
        assert_eq!(
            KeyError::NotHex { at: 0 }.to_string(),
            "a session key is 32 hex digits (128 bits): character 1 is not a hex digit"
        );
    }

    #[test]
    fn debug_never_prints_the_key() {
        let k = SessionKey::from_bytes([0xab; 16]);
        let cfg = crate::SessionConfig::new(2, 0, k);
        let shown = format!("{k:?} {:?} {:?} {cfg:?}", Auth::new(&k), k.to_hex());
        assert!(shown.contains("key: SessionKey(..)"), "{shown}");
        assert!(!shown.contains("ab"), "{shown}");
        assert!(!shown.contains("171"), "{shown}");
    }

    /// Known answers from the Python `blake3` package (PyPI 1.0.11):
    /// `blake3(key, derive_key_context=CTX).digest()` for both contexts,
    /// then `blake3(b"hello", key=mac_key).digest()[:16]`.
    #[test]
    fn derivations_match_an_independent_blake3() {
        let k: [u8; 16] = core::array::from_fn(|i| i as u8);
        let a = Auth::new(&SessionKey::from_bytes(k));
        assert_eq!(a.session_id(), 13_159_194_344_506_776_178);
        let want = [
            0x15, 0x71, 0x47, 0xc6, 0x71, 0x38, 0x14, 0x80, 0x94, 0x8a, 0x99, 0xa8, 0x43, 0x82,
            0x40, 0x54,
        ];
        assert_eq!(a.tag(b"hello"), want);
    }

    #[test]
    fn tags_depend_on_key_and_bytes() {
        let a = Auth::new(&SessionKey::from_bytes([1; 16]));
        let b = Auth::new(&SessionKey::from_bytes([2; 16]));
        assert_ne!(a.session_id(), b.session_id());
        let t = a.tag(b"hello");
        assert!(a.check(b"hello", &t));
        assert!(!a.check(b"hellp", &t));
        assert!(!b.check(b"hello", &t));
        assert!(!a.check(b"hello", &t[..15]));
    }
}
