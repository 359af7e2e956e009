//! The duel played live: irregular frames, timestamped keys, a pause and a
//! hide with capped catch-up, interpolated drawing, and the recording of it
//! all re-simulated offline.
//!
//! The default config steps every 16 ms, so tick `k` consumes the keys
//! stamped in `[16k, 16k + 16)` ms until time is dropped or spent away.

use tickwise::{
    CatchUpPolicy, HostEvent, HostEventKind, Nanos, Replay, ReplayLimits, Sim, TickInput,
    compare_lockstep, verify,
};
use tickwise_example_duel::session::{
    Action, DEMO_KEYS, DEMO_POLICY, IRREGULAR_MS, LIVE_CHECKPOINT_EVERY, LiveSession, SessionError,
    deliver, demo_actions, live_demo_actions,
};
use tickwise_example_duel::{DEFAULT_CONFIG, DOWN, Duel, DuelConfig, ID, Key, SMASH, UP, VERSION};

fn config() -> DuelConfig {
    DuelConfig::parse(DEFAULT_CONFIG).unwrap()
}

fn session(policy: CatchUpPolicy) -> LiveSession {
    LiveSession::new(DEFAULT_CONFIG, policy, LIVE_CHECKPOINT_EVERY).unwrap()
}

fn demo() -> LiveSession {
    let mut s = session(DEMO_POLICY);
    s.run(demo_actions()).unwrap();
    s
}

/// Every tick's inputs as the sim consumed them, `[player 0, player 1]`,
/// from the session's recording (one stream per player).
fn inputs(s: &LiveSession) -> Vec<[TickInput; 2]> {
    let replay = s.replay().unwrap();
    assert_eq!(replay.players(), 2);
    replay
        .inputs(0)
        .zip(replay.inputs(1))
        .map(|(l, r)| [*l, *r])
        .collect()
}

/// The inputs [`DEMO_KEYS`] must give, tick by tick, worked out from the
/// 16 ms windows: the left player's (player 0's) up down at 5 ms (tick 0)
/// and up at 90 ms (tick 5), and its smash tap at 37-41 ms inside tick 2;
/// the right player's (player 1's) down at 120 ms (tick 7) and up at 300 ms
/// (tick 18). Each player's keys are in its own input only.
fn expected_inputs(ticks: usize) -> Vec<[TickInput; 2]> {
    let mut v = vec![[TickInput::default(); 2]; ticks];
    let (up, smash, down) = (UP, SMASH, DOWN);
    v[0][0].pressed = v[0][0].pressed.with(up);
    for t in &mut v[0..5] {
        t[0].held = t[0].held.with(up);
    }
    v[2][0].pressed = v[2][0].pressed.with(smash);
    v[2][0].released = v[2][0].released.with(smash);
    v[5][0].released = v[5][0].released.with(up);
    v[7][1].pressed = v[7][1].pressed.with(down);
    for t in &mut v[7..18] {
        t[1].held = t[1].held.with(down);
    }
    v[18][1].released = v[18][1].released.with(down);
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
        (s.sim().tick(), inputs(&s).len(), s.thrown_away()),
        (80, 80, Nanos::ZERO)
    );
    // Every tick's input as the sim saw it: the keys, then nothing.
    assert_eq!(inputs(&s), expected_inputs(80));
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
    let mut s = session(DEMO_POLICY);
    let actions = demo_actions();
    let resume = actions.iter().position(|a| *a == Action::Resume).unwrap();
    s.run(actions[..=resume].iter().copied()).unwrap();
    // Tick 25 + 30 caught up = 55; the ball moved from step 31: 24 moves by
    // step 54 (x = 320 + 120 = 440), 25 by step 55 (x = 445). Nothing is
    // carried, so alpha is 0 and the presenter draws tick 54. A presenter
    // that missed the catch-up would still draw the served ball at x = 320.
    assert_eq!(s.sim().tick(), 55);
    assert_eq!(s.drawn().ball, [440, 180]);
    // A 13 ms frame runs no tick and moves alpha to 13/16 between ticks 54
    // and 55: 440 + 5 * 53248 / 65536 = 440 + 4 (rounded toward tick 54).
    s.apply(Action::Frame(Nanos::from_millis(13))).unwrap();
    assert_eq!((s.sim().tick(), s.drawn().ball), (55, [444, 180]));
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
        let mut s = session(CatchUpPolicy::Full);
        s.run(deliver(&DEMO_KEYS, frames, 0)).unwrap();
        assert_eq!(s.sim().tick(), 50, "{frames:?}");
        assert_eq!(inputs(&s), expected_inputs(50), "{frames:?}");
        assert_eq!(s.sim().checksum(), offline.checksum(), "{frames:?}");
    }
}

#[test]
fn the_live_recording_verifies_offline() {
    let s = demo();
    let bytes = s.replay().unwrap().to_bytes();
    let read = Replay::<TickInput>::from_bytes(&bytes, &ReplayLimits::DEFAULT).unwrap();
    let h = read.header();
    assert_eq!(
        (
            h.sim_id.as_str(),
            h.sim_version,
            h.config.as_slice(),
            h.seed
        ),
        (ID, VERSION, DEFAULT_CONFIG, 42)
    );
    assert_eq!((read.ticks(), h.checkpoint_every), (80, 30));
    assert_eq!(read.final_digest(), s.sim().digest());
    // The catch-up's dropped 520 ms never reached the sim (the duel has no
    // use for it), so no host event was recorded.
    assert!(read.host_events().is_empty());
    let report = verify(Duel::new(&config()), &read);
    assert!(report.is_match(), "{report:?}");
    assert_eq!(report.ticks_run, 80);
    // The recording is non-destructive: asking again gives the same bytes.
    assert_eq!(s.replay().unwrap().to_bytes(), bytes);
}

/// The session `duel-live` plays, after the demo (tick 80, host time
/// 1808 ms, 8 ms in the accumulator, so tick k's window ends at
/// 1816 + 16 (k - 80) ms):
///
/// - 200 ms of frames: 8 + 200 = 208 ms = 13 ticks, to tick 93, nothing
///   left over. Right-up goes down at 1850 ms, in tick 83's window
///   [1848, 1864). Step 91 (x 620 -> 625) crosses the right face at 624
///   with the right paddle at 246 - 6 * 8 = 198 (steps 84..=91 moved it):
///   offset 180 - 198 = -18 is within 32, so the ball is returned at
///   vx = -5, spin -18 / 4 = -4, x = 2 * 624 - 625 = 623.
/// - Hide at 2008 ms with right-up still down: the release lands in tick
///   93, the tick whose window holds 2008 ms. The paddle moved on steps
///   84..=93: 246 - 60 = 186.
/// - 3000 ms hidden: 187 ticks owed, 30 caught up (ticks 93..=122, none
///   moving the paddle: the key was released), 3000 - 480 = 2520 ms
///   dropped, nothing carried.
/// - A 200 ms frame: 12.5 ticks owed, the cap runs 8 (to tick 131) and
///   drops the other 200 - 128 = 72 ms: one host event at tick 131.
/// - 200 ms more: 12 ticks (8 ms left over), tick 143.
///
/// The ball moves (-5, -4) from (623, 180) for steps 92..=143 (52 moves):
/// x = 623 - 260 = 363; y reaches 0 after 45 moves and reflects at the
/// 46th (-4 -> 4, vy = +4), then 6 more moves: y = 28.
#[test]
fn the_live_demo_with_a_hide_and_a_capped_frame_worked_out_by_hand() {
    let mut s = session(DEMO_POLICY);
    s.run(live_demo_actions()).unwrap();
    let r = s.resumes();
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[1].elapsed, r[1].wanted_steps, r[1].catch_up_steps),
        (Nanos::from_millis(3000), 187, 30)
    );
    assert_eq!(
        (r[1].carried, r[1].dropped),
        (Nanos::ZERO, Nanos::from_millis(2520))
    );
    assert_eq!(
        (s.sim().tick(), s.capped_frames(), s.thrown_away()),
        (143, 1, Nanos::from_millis(72))
    );
    let d = s.sim();
    assert_eq!(
        (d.paddles(), d.charged(), d.score()),
        ([150, 186], [true, false], [0, 0])
    );
    assert_eq!((d.ball(), d.velocity()), ([363, 28], [-5, 4]));

    let replay = s.replay().unwrap();
    assert_eq!(
        replay.host_events(),
        [HostEvent {
            tick: 131,
            kind: HostEventKind::TimeDropped(Nanos::from_millis(72)),
        }]
    );
    // Right-up (player 1's up): pressed in tick 83, held through tick 92,
    // released in tick 93 by the hide, never held in the catch-up or after;
    // player 0 never holds up after tick 4.
    let up = Key::RightUp.button();
    let ticks: Vec<TickInput> = replay.inputs(1).copied().collect();
    assert!(replay.inputs(0).skip(5).all(|i| !i.is_held(up)));
    assert!(ticks[83].was_pressed(up));
    let held: Vec<usize> = (0..ticks.len()).filter(|&t| ticks[t].is_held(up)).collect();
    assert_eq!(held, (83..93).collect::<Vec<_>>());
    let released: Vec<usize> = (0..ticks.len())
        .filter(|&t| ticks[t].was_released(up))
        .collect();
    assert_eq!(released, [93]);

    let read = Replay::<TickInput>::from_bytes(&replay.to_bytes(), &ReplayLimits::DEFAULT).unwrap();
    let report = verify(Duel::new(&config()), &read);
    assert!(report.is_match(), "{report:?}");
    assert_eq!(report.ticks_run, 143);
}

#[test]
fn a_pause_keeps_held_keys_a_hide_releases_them() {
    // Left-up goes down at 5 ms. Paused at 100 ms for 1 s, the key stays
    // held through the catch-up; hidden instead, it is released at 100 ms.
    let (up, keys) = (Key::LeftUp.button(), [(5, Key::LeftUp, true)]);
    let mut held_after = Vec::new();
    for leave in [Action::Pause, Action::Hide] {
        let mut s = session(DEMO_POLICY);
        s.run(deliver(&keys, &IRREGULAR_MS, 0)).unwrap();
        s.apply(leave).unwrap();
        s.run(deliver(&[], &IRREGULAR_MS.repeat(10), 100)).unwrap();
        s.apply(Action::Resume).unwrap();
        assert_eq!(s.sim().tick(), 6 + 30, "{leave:?}");
        let ticks = inputs(&s);
        held_after.push(ticks.iter().filter(|t| t[0].is_held(up)).count());
        assert!(
            ticks.iter().all(|t| !t[1].is_held(up)),
            "player 1 held nothing"
        );
        // Paddle: 6 per tick held, from 180, never above 32.
        let moved = 6 * i32::try_from(held_after[held_after.len() - 1]).unwrap();
        assert_eq!(s.sim().paddles()[0], (180 - moved).max(32), "{leave:?}");
    }
    // 100 ms = 6 ticks, then 30 caught up. Paused, all 36 ticks hold the
    // key (the paddle stops at the wall, 32); hidden, only ticks 0..=5 do
    // (180 - 36 = 144): tick 6, whose window [96, 112) ms holds the hide,
    // gets the release.
    assert_eq!(held_after, [36, 6]);
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
    let inputs = inputs(&s);
    let both = |inputs: Vec<[TickInput; 2]>| {
        let mut it = inputs.into_iter();
        move |_, out: &mut [TickInput]| out.clone_from_slice(&it.next().unwrap_or_default())
    };
    let c = compare_lockstep(&mut a, &mut b, both(inputs.clone()), both(inputs), 80);
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
    let mut s = session(DEMO_POLICY);
    s.apply(Action::Frame(Nanos::from_millis(200))).unwrap();
    assert_eq!(
        (s.sim().tick(), s.thrown_away()),
        (8, Nanos::from_millis(72))
    );
}

#[test]
fn refused_actions_change_nothing() {
    let mut s = session(DEMO_POLICY);
    assert!(matches!(
        s.apply(Action::Resume),
        Err(SessionError::Lifecycle(_))
    ));
    s.apply(Action::Pause).unwrap();
    let err = s.apply(Action::Pause).unwrap_err();
    assert!(
        err.to_string().starts_with("pause, hide or resume refused"),
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
