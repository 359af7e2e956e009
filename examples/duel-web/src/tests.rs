//! The page model natively: keys on their ticks, drawing through catch-ups,
//! and a live session whose replay verifies.

use tickwise::{Capture as _, Replay, ReplayLimits, ReplayVerdict, Sim as _, TickInput};

use super::*;

fn page() -> DuelPage {
    DuelPage::new().expect("the default config is valid")
}

/// A frame that must be accepted; returns its steps.
fn frame(p: &mut DuelPage, ms: f64) -> u32 {
    p.frame_at(ms).expect("a good timestamp").steps
}

/// Frames every 16 ms from `from` to `to` (inclusive) ms.
fn frames(p: &mut DuelPage, from: u32, to: u32) {
    for k in (from..=to).step_by(16) {
        frame(p, f64::from(k));
    }
}

fn replay(p: &DuelPage) -> Replay<TickInput> {
    let bytes = p.web().replay_bytes().expect("the page records");
    Replay::from_bytes(&bytes, &ReplayLimits::DEFAULT).expect("a readable replay")
}

/// The drawable state after the first `ticks` recorded inputs (both
/// players'), re-simulated on a fresh duel.
fn state_at(p: &DuelPage, ticks: u64) -> DuelFrame {
    let cfg = DuelConfig::parse(DEFAULT_CONFIG).unwrap();
    let mut d = Duel::new(&cfg);
    let r = replay(p);
    for (l, r) in r
        .inputs(0)
        .zip(r.inputs(1))
        .take(usize::try_from(ticks).unwrap())
    {
        d.step(&[*l, *r]);
    }
    d.capture()
}

#[test]
fn each_players_keys_reach_only_its_own_input() {
    let mut p = page();
    frame(&mut p, 0.0);
    // W (left up) from 8 ms and ArrowDown (right down) from 8 ms, both
    // released at 88 ms (tick 5's window): 5 ticks of 6 each way.
    p.key("KeyW", true, 8.0).unwrap();
    p.key("ArrowDown", true, 8.0).unwrap();
    frames(&mut p, 16, 80);
    p.key("KeyW", false, 88.0).unwrap();
    p.key("ArrowDown", false, 88.0).unwrap();
    frames(&mut p, 96, 160);
    assert_eq!(p.web().sim().paddles(), [150, 210]);
    let r = replay(&p);
    assert_eq!(r.players(), 2);
    let up = tickwise_example_duel::UP;
    let down = tickwise_example_duel::DOWN;
    // Player 0 held only up, player 1 only down, in ticks 0..=4.
    let held = |pl: usize, b| -> Vec<usize> {
        r.inputs(pl)
            .enumerate()
            .filter(|(_, i)| i.is_held(b))
            .map(|(t, _)| t)
            .collect()
    };
    assert_eq!((held(0, up), held(0, down)), ((0..5).collect(), vec![]));
    assert_eq!((held(1, up), held(1, down)), (vec![], (0..5).collect()));
}

#[test]
fn holding_w_moves_the_left_paddle_six_units_a_tick() {
    let mut p = page();
    frame(&mut p, 0.0);
    // Down at 8 ms (tick 0's window ends at 16 ms), up at 168 ms (tick 10's
    // window): held for ticks 0..=9, ten ticks of paddleSpeed 6 upward from
    // the centre of the 360-unit field.
    assert_eq!(p.key("KeyW", true, 8.0), Ok(true));
    frames(&mut p, 16, 160);
    assert_eq!(p.key("KeyW", false, 168.0), Ok(true));
    frames(&mut p, 176, 320);
    assert_eq!(p.web().tick(), 20);
    assert_eq!(p.web().sim().paddles(), [180 - 10 * 6, 180]);
    assert_eq!(p.key("Space", true, 330.0), Ok(false), "unbound key");
}

#[test]
fn a_smash_tap_inside_one_tick_charges_the_paddle() {
    let mut p = page();
    frame(&mut p, 0.0);
    // 20 ms to 23 ms: both edges inside tick 1's window (16, 32].
    p.key("KeyD", true, 20.0).unwrap();
    p.key("KeyD", false, 23.0).unwrap();
    frames(&mut p, 16, 48);
    assert_eq!(p.web().sim().charged(), [true, false]);
    assert_eq!(p.state_json()["charged"], json!([true, false]));
}

#[test]
fn drawing_blends_the_last_two_ticks_and_survives_catch_ups() {
    let mut p = page();
    frame(&mut p, 0.0);
    p.key("ArrowDown", true, 1.0).unwrap();
    frames(&mut p, 16, 64); // four ticks: right paddle 180 -> 204
    frame(&mut p, 72.0); // half a tick: alpha 1/2, drawn half-way from 198 to 204
    assert_eq!(p.web().sim().paddles()[1], 204);
    assert_eq!(p.drawn().paddles[1], 201);
    // Hidden for 500 ms with the key held: the kernel releases it at hide
    // time; showing catches up 30 ticks (the policy's cap) and the presenter
    // holds that catch-up's last two ticks (checked by re-simulating the
    // recorded inputs independently of the presenter).
    p.visibility(true, 80.0).unwrap();
    let VisibilityOutcome::Resumed(r) = p.visibility(false, 580.0).unwrap() else {
        panic!("expected a resume");
    };
    assert_eq!(r.summary.catch_up_steps, 30);
    let t = p.web().tick();
    assert_eq!(p.presenter().current(), &state_at(&p, t));
    assert_eq!(p.presenter().previous(), &state_at(&p, t - 1));
    // A player's pause and resume take the same path.
    assert_eq!(p.pause_at(600.0), Ok(true));
    let r = p.resume_at(900.0).unwrap();
    assert!(r.summary.catch_up_steps > 1, "{r:?}");
    let t = p.web().tick();
    assert_eq!(p.presenter().previous(), &state_at(&p, t - 1));
    assert_eq!(p.presenter().current(), &state_at(&p, t));
}

#[test]
fn the_live_session_verifies() {
    let mut p = page();
    frame(&mut p, 0.0);
    p.key("KeyS", true, 5.0).unwrap();
    p.key("ArrowUp", true, 40.0).unwrap();
    frames(&mut p, 16, 496);
    p.key("KeyS", false, 500.0).unwrap();
    // A 400 ms hitch: 25 ticks owed, the cap of 8 runs, the rest dropped.
    assert!(p.frame_at(900.0).unwrap().capped);
    assert!(p.web_loop_mut().set_speed(2.0, 1.0));
    frames(&mut p, 916, 1500);
    p.visibility(true, 1510.0).unwrap();
    p.visibility(false, 3510.0).unwrap();
    assert!(p.web_loop_mut().set_speed(1.0, 4.0));
    frames(&mut p, 3520, 4000);
    p.key("ArrowUp", false, 4001.0).unwrap();
    frames(&mut p, 4016, 5000);
    let r = replay(&p);
    assert_eq!(
        (r.header().sim_id.as_str(), r.header().sim_version),
        ("duel", 2)
    );
    assert_eq!(r.ticks(), p.web().tick());
    let cfg = DuelConfig::parse(DEFAULT_CONFIG).unwrap();
    let report = tickwise::verify(Duel::new(&cfg), &r);
    assert_eq!(
        report.verdict,
        ReplayVerdict::Match {
            digest: p.web().digest()
        }
    );
    // The base64 the page hands JavaScript is the same file.
    let b64 = p.web().replay_base64().unwrap();
    assert_eq!(
        b64.len(),
        p.web().replay_bytes().unwrap().len().div_ceil(3) * 4
    );
}

#[test]
fn reset_records_a_new_session_from_tick_0() {
    let mut p = page();
    frame(&mut p, 0.0);
    frame(&mut p, 100.0);
    assert!(p.web().tick() > 0);
    p.reset().unwrap();
    assert_eq!(replay(&p).ticks(), 0);
    assert_eq!(p.state_json()["recording"], true);
}
