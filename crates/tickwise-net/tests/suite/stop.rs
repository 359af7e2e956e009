//! Ending an open-ended session mid-run (`Session::set_stop_at`), the way
//! a game ends a match.

use crate::common;

use common::{KEY, island, island_input, island_replay_verifies};
use tickwise::{Nanos, Pcg32, Timestamp};
use tickwise_net::{NetworkConfig, Session, SessionConfig, SessionError, SimNetwork};

#[test]
fn a_match_without_a_stop_tick_ends_where_both_peers_are_told() {
    let (sim, header, _) = island(2);
    let mut net = SimNetwork::new(NetworkConfig {
        latency: Nanos::from_millis(60),
        loss_ppm: 50_000,
        seed: 9,
        ..NetworkConfig::PERFECT
    });
    let mut peers: Vec<Session<_>> = (0..2u8)
        .map(|p| {
            let mut c = SessionConfig::new(2, p, KEY);
            c.input_delay = 0;
            let mut s = Session::new(sim.clone(), c).unwrap();
            let mut h = header.clone();
            h.checkpoint_every = 30;
            s.start_recording(h).unwrap();
            s
        })
        .collect();
    let mut rngs = [Pcg32::new(5, 0), Pcg32::new(5, 1)];
    let step = 16_666_667u64;
    let mut round = 0u64;
    let mut run = |peers: &mut Vec<Session<_>>, net: &mut SimNetwork, n: u64| {
        for _ in 0..n {
            round += 1;
            net.advance_to(Timestamp::from_nanos(step * round));
            for (i, s) in peers.iter_mut().enumerate() {
                let input = island_input(&mut rngs[i]);
                let _ = s.tick(&input, &mut net.port(u8::try_from(i).unwrap()));
            }
        }
    };
    run(&mut peers, &mut net, 400);
    assert!(peers.iter().all(|s| !s.is_finished()), "no stop tick yet");
    let current: Vec<u64> = peers.iter().map(Session::current_tick).collect();
    assert!(current.iter().all(|&c| c > 300), "{current:?}");
    let stop = current.iter().copied().max().unwrap() + 5;
    // A stop tick in this peer's past is refused and changes nothing.
    let behind = current[0] - 1;
    assert_eq!(
        peers[0].set_stop_at(behind),
        Err(SessionError::StopBehind {
            stop: behind,
            current: current[0]
        })
    );
    for s in &mut peers {
        s.set_stop_at(stop).unwrap();
    }
    run(&mut peers, &mut net, 300);
    for s in &peers {
        assert!(s.is_finished());
        assert_eq!(s.current_tick(), stop, "simulated exactly to the stop");
        assert_eq!(s.confirmed_tick(), stop);
        assert_eq!(s.stats().desyncs, 0);
        assert!(s.stats().rollbacks > 0, "60 ms each way, no delay");
    }
    let sums: Vec<u64> = peers
        .iter()
        .map(|s| s.confirmed_checksum().unwrap())
        .collect();
    assert_eq!(sums[0], sums[1]);
    // The kernel's verifier re-simulates the confirmed inputs to the same state.
    let (ok, ticks, final_sum) = island_replay_verifies(&peers[1].replay().unwrap().to_bytes());
    assert!(ok);
    assert_eq!((ticks, final_sum), (stop, sums[0]));
}
