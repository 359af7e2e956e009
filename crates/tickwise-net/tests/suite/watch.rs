//! Spectators over the wire (issue 17, item 6): a spectator process asks a
//! player of a running match to watch, loads its latest confirmed
//! checkpoint in chunks, and follows the confirmed inputs; it is dropped,
//! and told so, when it falls behind or goes silent; it can never send an
//! input; a player admits at most its cap.

use crate::common;

use common::{KEY, envelope, horde, seal};
use tickwise::{Nanos, Pcg32, Sim, Timestamp};
use tickwise_net::wire::UNASSIGNED_SLOT;
use tickwise_net::{
    NetworkConfig, Session, SessionConfig, SimNetwork, SnapshotCodec, WatchError, WatchProgress,
    Watcher,
};
use tickwise_sims::horde::HordeWorld;

const STEP: u64 = 16_666_667;

/// Two players of a horde match with `spectators` spectator slots each,
/// delay 0, both serving checkpoints unless `codec` is false.
fn players(spectators: u8, codec: bool, ticks: u64) -> [Session<HordeWorld>; 2] {
    let (sim, _) = horde(300, 2);
    [0, 1].map(|p| {
        let mut cfg = SessionConfig::new(2, p, KEY);
        cfg.input_delay = 0;
        cfg.spectators = spectators;
        cfg.stop_at = Some(ticks);
        cfg.disconnect_after = 60;
        let mut s = Session::new(sim.clone(), cfg).unwrap();
        if codec {
            s.enable_rejoin(SnapshotCodec::new(), 1 << 20);
        }
        s
    })
}

fn watcher(epoch: u64) -> Watcher<HordeWorld> {
    let (sim, _) = horde(300, 2);
    Watcher::new(sim, 2, 0, &KEY, SnapshotCodec::new(), epoch, 1 << 20)
}

/// Ticks both players once with random sticks (player p from stream p).
fn tick_players(s: &mut [Session<HordeWorld>; 2], net: &mut SimNetwork, rngs: &mut [Pcg32; 2]) {
    for (p, (s, rng)) in s.iter_mut().zip(rngs.iter_mut()).enumerate() {
        let input = common::horde_input(rng);
        #[allow(clippy::cast_possible_truncation)]
        let _ = s.tick(&input, &mut net.port(p as u8));
    }
}

#[test]
fn a_spectator_joins_at_tick_300_under_loss_and_ends_with_the_players_checksum() {
    let ticks = 1200;
    let mut s = players(2, true, ticks);
    let mut net = SimNetwork::new(NetworkConfig {
        latency: Nanos::from_millis(40),
        jitter: Nanos::from_millis(10),
        loss_ppm: 50_000,
        dup_ppm: 20_000,
        reorder_ppm: 20_000,
        bandwidth: None,
        seed: 3,
    });
    let mut rngs = [Pcg32::new(9, 0), Pcg32::new(9, 1)];
    let mut w = watcher(77);
    let mut watching = None;
    for round in 1..=4000u64 {
        net.advance_to(Timestamp::from_nanos(round * STEP));
        tick_players(&mut s, &mut net, &mut rngs);
        if round >= 300 {
            match w.tick(&mut net.port(4), 8).unwrap() {
                WatchProgress::Watching { tick } => {
                    watching.get_or_insert(round);
                    if tick >= ticks && s.iter().all(Session::is_finished) {
                        break;
                    }
                }
                p => assert!(
                    round < 400,
                    "still loading at round {round}: {p:?} {:?}",
                    w.drops()
                ),
            }
        }
    }
    let sp = w.spectator().expect("watching");
    assert_eq!(sp.tick(), ticks);
    // It started from a checkpoint (every 64 ticks) of the running match.
    let joined = w.joined_at().unwrap();
    assert!(joined >= 192 && joined.is_multiple_of(64), "{joined}");
    assert!(w.snapshot_bytes() > 1000);
    for p in &s {
        assert_eq!(p.confirmed_tick(), ticks);
        assert_eq!(p.stats().desyncs, 0);
        assert_eq!(p.confirmed_checksum(), Some(sp.sim().checksum()));
    }
    // Only player 0 was asked: player 1 never heard of the spectator.
    assert_eq!(s[1].stats().drops.unknown_peer, 0);
}

#[test]
fn a_spectator_that_stops_is_dropped_and_told_why_while_the_players_go_on() {
    let ticks = 900;
    let mut s = players(1, true, ticks);
    let mut net = SimNetwork::new(NetworkConfig::PERFECT);
    let mut rngs = [Pcg32::new(4, 0), Pcg32::new(4, 1)];
    let mut w = watcher(5);
    let mut err = None;
    for round in 1..=3000u64 {
        net.advance_to(Timestamp::from_nanos(round * STEP));
        tick_players(&mut s, &mut net, &mut rngs);
        // Watching from round 100; stopped (not ticked) for rounds 200..400,
        // longer than the players' 60-tick timeout.
        if round >= 100
            && !(200..400).contains(&round)
            && let Err(e) = w.tick(&mut net.port(4), 8)
        {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("dropped");
    assert_eq!(err, WatchError::DroppedSilent { after: 60 }, "{err}");
    assert!(err.to_string().contains("dropped by the player"), "{err}");
    while !s.iter().all(Session::is_finished) {
        let t = net.now().as_nanos() + STEP;
        net.advance_to(Timestamp::from_nanos(t));
        tick_players(&mut s, &mut net, &mut rngs);
    }
    assert_eq!(s[0].confirmed_checksum(), s[1].confirmed_checksum());
    assert!(s.iter().all(|p| p.stats().desyncs == 0));
}

/// A player whose sim has no snapshot encoding refuses with a reason; a
/// watcher on a spectator slot past the player's cap is not heard at all
/// (the refusal for a full player is in the next test: over UDP every
/// slot is free until admitted).
#[test]
fn no_snapshot_encoding_is_refused_and_slots_past_the_cap_are_not_heard() {
    for codec in [false, true] {
        let mut s = players(1, codec, 600);
        let mut net = SimNetwork::new(NetworkConfig::PERFECT);
        let mut rngs = [Pcg32::new(1, 0), Pcg32::new(1, 1)];
        let (mut first, mut second) = (watcher(1), watcher(2));
        let mut got = None;
        for round in 1..=300u64 {
            net.advance_to(Timestamp::from_nanos(round * STEP));
            tick_players(&mut s, &mut net, &mut rngs);
            if round >= 50 {
                if let Err(e) = first.tick(&mut net.port(4), 8) {
                    got = Some(e);
                    break;
                }
                second.tick(&mut net.port(5), 8).unwrap();
            }
        }
        if codec {
            assert_eq!(got, None);
            assert!(first.spectator().is_some());
            assert!(second.spectator().is_none());
            assert!(s[0].stats().drops.unknown_peer > 200);
        } else {
            assert_eq!(got, Some(WatchError::NoSnapshotEncoding));
        }
    }
}

/// Over a transport that binds addresses ([`tickwise_net::Transport::admit`]),
/// a request from an unknown source gets the first free slot; when every
/// slot is taken the refusal goes back to that source.
#[test]
fn watch_requests_from_unknown_sources_get_a_free_slot_or_a_refusal() {
    use tickwise_net::{Datagram, Transport};
    /// One player's view: datagrams in from an unknown source, and what it
    /// sent where.
    #[derive(Default)]
    struct Desk {
        inbox: Vec<Vec<u8>>,
        admitted: Vec<u8>,
        replies: Vec<Vec<u8>>,
        sent_to: Vec<u8>,
    }
    impl Transport for Desk {
        fn send(&mut self, to: u8, _: &[u8]) {
            self.sent_to.push(to);
        }
        fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
            let d = self.inbox.pop()?;
            buf[..d.len()].copy_from_slice(&d);
            Some(Datagram {
                from: None,
                len: d.len(),
            })
        }
        fn admit(&mut self, slot: u8) -> bool {
            self.admitted.push(slot);
            true
        }
        fn reply(&mut self, bytes: &[u8]) {
            self.replies.push(bytes.to_vec());
        }
    }
    let [mut host, _] = players(2, true, 600);
    let mut desk = Desk::default();
    let request = |seq: u8, epoch: u64| {
        let mut v = envelope(13, UNASSIGNED_SLOT, seq);
        v.extend(epoch.to_le_bytes());
        seal(v)
    };
    for (seq, epoch) in [(1, 10u64), (1, 11), (1, 12)] {
        desk.inbox.push(request(seq, epoch));
        let _ = host.tick(&tickwise::TickInput::default(), &mut desk);
    }
    // Two slots, two admissions; the third got a refusal: kind 14, code 1
    // (full), cap 2.
    assert_eq!(desk.admitted, vec![4, 5]);
    assert_eq!(desk.replies.len(), 1);
    let r = &desk.replies[0];
    assert_eq!(r[3], 14);
    let body = &r[14..r.len() - 16];
    assert_eq!(&body[..8], &12u64.to_le_bytes());
    assert_eq!(&body[8..], &[1, 0, 2, 0]);
    // The admitted ones are sent their welcome and chunks by slot.
    assert!(desk.sent_to.contains(&4) && desk.sent_to.contains(&5));
    // A forged request (no key) is dropped before anything is used.
    let mut forged = request(2, 13);
    let n = forged.len();
    forged[n - 1] ^= 1;
    desk.inbox.push(forged);
    let before = host.stats().drops.unauthenticated;
    let _ = host.tick(&tickwise::TickInput::default(), &mut desk);
    assert_eq!(host.stats().drops.unauthenticated, before + 1);
    assert_eq!(desk.admitted, vec![4, 5]);
    // A request with a slot in its sender byte is not a watch request.
    let mut v = envelope(13, 4, 3);
    v.extend(14u64.to_le_bytes());
    desk.inbox.push(seal(v));
    let before = host.stats().drops.unknown_peer;
    let _ = host.tick(&tickwise::TickInput::default(), &mut desk);
    assert_eq!(host.stats().drops.unknown_peer, before + 1);
}

/// A spectator cannot send inputs: an authenticated inputs datagram from an
/// admitted spectator's slot is dropped as from an unknown peer and changes
/// nothing in the match.
#[test]
fn a_spectator_cannot_send_inputs() {
    let ticks = 300;
    let mut s = players(1, true, ticks);
    let mut net = SimNetwork::new(NetworkConfig::PERFECT);
    let mut rngs = [Pcg32::new(2, 0), Pcg32::new(2, 1)];
    let mut w = watcher(3);
    for round in 1..=100u64 {
        net.advance_to(Timestamp::from_nanos(round * STEP));
        tick_players(&mut s, &mut net, &mut rngs);
        let _ = w.tick(&mut net.port(4), 8);
    }
    assert!(w.spectator().is_some());
    // Kind 1 from slot 4: ack 0, ping 1, pong 0, sim tick 0, checks ack 0,
    // start at the next tick, 4 inputs of all-zero TickInput, no checks.
    let before = s[0].stats().drops.unknown_peer;
    let mut v = envelope(1, 4, 120);
    v.extend([0, 1, 0, 0, 0]);
    let next = s[0].confirmed_tick();
    tickwise::codec::put_varint(&mut v, next);
    v.push(4);
    let mut enc = Vec::new();
    for _ in 0..4 {
        tickwise::ReplayInput::encode(&tickwise::TickInput::default(), &mut enc);
    }
    v.extend(enc);
    v.push(0);
    s[0].handle_datagram(Some(4), &seal(v));
    assert_eq!(s[0].stats().drops.unknown_peer, before + 1);
    while !s.iter().all(Session::is_finished) {
        let t = net.now().as_nanos() + STEP;
        net.advance_to(Timestamp::from_nanos(t));
        tick_players(&mut s, &mut net, &mut rngs);
        let _ = w.tick(&mut net.port(4), 8);
    }
    assert_eq!(s[0].confirmed_checksum(), s[1].confirmed_checksum());
    assert_eq!(s[0].stats().desyncs, 0);
}
