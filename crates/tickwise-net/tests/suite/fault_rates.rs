//! The network simulator's faults, measured from the receiving end.
//!
//! The chaos tests' "0 desyncs under 10 % loss, duplication and reordering"
//! is only worth what the faults really were. Here one slot sends numbered
//! datagrams (1 ms apart, 20 ms latency, no jitter) to another, and what
//! arrives is counted without asking the network: a number never seen is a
//! loss, a number seen twice a duplicate, a datagram arriving after one sent
//! later than it was overtaken (reordered). Each count must be within five
//! binomial standard deviations of what the configured rate predicts,
//! `|observed - n·p| <= 5·sqrt(n·p·(1-p))` (a false alarm about once in
//! 1.7 million runs of a fair generator), and the network's own counters
//! must agree with what was observed.

use crate::common;

use common::within_five_sigma;
use tickwise::{Nanos, Timestamp};
use tickwise_net::{NetworkConfig, RECV_BUFFER, SimNetwork, Transport as _};

const MS: u64 = 1_000_000;

/// What the receiving slot saw.
#[derive(Debug, Default)]
struct Observed {
    sent: u64,
    /// Distinct sequence numbers received.
    distinct: u64,
    /// Datagrams received beyond the first copy of their number.
    duplicates: u64,
    /// Datagrams received after one with a higher sequence number.
    overtaken: u64,
}

/// Sends `n` numbered datagrams from slot 0 to slot 1, one a millisecond,
/// and receives everything.
fn measure(cfg: NetworkConfig, n: u64) -> (Observed, SimNetwork) {
    let mut net = SimNetwork::new(cfg);
    let mut seen = vec![0u8; usize::try_from(n).unwrap()];
    let mut obs = Observed {
        sent: n,
        ..Observed::default()
    };
    let mut highest: Option<u64> = None;
    let mut buf = [0u8; RECV_BUFFER];
    let mut receive = |net: &mut SimNetwork, obs: &mut Observed| {
        while let Some(d) = net.port(1).recv(&mut buf) {
            assert_eq!((d.from, d.len), (Some(0), 8));
            let k = u64::from_le_bytes(buf[..8].try_into().unwrap());
            let slot = &mut seen[usize::try_from(k).unwrap()];
            if *slot == 0 {
                obs.distinct += 1;
            } else {
                obs.duplicates += 1;
            }
            *slot = slot.saturating_add(1);
            if highest.is_some_and(|h| k < h) {
                obs.overtaken += 1;
            }
            highest = Some(highest.map_or(k, |h| h.max(k)));
        }
    };
    for k in 0..n {
        net.advance_to(Timestamp::from_nanos(k * MS));
        receive(&mut net, &mut obs);
        net.port(0).send(1, &k.to_le_bytes());
    }
    // Everything still in flight arrives within a few hundred ms.
    net.advance_to(Timestamp::from_nanos((n + 1_000) * MS));
    receive(&mut net, &mut obs);
    assert_eq!(net.pending(), 0);
    (obs, net)
}

/// Asserts [`within_five_sigma`], and prints the measurement.
fn assert_rate(what: &str, observed: u64, n: u64, ppm: u32) {
    let (ok, expected, margin) = within_five_sigma(observed, n, ppm);
    let line =
        format!("{what}: {observed} of {n}, expected {expected} ± {margin} (5 sigma; {ppm} ppm)");
    assert!(ok, "{line}");
    eprintln!("{line}");
}

fn faults(loss_ppm: u32, dup_ppm: u32, reorder_ppm: u32, seed: u64) -> NetworkConfig {
    NetworkConfig {
        latency: Nanos::from_millis(20),
        jitter: Nanos::ZERO,
        loss_ppm,
        dup_ppm,
        reorder_ppm,
        bandwidth: None,
        seed,
    }
}

/// Measures one configuration and checks every rate.
fn check(cfg: NetworkConfig, n: u64) {
    let (o, net) = measure(cfg, n);
    let s = net.stats(0);
    // The network's own counters are what the receiver saw.
    assert_eq!(s.sent, o.sent);
    assert_eq!(s.lost, o.sent - o.distinct, "{o:?} {s:?}");
    assert_eq!(s.duplicated, o.duplicates, "{o:?} {s:?}");
    // Each datagram's loss is drawn once per send; duplication once per
    // datagram that was not lost; the hold-back once per copy delivered.
    assert_rate("loss", o.sent - o.distinct, o.sent, cfg.loss_ppm);
    assert_rate("duplication", o.duplicates, o.distinct, cfg.dup_ppm);
    let copies = o.distinct + o.duplicates;
    assert_rate("reordering", o.overtaken, copies, cfg.reorder_ppm);
    // A held-back copy is overtaken unless every copy sent in the next 20 to
    // 60 ms was held back too (or it is among the last ones sent): the
    // network counts a few more hold-backs than the receiver can see.
    assert!(o.overtaken <= s.reordered, "{o:?} {s:?}");
    assert!(
        s.reordered - o.overtaken <= 1 + s.reordered / 100,
        "{o:?} {s:?}"
    );
}

#[test]
fn the_chaos_tests_faults_are_observed_at_their_rates() {
    // The chaos tests' rates (10 % loss, 5 % duplication, 5 % reordering).
    for seed in [1, 2, 3] {
        check(faults(100_000, 50_000, 50_000, seed), 100_000);
    }
}

#[test]
fn other_rates_are_observed_too() {
    check(faults(10_000, 200_000, 300_000, 7), 100_000);
    check(faults(500_000, 0, 0, 8), 50_000);
    check(faults(0, 1_000_000, 0, 9), 20_000);
}

#[test]
fn a_perfect_network_delivers_everything_once_in_order() {
    let (o, net) = measure(NetworkConfig::PERFECT, 10_000);
    assert_eq!((o.distinct, o.duplicates, o.overtaken), (10_000, 0, 0));
    assert_eq!(net.stats(0).lost + net.stats(0).reordered, 0);
    // 10 000 datagrams of 8 bytes each, counted once each as sent.
    assert_eq!((net.stats(0).sent, net.stats(0).bytes), (10_000, 80_000));
}

#[test]
fn the_tolerance_catches_a_rate_that_is_off() {
    // 10 % loss measured against a claimed 9 % or 11 %: five sigma at
    // n = 100 000 is about 450 datagrams (0.45 % absolute), so both are
    // refused and the true rate passes.
    let (o, _) = measure(faults(100_000, 0, 0, 4), 100_000);
    let lost = o.sent - o.distinct;
    assert!(within_five_sigma(lost, o.sent, 100_000).0, "{lost}");
    assert!(
        !within_five_sigma(lost, o.sent, 90_000).0,
        "{lost} passes as 9 %"
    );
    assert!(
        !within_five_sigma(lost, o.sent, 110_000).0,
        "{lost} passes as 11 %"
    );
    // By hand: n = 10 000, p = 1/2: sigma = 50, so 5 sigma is 250.
    assert_eq!(
        within_five_sigma(5_250, 10_000, 500_000),
        (true, 5_000, 250)
    );
    assert!(!within_five_sigma(5_251, 10_000, 500_000).0);
    assert!(within_five_sigma(4_750, 10_000, 500_000).0);
    assert!(!within_five_sigma(4_749, 10_000, 500_000).0);
}
