//! The duel's rules over whole rallies, its bots, and the sync test.

use std::cell::Cell;
use std::rc::Rc;

use tickwise::{Pcg32, Sim, StateVisitor, TickInput, sync_test};
use tickwise_example_duel::{
    DEFAULT_CONFIG, DOWN, Duel, DuelConfig, Key, SMASH, Side, UP, random_input, scripted_input,
    scripted_inputs,
};

/// A 100 × 60 court: paddle faces at x = 10 and 90, half height 10, paddle
/// speed 4, serve speed 5 straight across (maxServeVy 0), smash +2, top
/// speed 8, serves 2 ticks after a point, first to 2 wins. Seed 42 on
/// stream 54: the serves read the PCG reference demo's published outputs
/// 0xa15c02b7, 0x7b47f409, ... ; `below(2)` is the top bit: right, then left.
const COURT: &[u8] = br#"{"seed": 42, "stepMs": 16, "maxStepsPerFrame": 8, "width": 100,
  "height": 60, "paddleInset": 10, "paddleHalf": 10, "paddleSpeed": 4, "ballSpeed": 5,
  "maxBallSpeed": 8, "maxServeVy": 0, "smashBoost": 2, "serveDelay": 2, "winScore": 2}"#;

/// The left player (player 0) holds up for ticks 0..=2 (paddle 30 -> 18,
/// too high to reach a ball at y = 30: offset 12 > 10); the right player
/// (player 1) taps smash inside tick 4 (press and release in one input).
fn rally_input(tick: u64) -> [TickInput; 2] {
    let [mut left, mut right] = [TickInput::default(); 2];
    if tick <= 2 {
        left.held = left.held.with(UP);
    }
    if tick == 3 {
        left.released = left.released.with(UP);
    }
    if tick == 4 {
        right.pressed = right.pressed.with(SMASH);
        right.released = right.released.with(SMASH);
    }
    [left, right]
}

fn run_to(d: &mut Duel, tick: u64) {
    while d.tick() < tick {
        let t = d.tick();
        d.step(&rally_input(t));
    }
}

#[test]
fn each_paddle_moves_only_by_its_own_player() {
    // Default court: paddles start at 360 / 2 = 180 and move 6 a tick.
    let cfg = DuelConfig::parse(DEFAULT_CONFIG).unwrap();
    let held = |b| {
        let mut i = TickInput::default();
        i.held = i.held.with(b);
        i
    };
    let mut d = Duel::new(&cfg);
    assert_eq!(d.players(), 2);
    // Player 0 holds down, player 1 nothing: only the left paddle moves.
    d.step(&[held(DOWN), TickInput::default()]);
    assert_eq!(d.paddles(), [186, 180]);
    // Player 1 holds up, player 0 nothing: only the right paddle moves.
    d.step(&[TickInput::default(), held(UP)]);
    assert_eq!(d.paddles(), [186, 174]);
    // Player 1's stick at full deflection down, player 0's full up: 6 each.
    let stick = |a: i16| TickInput {
        axes: [a, 0, 0, 0],
        ..TickInput::default()
    };
    d.step(&[stick(-32_767), stick(32_767)]);
    assert_eq!(d.paddles(), [180, 180]);
    // Player 0's smash charges the left paddle only; a missing player 1 is absent.
    let mut smash = TickInput::default();
    smash.pressed = smash.pressed.with(SMASH);
    d.step(&[smash]);
    assert_eq!((d.paddles(), d.charged()), ([180, 180], [true, false]));
    // The keys of the shared keyboard: three per player, the same buttons.
    assert_eq!(
        Key::of(Side::Right).map(|k| (k.side(), k.button())),
        [(Side::Right, UP), (Side::Right, DOWN), (Side::Right, SMASH)]
    );
}

#[test]
fn a_scripted_match_scored_on_paper() {
    let mut d = Duel::new(&DuelConfig::parse(COURT).unwrap());
    // Steps 1-2 wait; step 2 serves right (top bit of 0xa15c02b7 is 1).
    run_to(&mut d, 2);
    assert_eq!((d.ball(), d.velocity()), ([50, 30], [5, 0]));
    // Step 5 reads tick 4's tap: the right paddle is charged.
    run_to(&mut d, 10);
    assert_eq!(
        (d.ball(), d.charged(), d.paddles()),
        ([90, 30], [false, true], [18, 30])
    );
    // Step 11: 95 crosses the right face 90 at offset 0: returned at
    // min(5 + 2, 8) = 7, x = 180 - 95 = 85, charge spent.
    run_to(&mut d, 11);
    assert_eq!(
        (d.ball(), d.velocity(), d.charged()),
        ([85, 30], [-7, 0], [false, false])
    );
    // 78, 71, ..., 15 at step 21, 8 at step 22 (crosses x = 10, paddle at 18
    // is 12 away: missed), 1 at step 23, -6 at step 24: right scores.
    run_to(&mut d, 23);
    assert_eq!((d.ball(), d.score()), ([1, 30], [0, 0]));
    run_to(&mut d, 24);
    assert_eq!(
        (d.ball(), d.velocity(), d.score()),
        ([50, 30], [0, 0], [0, 1])
    );
    // Step 26 serves left (top bit of 0x7b47f409 is 0): 45, 40, ..., 5 at
    // step 35 (missed again), 0 at step 36, -5 at step 37: 0-2, right wins.
    run_to(&mut d, 26);
    assert_eq!(d.velocity(), [-5, 0]);
    run_to(&mut d, 36);
    assert_eq!((d.ball(), d.score()), ([0, 30], [0, 1]));
    run_to(&mut d, 37);
    assert_eq!((d.score(), d.winner()), ([0, 2], Some(Side::Right)));
    // After the win only the paddles move.
    run_to(&mut d, 60);
    assert_eq!(
        (d.tick(), d.ball(), d.velocity(), d.score()),
        (60, [50, 30], [0, 0], [0, 2])
    );
}

#[test]
fn the_first_default_serve_goes_right_and_level() {
    // maxServeVy 3: vy = -3 + below(7) on 0x7b47f409 = 2068313097;
    // 2068313097 * 7 = 14478191679 = 3 * 2^32 + 1593289791 -> 3, vy = 0.
    let mut d = Duel::new(&DuelConfig::parse(DEFAULT_CONFIG).unwrap());
    for _ in 0..30 {
        d.step(&[TickInput::default(); 2]);
    }
    assert_eq!((d.ball(), d.velocity()), ([320, 180], [5, 0]));
    d.step(&[TickInput::default(); 2]);
    assert_eq!(d.ball(), [325, 180]);
}

#[test]
fn the_scripted_bots_follow_their_cycles() {
    let (up, down, smash) = (UP, DOWN, SMASH);
    let left = |t| scripted_input(Side::Left, t);
    let right = |t| scripted_input(Side::Right, t);
    let t0 = left(0);
    assert!(t0.is_held(up) && t0.was_pressed(up) && !t0.was_released(down));
    let t45 = left(45);
    assert!(t45.was_released(up) && t45.was_pressed(down) && t45.is_held(down) && !t45.is_held(up));
    let t90 = left(90);
    assert!(t90.was_released(down) && t90.was_pressed(up));
    // A tap inside tick 60: pressed and released, not held.
    let t60 = left(60);
    assert!(t60.was_pressed(smash) && t60.was_released(smash) && !t60.is_held(smash));
    // The left bot never touches its stick, the right bot never its buttons
    // other than smash.
    assert!((0..300).all(|t| left(t).axes == [0; 4]));
    assert!((0..300).all(|t| !right(t).is_held(up) && !right(t).is_held(down)));
    // The right stick (its player's axis 0): (tick % 64) * 1024 - 32768.
    assert_eq!(right(0).axes[0], -32_768);
    assert_eq!(right(63).axes[0], 31_744);
    assert!(right(75).was_pressed(smash) && right(79).is_held(smash));
    assert!(right(80).was_released(smash) && !right(80).is_held(smash));
    assert_eq!(scripted_inputs(75), [left(75), right(75)]);
}

#[test]
fn sync_test_with_rollback_8_finds_no_desync() {
    let cfg = DuelConfig::parse(DEFAULT_CONFIG).unwrap();
    // From tick 8 on, every tick rolls back 8 and re-simulates 8 steps:
    // (2000 - 8 + 1) * 8 = 15944 steps.
    let report = sync_test(
        Duel::new(&cfg),
        |t, out: &mut [TickInput]| out.clone_from_slice(&scripted_inputs(t)),
        2000,
        8,
    );
    assert_eq!(report.mismatch, None);
    assert_eq!((report.ticks, report.resimulated_steps), (2000, 15_944));
    let mut rng = Pcg32::new(7, 1);
    let report = sync_test(
        Duel::new(&cfg),
        |_, out: &mut [TickInput]| out.fill_with(|| random_input(&mut rng)),
        2000,
        8,
    );
    assert_eq!(report.mismatch, None);
}

/// A duel with a hidden step counter shared by all its clones: exactly the
/// kind of state a rollback snapshot misses.
#[derive(Clone)]
struct Leaky {
    duel: Duel,
    steps: Rc<Cell<u64>>,
}

impl Sim for Leaky {
    type Input = TickInput;
    fn players(&self) -> usize {
        2
    }
    fn step(&mut self, inputs: &[TickInput]) {
        self.steps.set(self.steps.get() + 1);
        let mut inputs = [inputs[0], inputs[1]];
        if self.steps.get() == 25 {
            inputs[0].held = inputs[0].held.with(UP);
        }
        self.duel.step(&inputs);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.duel.visit_state(v);
    }
}

#[test]
fn sync_test_catches_hidden_state() {
    // The first pass runs steps 1..=8 (ticks 0..7), re-simulates 8 (steps
    // 9..=16), runs tick 8 as step 17, then re-simulates ticks 1..=8 as
    // steps 18..=25: the 25th step moves the left paddle in the re-run of
    // tick 8 only, so the state after tick 8 (tick 9) differs in "paddles".
    let cfg = DuelConfig::parse(DEFAULT_CONFIG).unwrap();
    let sim = Leaky {
        duel: Duel::new(&cfg),
        steps: Rc::new(Cell::new(0)),
    };
    let report = sync_test(
        sim,
        |_, out: &mut [TickInput]| out.fill(TickInput::default()),
        40,
        8,
    );
    let m = report.mismatch.expect("the hidden counter desyncs");
    assert_eq!(
        (m.tick, m.rolled_back_from, m.fields),
        (9, 9, vec!["paddles"])
    );
}
