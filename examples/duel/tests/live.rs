//! The duel played live: irregular frames, timestamped keys, a pause with
//! capped catch-up, interpolated drawing, and the same ticks offline.
//!
//! The default config steps every 16 ms, so tick `k` consumes the keys
//! stamped in `[16k, 16k + 16)` ms until time is dropped or spent away.

use tickwise::{
    CatchUpPolicy, Nanos, Recorder, Replay, ReplayHeader, ReplayLimits, Sim, TickInput,
    compare_lockstep, verify,
};
use tickwise_example_duel::session::{
    Action, DEMO_KEYS, DEMO_POLICY, IRREGULAR_MS, LiveSession, SessionError, deliver, demo_actions,
};
use tickwise_example_duel::{DEFAULT_CONFIG, Duel, DuelConfig, ID, Key, VERSION};

fn config() -> DuelConfig {
    DuelConfig::parse(DEFAULT_CONFIG).unwrap()
}

fn demo() -> LiveSession {
    let mut s = LiveSession::new(&config(), DEMO_POLICY);
    s.run(demo_actions()).unwrap();
    s
}

/// The inputs [`DEMO_KEYS`] must give, tick by tick, worked out from the
/// 16 ms windows: up down at 5 ms (tick 0) and up at 90 ms (tick 5); the
/// smash tap at 37-41 ms inside tick 2; right down at 120 ms (tick 7) and up
/// at 300 ms (tick 18).
fn expected_inputs(ticks: usize) -> Vec<TickInput> {
    let mut v = vec![TickInput::default(); ticks];
    let (up, smash, down) = (
        Key::LeftUp.button(),
        Key::LeftSmash.button(),
        Key::RightDown.button(),
    );
    v[0].pressed = v[0].pressed.with(up);
    for t in &mut v[0..5] {
        t.held = t.held.with(up);
    }
    v[2].pressed = v[2].pressed.with(smash);
    v[2].released = v[2].released.with(smash);
    v[5].released = v[5].released.with(up);
    v[7].pressed = v[7].pressed.with(down);
    for t in &mut v[7..18] {
        t.held = t.held.with(down);
    }
    v[18].released = v[18].released.with(down);
    v
}

#[test]
fn the_demo_session_worked_out_by_hand() {
    let s = demo();
    // 400 ms = 25 ticks; paused 1000 ms = 62 ticks (992 ms) owed, capped at
    // 30, and at the cap everything past 30 ticks is dropped: 1000 - 480 =
    // 520 ms, nothing carried; then 400 ms = 25 ticks; the 8 ms frame runs none.
    let r = s.resumes();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].elapsed, r[0].wanted_steps, r[0].catch_up_steps),
        (Nanos::from_millis(1000), 62, 30)
    );
    assert_eq!(
        (r[0].carried, r[0].dropped),
        (Nanos::ZERO, Nanos::from_millis(520))
    );
    assert_eq!(
        (s.sim().tick(), s.inputs().len(), s.thrown_away()),
        (80, 80, Nanos::ZERO)
    );
    // Every tick's input as the sim saw it: the keys, then nothing.
    assert_eq!(s.inputs(), expected_inputs(80).as_slice());
    // Left: 5 ticks up at 6 -> 150, charged by the tap. Right: 11 ticks down -> 246.
    // The serve comes at step 30 (right, level: see rules.rs), the ball moves
    // from step 31: 50 moves of 5 by step 80 -> x = 570.
    let d = s.sim();
    assert_eq!(
        (d.paddles(), d.charged(), d.score()),
        ([150, 246], [true, false], [0, 0])
    );
    assert_eq!((d.ball(), d.velocity()), ([570, 180], [5, 0]));
    // Drawn half-way (8 of 16 ms) from tick 79 (x = 565) to tick 80:
    // 565 + 5 * 32768 / 65536 = 567.
    assert_eq!(s.drawn().ball, [567, 180]);
    assert_eq!(s.drawn().paddles, [150, 246]);
}

#[test]
fn after_a_resume_the_presenter_draws_the_caught_up_state() {
    let mut s = LiveSession::new(&config(), DEMO_POLICY);
    let actions = demo_actions();
    let resume = actions.iter().position(|a| *a == Action::Resume).unwrap();
    s.run(actions[..=resume].iter().copied()).unwrap();
    // Tick 25 + 30 caught up = 55; the ball moved from step 31: 25 moves,
    // x = 320 + 125 = 445. A stale presenter would still draw x = 320.
    assert_eq!(s.sim().tick(), 55);
    assert_eq!(s.drawn().ball, [445, 180]);
    // A 3 ms frame runs no tick: still drawn at tick 55.
    s.apply(Action::Frame(Nanos::from_millis(3))).unwrap();
    assert_eq!(s.drawn().ball, [445, 180]);
}

#[test]
fn same_keys_under_any_frame_schedule_give_the_same_ticks() {
    // Five schedules of 800 ms = 50 ticks, none hitting the step cap. In the
    // 1 ms schedule the tap's two edges arrive in different frames, and both
    // still land in tick 2.
    let schedules: [Vec<u64>; 5] = [
        IRREGULAR_MS.repeat(8),
        vec![16; 50],
        vec![1; 800],
        vec![50; 16],
        [33, 17].repeat(16),
    ];
    let mut offline = Duel::new(&config());
    for input in expected_inputs(50) {
        offline.step(&input);
    }
    for frames in &schedules {
        assert_eq!(frames.iter().sum::<u64>(), 800);
        let mut s = LiveSession::new(&config(), CatchUpPolicy::Full);
        s.run(deliver(&DEMO_KEYS, frames, 0)).unwrap();
        assert_eq!(s.sim().tick(), 50, "{frames:?}");
        assert_eq!(s.inputs(), expected_inputs(50).as_slice(), "{frames:?}");
        assert_eq!(s.sim().checksum(), offline.checksum(), "{frames:?}");
    }
}

#[test]
fn the_live_ticks_record_and_verify_offline() {
    let s = demo();
    let header = ReplayHeader {
        sim_id: ID.into(),
        sim_version: VERSION,
        config: DEFAULT_CONFIG.to_vec(),
        seed: config().seed(),
        ticks: 0,
        checkpoint_every: 10,
        input_kind: 0,
    };
    let mut rec = Recorder::new(Duel::new(&config()), header).unwrap();
    for input in s.inputs() {
        rec.step(*input);
    }
    let (sim, replay) = rec.finish().unwrap();
    assert_eq!(sim.digest(), s.sim().digest());
    let bytes = replay.to_bytes();
    let read = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    assert_eq!(read.final_digest(), s.sim().digest());
    let report = verify(Duel::new(&config()), &read);
    assert!(report.is_match(), "{report:?}");
    assert_eq!(report.ticks_run, 80);
}

#[test]
fn a_rule_change_shows_up_in_the_paddles_at_tick_1() {
    // Same live inputs, paddle speed 7 instead of 6: tick 0 holds up, so
    // after one step the left paddle is at 173 instead of 174.
    let s = demo();
    let text = std::str::from_utf8(DEFAULT_CONFIG)
        .unwrap()
        .replace("\"paddleSpeed\": 6", "\"paddleSpeed\": 7");
    let faster = DuelConfig::parse(text.as_bytes()).unwrap();
    let (mut a, mut b) = (Duel::new(&config()), Duel::new(&faster));
    let inputs = s.inputs().to_vec();
    let c = compare_lockstep(&mut a, &mut b, inputs.clone(), inputs, 80);
    let d = c.divergence.expect("the paddles diverge");
    assert_eq!(
        (d.tick, d.fields, c.first_input_difference),
        (1, vec!["paddles"], None)
    );
    assert_eq!((a.paddles()[0], b.paddles()[0]), (174, 173));
}

#[test]
fn a_long_frame_hits_the_step_cap_and_says_so() {
    // 200 ms owes 12.5 ticks; the cap runs 8 and drops the rest of the
    // accumulator: 200 - 8 * 16 = 72 ms.
    let mut s = LiveSession::new(&config(), DEMO_POLICY);
    s.apply(Action::Frame(Nanos::from_millis(200))).unwrap();
    assert_eq!(
        (s.sim().tick(), s.thrown_away()),
        (8, Nanos::from_millis(72))
    );
}

#[test]
fn refused_actions_change_nothing() {
    let mut s = LiveSession::new(&config(), DEMO_POLICY);
    assert!(matches!(
        s.apply(Action::Resume),
        Err(SessionError::Lifecycle(_))
    ));
    s.apply(Action::Pause).unwrap();
    let err = s.apply(Action::Pause).unwrap_err();
    assert!(
        err.to_string().starts_with("pause or resume refused"),
        "{err}"
    );
    // A resume under 32 ms away is forgiven: no catch-up.
    s.apply(Action::Frame(Nanos::from_millis(20))).unwrap();
    s.apply(Action::Resume).unwrap();
    assert_eq!((s.resumes()[0].catch_up_steps, s.sim().tick()), (0, 0));
    // The buffer holds 4096 pending events; the next one is refused.
    let key = |i: u64| Action::Key {
        at: tickwise::Timestamp::from_millis(1_000 + i),
        key: Key::LeftUp,
        down: i.is_multiple_of(2),
    };
    s.run((0..4096).map(key)).unwrap();
    assert!(matches!(s.apply(key(4096)), Err(SessionError::Input(_))));
}
