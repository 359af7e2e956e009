//! Room codes: 128 random bits written as 22 characters of base64url.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Characters in a room code.
pub const CODE_LEN: usize = 22;

/// The code for 16 random bytes: base64url without padding (RFC 4648 §5),
/// 22 characters, safe in a URL path and query.
#[must_use]
pub fn encode_code(bytes: &[u8; 16]) -> String {
    let mut out = String::with_capacity(CODE_LEN);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for &b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(char::from(ALPHABET[((acc >> bits) & 63) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((acc << (6 - bits)) & 63) as usize]));
    }
    out
}

/// Whether `s` has the shape of a room code (22 base64url characters, the
/// last one of the 4 that carry 2 bits). Checked before any lookup, so a
/// long or odd path never reaches the room table.
#[must_use]
pub fn is_code(s: &str) -> bool {
    s.len() == CODE_LEN
        && s.bytes().all(|b| ALPHABET.contains(&b))
        && s.bytes()
            .last()
            .and_then(|b| ALPHABET.iter().position(|&a| a == b))
            .is_some_and(|i| i & 15 == 0)
}

/// The session key of a room as 32 lowercase hex digits.
#[must_use]
pub fn key_hex(key: &[u8; 16]) -> String {
    use core::fmt::Write as _;
    let mut s = String::with_capacity(32);
    for b in key {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_base64url() {
        // RFC 4648 test vector shapes, checked with Python's
        // base64.urlsafe_b64encode(bytes(range(16))).rstrip(b'=').
        let bytes: [u8; 16] = core::array::from_fn(|i| i as u8);
        assert_eq!(encode_code(&bytes), "AAECAwQFBgcICQoLDA0ODw");
        assert_eq!(encode_code(&[0xff; 16]), "_____________________w");
        assert!(is_code("AAECAwQFBgcICQoLDA0ODw"));
        assert!(is_code(&encode_code(&[0xff; 16])));
        assert!(!is_code("AAECAwQFBgcICQoLDA0OD"));
        assert!(!is_code("AAECAwQFBgcICQoLDA0ODx"), "low bits set");
        assert!(!is_code("AAECAwQFBgcICQoLDA0OD/"));
        assert!(!is_code(""));
    }

    #[test]
    fn keys_are_lowercase_hex() {
        let key: [u8; 16] = core::array::from_fn(|i| (i * 17) as u8);
        assert_eq!(key_hex(&key), "00112233445566778899aabbccddeeff");
    }
}
