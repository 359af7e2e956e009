//! Standard base64 (RFC 4648, with `=` padding), for handing bytes to JavaScript.
//!
//! A page returns a replay file to its test API and its download button as
//! one string; base64 survives every JS string API and `atob` reads it back.
//! Twenty lines are cheaper than a dependency in the page's wasm.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `bytes` in standard base64 with padding.
#[must_use]
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let sextet = (n >> (18 - 6 * i)) & 63;
                out.push(char::from(ALPHABET[sextet as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_test_vectors() {
        // RFC 4648 section 10.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded, "{plain:?}");
        }
    }

    #[test]
    fn every_sextet_value_appears() {
        // 0x00 0x10 0x83 0x10 0x51 0x87 ... is the alphabet in order; check the
        // ends instead: 0x00 -> 'A', 0xFF 0xFF 0xFF -> "////", 0xFB 0xEF 0xBE -> "++++".
        assert_eq!(encode(&[0, 0, 0]), "AAAA");
        assert_eq!(encode(&[0xFF, 0xFF, 0xFF]), "////");
        assert_eq!(encode(&[0xFB, 0xEF, 0xBE]), "++++");
        assert_eq!(encode(&[0xFF]), "/w==");
    }
}
