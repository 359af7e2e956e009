//! The `batch_upload` target: the framing of `POST /v1/batches`, fed in
//! pieces and compared with a reference reading of the framing.

use tickwise_service::batch::{BatchError, BatchReader, frame_batch};

/// `batch_upload`'s limits, cut points and body, read from its input:
/// byte 0 gives at most 1 + (b0 mod 16) replays, bytes 1-2 (big-endian)
/// the bytes per replay, bytes 3-4 the bytes in all, bytes 5-7 three cut
/// points (at b × len / 255); the body is the rest. Missing bytes are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchCase<'a> {
    /// Replays per batch, 1 to 16.
    pub max_replays: usize,
    /// Bytes per replay.
    pub max_replay: usize,
    /// Bytes per batch.
    pub max_total: usize,
    /// Where the body is cut into pieces, in order.
    pub cuts: [usize; 3],
    /// The batch body.
    pub body: &'a [u8],
}

impl BatchCase<'_> {
    /// Reads a case from a fuzz input.
    #[must_use]
    pub fn from_input(data: &[u8]) -> BatchCase<'_> {
        let byte = |i: usize| data.get(i).copied().unwrap_or(0);
        let body = data.get(8..).unwrap_or(&[]);
        let mut cuts = [byte(5), byte(6), byte(7)].map(|b| usize::from(b) * body.len() / 255);
        cuts.sort_unstable();
        BatchCase {
            max_replays: 1 + usize::from(byte(0) % 16),
            max_replay: usize::from(u16::from_be_bytes([byte(1), byte(2)])),
            max_total: usize::from(u16::from_be_bytes([byte(3), byte(4)])),
            cuts,
            body,
        }
    }
}

/// What the service's reader makes of `pieces` fed one after another.
fn read_pieces(case: &BatchCase<'_>, pieces: &[&[u8]]) -> Result<Vec<Vec<u8>>, BatchError> {
    let mut r = BatchReader::new(case.max_replay, case.max_replays, case.max_total);
    for p in pieces {
        r.feed(p)?;
    }
    Ok(r.finish()?.iter().map(|b| b.to_vec()).collect())
}

/// The batch framing as specified, on the whole body at once: frames in
/// order, and the first limit broken by the earliest byte (the total
/// breaks at byte `max_total`; a frame's length at its fourth byte).
fn batch_reference<'a>(case: &BatchCase<'a>) -> Result<Vec<&'a [u8]>, BatchError> {
    let body = case.body;
    let too_large = BatchError::TooLarge {
        limit: case.max_total,
    };
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(head) = body.get(pos..pos + 4) {
        if pos + 4 > case.max_total {
            return Err(too_large);
        }
        let declared = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let len = usize::try_from(declared).unwrap_or(usize::MAX);
        if len > case.max_replay {
            return Err(BatchError::ReplayTooLarge {
                index: out.len(),
                declared: u64::from(declared),
                limit: case.max_replay,
            });
        }
        if out.len() >= case.max_replays {
            return Err(BatchError::TooManyReplays {
                limit: case.max_replays,
            });
        }
        let Some(replay) = body.get(pos + 4..pos + 4 + len) else {
            break;
        };
        if pos + 4 + len > case.max_total {
            return Err(too_large);
        }
        out.push(replay);
        pos += 4 + len;
    }
    if body.len() > case.max_total {
        return Err(too_large);
    }
    if pos < body.len() {
        return Err(BatchError::Truncated {
            left: body.len() - pos,
        });
    }
    if out.is_empty() {
        return Err(BatchError::Empty);
    }
    Ok(out)
}

/// The batch framing of `POST /v1/batches`
/// (`tickwise_service::batch::BatchReader`), with limits and cut points
/// from the input ([`BatchCase`]): the body fed in one piece, cut at the
/// three points, and one byte at a time gives the same replays or the same
/// error, and that is what the framing specifies ([`batch_reference`]);
/// accepted replays framed again (`frame_batch`, and by hand) are the body,
/// and are within every limit.
pub fn batch_upload(data: &[u8]) {
    let case = BatchCase::from_input(data);
    let body = case.body;
    let [a, b, c] = case.cuts;
    let whole = read_pieces(&case, &[body]);
    let cut = read_pieces(
        &case,
        &[&body[..a], &body[a..b], &body[b..c], &body[c..], &[]],
    );
    assert!(
        cut == whole,
        "cut at {:?}: {cut:?}, whole: {whole:?}",
        case.cuts
    );
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    let by_byte = read_pieces(&case, &bytes);
    assert!(
        by_byte == whole,
        "byte by byte: {by_byte:?}, whole: {whole:?}"
    );
    let reference = batch_reference(&case).map(|v| v.iter().map(|r| r.to_vec()).collect());
    assert!(
        whole == reference,
        "reader: {whole:?}, framing: {reference:?}"
    );
    match &whole {
        Ok(replays) => {
            assert!(!replays.is_empty(), "an empty batch accepted");
            assert!(replays.len() <= case.max_replays, "too many replays");
            assert!(body.len() <= case.max_total, "over the total");
            let mut framed = Vec::new();
            for r in replays {
                assert!(r.len() <= case.max_replay, "a replay over the limit");
                let n = u32::try_from(r.len()).unwrap_or(u32::MAX);
                framed.extend_from_slice(&n.to_be_bytes());
                framed.extend_from_slice(r);
            }
            assert!(framed == body, "replays framed again differ from the body");
            assert!(frame_batch(replays) == body, "frame_batch differs");
        }
        Err(e) => assert!(!e.to_string().is_empty(), "empty error message"),
    }
}
