//! Chaos: 300 ms round trip, no input delay, 10 % loss, duplication and
//! reordering, over several seeds. Every peer must confirm every tick with
//! the same checksum, no desync may be reported, and the replay of the
//! confirmed inputs must verify with the kernel's verifier.

use crate::common;

use common::{
    KEY, horde, horde_input, island, island_input, island_replay_verifies, within_five_sigma,
};
use tickwise::{Nanos, Replay, ReplayLimits, TickInput};
use tickwise_net::{NetworkConfig, PeerReport, RunOptions, run_local};

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

/// Every fault the network was configured with happened to `p`'s
/// datagrams (loss, duplication and reordering all counted), and the loss
/// at its configured rate within 5 binomial standard deviations
/// (`fault_rates.rs` measures every rate from the receiving end).
fn assert_faults_happened(p: &PeerReport, net: &NetworkConfig) {
    assert!(
        p.lost > 0 && p.duplicated > 0 && p.reordered > 0,
        "not every fault happened: {p:?}"
    );
    let (ok, expected, margin) = within_five_sigma(p.lost, p.stats.sent, net.loss_ppm);
    assert!(
        ok,
        "{} of {} datagrams lost, expected {expected} ± {margin}",
        p.lost, p.stats.sent
    );
}

fn island_chaos(players: u8, seed: u64) {
    let (sim, header, _) = island(players);
    let mut opts = RunOptions::new(players, 10_000, KEY);
    opts.input_delay = 0;
    let input_seed = seed;
    let run = run_local(
        &sim,
        &header,
        common::inputs(opts.players, input_seed, island_input),
        &opts,
        chaos(seed),
        0,
        Nanos::from_nanos(16_666_667),
        &mut || 0,
    )
    .unwrap();
    assert!(run.finished, "seed {seed}: {:?}", run.peers);
    assert!(run.desync.is_none(), "seed {seed}: {:?}", run.desync);
    assert!(run.checksums_agree, "seed {seed}: {:?}", run.peers);
    for p in &run.peers {
        assert_eq!(p.confirmed_tick, 10_000);
        assert_eq!(p.stats.desyncs, 0);
        // The faults really happened and were survived.
        assert!(p.stats.rollbacks > 100, "{p:?}");
        assert!(p.stats.checks_compared > 5_000, "{p:?}");
        assert!(p.stats.drops.stale > 0, "{p:?}");
        assert_faults_happened(p, &chaos(seed));
        assert!(p.stats.max_rollback <= 8, "{p:?}");
    }
    let (ok, ticks, final_sum) = island_replay_verifies(&run.replay);
    assert!(
        ok,
        "seed {seed}: the confirmed-input replay does not verify"
    );
    assert_eq!(ticks, 10_000);
    assert_eq!(final_sum, run.peers[0].confirmed_checksum);
}

#[test]
fn island_two_players_chaos_several_seeds() {
    for seed in [1, 2, 3] {
        island_chaos(2, seed);
    }
}

#[test]
fn island_four_players_chaos_several_seeds() {
    for seed in [11, 12, 13] {
        island_chaos(4, seed);
    }
}

#[test]
fn horde_300_chaos() {
    let (sim, header) = horde(300, 2);
    for seed in [5, 6] {
        let mut opts = RunOptions::new(2, 600, KEY);
        opts.input_delay = 0;
        let input_seed = seed;
        let run = run_local(
            &sim,
            &header,
            common::inputs(opts.players, input_seed, horde_input),
            &opts,
            chaos(seed),
            0,
            Nanos::from_nanos(16_666_667),
            &mut || 0,
        )
        .unwrap();
        assert!(run.finished && run.checksums_agree && run.desync.is_none());
        assert!(run.peers.iter().all(|p| p.stats.rollbacks > 10));
        for p in &run.peers {
            assert_faults_happened(p, &chaos(seed));
        }
        let replay = Replay::<TickInput>::from_bytes(&run.replay, &ReplayLimits::DEFAULT).unwrap();
        let (fresh, _) = horde(300, 2);
        assert!(tickwise::verify(fresh, &replay).is_match());
        assert_eq!(
            replay.final_state().checksum,
            run.peers[1].confirmed_checksum
        );
    }
}

#[test]
fn lockstep_never_rolls_back_and_agrees() {
    let (sim, header, _) = island(3);
    let mut opts = RunOptions::new(3, 1_000, KEY);
    opts.window = 0;
    let run = run_local(
        &sim,
        &header,
        common::inputs(opts.players, 1, island_input),
        &opts,
        NetworkConfig {
            latency: Nanos::from_millis(30),
            ..chaos(9)
        },
        0,
        Nanos::from_nanos(16_666_667),
        &mut || 0,
    )
    .unwrap();
    assert!(
        run.finished && run.checksums_agree && run.desync.is_none(),
        "{:?}",
        run.peers
    );
    for p in &run.peers {
        assert_eq!(p.stats.rollbacks, 0);
        assert_eq!(p.stats.mispredictions, 0);
        assert!(p.stats.stalls > 0, "lockstep waits for every input: {p:?}");
        assert_faults_happened(p, &chaos(9));
    }
    assert!(island_replay_verifies(&run.replay).0);
}

#[test]
fn spectators_join_late_and_end_on_the_same_state() {
    let (sim, header, _) = island(2);
    let opts = RunOptions::new(2, 2_000, KEY);
    let net = NetworkConfig {
        latency: Nanos::from_millis(40),
        loss_ppm: 50_000,
        seed: 4,
        ..NetworkConfig::PERFECT
    };
    let run = run_local(
        &sim,
        &header,
        common::inputs(opts.players, 1, island_input),
        &opts,
        net,
        2,
        Nanos::from_nanos(16_666_667),
        &mut || 0,
    )
    .unwrap();
    assert!(run.finished && run.checksums_agree);
    assert_eq!(run.spectators.len(), 2);
    for s in &run.spectators {
        // Joined from a checkpoint near the middle, not from tick 0.
        assert!(s.joined_at >= 900 && s.joined_at <= 1_000, "{s:?}");
        assert_eq!(s.tick, 2_000);
        assert_eq!(s.checksum, run.peers[0].confirmed_checksum);
        assert!(s.error.is_none());
    }
}
