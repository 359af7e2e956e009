//! Live island sessions recorded by `FixedLoop` verify from their replays,
//! including the time the loop dropped (the world's `droppedMs`).
//!
//! Expected values: the final digest is the live world's own (re-simulation
//! must reproduce it, which is the property under test); the dropped total
//! and the catch-up numbers are computed by hand in the comments.

use proptest::prelude::*;
use tickwise::{
    CatchUpPolicy, ClockConfig, FixedLoop, HostEventKind, Nanos, PlatformEvent, Replay,
    ReplayHeader, ReplayLimits, ReplayVerdict, Sim, Speed, TickInputs, Timestamp, verify,
};
use tickwise_sims::island::{IslandConfig, IslandWorld, scripted_inputs};

const LOOP: &[u8] = include_bytes!("../../../../config/island_loop.json");

type Island = FixedLoop<IslandWorld, TickInputs<i32>>;

fn config() -> IslandConfig {
    IslandConfig::from_json(LOOP).unwrap()
}

fn header() -> ReplayHeader {
    ReplayHeader {
        sim_id: "island".into(),
        sim_version: 1,
        config: LOOP.to_vec(),
        seed: 20_261_012,
        ticks: 0,
        checkpoint_every: 60,
        input_kind: 0,
        players: 1,
    }
}

fn capped() -> CatchUpPolicy {
    CatchUpPolicy::Capped {
        max_steps: 300,
        min_elapsed: Nanos::from_millis(32),
    }
}

fn island(clock: ClockConfig) -> Island {
    let mut lp = FixedLoop::new(
        IslandWorld::new(&config()),
        TickInputs::new(scripted_inputs(200_000)),
        clock,
        capped(),
    );
    lp.start_recording(header()).unwrap();
    assert!(lp.is_recording());
    lp
}

/// Writes the live replay, reads it back and re-simulates it from the config.
fn verify_live(lp: &Island) -> Replay<i32> {
    let bytes = lp.replay().unwrap().to_bytes();
    let replay = Replay::<i32>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    assert_eq!(replay.ticks(), lp.tick().get());
    let report = verify(IslandWorld::new(&config()), &replay);
    assert_eq!(
        report.verdict,
        ReplayVerdict::Match {
            digest: lp.sim().digest()
        }
    );
    replay
}

fn ms(n: u64) -> Nanos {
    Nanos::from_millis(n)
}

#[test]
fn a_live_session_with_cap_hits_clamps_pauses_and_capped_resumes_verifies() {
    // The island's clock (cap 8 steps of 16 ms) plus a 1 s frame clamp.
    let mut lp = island(config().clock_config().with_max_frame(ms(1_000)));
    for d in [3, 7, 13, 29, 48].repeat(8) {
        assert_eq!(lp.frame(ms(d)).thrown_away(), Nanos::ZERO);
    }
    // 800 ms of frames = 50 ticks exactly.
    assert_eq!(lp.tick().get(), 50);
    // A 100 000 ms frame: clamped to 1 000 ms (99 000 cut), 8 steps run,
    // the other 872 ms dropped by the cap: 99 872 ms the world never sees.
    let r = lp.frame(ms(100_000));
    assert_eq!((r.steps, r.clamped, r.dropped), (8, ms(99_000), ms(872)));
    // A 300 ms frame: 18 steps + 12 ms owed, 8 run, 172 ms dropped.
    let r = lp.frame(ms(300));
    assert_eq!((r.steps, r.dropped, r.capped), (8, ms(172), true));
    // Irregular frames, then a pause of 5 s: 312 steps owed, 300 caught up.
    for d in [5, 17, 33, 2, 61] {
        let _ = lp.frame(ms(d));
    }
    lp.pause(lp.host_time()).unwrap();
    let r = lp.resume(lp.host_time() + ms(5_000)).unwrap();
    assert_eq!((r.wanted_steps, r.catch_up_steps), (312, 300));
    // A hide for an hour through platform events: capped again at 300.
    let _ = lp.frame(ms(16));
    let _ = lp.platform_event(PlatformEvent::Hidden, lp.host_time() + ms(9));
    let r = lp
        .platform_event(PlatformEvent::Visible, lp.host_time() + ms(3_600_000))
        .unwrap();
    assert_eq!(r.catch_up_steps, 300);
    // A pause shorter than the jitter threshold: dropped, nothing runs.
    lp.pause(lp.host_time()).unwrap();
    let r = lp.resume(lp.host_time() + ms(20)).unwrap();
    assert_eq!((r.catch_up_steps, r.dropped), (0, ms(20)));
    // Mid-session, a replay verifies already (and recording goes on).
    let mid = verify_live(&lp);
    // Double speed: a 100 ms frame is 200 ms of sim time; with the 15 ms the
    // accumulator holds (6 + 9 from the gap before the hide), 215 ms = 13
    // steps + 7 ms, capped at 8: 215 - 128 = 87 ms dropped.
    lp.set_speed(Speed::new(2, 1).unwrap());
    let r = lp.frame(ms(100));
    assert_eq!((r.sim_dt, r.steps, r.dropped), (ms(200), 8, ms(87)));
    // Quarter speed for irregular frames, then a capped resume at quarter speed.
    lp.set_speed(Speed::new(1, 4).unwrap());
    for d in [3, 7, 13, 29, 48].repeat(4) {
        assert_eq!(lp.frame(ms(d)).thrown_away(), Nanos::ZERO);
    }
    lp.background(lp.host_time()).unwrap();
    let r = lp.resume(lp.host_time() + ms(40_000)).unwrap();
    // 40 s away at 1/4 = 10 s of sim time: 625 steps wanted, 300 run.
    assert_eq!(
        (r.sim_elapsed, r.wanted_steps, r.catch_up_steps),
        (ms(10_000), 625, 300)
    );
    lp.set_speed(Speed::NORMAL);
    // A backwards timestamp is a zero-length frame; a 100 000 ms frame again.
    let _ = lp.frame_at(Timestamp::from_nanos(1));
    assert_eq!(lp.backwards_frames(), 1);
    // Clamped to 1 000 ms, plus the 4 ms left from the quarter-speed frames
    // (100 ms of sim time = 6 steps + 4 ms): 1 004 - 128 = 876 ms dropped.
    let r = lp.frame(ms(100_000));
    assert_eq!((r.clamped, r.dropped), (ms(99_000), ms(876)));

    let replay = verify_live(&lp);
    assert_eq!(lp.sim().dropped_ms(), 99_872 + 172 + 87 + 99_876);
    // Every frame that threw time away is one host event, in tick order.
    let events = replay.host_events();
    assert_eq!(events.len(), 4);
    assert!(events.windows(2).all(|w| w[0].tick <= w[1].tick));
    let total: u64 = events
        .iter()
        .map(|e| match e.kind {
            HostEventKind::TimeDropped(d) => d.as_nanos(),
            _ => 0,
        })
        .sum();
    assert_eq!(total / 1_000_000, lp.sim().dropped_ms());
    assert!(mid.ticks() < replay.ticks());
    assert!(mid.host_events().len() < events.len());

    // Without its host events the same replay no longer verifies: the
    // first checkpoint after the first drop names droppedMs.
    let mut parts = replay.into_parts();
    let first_drop = parts.host_events[0].tick;
    parts.host_events.clear();
    let stripped = Replay::from_parts(parts).unwrap();
    let ReplayVerdict::Diverged(d) = verify(IslandWorld::new(&config()), &stripped).verdict else {
        panic!("a replay without its host events must not verify");
    };
    assert_eq!(d.fields, ["droppedMs"]);
    assert_eq!(d.tick, first_drop.div_ceil(60) * 60);
}

#[test]
fn the_islands_own_clock_without_a_clamp_verifies_too() {
    // config/island_loop.json as it is: cap 8, no clamp.
    let mut lp = island(config().clock_config());
    for d in [3, 7, 13, 29, 48].repeat(4) {
        let _ = lp.frame(ms(d));
    }
    let r = lp.frame(ms(100_000));
    // The island rules' numbers: 8 steps, the rest (100 000 - 8 x 16 ms) dropped.
    assert_eq!((r.steps, r.dropped), (8, ms(99_872)));
    lp.background(lp.host_time()).unwrap();
    let _ = lp.resume(lp.host_time() + ms(5_000)).unwrap();
    for d in [3, 7, 13, 29, 48].repeat(4) {
        let _ = lp.frame(ms(d));
    }
    let _ = verify_live(&lp);
    assert_eq!(lp.sim().dropped_ms(), 99_872);
}

#[test]
fn a_tampered_time_dropped_event_is_detected() {
    let mut lp = island(config().clock_config());
    for _ in 0..30 {
        let _ = lp.frame(ms(16));
    }
    let _ = lp.frame(ms(100_000)); // tick 30 -> 38, 99 872 ms dropped
    for _ in 0..30 {
        let _ = lp.frame(ms(16));
    }
    let honest = verify_live(&lp);
    let mut parts = honest.into_parts();
    assert_eq!(parts.host_events[0].tick, 38);
    // One more millisecond dropped than the loop really dropped.
    parts.host_events[0].kind = HostEventKind::TimeDropped(ms(99_873));
    let forged = Replay::from_parts(parts).unwrap();
    // Through the file format, as a server would receive it.
    let forged = Replay::<i32>::from_bytes(&forged.to_bytes(), &ReplayLimits::DEFAULT).unwrap();
    let ReplayVerdict::Diverged(d) = verify(IslandWorld::new(&config()), &forged).verdict else {
        panic!("a tampered event must not verify");
    };
    // The event is after tick 38: the checkpoint at tick 60 is the first to see it.
    assert_eq!((d.checkpoint, d.tick, d.last_good_tick), (Some(0), 60, 0));
    assert_eq!(d.fields, ["droppedMs"]);
}

#[test]
fn recording_must_start_on_a_fresh_loop() {
    let mut lp = FixedLoop::new(
        IslandWorld::new(&config()),
        TickInputs::new(scripted_inputs(100)),
        config().clock_config(),
        capped(),
    );
    assert_eq!(
        lp.replay().unwrap_err(),
        tickwise::ReplayError::NotRecording
    );
    // Time dropped before any tick ran: the world already differs from the config's.
    let _ = lp.frame(ms(0));
    let mut clamped = FixedLoop::new(
        IslandWorld::new(&config()),
        TickInputs::new(Vec::new()),
        config().clock_config().with_max_frame(ms(5)),
        capped(),
    );
    let _ = clamped.frame(ms(10));
    assert_eq!(clamped.tick().get(), 0);
    assert_eq!(
        clamped.start_recording(header()).unwrap_err(),
        tickwise::ReplayError::RecordingStartedLate {
            tick: 0,
            host_events: 1
        }
    );
    let _ = lp.frame(ms(40));
    let e = lp.start_recording(header()).unwrap_err();
    assert_eq!(
        e,
        tickwise::ReplayError::RecordingStartedLate {
            tick: 2,
            host_events: 0
        }
    );
    assert!(e.to_string().contains("tick 2"), "{e}");
    assert!(!lp.is_recording());
}

/// One thing that happens to a live session.
#[derive(Clone, Debug)]
enum Op {
    Frame(u64),
    Huge,
    Pause,
    Hide,
    Resume(u64),
    Speed(u32, u32),
    Backwards,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u64..400).prop_map(Op::Frame),
        1 => Just(Op::Huge),
        1 => Just(Op::Pause),
        1 => Just(Op::Hide),
        2 => (0u64..20_000).prop_map(Op::Resume),
        1 => (1u32..=8, 1u32..=8).prop_map(|(p, q)| Op::Speed(p, q)),
        1 => Just(Op::Backwards),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever the frame schedule, pauses, hides, resumes and speeds, the
    /// live recording re-simulates to the live world's final digest.
    #[test]
    fn live_recordings_of_random_sessions_verify(
        ops in proptest::collection::vec(op(), 1..80),
        clamp in proptest::option::of(1u64..2_000),
        every in 1u64..100,
    ) {
        let mut clock = config().clock_config();
        if let Some(c) = clamp {
            clock = clock.with_max_frame(ms(c));
        }
        let mut lp = FixedLoop::new(
            IslandWorld::new(&config()),
            TickInputs::new(scripted_inputs(100_000)),
            clock,
            capped(),
        );
        lp.start_recording(ReplayHeader { checkpoint_every: every, ..header() }).unwrap();
        for op in ops {
            match op {
                Op::Frame(d) => { let _ = lp.frame(ms(d)); }
                Op::Huge => { let _ = lp.frame(ms(100_000)); }
                Op::Pause => { let _ = lp.pause(lp.host_time()); }
                Op::Hide => { let _ = lp.platform_event(PlatformEvent::Hidden, lp.host_time()); }
                Op::Resume(d) => { let _ = lp.resume(lp.host_time() + ms(d)); }
                Op::Speed(p, q) => lp.set_speed(Speed::new(p, q).unwrap()),
                Op::Backwards => {
                    let back = lp.host_time().saturating_sub(ms(5));
                    let _ = lp.frame_at(back);
                }
            }
        }
        let replay = Replay::<i32>::from_bytes(&lp.replay().unwrap().to_bytes(), &ReplayLimits::DEFAULT).unwrap();
        prop_assert_eq!(replay.ticks(), lp.tick().get());
        prop_assert_eq!(
            verify(IslandWorld::new(&config()), &replay).verdict,
            ReplayVerdict::Match { digest: lp.sim().digest() }
        );
    }
}

/// The replays checked in for the fuzzer's corpus are current: format
/// version 4, and each re-simulates to its stored final state.
#[test]
fn checked_in_replays_are_version_4_and_verify() {
    use tickwise_sims::horde::{HordeConfig, HordeWorld};
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/seeds/replay_reader"
    );
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "twr") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes[8..10], [4, 0], "{}", path.display());
        let header = tickwise::read_header(&bytes, &ReplayLimits::DEFAULT).unwrap();
        let report = match header.sim_id.as_str() {
            "island" => {
                let replay = Replay::<i32>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
                let cfg = IslandConfig::from_json(&header.config).unwrap();
                verify(IslandWorld::new(&cfg), &replay)
            }
            "horde" => {
                let replay =
                    Replay::<tickwise::TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT)
                        .unwrap();
                let cfg = HordeConfig::from_json(&header.config).unwrap();
                verify(HordeWorld::new(&cfg), &replay)
            }
            other => panic!("unexpected sim {other}"),
        };
        assert!(
            report.is_match(),
            "{}: {:?}",
            path.display(),
            report.verdict
        );
        seen += 1;
    }
    assert_eq!(seen, 5);
}

/// Replay-vs-replay comparison applies host events: two recordings of the
/// same live session agree; editing one's dropped time is reported at the
/// event's tick, with the field it changed.
#[test]
fn comparing_replays_applies_their_host_events() {
    let mut lp = island(config().clock_config());
    for d in [3, 7, 13, 29, 48].repeat(3) {
        let _ = lp.frame(ms(d));
    }
    let _ = lp.frame(ms(100_000)); // tick 18 -> 26: a host event at tick 26
    for d in [3, 7, 13, 29, 48].repeat(3) {
        let _ = lp.frame(ms(d));
    }
    let a = lp.replay().unwrap();
    let b = lp.replay().unwrap();
    let fresh = || IslandWorld::new(&config());
    let same = tickwise::compare_replays(&mut fresh(), &mut fresh(), &a, &b);
    assert_eq!((same.divergence, same.first_event_difference), (None, None));
    assert_eq!(same.ticks, lp.tick().get());
    let mut parts = b.into_parts();
    assert_eq!(parts.host_events[0].tick, 26);
    parts.host_events[0].kind = HostEventKind::TimeDropped(ms(1));
    let edited = Replay::from_parts(parts).unwrap();
    let c = tickwise::compare_replays(&mut fresh(), &mut fresh(), &a, &edited);
    assert_eq!(
        (c.first_event_difference, c.first_input_difference),
        (Some(26), None)
    );
    let d = c.divergence.clone().unwrap();
    assert_eq!(
        (d.tick, d.fields.as_slice()),
        (26, ["droppedMs"].as_slice())
    );
    assert!(
        c.to_string()
            .contains("host events first differ at tick 26"),
        "{c}"
    );
}
