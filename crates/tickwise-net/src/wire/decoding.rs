//! Decoding the authenticated bytes into an [`Envelope`] and a [`Body`]:
//! every count is checked against this version's limits, every input is
//! measured with the session's decoder, and the whole datagram must be
//! consumed. Never panics and never allocates.

use tickwise::codec::Reader;

use crate::auth::Auth;

use super::authenticate::open;
use super::error::{WireError, malformed};
use super::limits::{
    CHUNK_BYTES, KIND_CHUNK, KIND_CHUNK_ACK, KIND_DEPARTURE, KIND_FIELDS, KIND_GOODBYE,
    KIND_INPUTS, KIND_NOTICE, KIND_NOTICE_ACK, KIND_REFUSE, KIND_REJOIN, KIND_SPECTATE,
    KIND_SPECTATOR_ACK, KIND_WATCH, KIND_WATCH_REPLY, MAX_CHECKS_PER_PACKET, MAX_FIELDS_PER_PACKET,
    MAX_INPUTS_PER_PACKET,
};
use super::message::{
    Body, Checks, ChunkMsg, DepartureMsg, Envelope, FieldsMsg, InputsMsg, SpectateMsg,
    WATCH_SILENT, WatchReplyMsg,
};

/// Decodes a datagram: [`open`] (length, magic, version, session id, MAC),
/// then the authenticated bytes. Every count is checked against this
/// version's limits and the whole datagram must be consumed; `input_len`
/// tells how long one encoded input is (the session's input decoder), so
/// the input section is validated here too.
///
/// # Errors
///
/// A [`WireError`]; never panics on any bytes.
pub fn decode<'a>(
    bytes: &'a [u8],
    auth: &Auth,
    input_len: impl FnMut(&mut Reader<'a>) -> bool,
) -> Result<(Envelope, Body<'a>), WireError> {
    decode_opened(open(bytes, auth)?, input_len)
}

/// Decodes the bytes [`open`] returned (a datagram without its MAC).
///
/// # Errors
///
/// [`WireError::Malformed`], [`WireError::UnknownKind`]; never panics.
fn decode_opened<'a>(
    bytes: &'a [u8],
    mut input_len: impl FnMut(&mut Reader<'a>) -> bool,
) -> Result<(Envelope, Body<'a>), WireError> {
    let mut r = Reader::new(bytes);
    r.array::<3>("magic and version")
        .map_err(malformed("magic"))?;
    let kind = r.u8("kind").map_err(malformed("kind"))?;
    let session = r.u64_le("session").map_err(malformed("session id"))?;
    let sender = r.u8("sender").map_err(malformed("sender"))?;
    let seq = r.varint("seq").map_err(malformed("sequence number"))?;
    let env = Envelope {
        session,
        sender,
        seq,
    };
    let body = match kind {
        KIND_INPUTS => {
            let mut v = [0u64; 6];
            for (slot, what) in v.iter_mut().zip([
                "ack",
                "ping",
                "pong",
                "sim tick",
                "checks ack",
                "input start",
            ]) {
                *slot = r.varint(what).map_err(malformed(what))?;
            }
            let count = r.u8("count").map_err(malformed("input count"))?;
            if usize::from(count) > MAX_INPUTS_PER_PACKET {
                return Err(WireError::Malformed {
                    what: "input count",
                });
            }
            let inputs = take_inputs(&mut r, bytes, usize::from(count), &mut input_len)?;
            let n = r.u8("nchecks").map_err(malformed("check count"))?;
            if usize::from(n) > MAX_CHECKS_PER_PACKET {
                return Err(WireError::Malformed {
                    what: "check count",
                });
            }
            let start = pos(&r);
            for _ in 0..n {
                r.varint("tick").map_err(malformed("check tick"))?;
                r.u64_le("checksum").map_err(malformed("checksum"))?;
            }
            let raw = bytes.get(start..pos(&r)).unwrap_or(&[]);
            Body::Inputs(InputsMsg {
                ack: v[0],
                ping: v[1],
                pong: v[2],
                sim_tick: v[3],
                checks_upto: v[4],
                start: v[5],
                count,
                inputs,
                checks: Checks { raw, n },
            })
        }
        KIND_FIELDS => {
            let tick = r.varint("tick").map_err(malformed("tick"))?;
            let n = r.u8("n").map_err(malformed("field count"))?;
            if usize::from(n) > MAX_FIELDS_PER_PACKET {
                return Err(WireError::Malformed {
                    what: "field count",
                });
            }
            let hashes = r
                .take(usize::from(n) * 8, "hashes")
                .map_err(malformed("field hashes"))?;
            Body::Fields(FieldsMsg { tick, hashes })
        }
        KIND_SPECTATE => {
            let start = r.varint("start").map_err(malformed("input start"))?;
            let count = r.u8("count").map_err(malformed("input count"))?;
            let players = r.u8("players").map_err(malformed("player count"))?;
            if usize::from(count) > MAX_INPUTS_PER_PACKET || !(2..=4).contains(&players) {
                return Err(WireError::Malformed {
                    what: "input or player count",
                });
            }
            let inputs = take_inputs(
                &mut r,
                bytes,
                usize::from(count) * usize::from(players),
                &mut input_len,
            )?;
            Body::Spectate(SpectateMsg {
                start,
                count,
                players,
                inputs,
            })
        }
        KIND_SPECTATOR_ACK => Body::SpectatorAck {
            ack: r.varint("ack").map_err(malformed("ack"))?,
        },
        KIND_DEPARTURE => {
            let leaver = r.u8("leaver").map_err(malformed("leaver"))?;
            let flag = r.u8("settled").map_err(malformed("settled flag"))?;
            if leaver >= 4 || flag > 1 {
                return Err(WireError::Malformed {
                    what: "leaver or settled flag",
                });
            }
            let mut v = [0u64; 3];
            for (slot, what) in v.iter_mut().zip(["held", "end", "input start"]) {
                *slot = r.varint(what).map_err(malformed(what))?;
            }
            let count = r.u8("count").map_err(malformed("input count"))?;
            if usize::from(count) > MAX_INPUTS_PER_PACKET {
                return Err(WireError::Malformed {
                    what: "input count",
                });
            }
            let inputs = take_inputs(&mut r, bytes, usize::from(count), &mut input_len)?;
            Body::Departure(DepartureMsg {
                leaver,
                settled: flag == 1,
                held: v[0],
                end: v[1],
                start: v[2],
                count,
                inputs,
            })
        }
        KIND_GOODBYE => Body::Goodbye,
        KIND_REJOIN => Body::Rejoin {
            epoch: r.u64_le("epoch").map_err(malformed("epoch"))?,
        },
        KIND_NOTICE => {
            let player = r.u8("player").map_err(malformed("player"))?;
            let epoch = r.u64_le("epoch").map_err(malformed("epoch"))?;
            let join = r.varint("join").map_err(malformed("join tick"))?;
            Body::Notice {
                player,
                epoch,
                join,
            }
        }
        KIND_NOTICE_ACK => {
            let player = r.u8("player").map_err(malformed("player"))?;
            let join = r.varint("join").map_err(malformed("join tick"))?;
            Body::NoticeAck { player, join }
        }
        KIND_CHUNK => {
            let epoch = r.u64_le("epoch").map_err(malformed("epoch"))?;
            let join = r.varint("join").map_err(malformed("join tick"))?;
            let total = r.varint("total").map_err(malformed("snapshot length"))?;
            let checksum = r.u64_le("checksum").map_err(malformed("checksum"))?;
            let index = r.varint("index").map_err(malformed("chunk index"))?;
            let data = r
                .take(r.remaining(), "data")
                .map_err(malformed("chunk data"))?;
            if data.len() > CHUNK_BYTES {
                return Err(WireError::Malformed {
                    what: "chunk length",
                });
            }
            Body::Chunk(ChunkMsg {
                epoch,
                join,
                total,
                checksum,
                index,
                data,
            })
        }
        KIND_CHUNK_ACK => Body::ChunkAck {
            epoch: r.u64_le("epoch").map_err(malformed("epoch"))?,
            next: r.varint("next").map_err(malformed("chunk ack"))?,
            have: r.u64_le("have").map_err(malformed("chunk bitmap"))?,
        },
        KIND_REFUSE => {
            let epoch = r.u64_le("epoch").map_err(malformed("epoch"))?;
            let reason = r.u8("reason").map_err(malformed("reason"))?;
            if !(1..=2).contains(&reason) {
                return Err(WireError::Malformed { what: "reason" });
            }
            Body::Refuse {
                epoch,
                reason,
                bytes: r.varint("bytes").map_err(malformed("size"))?,
                limit: r.varint("limit").map_err(malformed("limit"))?,
            }
        }
        KIND_WATCH => Body::Watch {
            epoch: r.u64_le("epoch").map_err(malformed("epoch"))?,
        },
        KIND_WATCH_REPLY => {
            let epoch = r.u64_le("epoch").map_err(malformed("epoch"))?;
            let code = r.u8("code").map_err(malformed("reply code"))?;
            let slot = r.u8("slot").map_err(malformed("slot"))?;
            if code > WATCH_SILENT {
                return Err(WireError::Malformed { what: "reply code" });
            }
            Body::WatchReply(WatchReplyMsg {
                epoch,
                code,
                slot,
                a: r.varint("a").map_err(malformed("reply value"))?,
                b: r.varint("b").map_err(malformed("reply value"))?,
            })
        }
        kind => return Err(WireError::UnknownKind { kind }),
    };
    if r.remaining() != 0 {
        return Err(WireError::Malformed {
            what: "trailing bytes",
        });
    }
    Ok((env, body))
}

/// The reader's position from the start of the datagram.
fn pos(r: &Reader<'_>) -> usize {
    usize::try_from(r.offset()).unwrap_or(usize::MAX)
}

fn take_inputs<'a>(
    r: &mut Reader<'a>,
    bytes: &'a [u8],
    n: usize,
    input_len: &mut impl FnMut(&mut Reader<'a>) -> bool,
) -> Result<&'a [u8], WireError> {
    let start = pos(r);
    for _ in 0..n {
        if !input_len(r) {
            return Err(WireError::Malformed { what: "input" });
        }
    }
    Ok(bytes.get(start..pos(r)).unwrap_or(&[]))
}
