//! Authentication: [`open`] checks a datagram's length, magic, version,
//! session id and then its MAC, and nothing past the session id is read
//! before the MAC matches, so no field of a forged datagram is ever used.

use tickwise::codec::Reader;

use crate::auth::{Auth, MAC_LEN};

use super::error::{WireError, malformed};
use super::limits::{MAX_PACKET, MIN_PACKET, WIRE_MAGIC, WIRE_VERSION};

/// Checks a datagram's length, magic, version, session id and MAC, and
/// returns the authenticated bytes (without the MAC). Nothing past the
/// session id is looked at before the MAC matches.
///
/// # Errors
///
/// [`WireError::Oversized`], [`WireError::Malformed`] (cut short or
/// another magic), [`WireError::Version`], [`WireError::WrongSession`],
/// [`WireError::Unauthenticated`]; never panics on any bytes.
pub fn open<'a>(bytes: &'a [u8], auth: &Auth) -> Result<&'a [u8], WireError> {
    if bytes.len() > MAX_PACKET {
        return Err(WireError::Oversized { len: bytes.len() });
    }
    let mut r = Reader::new(bytes);
    let magic = r.array::<2>("magic").map_err(malformed("magic"))?;
    if magic != WIRE_MAGIC {
        return Err(WireError::Malformed { what: "magic" });
    }
    let version = r.u8("version").map_err(malformed("version"))?;
    if version != WIRE_VERSION {
        return Err(WireError::Version { found: version });
    }
    if bytes.len() < MIN_PACKET {
        return Err(WireError::Malformed {
            what: "length (cut short)",
        });
    }
    r.u8("kind").map_err(malformed("kind"))?;
    let session = r.u64_le("session").map_err(malformed("session id"))?;
    if session != auth.session_id() {
        return Err(WireError::WrongSession { found: session });
    }
    let (signed, tag) = bytes.split_at(bytes.len() - MAC_LEN);
    if !auth.check(signed, tag) {
        return Err(WireError::Unauthenticated);
    }
    Ok(signed)
}
