//! # Duel: a two-player paddle game on tickwise
//!
//! An example game that uses only tickwise's public API, written to be read
//! as a tutorial. Two players, one paddle each: player 0 defends the left
//! wall of an integer field, player 1 the right one; the ball bounces off
//! the top and bottom walls; a player who taps *smash* charges their paddle,
//! and the next ball it returns leaves faster.
//!
//! The duel is a two-player sim ([`Sim::players`] is 2): every tick it gets
//! one [`TickInput`] per player, in slot order, and each paddle reads only
//! its own player's input (buttons [`UP`], [`DOWN`], [`SMASH`] and axis 0).
//! So a replay stores one input stream per player, and a desync report can
//! say which player pressed what.
//!
//! The rules, one tick at a time (see [`Duel`] for the exact order):
//!
//! 1. Each paddle moves `paddleSpeed` units toward its player's held
//!    direction button, or follows its player's analog axis 0 when no
//!    direction button is held; a *pressed* edge of the smash button charges
//!    it (so a tap shorter than a tick counts).
//! 2. While a serve is pending the ball waits at the centre; on the last tick
//!    of the wait it gets its velocity from the seeded [`Pcg32`]: left or
//!    right at `ballSpeed`, vertical speed in `-maxServeVy..=maxServeVy`.
//! 3. Otherwise the ball moves by its velocity, reflects off the top and
//!    bottom walls, and is returned by a paddle whose face it crossed this
//!    tick within `paddleHalf` of the paddle's centre: the horizontal speed
//!    flips (plus `smashBoost` if charged), and the vertical speed gains
//!    spin, `(ball y - paddle y) / 4`, capped at `maxBallSpeed`.
//! 4. A ball past the left or right wall is a point for the other player and
//!    a new serve after `serveDelay` ticks. At `winScore` the ball stops.
//!
//! All maths is `i32` on values the config bounds; there is no float, clock
//! or hash map anywhere (the crate's `clippy.toml` and lints enforce it).
//! The [`session`] module drives the duel live: irregular frames, timestamped
//! keys through an [`tickwise::InputBuffer`], a pause and a hide with capped
//! catch-up, interpolated drawing, and a recording of it all. The duel
//! implements [`tickwise_catalog::CatalogSim`], so its own tool binary
//! (`src/bin/duel.rs`, a few lines over `tickwise_cli::main_with`) records,
//! verifies, compares, sync-tests and budgets it like a built-in sim.
//!
//! ```
//! use tickwise::Sim;
//! use tickwise_example_duel::{DEFAULT_CONFIG, Duel, DuelConfig, scripted_inputs};
//!
//! let cfg = DuelConfig::parse(DEFAULT_CONFIG)?;
//! let mut duel = Duel::new(&cfg);
//! assert_eq!(duel.players(), 2);
//! for tick in 0..31 {
//!     duel.step(&scripted_inputs(tick)); // [left bot's input, right bot's]
//! }
//! // Served on the 30th tick, right and level at 5 units a tick; one tick later:
//! assert_eq!((duel.ball(), duel.velocity()), ([325, 180], [5, 0]));
//! # Ok::<(), tickwise_example_duel::ConfigError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_arithmetic)]

mod catalog;
mod config;
mod persist;
pub mod session;
#[cfg(test)]
mod tests;

pub use catalog::{BUTTON_BITS, INPUT_JSON, json_input};
pub use config::{ConfigError, DEFAULT_CONFIG, DuelConfig, KEYS};

use tickwise::{Alpha, Button, Buttons, Capture, Pcg32, Sim, StateVisitor, TickInput};

/// The name replays and the CLI know this sim by.
pub const ID: &str = "duel";
/// The rules' version. Bump it whenever a change alters results, so that old
/// replays are refused by version instead of reported as desyncs. Version 2:
/// one input per player (version 1 read one input that steered both paddles).
pub const VERSION: u32 = 2;
/// The PCG stream serves are drawn from. 54 is the stream of the PCG
/// reference demo, so with seed 42 the serves follow its published outputs
/// (the tests use them as independent expected values).
pub const SERVE_STREAM: u64 = 54;
/// Spin: a return adds `(ball y - paddle y) / SPIN_DIVISOR` to the vertical speed.
pub const SPIN_DIVISOR: i32 = 4;
/// An axis value at full deflection, as the host quantises a stick.
pub const AXIS_FULL: i32 = 32_767;
/// Added to `paddleSpeed`: 0, or 1 in a build with the `rule-change`
/// feature. That build changes a rule without bumping [`VERSION`], the
/// mistake replays exist to catch: its `duel verify` of any honest replay in
/// which a paddle moved reports the first divergent checkpoint and `paddles`.
pub const PADDLE_SPEED_CHANGE: i32 = if cfg!(feature = "rule-change") { 1 } else { 0 };

/// A player: `Left` (player 0) defends the left wall, `Right` (player 1)
/// the right one. Each reads only its own input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Player 0, on the left.
    Left,
    /// Player 1, on the right.
    Right,
}

impl Side {
    /// Both sides, left first (the order of every two-element array here).
    pub const BOTH: [Side; 2] = [Side::Left, Side::Right];

    /// The player slot: 0 for left, 1 for right.
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// The keys of a shared keyboard: three per player. Each is one of its
/// player's buttons ([`Key::button`]) in that player's input ([`Key::side`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// Player 0's [`UP`].
    LeftUp,
    /// Player 0's [`DOWN`].
    LeftDown,
    /// Player 0's [`SMASH`].
    LeftSmash,
    /// Player 1's [`UP`].
    RightUp,
    /// Player 1's [`DOWN`].
    RightDown,
    /// Player 1's [`SMASH`].
    RightSmash,
}

const fn button(index: u8) -> Button {
    match Button::new(index) {
        Some(b) => b,
        None => panic!("button indices are below 64"), // evaluated at compile time
    }
}

/// A player's paddle up: button 0 of that player's input.
pub const UP: Button = button(0);
/// A player's paddle down: button 1.
pub const DOWN: Button = button(1);
/// A player's smash: button 2.
pub const SMASH: Button = button(2);

impl Key {
    /// The button this key is, in its player's input.
    #[must_use]
    pub const fn button(self) -> Button {
        [UP, DOWN, SMASH][self as usize % 3]
    }

    /// The player whose input this key is part of.
    #[must_use]
    pub const fn side(self) -> Side {
        if (self as usize) < 3 {
            Side::Left
        } else {
            Side::Right
        }
    }

    /// A side's up, down and smash keys.
    #[must_use]
    pub const fn of(side: Side) -> [Key; 3] {
        match side {
            Side::Left => [Key::LeftUp, Key::LeftDown, Key::LeftSmash],
            Side::Right => [Key::RightUp, Key::RightDown, Key::RightSmash],
        }
    }
}

/// The duel's state. `y` grows downward; `(0, 0)` is the top-left corner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duel {
    cfg: DuelConfig,
    tick: u64,
    ball: [i32; 2],
    vel: [i32; 2],
    paddles: [i32; 2],
    charged: [bool; 2],
    score: [u32; 2],
    serve_in: u32,
    rng: Pcg32,
}

impl Duel {
    /// Tick 0: paddles and ball centred, a serve due in `serveDelay` ticks.
    #[must_use]
    pub const fn new(cfg: &DuelConfig) -> Duel {
        Duel {
            cfg: *cfg,
            tick: 0,
            ball: [cfg.width / 2, cfg.height / 2],
            vel: [0, 0],
            paddles: [cfg.height / 2; 2],
            charged: [false; 2],
            score: [0; 2],
            serve_in: cfg.serve_delay,
            rng: Pcg32::new(cfg.seed, SERVE_STREAM),
        }
    }

    /// Steps run so far.
    #[must_use]
    pub const fn tick(&self) -> u64 {
        self.tick
    }
    /// The ball's centre `[x, y]`.
    #[must_use]
    pub const fn ball(&self) -> [i32; 2] {
        self.ball
    }
    /// The ball's velocity `[vx, vy]` in units per tick.
    #[must_use]
    pub const fn velocity(&self) -> [i32; 2] {
        self.vel
    }
    /// The paddles' centre heights, left then right.
    #[must_use]
    pub const fn paddles(&self) -> [i32; 2] {
        self.paddles
    }
    /// Whether each paddle holds a smash charge.
    #[must_use]
    pub const fn charged(&self) -> [bool; 2] {
        self.charged
    }
    /// Points, left then right.
    #[must_use]
    pub const fn score(&self) -> [u32; 2] {
        self.score
    }
    /// The side that reached `winScore`, if any.
    #[must_use]
    pub fn winner(&self) -> Option<Side> {
        Side::BOTH
            .into_iter()
            .find(|s| self.score[s.index()] >= self.cfg.win_score)
    }

    /// `side`'s paddle by its own player's `input`.
    fn move_paddle(&mut self, side: Side, input: &TickInput) {
        let i = side.index();
        let dir = i32::from(input.is_held(DOWN)) - i32::from(input.is_held(UP));
        let speed = self.cfg.paddle_speed + PADDLE_SPEED_CHANGE;
        let v = if dir == 0 {
            i32::from(input.axes[0]).clamp(-AXIS_FULL, AXIS_FULL) * speed / AXIS_FULL
        } else {
            dir * speed
        };
        let half = self.cfg.paddle_half;
        self.paddles[i] = (self.paddles[i] + v).clamp(half, self.cfg.height - half);
        if input.was_pressed(SMASH) {
            self.charged[i] = true;
        }
    }

    fn serve(&mut self) {
        let dir = if self.rng.below(2) == 0 { -1 } else { 1 };
        let k = self.cfg.max_serve_vy;
        self.vel = [dir * self.cfg.ball_speed, self.rng.range_i32(-k, k)];
    }

    /// The ball crossed `side`'s paddle face at `face` and is now at `[x, y]`:
    /// returns its new `x` (reflected if the paddle reached it).
    fn meet_paddle(&mut self, side: Side, x: i32, y: i32, face: i32) -> i32 {
        let i = side.index();
        let offset = y - self.paddles[i];
        if offset.abs() > self.cfg.paddle_half {
            return x;
        }
        let max = self.cfg.max_ball_speed;
        let boost = if self.charged[i] {
            self.cfg.smash_boost
        } else {
            0
        };
        self.charged[i] = false;
        let speed = (self.vel[0].abs() + boost).min(max);
        self.vel[0] = if side == Side::Left { speed } else { -speed };
        self.vel[1] = (self.vel[1] + offset / SPIN_DIVISOR).clamp(-max, max);
        2 * face - x
    }

    fn move_ball(&mut self) {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let [px, py] = self.ball;
        let (mut x, mut y) = (px + self.vel[0], py + self.vel[1]);
        if y < 0 || y > h {
            y = if y < 0 { -y } else { 2 * h - y };
            self.vel[1] = -self.vel[1];
        }
        let (left, right) = (self.cfg.paddle_inset, w - self.cfg.paddle_inset);
        if self.vel[0] < 0 && px >= left && x < left {
            x = self.meet_paddle(Side::Left, x, y, left);
        } else if self.vel[0] > 0 && px <= right && x > right {
            x = self.meet_paddle(Side::Right, x, y, right);
        }
        self.ball = [x, y];
        if x < 0 || x > w {
            let scorer = if x < 0 { Side::Right } else { Side::Left };
            self.score[scorer.index()] += 1;
            self.ball = [w / 2, h / 2];
            self.vel = [0, 0];
            self.serve_in = self.cfg.serve_delay;
        }
    }
}

impl Sim for Duel {
    type Input = TickInput;

    /// Two: player 0 on the left, player 1 on the right.
    fn players(&self) -> usize {
        2
    }

    /// One tick: each paddle by its own player's input (`inputs[0]` left,
    /// `inputs[1]` right; a missing one is the absent input), then the
    /// serve wait or the ball; nothing but the paddles moves once someone
    /// has won.
    fn step(&mut self, inputs: &[TickInput]) {
        let absent = TickInput::default();
        self.tick = self.tick.wrapping_add(1);
        for side in Side::BOTH {
            self.move_paddle(side, inputs.get(side.index()).unwrap_or(&absent));
        }
        if self.winner().is_some() {
            return;
        }
        if self.serve_in > 0 {
            self.serve_in -= 1;
            if self.serve_in == 0 {
                self.serve();
            }
            return;
        }
        self.move_ball();
    }

    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("tick");
        v.value(self.tick);
        v.field("ball");
        v.values_i32(&self.ball);
        v.field("velocity");
        v.values_i32(&self.vel);
        v.field("paddles");
        v.values_i32(&self.paddles);
        v.field("charged");
        v.values(&self.charged.map(u64::from));
        v.field("score");
        v.values_u32(&self.score);
        v.field("serveIn");
        v.value(u64::from(self.serve_in));
        v.field("rng");
        let (state, inc) = self.rng.parts();
        v.values(&[state, inc]);
    }

    /// `t=… ball=(x,y) vel=(vx,vy) paddles=(l,r) score=l-r chk=…`: what a
    /// person reads in a desync report, plus the checksum of everything.
    fn digest(&self) -> String {
        let ([x, y], [vx, vy], [l, r], [sl, sr]) = (self.ball, self.vel, self.paddles, self.score);
        format!(
            "t={} ball=({x},{y}) vel=({vx},{vy}) paddles=({l},{r}) score={sl}-{sr} chk={:016x}",
            self.tick,
            self.checksum()
        )
    }
}

/// What a renderer draws for one tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DuelFrame {
    /// The ball's centre.
    pub ball: [i32; 2],
    /// The paddles' centre heights, left then right.
    pub paddles: [i32; 2],
}

impl DuelFrame {
    /// The frame `alpha` of the way from `prev` to `curr`, in integer maths
    /// (16-bit fraction, rounded toward `prev`). It is only ever drawn: the
    /// sim never sees it. A serve teleports the ball, so the one frame that
    /// interpolates across it shows the ball on its way back to the centre.
    #[must_use]
    pub fn interpolate(prev: &DuelFrame, curr: &DuelFrame, alpha: Alpha) -> DuelFrame {
        let a = i64::try_from(alpha.scaled(1 << 16)).unwrap_or(1 << 16);
        let lerp = |p: i32, c: i32| {
            let d = (i64::from(c) - i64::from(p)) * a / (1 << 16);
            i32::try_from(i64::from(p) + d).unwrap_or(c)
        };
        DuelFrame {
            ball: [
                lerp(prev.ball[0], curr.ball[0]),
                lerp(prev.ball[1], curr.ball[1]),
            ],
            paddles: [
                lerp(prev.paddles[0], curr.paddles[0]),
                lerp(prev.paddles[1], curr.paddles[1]),
            ],
        }
    }
}

impl Capture for Duel {
    type Snapshot = DuelFrame;

    fn capture_into(&self, out: &mut DuelFrame) {
        *out = self.capture();
    }

    fn capture(&self) -> DuelFrame {
        DuelFrame {
            ball: self.ball,
            paddles: self.paddles,
        }
    }
}

/// A key that goes down at `start` in every `period` ticks and stays down
/// for `len < period` ticks: (held, pressed, released) at `tick`.
const fn cycle(tick: u64, period: u64, start: u64, len: u64) -> (bool, bool, bool) {
    let t = tick % period;
    let up_at = start + len;
    let released = tick >= up_at && t == up_at % period;
    (t >= start && t < up_at, t == start, released)
}

/// The bot of `side` at `tick`, a function of the tick alone (so any tool
/// can regenerate it): the left bot (player 0) swings up and down on a
/// 90-tick cycle and taps smash inside one tick every 120 ticks (pressed and
/// released in the same input, as a sub-tick tap arrives); the right bot
/// (player 1) steers with its analog stick, a 64-tick sawtooth, and holds
/// smash for 5 of every 150 ticks.
#[must_use]
pub fn scripted_input(side: Side, tick: u64) -> TickInput {
    let mut held = Buttons::NONE;
    let mut pressed = Buttons::NONE;
    let mut released = Buttons::NONE;
    let mut key = |b: Button, (h, p, r): (bool, bool, bool)| {
        held = if h { held.with(b) } else { held };
        pressed = if p { pressed.with(b) } else { pressed };
        released = if r { released.with(b) } else { released };
    };
    let mut axes = [0; tickwise::AXES];
    match side {
        Side::Left => {
            key(UP, cycle(tick, 90, 0, 45));
            key(DOWN, cycle(tick, 90, 45, 45));
            key(SMASH, (false, tick % 120 == 60, tick % 120 == 60));
        }
        Side::Right => {
            key(SMASH, cycle(tick, 150, 75, 5));
            let saw = i64::try_from(tick % 64).map_or(0, |t| t * 1024 - 32 * 1024);
            axes[0] = i16::try_from(saw).unwrap_or(0);
        }
    }
    TickInput {
        held,
        pressed,
        released,
        axes,
    }
}

/// Both bots' inputs for `tick`, in slot order (what [`Sim::step`] takes).
#[must_use]
pub fn scripted_inputs(tick: u64) -> [TickInput; 2] {
    Side::BOTH.map(|side| scripted_input(side, tick))
}

/// One player's random input for fuzzing and sync tests: any of its three
/// buttons held, pressed or released (not necessarily consistent, which the
/// sim must survive), and a random value on its stick.
#[must_use]
pub fn random_input(rng: &mut Pcg32) -> TickInput {
    let bits = u64::from(rng.next_u32());
    let axis = i16::try_from(rng.range_i32(-AXIS_FULL, AXIS_FULL)).unwrap_or(0);
    TickInput {
        held: Buttons::from_bits(bits & BUTTON_BITS),
        pressed: Buttons::from_bits((bits >> 3) & BUTTON_BITS),
        released: Buttons::from_bits((bits >> 6) & BUTTON_BITS),
        axes: [axis, 0, 0, 0],
    }
}
