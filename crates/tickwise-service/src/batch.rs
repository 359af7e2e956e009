//! The batch codec of `POST /v1/batches`, shared by the service (which
//! reads batches as they arrive) and the load generator (which frames
//! them): replays one after another, each as a 4-byte big-endian length
//! and then that many bytes.

use std::fmt;

use bytes::Bytes;

/// The content type of a batch upload: replays framed one after another,
/// each as a 4-byte big-endian length and then that many bytes.
pub const BATCH_CONTENT_TYPE: &str = "application/x-tickwise-batch";

/// Frames `replays` as a batch body (the inverse of what
/// `POST /v1/batches` reads). A replay longer than `u32::MAX` bytes cannot
/// be framed and is left out (no service accepts one that large).
#[must_use]
pub fn frame_batch<B: AsRef<[u8]>>(replays: &[B]) -> Vec<u8> {
    let total: usize = replays.iter().map(|r| r.as_ref().len() + 4).sum();
    let mut out = Vec::with_capacity(total);
    for (len, r) in frames(replays) {
        out.extend_from_slice(&len);
        out.extend_from_slice(r.as_ref());
    }
    out
}

/// [`frame_batch`] without copying the replays: the body as pieces to be
/// sent one after another (each replay's 4-byte length, then the replay's
/// own bytes), so a client sends a batch with one vectored write instead
/// of first copying every replay into one buffer. Concatenated, the pieces
/// are exactly [`frame_batch`]'s bytes.
#[must_use]
pub fn frame_batch_pieces(replays: &[Bytes]) -> Vec<Bytes> {
    frames(replays)
        .flat_map(|(len, r)| [Bytes::copy_from_slice(&len), r.clone()])
        .collect()
}

/// Each replay that can be framed, with its frame's length prefix.
fn frames<B: AsRef<[u8]>>(replays: &[B]) -> impl Iterator<Item = ([u8; 4], &B)> {
    replays.iter().filter_map(|r| {
        u32::try_from(r.as_ref().len())
            .ok()
            .map(|n| (n.to_be_bytes(), r))
    })
}

/// Why a batch body was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchError {
    /// Replay number `index` (from 0) declares more bytes than one upload
    /// may have.
    ReplayTooLarge {
        /// Its position in the batch.
        index: usize,
        /// The length its frame declares.
        declared: u64,
        /// The limit for one replay.
        limit: usize,
    },
    /// More replays than one batch may hold.
    TooManyReplays {
        /// The limit.
        limit: usize,
    },
    /// The whole body is over the batch size limit.
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// The body ended inside a frame.
    Truncated {
        /// Bytes left over after the last whole frame.
        left: usize,
    },
    /// The body holds no replay.
    Empty,
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::ReplayTooLarge {
                index,
                declared,
                limit,
            } => write!(
                f,
                "replay {index} of the batch declares {declared} bytes, over the limit of {limit} bytes per replay"
            ),
            BatchError::TooManyReplays { limit } => {
                write!(f, "the batch holds more than {limit} replays")
            }
            BatchError::TooLarge { limit } => {
                write!(f, "the batch is larger than the limit of {limit} bytes")
            }
            BatchError::Truncated { left } => write!(
                f,
                "the batch ends inside a frame ({left} bytes after the last whole replay)"
            ),
            BatchError::Empty => f.write_str("the batch holds no replay"),
        }
    }
}

impl std::error::Error for BatchError {}

/// Splits a batch body into replays as its bytes arrive, checking every
/// limit as soon as the bytes that break it are in: a frame longer than
/// one upload may be is refused from its 4-byte length alone, before its
/// bytes come, and a frame past the replay cap from its length too.
///
/// The body is kept in one buffer (allocated at its declared size when
/// [`BatchReader::with_capacity`] knows it) and the replays are cut out of
/// it without copying at [`BatchReader::finish`], so a batch holds about
/// its own size in memory, never twice that.
#[derive(Debug)]
pub struct BatchReader {
    buf: Vec<u8>,
    /// Lengths of the whole frames so far.
    frames: Vec<usize>,
    /// Bytes of the current frame's 4-byte length seen so far, and them.
    head: [u8; 4],
    head_len: usize,
    /// Bytes still due for the current frame (after its length).
    body_left: usize,
    /// Bytes of the current frame's body received so far.
    body_got: usize,
    received: usize,
    max_replay: usize,
    max_replays: usize,
    max_total: usize,
}

impl BatchReader {
    /// A reader for batches of at most `max_replays` replays of at most
    /// `max_replay` bytes each, `max_total` bytes in all.
    #[must_use]
    pub fn new(max_replay: usize, max_replays: usize, max_total: usize) -> BatchReader {
        BatchReader::with_capacity(max_replay, max_replays, max_total, 0)
    }

    /// As [`BatchReader::new`], with its buffer allocated for `capacity`
    /// bytes at once (the declared length, itself within `max_total`).
    #[must_use]
    pub fn with_capacity(
        max_replay: usize,
        max_replays: usize,
        max_total: usize,
        capacity: usize,
    ) -> BatchReader {
        BatchReader {
            buf: Vec::with_capacity(capacity.min(max_total)),
            frames: Vec::new(),
            head: [0; 4],
            head_len: 0,
            body_left: 0,
            body_got: 0,
            received: 0,
            max_replay,
            max_replays: max_replays.max(1),
            max_total,
        }
    }

    /// The most bytes in all.
    pub(crate) const fn max_total(&self) -> usize {
        self.max_total
    }

    /// The bytes the buffer holds and can hold without growing.
    pub(crate) fn buffer(&self) -> (usize, usize) {
        (self.buf.len(), self.buf.capacity())
    }

    /// Makes room for `additional` more bytes, exactly.
    pub(crate) fn reserve_exact(&mut self, additional: usize) {
        self.buf.reserve_exact(additional);
    }

    /// Takes in the next bytes of the body.
    ///
    /// # Errors
    ///
    /// The first limit the bytes so far break.
    pub fn feed(&mut self, data: &[u8]) -> Result<(), BatchError> {
        // Only the bytes within the total are framed, and before the total
        // is checked: a limit broken by earlier bytes is the one reported,
        // so the error does not depend on how the body was cut into pieces.
        let room = self.max_total.saturating_sub(self.received);
        let within = data.get(..room).unwrap_or(data);
        self.received = self.received.saturating_add(data.len());
        self.buf.extend_from_slice(within);
        let mut rest = within;
        loop {
            if self.head_len < 4 {
                let take = (4 - self.head_len).min(rest.len());
                self.head[self.head_len..self.head_len + take].copy_from_slice(&rest[..take]);
                self.head_len += take;
                rest = &rest[take..];
                if self.head_len < 4 {
                    break;
                }
                let declared = u32::from_be_bytes(self.head);
                let len = usize::try_from(declared).unwrap_or(usize::MAX);
                if len > self.max_replay {
                    return Err(BatchError::ReplayTooLarge {
                        index: self.frames.len(),
                        declared: u64::from(declared),
                        limit: self.max_replay,
                    });
                }
                if self.frames.len() >= self.max_replays {
                    return Err(BatchError::TooManyReplays {
                        limit: self.max_replays,
                    });
                }
                self.body_left = len;
                self.body_got = 0;
            }
            let take = self.body_left.min(rest.len());
            self.body_left -= take;
            self.body_got += take;
            rest = &rest[take..];
            if self.body_left > 0 {
                break;
            }
            self.frames.push(self.body_got);
            self.head_len = 0;
            if rest.is_empty() {
                break;
            }
        }
        if self.received > self.max_total {
            return Err(BatchError::TooLarge {
                limit: self.max_total,
            });
        }
        Ok(())
    }

    /// The replays, once the body has ended.
    ///
    /// # Errors
    ///
    /// [`BatchError::Truncated`] when the body stopped inside a frame,
    /// [`BatchError::Empty`] when it held none.
    pub fn finish(self) -> Result<Vec<Bytes>, BatchError> {
        let left = match self.head_len {
            0 => 0,
            4 => 4 + self.body_got,
            n => n,
        };
        if left > 0 {
            return Err(BatchError::Truncated { left });
        }
        if self.frames.is_empty() {
            return Err(BatchError::Empty);
        }
        let mut all = Bytes::from(self.buf);
        Ok(self
            .frames
            .iter()
            .map(|&len| {
                let _ = all.split_to(4);
                all.split_to(len)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame made by hand: big-endian length, then the bytes.
    fn framed(parts: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in parts {
            out.extend_from_slice(&u32::try_from(p.len()).unwrap().to_be_bytes());
            out.extend_from_slice(p);
        }
        out
    }

    #[test]
    fn batches_split_the_same_however_the_body_arrives() {
        let parts: [&[u8]; 4] = [b"abc", b"", b"0123456789", b"z"];
        let body = framed(&parts);
        assert_eq!(body, frame_batch(&parts), "the encoder frames the same way");
        for chunk in 1..=body.len() {
            let mut r = BatchReader::new(16, 8, 1024);
            for c in body.chunks(chunk) {
                r.feed(c).unwrap();
            }
            let got = r.finish().unwrap();
            let want: Vec<Bytes> = parts.iter().map(|p| Bytes::copy_from_slice(p)).collect();
            assert_eq!(got, want, "chunks of {chunk}");
        }
    }

    #[test]
    fn batch_limits_trip_as_soon_as_their_bytes_arrive() {
        // A frame declaring 17 bytes for a limit of 16: refused from its
        // 4-byte length, before any of its bytes.
        let mut r = BatchReader::new(16, 8, 1024);
        r.feed(b"\x00\x00\x00\x02ok").unwrap();
        assert_eq!(
            r.feed(&[0, 0, 0, 17]),
            Err(BatchError::ReplayTooLarge {
                index: 1,
                declared: 17,
                limit: 16
            })
        );
        // The third frame of a batch capped at two: refused at its length.
        let mut r = BatchReader::new(16, 2, 1024);
        r.feed(&framed(&[b"a", b"b"])).unwrap();
        assert_eq!(
            r.feed(&[0, 0, 0, 1]),
            Err(BatchError::TooManyReplays { limit: 2 })
        );
        // 14 + 6 = 20 bytes in all for a total of 16.
        let mut r = BatchReader::new(64, 8, 16);
        r.feed(&framed(&[b"0123456789"])).unwrap();
        assert_eq!(
            r.feed(&framed(&[b"01"])),
            Err(BatchError::TooLarge { limit: 16 })
        );
        // A frame declaring 99 bytes in a body over its 8-byte total: the
        // frame's length breaks its limit at byte 4, before the total
        // breaks at byte 9, in one piece as in two (the total used to be
        // checked first, so the error depended on the pieces: a fuzz
        // finding, fuzz/regressions/batch_upload/).
        let body = [0, 0, 0, 99, 1, 2, 3, 4, 5];
        let first = Err(BatchError::ReplayTooLarge {
            index: 0,
            declared: 99,
            limit: 16,
        });
        assert_eq!(BatchReader::new(16, 8, 8).feed(&body), first);
        assert_eq!(BatchReader::new(16, 8, 8).feed(&body[..4]), first);
        // The frames within the total are read before it trips.
        let mut r = BatchReader::new(16, 1, 8);
        assert_eq!(
            r.feed(&[0, 0, 0, 2, 1, 2, 0, 0, 0]),
            Err(BatchError::TooLarge { limit: 8 })
        );
        let mut r = BatchReader::new(16, 1, 10);
        assert_eq!(
            r.feed(&[0, 0, 0, 2, 1, 2, 0, 0, 0, 0, 7]),
            Err(BatchError::TooManyReplays { limit: 1 })
        );
        // Cut inside a frame, and nothing at all.
        let mut r = BatchReader::new(64, 8, 1024);
        r.feed(&framed(&[b"abc"])[..5]).unwrap();
        assert_eq!(r.finish(), Err(BatchError::Truncated { left: 5 }));
        assert_eq!(
            BatchReader::new(64, 8, 1024).finish(),
            Err(BatchError::Empty)
        );
    }
}
