//! Issue 17's chaos test for the duel (two players, one paddle each):
//! 300 ms round trip, 20 ms jitter, 10 % loss, 5 % duplication and
//! reordering; player 1 leaves at tick 2000 and a new process for its slot
//! rejoins at match tick 3500 from the donor's chunked snapshot. 3 seeds:
//! 0 desyncs, equal checksums, the replay verifies, and each paddle's
//! inputs are its player's, the absent input while player 1 was away.

use tickwise::{Nanos, Pcg32, Replay, ReplayHeader, ReplayLimits, TickInput, verify};
use tickwise_example_duel::{DEFAULT_CONFIG, Duel, DuelConfig, ID, VERSION, random_input};
use tickwise_net::{
    NetworkConfig, PlayerInput, RunOptions, SessionKey, SnapshotCodec, run_local_rejoin,
};

/// Player `p`'s input at tick `t`, a pure function of `(seed, p, t)`.
fn input_at(seed: u64, p: u8, t: u64) -> TickInput {
    random_input(&mut Pcg32::new(
        seed ^ t.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        u64::from(p),
    ))
}

#[test]
fn duel_leave_at_2000_rejoin_at_3500_chaos_three_seeds() {
    let cfg = DuelConfig::parse(DEFAULT_CONFIG).unwrap();
    let header = ReplayHeader {
        sim_id: ID.into(),
        sim_version: VERSION,
        config: DEFAULT_CONFIG.to_vec(),
        seed: 0,
        ticks: 0,
        checkpoint_every: 60,
        input_kind: 0,
        players: 2,
    };
    for seed in [1u64, 2, 3] {
        let mut opts = RunOptions::new(2, 10_000, SessionKey::from_bytes(*b"duel rejoin test"));
        opts.input_delay = 0;
        opts.leave_at[1] = Some(2_000);
        opts.rejoin_at[1] = Some(3_500);
        let net = NetworkConfig {
            latency: Nanos::from_millis(150),
            jitter: Nanos::from_millis(20),
            loss_ppm: 100_000,
            dup_ppm: 50_000,
            reorder_ppm: 50_000,
            bandwidth: None,
            seed,
        };
        let inputs: Vec<PlayerInput<'static, TickInput>> = (0..2u8)
            .map(|p| Box::new(move |t| input_at(seed, p, t)) as PlayerInput<'static, TickInput>)
            .collect();
        let run = run_local_rejoin(
            &Duel::new(&cfg),
            &header,
            inputs,
            &opts,
            net,
            0,
            Nanos::from_nanos(16_000_000),
            &mut || 0,
            &SnapshotCodec::new(),
        )
        .unwrap();
        assert!(run.finished, "seed {seed}: {:?}", run.peers);
        assert!(
            run.desync.is_none() && run.checksums_agree,
            "{:?}",
            run.peers
        );
        let (who, from, join) = run.peers[0].rejoined[0];
        assert_eq!(who, 1);
        assert!(from <= 2_000 && from + 64 >= 2_000, "{from}");
        assert!((3_500..=3_600).contains(&join), "{join}");
        for p in &run.peers {
            assert_eq!(p.confirmed_tick, 10_000);
            assert_eq!(p.stats.desyncs, 0);
        }
        let replay = Replay::<TickInput>::from_bytes(&run.replay, &ReplayLimits::DEFAULT).unwrap();
        assert!(verify(Duel::new(&cfg), &replay).is_match(), "seed {seed}");
        assert_eq!(
            replay.final_state().checksum,
            run.peers[1].confirmed_checksum
        );
        for p in 0..2u8 {
            for (t, input) in replay.inputs(usize::from(p)).enumerate() {
                let t = t as u64;
                let want = if p == 1 && (from..join).contains(&t) {
                    TickInput::default()
                } else {
                    input_at(seed, p, t)
                };
                assert_eq!(*input, want, "player {p} tick {t}");
            }
        }
    }
}
