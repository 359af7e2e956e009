//! The `net_datagram` target: the netplay wire format and
//! `Session::handle_datagram` on a sequence of datagrams, raw and sealed,
//! given to a 2-player island match's sessions, a spectator and a
//! rejoiner. The match set-up is public: the seed generator in
//! `crates/tickwise-cli/tests/fuzz_regressions.rs` plays the same match.
//! The decoder's round-trip check is in the `net_wire` module.

use tickwise::{Sim, TickInput};
use tickwise_net::wire::{self, Body, Envelope, WireError};
use tickwise_net::{
    Auth, Datagram, Drops, Rejoiner, Session, SessionConfig, SessionKey, SessionStats,
    SnapshotCodec, Spectator, Transport,
};
use tickwise_sims::island::{IslandConfig, IslandWorld};

use super::net_wire::decode_checked;

/// The most datagrams one `net_datagram` execution feeds (each is followed
/// by a tick of every session, so this bounds an execution's work; it is
/// past the 300-tick disconnect timeout, so an ended session is fuzzed too).
pub const MAX_DATAGRAMS: usize = 512;

/// Splits a `net_datagram` input into datagrams: a length byte, then that
/// many bytes (fewer if the input ends first); the length byte 255 takes
/// the rest of the input, so datagrams over the 508-byte limit (and the
/// 1536-byte receive buffer) are reachable too.
#[must_use]
pub fn split_datagrams(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some((&n, tail)) = rest.split_first() {
        let n = if n == u8::MAX {
            tail.len()
        } else {
            usize::from(n).min(tail.len())
        };
        let (datagram, after) = tail.split_at(n);
        out.push(datagram);
        rest = after;
    }
    out
}

/// The inverse of [`split_datagrams`] (for writing seeds): `None` when a
/// datagram other than the last is 255 bytes or longer.
#[must_use]
pub fn join_datagrams<B: AsRef<[u8]>>(datagrams: &[B]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for (i, d) in datagrams.iter().enumerate() {
        let d = d.as_ref();
        match u8::try_from(d.len()) {
            Ok(n) if n < u8::MAX => out.push(n),
            _ if i + 1 == datagrams.len() => out.push(u8::MAX),
            _ => return None,
        }
        out.extend_from_slice(d);
    }
    Some(out)
}

/// Two island worlds side by side, one per player: player `p`'s input
/// steps world `p`. The `net_datagram` sessions' sim: two players with the
/// island's i32 inputs (so captured datagrams stay valid seeds).
#[derive(Clone, Debug)]
pub struct IslandPair([IslandWorld; 2]);

impl IslandPair {
    /// Both players start from `world`.
    #[must_use]
    pub fn new(world: IslandWorld) -> IslandPair {
        IslandPair([world.clone(), world])
    }
}

impl Sim for IslandPair {
    type Input = i32;
    fn players(&self) -> usize {
        2
    }
    fn step(&mut self, inputs: &[i32]) {
        for (w, i) in self.0.iter_mut().zip(inputs) {
            w.step(core::slice::from_ref(i));
        }
    }
    fn visit_state(&self, v: &mut dyn tickwise::StateVisitor) {
        for w in &self.0 {
            w.visit_state(v);
        }
    }
}

/// The sim of the `net_datagram` sessions: a pair of island worlds of the
/// checked-in config.
#[must_use]
pub fn net_world() -> IslandPair {
    let cfg = IslandConfig::from_json(include_bytes!("../../config/island_loop.json"))
        .unwrap_or_else(|e| panic!("checked-in island config: {e}"));
    IslandPair::new(IslandWorld::new(&cfg))
}

/// The session key of the `net_datagram` sessions (a fixed test key, so
/// the target can seal the fuzzer's bytes).
pub const NET_KEY: SessionKey = SessionKey::from_bytes(*b"tickwise fuzzkey");

/// `bytes` with their MAC under [`NET_KEY`] appended: what an authentic
/// peer would send. The seeds are real datagrams without their MAC, so
/// sealed they are the real datagrams again, and the fuzzer's mutations
/// get past the MAC to the decoder and the session.
#[must_use]
pub fn net_seal(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out.extend_from_slice(&Auth::new(&NET_KEY).tag(bytes));
    out
}

/// Player `local`'s session of a 2-player match, default settings
/// (key [`NET_KEY`], input delay 2, window 8, every confirmed tick checked).
#[must_use]
pub fn net_session(local: u8) -> Session<IslandPair> {
    Session::new(net_world(), SessionConfig::new(2, local, NET_KEY))
        .unwrap_or_else(|e| panic!("session: {e}"))
}

/// Player 0's input on the tick after datagram `k` (the seed generator
/// gives the same, so its captured datagrams replay a real match).
#[must_use]
pub const fn net_local_input(k: usize) -> i32 {
    match k % 3 {
        0 => -1,
        1 => 0,
        _ => 1,
    }
}

/// A transport that delivers nothing and drops what is sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sink;

impl Transport for Sink {
    fn send(&mut self, _: u8, _: &[u8]) {}
    fn recv(&mut self, _: &mut [u8]) -> Option<Datagram> {
        None
    }
}

/// Delivers one datagram as a socket would (cut to the buffer, its full
/// length reported) and drops what is sent.
#[derive(Debug)]
struct Deliver<'a> {
    from: Option<u8>,
    bytes: Option<&'a [u8]>,
}

impl Transport for Deliver<'_> {
    fn send(&mut self, _: u8, _: &[u8]) {}
    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        let bytes = self.bytes.take()?;
        let n = bytes.len().min(buf.len());
        buf.get_mut(..n)?.copy_from_slice(bytes.get(..n)?);
        Some(Datagram {
            from: self.from,
            len: bytes.len(),
        })
    }
}

/// How much each drop counter grew.
fn grown(after: &Drops, before: &Drops) -> Drops {
    let d = |a: u64, b: u64| {
        a.checked_sub(b)
            .unwrap_or_else(|| panic!("a drop counter went down"))
    };
    Drops {
        malformed: d(after.malformed, before.malformed),
        oversized: d(after.oversized, before.oversized),
        version: d(after.version, before.version),
        unknown_kind: d(after.unknown_kind, before.unknown_kind),
        unknown_peer: d(after.unknown_peer, before.unknown_peer),
        wrong_session: d(after.wrong_session, before.wrong_session),
        unauthenticated: d(after.unauthenticated, before.unauthenticated),
        stale: d(after.stale, before.stale),
        far_future: d(after.far_future, before.far_future),
        departed: d(after.departed, before.departed),
    }
}

/// One drop, under `e`'s reason.
fn one_drop_for(e: &WireError) -> Drops {
    let mut d = Drops::default();
    match e {
        WireError::Oversized { .. } => d.oversized = 1,
        WireError::Malformed { .. } => d.malformed = 1,
        WireError::Version { .. } => d.version = 1,
        WireError::UnknownKind { .. } => d.unknown_kind = 1,
        WireError::WrongSession { .. } => d.wrong_session = 1,
        WireError::Unauthenticated => d.unauthenticated = 1,
    }
    d
}

/// What one datagram did to the drop counters of a session that got it as
/// from player 1 (`from_peer`) or from an unknown address. A datagram that
/// does not decode (another session's id and a MAC that does not match
/// included) is one drop under its error's reason and changes nothing
/// else; one from an unknown address or with another sender byte is one
/// drop under that reason. From player 1 it is otherwise accepted (no drop)
/// or one `stale` or `far_future` drop, except that an accepted inputs
/// message also counts each of its checksums that is unusable: tick 0
/// (`malformed`, with every tick checked) or too far ahead (`far_future`).
/// So one datagram adds at most `max(1, nchecks)` (at most 8) drops.
fn check_drops(
    decoded: &Result<(Envelope, Body<'_>), WireError>,
    from_peer: bool,
    before: &SessionStats,
    after: &SessionStats,
) {
    assert!(
        after.received == before.received + 1,
        "received not counted"
    );
    let d = grown(&after.drops, &before.drops);
    let one = |f: fn(&mut Drops)| {
        let mut x = Drops::default();
        f(&mut x);
        x
    };
    let (env, body) = match decoded {
        Err(e) => {
            assert!(d == one_drop_for(e), "{e} counted as {d:?}");
            let mut want = *before;
            want.received += 1;
            want.drops = after.drops;
            assert!(
                *after == want,
                "an undecodable datagram changed the session"
            );
            return;
        }
        Ok(x) => x,
    };
    // A watch request (sender byte 255) from an unknown address is how a
    // spectator arrives: answered (admitted, or refused with a reply), not
    // dropped; with a slot in its sender byte, or from a player, it is
    // `unknown_peer`.
    if let Body::Watch { .. } = body
        && !from_peer
        && env.sender == wire::UNASSIGNED_SLOT
    {
        assert!(
            d == Drops::default() || d == one(|x| x.stale = 1),
            "watch request: {d:?}"
        );
        return;
    }
    if !from_peer || env.sender != 1 {
        assert!(d == one(|x| x.unknown_peer = 1), "unknown peer: {d:?}");
        return;
    }
    let stale = one(|x| x.stale = 1);
    let far = one(|x| x.far_future = 1);
    // After a goodbye (or a departure naming it, or its silence), player 1
    // is gone: everything it sends is one `departed` drop.
    if d == one(|x| x.departed = 1) {
        return;
    }
    match body {
        Body::Inputs(m) => {
            if d == stale || d == far {
                return;
            }
            let checks = m.checks.iter().count() as u64;
            let zero_ticks = m.checks.iter().filter(|&(t, _)| t == 0).count() as u64;
            assert!(
                d.undecodable() == d.malformed
                    && d.malformed <= zero_ticks
                    && d.unknown_peer + d.wrong_session + d.stale == 0
                    && d.total() <= checks.max(1),
                "inputs message with {checks} checks counted as {d:?}"
            );
        }
        Body::Fields(_) => assert!(
            d == Drops::default() || d == stale || d == far,
            "fields: {d:?}"
        ),
        Body::Departure(_)
        | Body::Goodbye
        | Body::Rejoin { .. }
        | Body::NoticeAck { .. }
        | Body::ChunkAck { .. } => assert!(
            d == Drops::default() || d == stale || d == far,
            "departure, goodbye or rejoin message: {d:?}"
        ),
        // A notice naming the receiver, the sender or a slot past the
        // players is one `malformed`.
        Body::Notice { .. } => assert!(
            d == Drops::default() || d == stale || d == far || d == one(|x| x.malformed = 1),
            "rejoin notice: {d:?}"
        ),
        // Chunks and refusals go to a rejoiner, never to a session.
        Body::Chunk(_) | Body::Refuse { .. } => assert!(
            d == stale || d == far || d == one(|x| x.unknown_peer = 1),
            "chunk or refusal sent to a session: {d:?}"
        ),
        Body::Watch { .. } => assert!(
            d == one(|x| x.unknown_peer = 1),
            "watch request from a player: {d:?}"
        ),
        Body::Spectate(_) | Body::SpectatorAck { .. } | Body::WatchReply(_) => {
            assert!(
                d == stale || d == far || d == one(|x| x.unknown_peer = 1),
                "spectator message from a player: {d:?}"
            );
        }
    }
}

/// What a session guarantees whatever it was sent: it never runs more than
/// its window ahead of its confirmed tick, never rolls back further, never
/// misses a confirmed state it has to checksum, and reports a desync
/// exactly when it counts one.
fn check_session(s: &Session<IslandPair>) {
    let window = u64::from(s.config().window);
    let st = s.stats();
    assert!(
        s.current_tick() <= s.confirmed_tick() + window,
        "tick {} runs more than {window} ahead of confirmed tick {}",
        s.current_tick(),
        s.confirmed_tick()
    );
    assert!(st.max_rollback <= window, "rollback of {}", st.max_rollback);
    assert!(st.missing_states == 0, "a confirmed state was missing");
    assert!(
        (st.desyncs > 0) == s.desync().is_some(),
        "desync count and report disagree"
    );
}

/// Netplay datagrams (`tickwise_net::wire::decode` and
/// `Session::handle_datagram`): the input is a sequence of datagrams
/// ([`split_datagrams`]). Each goes two ways: raw (as an attacker without
/// the key would send it: almost always refused by the MAC, and then it
/// must change nothing) and sealed with [`NET_KEY`] ([`net_seal`]: as an
/// authentic, possibly buggy, peer would send it, so the fuzzer's bytes
/// reach the decoder and the session). Each way it is decoded with both
/// input types (a decoded message re-encodes to its bytes) and handed to
/// three receivers of a 2-player island match: player 0's session as from
/// player 1, a second session as from an unknown address, and a spectator
/// as from the host; then each session runs a tick (a transport that
/// delivers nothing).
/// Every datagram is accepted or counted under its reason ([`check_drops`]);
/// the sessions stay within their window ([`check_session`]) and keep
/// ticking; the unknown address never causes a comparison, and a desync
/// is reported only for a checksum player 1 actually sent, at that tick.
pub fn net_datagram(data: &[u8]) {
    let _ = net_datagram_session(data);
}

/// [`net_datagram`], returning player 0's session (which took the
/// datagrams as from player 1) so that tests can look at what a seed did.
///
/// # Panics
///
/// On a finding.
pub fn net_datagram_session(data: &[u8]) -> Session<IslandPair> {
    let mut peer = net_session(0);
    let mut stranger = net_session(0);
    let mut spectator = Spectator::new(net_world(), 0, 4, 2, &NET_KEY);
    // A rejoiner for slot 1 (epoch 0, snapshots up to 4 KiB) taking every
    // datagram as from player 0: chunks of any shape are dropped, counted
    // or refused, never a panic and never a buffer over its limit.
    let mut rejoiner = Rejoiner::new(
        net_world(),
        SessionConfig::new(2, 1, NET_KEY),
        SnapshotCodec::from_fns(
            |_, _| {},
            |_, b| {
                if b.is_empty() {
                    Ok(())
                } else {
                    Err(tickwise::SnapshotError::Malformed { what: "state" })
                }
            },
        ),
        0,
        4096,
    )
    .unwrap_or_else(|e| panic!("rejoiner: {e}"));
    let mut sent_checks = Vec::new();
    for (k, raw) in split_datagrams(data)
        .into_iter()
        .take(MAX_DATAGRAMS)
        .enumerate()
    {
        let sealed = net_seal(raw);
        for bytes in [raw, &sealed[..]] {
            let decoded = decode_checked::<i32>(bytes);
            let _ = decode_checked::<TickInput>(bytes);
            if let Ok((env, Body::Inputs(m))) = &decoded
                && env.sender == 1
            {
                sent_checks.extend(m.checks.iter());
            }

            let _ = rejoiner.handle_datagram(Some(0), bytes);

            let before = *peer.stats();
            peer.handle_datagram(Some(1), bytes);
            check_drops(&decoded, true, &before, peer.stats());
            let before = *stranger.stats();
            stranger.handle_datagram(None, bytes);
            check_drops(&decoded, false, &before, stranger.stats());

            let before = *spectator.drops();
            let mut deliver = Deliver {
                from: Some(0),
                bytes: Some(bytes),
            };
            let ran = spectator.tick_once(&mut deliver, 4);
            assert!(ran <= 4, "spectator ran {ran} steps");
            let d = grown(spectator.drops(), &before);
            match &decoded {
                Err(e) => assert!(d == one_drop_for(e), "spectator: {e} counted as {d:?}"),
                Ok((env, body)) => {
                    let maybe_accepted = env.sender == 0 && matches!(body, Body::Spectate(_));
                    assert!(
                        d.total() == 1 || (d.total() == 0 && maybe_accepted),
                        "spectator: {d:?}"
                    );
                }
            }
        }

        let input = net_local_input(k);
        let _ = peer.tick(&input, &mut Sink);
        let _ = stranger.tick(&input, &mut Sink);
        check_session(&peer);
        check_session(&stranger);
    }
    for k in 0..4 {
        let _ = peer.tick(&net_local_input(k), &mut Sink);
        let _ = stranger.tick(&net_local_input(k), &mut Sink);
    }
    check_session(&peer);
    check_session(&stranger);
    assert!(
        stranger.stats().checks_compared == 0 && stranger.desync().is_none(),
        "datagrams from an unknown address reached the checksums"
    );
    if let Some(d) = peer.desync() {
        assert!(d.peer == 1 && d.local != d.remote, "{d}");
        assert!(
            sent_checks.contains(&(d.tick, d.remote)),
            "{d}, but player 1 never sent that checksum for that tick"
        );
    }
    peer
}
