//! Invariants over random network schedules and random datagrams.

use crate::common;

use common::{KEY, auth, envelope, island, island_input, island_replay_verifies, seal};
use proptest::prelude::*;
use tickwise::ReplayInput;
use tickwise::{Nanos, Timestamp};
use tickwise_net::wire::{Body, decode};
use tickwise_net::{
    NetworkConfig, RunOptions, Session, SessionConfig, SimNetwork, Transport, run_local,
};

/// A round limit that a correct session meets on any schedule: a peer
/// waits for remote inputs once it is `window + delay` ticks ahead of them,
/// so it advances that many ticks per worst one-way latency (in 60 Hz
/// rounds, plus one for the send and one for a lost resend), doubled for
/// loss bursts, plus 20 s. (A fixed 2000 rounds failed for window 1, delay
/// 0 at 124 ms latency: 396 of 400 ticks confirmed in time.)
fn rounds_needed(ticks: u64, worst_one_way_ms: u64, ahead: u32) -> u64 {
    let per_latency = (worst_one_way_ms * 60).div_ceil(1000) + 2;
    2 * ticks * per_latency / u64::from(ahead.max(1)) + 20 * 60
}

proptest! {
    // 128 cases: 16 let an authenticated junk datagram that split the match
    // through for several stops; 128 take about 5 s in a debug build.
    // Longer: PROPTEST_CASES=30000.
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any schedule of latency, jitter, loss, duplication and reordering,
    /// any delay and rollback window: every peer confirms every tick with
    /// the same checksum, nobody reports a desync, and the replay verifies.
    /// (Lockstep is correct too but runs one tick per one-way latency when
    /// the input delay is below it, so it has its own test with a short
    /// latency instead of a larger time budget here.)
    #[test]
    fn any_network_schedule_agrees(
        players in 2u8..=4,
        latency in 0u64..200,
        jitter in 0u64..40,
        loss in 0u32..300_000,
        dup in 0u32..200_000,
        reorder in 0u32..200_000,
        delay in 0u32..4,
        window in 1u32..10,
        seed in any::<u64>(),
    ) {
        let (sim, header, _) = island(players);
        let mut opts = RunOptions::new(players, 400, KEY);
        opts.input_delay = delay;
        opts.window = window;
        let input_seed = seed;
        opts.max_rounds = Some(rounds_needed(400, latency + jitter, window + delay));
        let net = NetworkConfig {
            latency: Nanos::from_millis(latency),
            jitter: Nanos::from_millis(jitter),
            loss_ppm: loss,
            dup_ppm: dup,
            reorder_ppm: reorder,
            bandwidth: Some(20_000),
            seed,
        };
        let run = run_local(&sim, &header, common::inputs(opts.players, input_seed, island_input), &opts, net, 0,
                            Nanos::from_nanos(16_666_667), &mut || 0).unwrap();
        prop_assert!(run.finished, "{:?}", run.peers);
        prop_assert!(run.checksums_agree && run.desync.is_none());
        let (ok, ticks, sum) = island_replay_verifies(&run.replay);
        prop_assert!(ok && ticks == 400 && sum == run.peers[0].confirmed_checksum);
    }

    /// Random datagrams, and mutations of real ones, from every slot: never
    /// a panic, never a desync, and the session still completes.
    #[test]
    fn garbage_datagrams_are_dropped_and_counted(
        junk in prop::collection::vec((0u8..6, prop::collection::vec(any::<u8>(), 0..600)), 1..40),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
    ) {
        let (sim, _, _) = island(2);
        let mut net = SimNetwork::new(NetworkConfig {
            latency: Nanos::from_millis(30),
            seed: 1,
            ..NetworkConfig::PERFECT
        });
        let mut s: Vec<Session<_>> = (0..2).map(|p| {
            let mut c = SessionConfig::new(2, p, KEY);
            c.stop_at = Some(300);
            Session::new(sim.clone(), c).unwrap()
        }).collect();
        // A real datagram to mutate: capture one from player 1.
        struct Grab(Vec<u8>);
        impl Transport for Grab {
            fn send(&mut self, _: u8, b: &[u8]) { self.0 = b.to_vec(); }
            fn recv(&mut self, _: &mut [u8]) -> Option<tickwise_net::Datagram> { None }
        }
        let mut probe = Session::new(sim.clone(), SessionConfig::new(2, 1, KEY)).unwrap();
        let mut grab = Grab(Vec::new());
        let _ = probe.tick(&1, &mut grab);
        let mut real = grab.0.clone();
        for (i, b) in &flips {
            let n = real.len();
            if n > 0 { real[i % n] ^= b; }
        }
        // The junk also comes authenticated (a buggy peer that has the
        // key): a valid envelope and MAC around random bytes, so it reaches
        // the decoder and the session. Every kind (and a few unknown ones)
        // but a departure (5) and a goodbye (6): with the key, those are
        // how a peer leaves or says another one left, by design.
        let sealed: Vec<Vec<u8>> = junk.iter().map(|(from, bytes)| {
            let kind = bytes.first().map_or(1, |k| match k % 15 { 5 | 6 => 1, k => k });
            let mut v = envelope(kind, *from, 0);
            v.pop();
            v.extend(bytes.iter().skip(1).take(400));
            seal(v)
        }).collect();
        for round in 1..2_000u64 {
            net.advance_to(Timestamp::from_nanos(round * 16_666_667));
            if round % 7 == 0 {
                let k = usize::try_from(round / 7).unwrap() % junk.len();
                let (from, bytes) = &junk[k];
                s[0].handle_datagram(Some(*from), bytes);
                s[0].handle_datagram(Some(*from), &sealed[k]);
                s[0].handle_datagram(Some(1), &real);
                s[1].handle_datagram(None, bytes);
            }
            for (i, x) in s.iter_mut().enumerate() {
                let _ = x.tick(&(i32::try_from(round % 3).unwrap() - 1), &mut net.port(u8::try_from(i).unwrap()));
            }
            if s.iter().all(Session::is_finished) { break; }
        }
        prop_assert!(s.iter().all(Session::is_finished));
        prop_assert!(s.iter().all(|x| x.desync().is_none()));
        prop_assert_eq!(s[0].confirmed_checksum(), s[1].confirmed_checksum());
        prop_assert!(s[0].stats().drops.total() > 0);
    }
}

#[test]
fn each_bad_packet_kind_is_counted_under_its_reason() {
    let (sim, _, _) = island(2);
    let mut s = Session::new(sim, SessionConfig::new(2, 0, KEY)).unwrap();
    let with = |mut v: Vec<u8>, body: &[u8]| {
        v.extend(body);
        seal(v)
    };
    // A well-formed inputs datagram from player 1: acks, ping, pong, tick,
    // checks ack, start 0, two inputs (zigzag 1 = -1, 2 = 1), no checks.
    let body = [0, 0, 0, 0, 0, 0, 2, 1, 2, 0];
    let inputs = with(envelope(1, 1, 1), &body);
    s.handle_datagram(Some(1), &inputs);
    assert_eq!(s.stats().drops.total(), 0);
    s.handle_datagram(Some(1), &inputs); // the same sequence number again
    assert_eq!(s.stats().drops.stale, 1);
    s.handle_datagram(Some(1), &vec![0; 600]);
    assert_eq!(s.stats().drops.oversized, 1);
    s.handle_datagram(Some(1), &inputs[..9]);
    assert_eq!(s.stats().drops.malformed, 1);
    let mut v1 = inputs.clone();
    v1[2] = 1; // the previous wire version (no MAC)
    s.handle_datagram(Some(1), &v1);
    assert_eq!(s.stats().drops.version, 1);
    s.handle_datagram(Some(1), &seal(envelope(99, 1, 5)));
    assert_eq!(s.stats().drops.unknown_kind, 1);
    let mut other = envelope(1, 1, 6);
    other[4..12].copy_from_slice(&(auth().session_id() ^ 1).to_le_bytes());
    let other = with(other, &body);
    s.handle_datagram(Some(1), &other);
    assert_eq!(s.stats().drops.wrong_session, 1);
    // The right envelope and body with a tag that is not this key's: a
    // forgery, a flipped bit in transit, or another key with the same id.
    let mut forged = with(envelope(1, 1, 6), &body);
    let n = forged.len();
    forged[n - 1] ^= 1;
    s.handle_datagram(Some(1), &forged);
    let mut flipped = with(envelope(1, 1, 6), &body);
    flipped[14] ^= 0x40;
    s.handle_datagram(Some(1), &flipped);
    assert_eq!(s.stats().drops.unauthenticated, 2);
    let spoof = with(envelope(1, 1, 7), &body);
    s.handle_datagram(None, &spoof);
    s.handle_datagram(Some(3), &spoof);
    assert_eq!(s.stats().drops.unknown_peer, 2);
    // Inputs starting 10 000 ticks ahead: far future.
    let far = with(envelope(1, 1, 8), &[0, 0, 0, 0, 0, 0x90, 0x4e, 1, 2, 0]);
    s.handle_datagram(Some(1), &far);
    assert_eq!(s.stats().drops.far_future, 1);
    assert_eq!(s.stats().drops.total(), 11);
    // Nothing authenticated was lost on the way: the next datagram counts.
    s.handle_datagram(Some(1), &with(envelope(1, 1, 9), &body));
    assert_eq!(s.stats().drops.total(), 11);
}

/// A fuzz finding (fuzz/regressions/net_datagram/checks_ack_u64_max): a
/// peer claiming to hold our checksums up to a tick near u64::MAX
/// overflowed the arithmetic that picks the checksums to send (a panic in
/// debug builds). Such a claim now only means that no checksum is sent to
/// that peer; the session keeps running and sending its inputs.
#[test]
fn a_checks_ack_past_every_check_is_harmless() {
    struct Sent(Vec<Vec<u8>>);
    impl Transport for Sent {
        fn send(&mut self, _: u8, b: &[u8]) {
            self.0.push(b.to_vec());
        }
        fn recv(&mut self, _: &mut [u8]) -> Option<tickwise_net::Datagram> {
            None
        }
    }
    // Player 1's inputs for ticks 0..3 (all 0) and its checks ack.
    let from_player_1 = |checks_ack: u64| {
        let mut d = envelope(1, 1, 1);
        d.extend([0, 0, 0, 0]);
        tickwise::codec::put_varint(&mut d, checks_ack);
        d.extend([0, 3, 0, 0, 0, 0]);
        seal(d)
    };
    for checks_ack in [0, u64::MAX, u64::MAX - 1, 1 << 63] {
        let (sim, _, _) = island(2);
        let mut s = Session::new(sim, SessionConfig::new(2, 0, KEY)).unwrap();
        s.handle_datagram(Some(1), &from_player_1(checks_ack));
        assert_eq!(s.stats().drops.total(), 0, "accepted");
        let mut sent = Sent(Vec::new());
        for _ in 0..4 {
            let _ = s.tick(&1, &mut sent);
        }
        assert_eq!(sent.0.len(), 4, "the session still sends its inputs");
        assert_eq!(s.confirmed_tick(), 3);
        let checks: Vec<usize> = sent
            .0
            .iter()
            .map(|d| match decode(d, &auth(), |r| i32::decode(r).is_ok()) {
                Ok((_, Body::Inputs(m))) => m.checks.iter().count(),
                other => panic!("{other:?}"),
            })
            .collect();
        if checks_ack == 0 {
            assert!(checks.iter().any(|&n| n > 0), "{checks:?}");
        } else {
            assert!(checks.iter().all(|&n| n == 0), "{checks:?}");
        }
    }
}

#[test]
fn a_silent_peer_leaves_and_the_match_goes_on() {
    let (sim, _, _) = island(2);
    let mut net = SimNetwork::new(NetworkConfig::PERFECT);
    let mut cfg = SessionConfig::new(2, 0, KEY);
    cfg.disconnect_after = 60;
    let mut s = Session::new(sim, cfg).unwrap();
    for _ in 0..60 {
        assert!(!matches!(
            s.tick(&0, &mut net.port(0)),
            tickwise_net::TickOutcome::Ended(_)
        ));
    }
    // Nothing ran past the window while waiting, and player 1 (who never
    // sent an input) is not gone yet: 60 ticks of silence are allowed.
    assert_eq!(s.current_tick(), 8);
    assert_eq!(s.departed(1), None);
    let _ = s.tick(&0, &mut net.port(0));
    // Silent past the timeout: gone, its input is the absent input from
    // tick 0 (the only other player has nothing to add), and the match
    // goes on without stalling.
    assert_eq!(s.departed(1), Some(0));
    for _ in 0..100 {
        assert_eq!(
            s.tick(&0, &mut net.port(0)),
            tickwise_net::TickOutcome::Advanced
        );
    }
    assert_eq!(s.ended(), None);
    // Tick 61 declared it gone and ran tick 8, then 100 more ran.
    assert_eq!(s.current_tick(), 109);
}

/// The schedule that once failed `any_network_schedule_agrees` under the
/// old fixed 2000-round limit: one tick ahead of remote inputs at 124 ms
/// (+ up to 39 ms) one way. With the default limit the run stops short and
/// says so; with the limit the property computes, every tick is confirmed.
#[test]
fn slow_network_with_window_1_finishes_within_the_computed_limit() {
    let (sim, header, _) = island(2);
    let seed = 9_922_200_276_310_692_714;
    let mut opts = RunOptions::new(2, 400, KEY);
    opts.input_delay = 0;
    opts.window = 1;
    let input_seed = seed;
    let net = NetworkConfig {
        latency: Nanos::from_millis(124),
        jitter: Nanos::from_millis(39),
        loss_ppm: 149_460,
        dup_ppm: 0,
        reorder_ppm: 199_999,
        bandwidth: Some(20_000),
        seed,
    };
    let step = Nanos::from_nanos(16_666_667);
    let short = run_local(
        &sim,
        &header,
        common::inputs(opts.players, input_seed, island_input),
        &opts,
        net,
        0,
        step,
        &mut || 0,
    )
    .unwrap();
    assert!(!short.finished);
    assert!(short.peers.iter().all(|p| p.confirmed_tick < 400));
    assert!(short.desync.is_none());
    opts.max_rounds = Some(rounds_needed(400, 124 + 39, 1));
    let run = run_local(
        &sim,
        &header,
        common::inputs(opts.players, input_seed, island_input),
        &opts,
        net,
        0,
        step,
        &mut || 0,
    )
    .unwrap();
    assert!(run.finished, "{:?}", run.peers);
    assert!(run.checksums_agree && run.desync.is_none());
    let (ok, ticks, sum) = island_replay_verifies(&run.replay);
    assert!(ok && ticks == 400 && sum == run.peers[0].confirmed_checksum);
}
