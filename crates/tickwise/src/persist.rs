//! A sim's state as bytes, for sending a confirmed state to a player who
//! rejoins a match (`tickwise-net`), where `Clone` is not enough: the state
//! has to cross the network.

use alloc::vec::Vec;
use core::fmt;

use crate::codec::{DecodeError, Reader};
use crate::sim::Sim;

/// A sim whose state can be written as bytes and read back into a sim
/// built from the same config. Optional: only a sim that implements it can
/// take a rejoining player. The layout is the sim's own, versioned by
/// [`SnapshotBytes::SNAPSHOT_VERSION`]; [`write_snapshot`] and
/// [`read_snapshot`] put the version in front and check it.
///
/// The bytes hold the whole state a step depends on (what
/// [`Sim::visit_state`] visits, plus anything else that is not derived
/// from the config); reading them back must give a sim whose
/// [`Sim::checksum`] and every later step equal the original's. A
/// receiver checks that with the checksum sent along.
pub trait SnapshotBytes: Sim {
    /// The layout's version; [`read_snapshot`] refuses any other.
    const SNAPSHOT_VERSION: u16;

    /// Appends the state to `out`.
    fn write_state(&self, out: &mut Vec<u8>);

    /// Replaces the state with one [`SnapshotBytes::write_state`] wrote,
    /// read from `r` (the version was checked already). `self` was built
    /// from the same config as the writer. Write with the
    /// [`crate::codec`] functions and read with its [`Reader`]; a
    /// [`DecodeError`] converts into [`SnapshotError::Malformed`] with `?`.
    ///
    /// # Errors
    ///
    /// [`SnapshotError`] for bytes that are cut short, out of range, or do
    /// not fit this sim's config; `self` may then hold a partial state
    /// (build a fresh one before using it).
    fn read_state(&mut self, r: &mut Reader<'_>) -> Result<(), SnapshotError>;
}

/// Why snapshot bytes could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotError {
    /// Another layout version.
    Version {
        /// The version found.
        found: u16,
        /// The version this build reads.
        expected: u16,
    },
    /// Cut short, a bad value, or bytes left over.
    Malformed {
        /// What could not be read.
        what: &'static str,
    },
    /// The bytes describe a sim of another config (another size or count).
    Config {
        /// What differs.
        what: &'static str,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Version { found, expected } => write!(
                f,
                "snapshot layout version {found} is not supported (this build reads version {expected})"
            ),
            SnapshotError::Malformed { what } => write!(f, "malformed snapshot: bad {what}"),
            SnapshotError::Config { what } => {
                write!(f, "the snapshot is of a sim with another config: {what}")
            }
        }
    }
}

impl core::error::Error for SnapshotError {}

impl SnapshotError {
    /// A mapper from a [`Reader`] error to [`SnapshotError::Malformed`]
    /// naming `what` instead of the part the reader named.
    pub fn malformed(what: &'static str) -> impl Fn(DecodeError) -> SnapshotError {
        move |_| SnapshotError::Malformed { what }
    }
}

/// Cut short, a bad varint or a value out of range: malformed, naming the
/// part the reader was reading.
impl From<DecodeError> for SnapshotError {
    fn from(e: DecodeError) -> SnapshotError {
        SnapshotError::Malformed { what: e.what() }
    }
}

/// `sim`'s state with its layout version in front (u16 LE).
#[must_use]
pub fn write_snapshot<S: SnapshotBytes>(sim: &S) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&S::SNAPSHOT_VERSION.to_le_bytes());
    sim.write_state(&mut out);
    out
}

/// Reads bytes [`write_snapshot`] wrote into `sim` (built from the same
/// config): the version, the state, and no bytes left over.
///
/// # Errors
///
/// [`SnapshotError`]; never panics on any bytes.
pub fn read_snapshot<S: SnapshotBytes>(sim: &mut S, bytes: &[u8]) -> Result<(), SnapshotError> {
    let mut r = Reader::new(bytes);
    let v = r
        .array::<2>("version")
        .map_err(SnapshotError::malformed("version"))?;
    let found = u16::from_le_bytes(v);
    if found != S::SNAPSHOT_VERSION {
        return Err(SnapshotError::Version {
            found,
            expected: S::SNAPSHOT_VERSION,
        });
    }
    sim.read_state(&mut r)?;
    if !r.is_empty() {
        return Err(SnapshotError::Malformed {
            what: "trailing bytes",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StateVisitor;
    use crate::codec::{put_signed, put_varint};

    /// Two fields, written as a varint and a zigzag varint.
    #[derive(Default)]
    struct Pair {
        count: u64,
        offset: i32,
    }

    impl Sim for Pair {
        type Input = i32;
        fn step(&mut self, _: &[i32]) {}
        fn visit_state(&self, v: &mut dyn StateVisitor) {
            v.field("count");
            v.value(self.count);
            v.field("offset");
            v.value_i64(self.offset.into());
        }
    }

    impl SnapshotBytes for Pair {
        const SNAPSHOT_VERSION: u16 = 3;
        fn write_state(&self, out: &mut Vec<u8>) {
            put_varint(out, self.count);
            put_signed(out, self.offset.into());
        }
        fn read_state(&mut self, r: &mut Reader<'_>) -> Result<(), SnapshotError> {
            self.count = r.varint("count")?;
            let offset = r.signed_in("offset", i32::MIN.into(), i32::MAX.into())?;
            self.offset =
                i32::try_from(offset).map_err(|_| SnapshotError::Malformed { what: "offset" })?;
            Ok(())
        }
    }

    #[test]
    fn snapshot_bytes_by_hand_and_errors_name_the_part() {
        let pair = Pair {
            count: 300,
            offset: -2,
        };
        // Version 3 (u16 LE), 300 = ac 02, zigzag(−2) = 3.
        let bytes = write_snapshot(&pair);
        assert_eq!(bytes, [0x03, 0x00, 0xac, 0x02, 0x03]);
        let mut back = Pair::default();
        assert_eq!(read_snapshot(&mut back, &bytes), Ok(()));
        assert_eq!((back.count, back.offset), (300, -2));

        // A decode error converts into Malformed naming what was read.
        let cut = &bytes[..3];
        assert_eq!(
            read_snapshot(&mut Pair::default(), cut),
            Err(SnapshotError::Malformed { what: "count" })
        );
        // zigzag 2^32 = 2^31: outside i32.
        let too_big = [0x03, 0x00, 0x01, 0x80, 0x80, 0x80, 0x80, 0x10];
        assert_eq!(
            read_snapshot(&mut Pair::default(), &too_big),
            Err(SnapshotError::Malformed { what: "offset" })
        );
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert_eq!(
            read_snapshot(&mut Pair::default(), &trailing),
            Err(SnapshotError::Malformed {
                what: "trailing bytes"
            })
        );
        assert_eq!(
            read_snapshot(&mut Pair::default(), &[0x02, 0x00]),
            Err(SnapshotError::Version {
                found: 2,
                expected: 3
            })
        );
    }
}
