//! A player leaves mid-match: the others go on, agree on the leaver's last
//! tick with real input, and the match replay verifies with the absent
//! input from that tick on (issue 17, item 5).

use crate::common;

use common::{KEY, horde, island};
use tickwise::{Nanos, Pcg32, Replay, ReplayInput, ReplayLimits, Sim, TickInput};
use tickwise_net::{
    NetworkConfig, PlayerInput, RunOptions, SessionConfig, SessionEnd, SimNetwork, SnapshotCodec,
    run_local, run_local_rejoin,
};

fn chaos(seed: u64) -> NetworkConfig {
    NetworkConfig {
        latency: Nanos::from_millis(150),
        jitter: Nanos::from_millis(20),
        loss_ppm: 100_000,
        dup_ppm: 50_000,
        reorder_ppm: 50_000,
        bandwidth: None,
        seed,
    }
}

/// Player `p`'s input at tick `t`: a pure function of `(seed, p, t)`, so the
/// test knows what every peer sent without asking the session (with input
/// delay 0 the input given while the session's next tick is `t` is tick
/// `t`'s input).
fn horde_at(seed: u64, p: u8, t: u64) -> TickInput {
    let mut rng = Pcg32::new(seed ^ t.wrapping_mul(0x9e37_79b9_7f4a_7c15), u64::from(p));
    common::horde_input(&mut rng)
}

fn island_at(seed: u64, p: u8, t: u64) -> i32 {
    let mut rng = Pcg32::new(seed ^ t.wrapping_mul(0x9e37_79b9_7f4a_7c15), u64::from(p));
    common::island_input(&mut rng)
}

fn gens<I: 'static>(
    players: u8,
    seed: u64,
    f: fn(u64, u8, u64) -> I,
) -> Vec<PlayerInput<'static, I>> {
    (0..players)
        .map(|p| Box::new(move |t| f(seed, p, t)) as PlayerInput<'static, I>)
        .collect()
}

/// Checks a finished run where `leaver` left: every other peer finished
/// clean and agreed on the same absent-from tick, which lies between what
/// the leaver could have sent and its leaving tick; returns that tick.
fn assert_left_clean(run: &tickwise_net::LocalRun, leaver: u8, leave_at: u64, ticks: u64) -> u64 {
    assert!(run.finished, "{:?}", run.peers);
    assert!(run.desync.is_none(), "{:?}", run.desync);
    assert!(run.checksums_agree, "{:?}", run.peers);
    let mut ends = Vec::new();
    for p in &run.peers {
        if p.slot == leaver {
            assert!(matches!(p.ended, Some(SessionEnd::Left { .. })), "{p:?}");
            continue;
        }
        assert_eq!(p.ended, None, "{p:?}");
        assert_eq!(p.confirmed_tick, ticks);
        assert_eq!(p.stats.desyncs, 0);
        assert_eq!(p.departed.len(), 1, "{p:?}");
        assert_eq!(p.departed[0].0, leaver);
        ends.push(p.departed[0].1);
    }
    assert!(ends.windows(2).all(|w| w[0] == w[1]), "{ends:?}");
    let end = ends[0];
    // The leaver filed inputs up to the tick before it left (delay 0); the
    // others confirmed at least up to where the window let them run.
    assert!(end <= leave_at && end + 64 >= leave_at, "end {end}");
    end
}

/// The replay's inputs: players other than the leaver hold what they sent;
/// the leaver what it sent before `end`, then the absent input.
fn assert_inputs<I: ReplayInput + core::fmt::Debug>(
    replay: &Replay<I>,
    leaver: u8,
    end: u64,
    sent: impl Fn(u8, u64) -> I,
) {
    let players = replay.header().players;
    for p in 0..players {
        let got: Vec<I> = replay.inputs(usize::from(p)).cloned().collect();
        assert_eq!(got.len() as u64, replay.ticks());
        for (t, input) in got.iter().enumerate() {
            let t = t as u64;
            let want = if p == leaver && t >= end {
                I::default()
            } else {
                sent(p, t)
            };
            assert_eq!(*input, want, "player {p} tick {t}");
        }
    }
}

#[test]
fn horde_four_players_one_leaves_under_chaos() {
    let (sim, header) = horde(60, 4);
    for seed in [1, 2, 3] {
        let mut opts = RunOptions::new(4, 3_000, KEY);
        opts.input_delay = 0;
        opts.leave_at[2] = Some(1_000);
        let run = run_local(
            &sim,
            &header,
            gens(4, seed, horde_at),
            &opts,
            chaos(seed),
            0,
            Nanos::from_nanos(16_666_667),
            &mut || 0,
        )
        .unwrap();
        let end = assert_left_clean(&run, 2, 1_000, 3_000);
        let replay = Replay::<TickInput>::from_bytes(&run.replay, &ReplayLimits::DEFAULT).unwrap();
        let (fresh, _) = horde(60, 4);
        assert!(tickwise::verify(fresh, &replay).is_match(), "seed {seed}");
        assert_eq!(
            replay.final_state().checksum,
            run.peers[0].confirmed_checksum
        );
        assert_inputs(&replay, 2, end, |p, t| horde_at(seed, p, t));
    }
}

#[test]
fn islands_three_players_leaver_silent_past_the_timeout() {
    // No goodbye: player 0 stops answering (its session is never ticked
    // again), the others declare it gone after `disconnect_after` ticks.
    let (sim, _, _) = island(3);
    let mut net = SimNetwork::new(chaos(7));
    let mut sessions: Vec<_> = (0..3)
        .map(|p| {
            let mut cfg = SessionConfig::new(3, p, KEY);
            cfg.input_delay = 0;
            cfg.disconnect_after = 60;
            cfg.stop_at = Some(1_500);
            tickwise_net::Session::new(sim.clone(), cfg).unwrap()
        })
        .collect();
    let step = 16_666_667u64;
    for round in 1..20_000u64 {
        net.advance_to(tickwise::Timestamp::from_nanos(step * round));
        for (i, s) in sessions.iter_mut().enumerate() {
            if i == 0 && s.current_tick() >= 400 {
                continue;
            }
            let t = s.current_tick();
            let _ = s.tick(&island_at(9, i as u8, t), &mut net.port(i as u8));
        }
        if sessions[1..].iter().all(|s| s.is_finished()) {
            break;
        }
    }
    let end1 = sessions[1]
        .departed(0)
        .expect("player 1 saw player 0 leave");
    let end2 = sessions[2]
        .departed(0)
        .expect("player 2 saw player 0 leave");
    assert_eq!(end1, end2);
    assert!(end1 <= 400 + 1 && end1 + 16 >= 400, "{end1}");
    for s in &sessions[1..] {
        assert!(s.is_finished(), "{:?}", s.stats());
        assert_eq!(s.ended(), None);
        assert_eq!(s.stats().desyncs, 0);
    }
    assert_eq!(
        sessions[1].confirmed_checksum(),
        sessions[2].confirmed_checksum()
    );
    // The same inputs, played back, give the same final state.
    let mut fresh = sim.clone();
    for t in 0..1_500u64 {
        let inputs: Vec<i32> = (0..3u8)
            .map(|p| {
                if p == 0 && t >= end1 {
                    0
                } else {
                    island_at(9, p, t)
                }
            })
            .collect();
        fresh.step(&inputs);
    }
    assert_eq!(Some(fresh.checksum()), sessions[1].confirmed_checksum());
}

/// Issue 17's "Done when", simulated network: 4 players, 10 000 ticks,
/// 300 ms round trip, 20 ms jitter, 10 % loss, 5 % duplication and
/// reordering; player 2 leaves at tick 2000 and a new process for its slot
/// rejoins at match tick 3500, loading the donor's snapshot in chunks over
/// that network. 0 desyncs, equal confirmed checksums, the match replay
/// verifies, and every player's inputs in the replay are what it sent,
/// player 2's the absent input in `[from, join)`. (A 20-enemy horde keeps
/// the debug-build runtime reasonable; the duel's is in
/// examples/duel/tests/rejoin.rs.)
#[test]
fn horde_four_players_leave_at_2000_rejoin_at_3500_chaos_three_seeds() {
    let (sim, header) = horde(20, 4);
    for seed in [1, 2, 3] {
        let mut opts = RunOptions::new(4, 10_000, KEY);
        opts.input_delay = 0;
        opts.leave_at[2] = Some(2_000);
        opts.rejoin_at[2] = Some(3_500);
        let run = run_local_rejoin(
            &sim,
            &header,
            gens(4, seed, horde_at),
            &opts,
            chaos(seed),
            0,
            Nanos::from_nanos(16_666_667),
            &mut || 0,
            &SnapshotCodec::new(),
        )
        .unwrap();
        assert!(run.finished, "seed {seed}: {:?}", run.peers);
        assert!(run.desync.is_none(), "{:?}", run.desync);
        assert!(run.checksums_agree, "{:?}", run.peers);
        let gaps: Vec<_> = run
            .peers
            .iter()
            .filter(|p| p.slot != 2)
            .map(|p| p.rejoined.clone())
            .collect();
        assert!(gaps.windows(2).all(|w| w[0] == w[1]), "{gaps:?}");
        assert_eq!(gaps[0].len(), 1, "{gaps:?}");
        let (who, from, join) = gaps[0][0];
        assert_eq!(who, 2);
        assert!(from <= 2_000 && from + 64 >= 2_000, "{from}");
        assert!((3_500..=3_600).contains(&join), "{join}");
        for p in &run.peers {
            assert_eq!(p.confirmed_tick, 10_000, "{p:?}");
            assert_eq!(p.stats.desyncs, 0);
            assert_eq!(p.ended, None);
            assert!(p.lost > 0 && p.duplicated > 0 && p.reordered > 0, "{p:?}");
        }
        let replay = Replay::<TickInput>::from_bytes(&run.replay, &ReplayLimits::DEFAULT).unwrap();
        let (fresh, _) = horde(20, 4);
        assert!(tickwise::verify(fresh, &replay).is_match(), "seed {seed}");
        assert_eq!(replay.ticks(), 10_000);
        assert_eq!(
            replay.final_state().checksum,
            run.peers[2].confirmed_checksum
        );
        for p in 0..4u8 {
            for (t, input) in replay.inputs(usize::from(p)).enumerate() {
                let t = t as u64;
                let want = if p == 2 && (from..join).contains(&t) {
                    TickInput::default()
                } else {
                    horde_at(seed, p, t)
                };
                assert_eq!(*input, want, "player {p} tick {t}");
            }
        }
    }
}

/// A rejoin the donor cannot serve is refused with a reason the rejoiner
/// reports: no snapshot encoding, a snapshot over the donor's limit, or
/// one over the rejoiner's own limit (checked before it allocates).
#[test]
fn rejoins_that_cannot_be_served_are_refused_clearly() {
    use tickwise_net::{RejoinError, Rejoiner, Session};
    let (sim, _) = horde(300, 2);
    // (donor's limit or no encoding, rejoiner's limit) and the error.
    let cases = [
        (None, 1 << 20, RejoinError::NoSnapshotEncoding),
        (
            Some(100),
            1 << 20,
            RejoinError::TooLarge {
                bytes: 0,
                limit: 100,
            },
        ),
        (
            Some(1 << 20),
            1_000,
            RejoinError::TooLarge {
                bytes: 0,
                limit: 1_000,
            },
        ),
    ];
    for (donor_limit, own_limit, want) in cases {
        let mut net = SimNetwork::new(NetworkConfig::PERFECT);
        let mut cfg = SessionConfig::new(2, 0, KEY);
        cfg.input_delay = 0;
        let mut host = Session::new(sim.clone(), cfg).unwrap();
        if let Some(limit) = donor_limit {
            host.enable_rejoin(SnapshotCodec::new(), limit);
        }
        let mut leaver = Session::new(sim.clone(), SessionConfig::new(2, 1, KEY)).unwrap();
        for round in 1..=20u64 {
            net.advance_to(tickwise::Timestamp::from_nanos(round * 16_666_667));
            let _ = host.tick(&TickInput::default(), &mut net.port(0));
            let _ = leaver.tick(&TickInput::default(), &mut net.port(1));
        }
        leaver.leave(&mut net.port(1));
        let mut rj = Rejoiner::new(
            sim.clone(),
            SessionConfig::new(2, 1, KEY),
            SnapshotCodec::new(),
            42,
            own_limit,
        )
        .unwrap();
        let mut got = None;
        for round in 21..=200u64 {
            net.advance_to(tickwise::Timestamp::from_nanos(round * 16_666_667));
            let _ = host.tick(&TickInput::default(), &mut net.port(0));
            if let Err(e) = rj.tick(&mut net.port(1)) {
                got = Some(e);
                break;
            }
        }
        let got = got.expect("refused");
        match (&got, &want) {
            (
                RejoinError::TooLarge { bytes, limit },
                RejoinError::TooLarge {
                    limit: want_limit, ..
                },
            ) => {
                // A 300-enemy horde is several kilobytes.
                assert!(*bytes > 3_000, "{got}");
                assert_eq!(limit, want_limit);
                assert!(got.to_string().contains("over the limit"), "{got}");
            }
            _ => assert_eq!(got, want),
        }
        // The host goes on without the leaver: at once when it refused;
        // when the rejoiner gave up on its own (its limit), after the
        // rejoiner's silence reached the timeout (300 ticks), as a leave.
        let before = host.current_tick();
        for round in 300..=700u64 {
            net.advance_to(tickwise::Timestamp::from_nanos(round * 16_666_667));
            let _ = host.tick(&TickInput::default(), &mut net.port(0));
        }
        assert!(host.departed(1).is_some());
        assert_eq!(host.ended(), None);
        assert!(
            host.current_tick() > before + 50,
            "{before} {}",
            host.current_tick()
        );
    }
}
