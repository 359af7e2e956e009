//! The `net_datagram` target's decoder check: a message `wire::decode`
//! accepts is written again by an encoder of this module's own (the layout
//! in `docs/netplay.md`, not the session's encoder) and must be exactly the
//! bytes it was decoded from.

use tickwise::ReplayInput;
use tickwise::codec::{Reader, put_varint};
use tickwise_net::Auth;
use tickwise_net::wire::{self, Body, Envelope, MAX_PACKET, WIRE_MAGIC, WIRE_VERSION, WireError};

use super::net::{NET_KEY, net_seal};

/// Inputs `raw` holds `n` of, decoded as `I` and encoded again.
fn reencode_inputs<I: ReplayInput>(out: &mut Vec<u8>, raw: &[u8], n: usize) {
    let mut r = Reader::new(raw);
    for i in 0..n {
        match I::decode(&mut r) {
            Ok(input) => input.encode(out),
            Err(e) => panic!("input {i} of a decoded message does not decode: {e}"),
        }
    }
    assert!(
        r.is_empty(),
        "a decoded input section is longer than its inputs"
    );
}

/// A decoded message written again from its decoded values, by the layout
/// in `docs/netplay.md` (an encoder of its own, not the session's).
fn encode_message<I: ReplayInput>(env: &Envelope, body: &Body<'_>) -> Vec<u8> {
    let mut out = WIRE_MAGIC.to_vec();
    out.push(WIRE_VERSION);
    out.push(match body {
        Body::Inputs(_) => 1,
        Body::Fields(_) => 2,
        Body::Spectate(_) => 3,
        Body::SpectatorAck { .. } => 4,
        Body::Departure(_) => 5,
        Body::Goodbye => 6,
        Body::Rejoin { .. } => 7,
        Body::Notice { .. } => 8,
        Body::NoticeAck { .. } => 9,
        Body::Chunk(_) => 10,
        Body::ChunkAck { .. } => 11,
        Body::Refuse { .. } => 12,
        Body::Watch { .. } => 13,
        Body::WatchReply(_) => 14,
    });
    out.extend_from_slice(&Auth::new(&NET_KEY).session_id().to_le_bytes());
    assert!(
        env.session == Auth::new(&NET_KEY).session_id(),
        "a datagram of another session decoded"
    );
    out.push(env.sender);
    put_varint(&mut out, env.seq);
    match body {
        Body::Inputs(m) => {
            for v in [m.ack, m.ping, m.pong, m.sim_tick, m.checks_upto, m.start] {
                put_varint(&mut out, v);
            }
            out.push(m.count);
            reencode_inputs::<I>(&mut out, m.inputs, usize::from(m.count));
            let checks: Vec<(u64, u64)> = m.checks.iter().collect();
            out.push(u8::try_from(checks.len()).unwrap_or(u8::MAX));
            for (tick, sum) in checks {
                put_varint(&mut out, tick);
                out.extend_from_slice(&sum.to_le_bytes());
            }
        }
        Body::Fields(f) => {
            put_varint(&mut out, f.tick);
            out.push(u8::try_from(f.iter().count()).unwrap_or(u8::MAX));
            for h in f.iter() {
                out.extend_from_slice(&h.to_le_bytes());
            }
        }
        Body::Spectate(m) => {
            put_varint(&mut out, m.start);
            out.push(m.count);
            out.push(m.players);
            let n = usize::from(m.count) * usize::from(m.players);
            reencode_inputs::<I>(&mut out, m.inputs, n);
        }
        Body::SpectatorAck { ack } => put_varint(&mut out, *ack),
        Body::Departure(m) => {
            out.push(m.leaver);
            out.push(u8::from(m.settled));
            for v in [m.held, m.end, m.start] {
                put_varint(&mut out, v);
            }
            out.push(m.count);
            reencode_inputs::<I>(&mut out, m.inputs, usize::from(m.count));
        }
        Body::Goodbye => {}
        Body::Rejoin { epoch } => out.extend_from_slice(&epoch.to_le_bytes()),
        Body::Notice {
            player,
            epoch,
            join,
        } => {
            out.push(*player);
            out.extend_from_slice(&epoch.to_le_bytes());
            put_varint(&mut out, *join);
        }
        Body::NoticeAck { player, join } => {
            out.push(*player);
            put_varint(&mut out, *join);
        }
        Body::Chunk(m) => {
            out.extend_from_slice(&m.epoch.to_le_bytes());
            put_varint(&mut out, m.join);
            put_varint(&mut out, m.total);
            out.extend_from_slice(&m.checksum.to_le_bytes());
            put_varint(&mut out, m.index);
            out.extend_from_slice(m.data);
        }
        Body::ChunkAck { epoch, next, have } => {
            out.extend_from_slice(&epoch.to_le_bytes());
            put_varint(&mut out, *next);
            out.extend_from_slice(&have.to_le_bytes());
        }
        Body::Refuse {
            epoch,
            reason,
            bytes,
            limit,
        } => {
            out.extend_from_slice(&epoch.to_le_bytes());
            out.push(*reason);
            put_varint(&mut out, *bytes);
            put_varint(&mut out, *limit);
        }
        Body::Watch { epoch } => out.extend_from_slice(&epoch.to_le_bytes()),
        Body::WatchReply(r) => {
            out.extend_from_slice(&r.epoch.to_le_bytes());
            out.push(r.code);
            out.push(r.slot);
            put_varint(&mut out, r.a);
            put_varint(&mut out, r.b);
        }
    }
    net_seal(&out)
}

/// `wire::decode` with `I`'s input decoder (the session's own closure):
/// only datagrams within the size limit decode, and a decoded message
/// re-encodes (and seals) to exactly its bytes (one encoding per message).
pub(super) fn decode_checked<I: ReplayInput>(
    bytes: &[u8],
) -> Result<(Envelope, Body<'_>), WireError> {
    let decoded = wire::decode(bytes, &Auth::new(&NET_KEY), |r: &mut Reader<'_>| {
        I::decode(r).is_ok()
    });
    match &decoded {
        Ok((env, body)) => {
            assert!(
                bytes.len() <= MAX_PACKET,
                "a datagram over the limit decoded"
            );
            assert!(
                encode_message::<I>(env, body) == bytes,
                "decoded message re-encodes to other bytes: {env:?} {body:?}"
            );
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            assert!(
                matches!(e, WireError::Oversized { .. }) == (bytes.len() > MAX_PACKET),
                "{e} for a datagram of {} bytes",
                bytes.len()
            );
        }
    }
    decoded
}
