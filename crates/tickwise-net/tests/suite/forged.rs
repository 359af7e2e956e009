//! Forged datagrams (issue 17, item 7): an attacker on the path who knows
//! the wire format, sees the traffic (so it knows the session id and the
//! sequence numbers) and spoofs the real peer's source address, but does
//! not know the session key. Each attack is injected at the transport as
//! from player 1's slot, into a running 2-player match.
//!
//! Before datagrams carried a MAC (wire version 1) the same datagrams,
//! without a tag, did what issue 17 reports: the sequence number 2^64 − 1
//! ended the match with player 1 "disconnected", the ping 2^62 made
//! player 1 drop every later datagram and disconnect, and the 8 datagrams
//! of bogus checksums gave player 0 64 desyncs. Now each is dropped as
//! `unauthenticated` and the match finishes clean.
//!
//! The same values sealed with the real key (a buggy peer, not an
//! attacker) are survived too: the session checks them for plausibility.

use crate::common;

use common::{KEY, island, island_input};
use tickwise::{Nanos, Pcg32, Timestamp};
use tickwise_net::wire::{WIRE_MAGIC, WIRE_VERSION};
use tickwise_net::{
    Auth, Datagram, NetworkConfig, Session, SessionConfig, SessionKey, SimNetwork, Transport,
};

const TICKS: u64 = 600;

/// A transport that delivers `forged` datagrams (as from `from`) before
/// what the network has.
struct Inject<'a, T> {
    inner: T,
    forged: &'a mut Vec<Vec<u8>>,
    from: u8,
}

impl<T: Transport> Transport for Inject<'_, T> {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        self.inner.send(to, bytes);
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        if self.forged.is_empty() {
            return self.inner.recv(buf);
        }
        let d = self.forged.remove(0);
        buf[..d.len()].copy_from_slice(&d);
        Some(Datagram {
            from: Some(self.from),
            len: d.len(),
        })
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = u8::try_from(v & 0x7f).unwrap();
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// The fields of a forged inputs message (kind 1), written by hand from the
/// layout in docs/netplay.md.
#[derive(Clone, Copy, Default)]
struct Forged {
    seq: u64,
    ack: u64,
    ping: u64,
    pong: u64,
    sim_tick: u64,
    checks_upto: u64,
    start: u64,
    checks: [(u64, u64); 8],
    nchecks: u8,
}

/// The attacker's guess at the key.
const GUESS: SessionKey = SessionKey::from_bytes([0; 16]);

/// A datagram as from player 1 with the session id seen on the wire,
/// sealed with `key` (the attacker's guess, or the real key for a buggy
/// peer).
fn forge(f: &Forged, key: &SessionKey) -> Vec<u8> {
    let mut out = WIRE_MAGIC.to_vec();
    out.push(WIRE_VERSION);
    out.push(1);
    out.extend_from_slice(&Auth::new(&KEY).session_id().to_le_bytes());
    out.push(1);
    varint(&mut out, f.seq);
    for v in [f.ack, f.ping, f.pong, f.sim_tick, f.checks_upto, f.start] {
        varint(&mut out, v);
    }
    out.push(0); // no inputs
    out.push(f.nchecks);
    for &(t, sum) in &f.checks[..usize::from(f.nchecks)] {
        varint(&mut out, t);
        out.extend_from_slice(&sum.to_le_bytes());
    }
    let tag = Auth::new(key).tag(&out);
    out.extend_from_slice(&tag);
    out
}

struct Match {
    peers: Vec<Session<common::Islands>>,
    net: SimNetwork,
    rngs: Vec<Pcg32>,
    round: u64,
}

fn new_match() -> Match {
    let (sim, _, _) = island(2);
    let net = SimNetwork::new(NetworkConfig {
        latency: Nanos::from_millis(30),
        seed: 4,
        ..NetworkConfig::PERFECT
    });
    let peers = (0..2u8)
        .map(|p| {
            let mut c = SessionConfig::new(2, p, KEY);
            c.stop_at = Some(TICKS);
            Session::new(sim.clone(), c).unwrap()
        })
        .collect();
    Match {
        peers,
        net,
        rngs: (0..2).map(|p| Pcg32::new(11, p)).collect(),
        round: 0,
    }
}

impl Match {
    /// One round: every peer ticks once; peer 0 first receives `forged`
    /// as from player 1.
    fn round(&mut self, forged: &mut Vec<Vec<u8>>) {
        self.round += 1;
        self.net
            .advance_to(Timestamp::from_nanos(16_666_667 * self.round));
        for (i, s) in self.peers.iter_mut().enumerate() {
            let input = island_input(&mut self.rngs[i]);
            let slot = u8::try_from(i).unwrap();
            if i == 0 {
                let mut t = Inject {
                    inner: self.net.port(slot),
                    forged,
                    from: 1,
                };
                let _ = s.tick(&input, &mut t);
            } else {
                let _ = s.tick(&input, &mut self.net.port(slot));
            }
        }
    }

    fn run_to_end(&mut self) {
        while self.round < 4 * TICKS
            && !self.peers.iter().all(Session::is_finished)
            && self.peers.iter().all(|s| s.ended().is_none())
        {
            self.round(&mut Vec::new());
        }
    }

    /// The match ended clean: every tick confirmed on both sides, equal
    /// final checksums, no desync, nobody disconnected.
    fn assert_clean(&self) {
        for s in &self.peers {
            assert_eq!(s.ended(), None, "player {}", s.config().local);
            assert!(
                s.is_finished(),
                "player {}: {:?}",
                s.config().local,
                s.stats()
            );
            assert_eq!(s.confirmed_tick(), TICKS);
            assert_eq!(s.stats().desyncs, 0, "{:?}", s.desync());
        }
        assert_eq!(
            self.peers[0].confirmed_checksum(),
            self.peers[1].confirmed_checksum()
        );
    }

    /// What an eavesdropper knows: player 1's next sequence number (one
    /// per datagram sent, no spectators here).
    fn next_seq(&self) -> u64 {
        self.peers[1].stats().sent + 1
    }

    fn drops(&self, p: usize) -> tickwise_net::Drops {
        self.peers[p].stats().drops
    }
}

fn started() -> Match {
    let mut m = new_match();
    for _ in 0..100 {
        m.round(&mut Vec::new());
    }
    m
}

fn seq_attack(key: &SessionKey) -> Vec<Vec<u8>> {
    let f = Forged {
        seq: u64::MAX,
        ..Forged::default()
    };
    vec![forge(&f, key)]
}

fn ping_attack(m: &Match, key: &SessionKey) -> Vec<Vec<u8>> {
    let f = Forged {
        seq: m.next_seq(),
        ping: 1 << 62,
        ..Forged::default()
    };
    vec![forge(&f, key)]
}

/// 8 datagrams of 8 checksums each for the next 64 ticks, all wrong; the
/// ack claims nothing (0), as the attacker cannot know it exactly.
fn checks_attack(m: &Match, key: &SessionKey) -> Vec<Vec<u8>> {
    let seq = m.next_seq();
    let base = m.peers[0].confirmed_tick();
    (0..8u64)
        .map(|k| {
            let mut f = Forged {
                seq: seq + k,
                nchecks: 8,
                ..Forged::default()
            };
            for (j, c) in f.checks.iter_mut().enumerate() {
                let t = base + 1 + k * 8 + j as u64;
                *c = (t, 0xdead_beef_0000_0000 | t);
            }
            forge(&f, key)
        })
        .collect()
}

#[test]
fn a_forged_sequence_number_of_2_pow_64_minus_1_is_dropped() {
    let mut m = started();
    m.round(&mut seq_attack(&GUESS));
    m.run_to_end();
    m.assert_clean();
    assert_eq!(m.drops(0).unauthenticated, 1);
}

#[test]
fn a_forged_ping_of_2_pow_62_is_dropped() {
    let mut m = started();
    m.round(&mut ping_attack(&m, &GUESS));
    m.run_to_end();
    m.assert_clean();
    assert_eq!(m.drops(0).unauthenticated, 1);
    assert_eq!(m.drops(1).far_future, 0, "no pong from the future echoed");
}

#[test]
fn forged_checksums_for_upcoming_ticks_are_dropped() {
    let mut m = started();
    m.round(&mut checks_attack(&m, &GUESS));
    m.run_to_end();
    m.assert_clean();
    assert_eq!(m.drops(0).unauthenticated, 8);
    // The real checksums were still compared (the last few may arrive
    // after the match ended here).
    assert!(m.peers[0].stats().checks_compared > TICKS - 10);
}

/// A sequence number 2^64 − 1 from an authenticated (buggy) peer is a jump
/// past `MAX_SEQ_JUMP`: dropped, and later datagrams are still taken.
#[test]
fn an_authenticated_sequence_jump_does_not_lock_the_peer_out() {
    let mut m = started();
    m.round(&mut seq_attack(&KEY));
    m.run_to_end();
    m.assert_clean();
    assert_eq!(m.drops(0).far_future, 1);
    assert_eq!(m.drops(0).unauthenticated, 0);
}

/// An authenticated ping of 2^62 is echoed once (the newest ping is echoed,
/// not the largest ever seen): player 1 drops the datagrams carrying the
/// impossible pong until player 0 has heard a real ping again.
#[test]
fn an_authenticated_huge_ping_is_forgotten_at_the_next_datagram() {
    let mut m = started();
    m.round(&mut ping_attack(&m, &KEY));
    m.run_to_end();
    m.assert_clean();
    let dropped = m.drops(1).far_future;
    assert!((1..=3).contains(&dropped), "{dropped}");
}

/// Authenticated checksums of ticks past the sender's own ack (it cannot
/// have confirmed a tick without all of our inputs before it) are never
/// compared, so never a desync; each counts as `far_future`.
#[test]
fn authenticated_checksums_past_the_senders_ack_are_not_compared() {
    let mut m = started();
    m.round(&mut checks_attack(&m, &KEY));
    m.run_to_end();
    m.assert_clean();
    assert_eq!(m.drops(0).far_future, 64);
}

/// An authenticated datagram of `kind` as from player 1, its sequence
/// number 13 050 past the next real one (inside `MAX_SEQ_JUMP`), with
/// `body` after the envelope.
fn unsolicited(m: &Match, kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = WIRE_MAGIC.to_vec();
    out.push(WIRE_VERSION);
    out.push(kind);
    out.extend_from_slice(&Auth::new(&KEY).session_id().to_le_bytes());
    out.push(1);
    varint(&mut out, m.next_seq() + 13_050);
    out.extend_from_slice(body);
    let tag = Auth::new(&KEY).tag(&out);
    out.extend_from_slice(&tag);
    out
}

/// Authenticated datagrams that answer nothing this session asked for (a
/// buggy peer's junk), each with a sequence number far ahead: field hashes
/// with no desync (kind 2), an acknowledgement of a rejoin notice (kind 9)
/// and of snapshot chunks (kind 11) with no rejoin served. Each is one
/// `far_future` drop and leaves player 1's sequence window where it was.
/// Before, it moved the window, every later datagram of player 1 looked
/// `stale`, each side saw the other leave, and the match finished on two
/// different states with no desync reported (found by
/// `props::garbage_datagrams_are_dropped_and_counted`).
#[test]
fn unsolicited_answers_do_not_move_the_sequence_window() {
    let mut fields = vec![50]; // the tick the hashes describe
    fields.push(2);
    fields.extend_from_slice(&[0xab; 16]);
    let mut chunk_ack = 7u64.to_le_bytes().to_vec(); // epoch
    chunk_ack.push(3); // next
    chunk_ack.extend_from_slice(&[0xff; 8]); // have
    for (kind, body) in [(2u8, fields), (9, vec![0, 0]), (11, chunk_ack)] {
        let mut m = started();
        let junk = unsolicited(&m, kind, &body);
        m.round(&mut vec![junk]);
        m.run_to_end();
        m.assert_clean();
        assert_eq!(m.drops(0).far_future, 1, "kind {kind}");
        assert_eq!(m.drops(0).stale, 0, "kind {kind}");
        assert!(
            !m.peers[0].is_away(1) && !m.peers[1].is_away(0),
            "kind {kind}"
        );
    }
}
