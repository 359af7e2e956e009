//! The merge-island world of the island rules (`docs/background.md`): the
//! reference sim of tickwise.
//!
//! Per step, with `input` the tick's integer input:
//!
//! ```text
//! velX += input * accel
//! velX  = floor(velX * frictionNum / frictionDen)   (floor, also for negatives)
//! posX += velX;  velY += 1;  posY += velY
//! rng   = rng * rngMultiplier + rngIncrement  (mod 2^32)
//! score += rng % 7;  tick += 1
//! ```
//!
//! Digest: `tick|posX|posY|velX|velY|score|rng|droppedMs`. Positions are 64-bit
//! (posY grows quadratically) and all arithmetic wraps on overflow, which no
//! realistic session reaches (posY needs 4.3 billion ticks).

mod arith;
mod session;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use tickwise::{
    CatchUpPolicy, ClockConfig, Lcg32, NANOS_PER_MILLI, Nanos, Sim, StateVisitor, StepLength,
};

use tickwise_config::{ConfigError, ConfigObject};

pub use arith::MAX_FRICTION_DEN;
use arith::{clamp_friction, fast_bound, friction_slow, mod7, mul_or_flag};
pub use session::{IslandSession, island_loop, island_session};
/// The resume report's contract numbers, defined in the kernel (re-exported
/// here for the script, which reports the island session's resumes).
pub use tickwise::ResumeSummary;

/// The largest step accepted in a config, in ms (one minute).
pub const MAX_STEP_MS: u64 = 60_000;

/// The keys of the island loop config, in the order `config/island_loop.json`
/// lists them (`version`, `game` and `maxFrameMs` are optional). A config with any
/// other key, except a `note` ([`tickwise_config::NOTE_KEYS`]), is refused.
pub const LOOP_KEYS: [&str; 11] = [
    "version",
    "game",
    "seed",
    "stepMs",
    "accel",
    "frictionNum",
    "frictionDen",
    "maxStepsPerFrame",
    "rngMultiplier",
    "rngIncrement",
    "maxFrameMs",
];

/// The keys of the lifecycle config (`maxCatchUpSteps` and `minCatchUpMs`
/// are read by the `capped` policy only, but allowed with every policy).
pub const LIFECYCLE_KEYS: [&str; 5] = [
    "version",
    "stepMs",
    "maxCatchUpSteps",
    "minCatchUpMs",
    "policy",
];

/// The island loop config (`config/island_loop.json`, the island rules' loop
/// parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IslandConfig {
    /// Initial RNG state.
    pub seed: u32,
    /// Fixed step in milliseconds.
    pub step_ms: u64,
    /// Velocity added per unit of input.
    pub accel: i64,
    /// Friction numerator.
    pub friction_num: i64,
    /// Friction denominator (positive). `from_json` takes 1 to 10^6, and
    /// a numerator up to the denominator; a world built from a hand-made
    /// config clamps them into `0 <= num <= den <=` [`MAX_FRICTION_DEN`].
    pub friction_den: i64,
    /// Step cap per frame.
    pub max_steps_per_frame: u32,
    /// LCG multiplier.
    pub rng_multiplier: u32,
    /// LCG increment.
    pub rng_increment: u32,
    /// Optional frame clamp in ms (like the tick-rate budget article's
    /// `MaxFrameTime`); the island rules have none.
    pub max_frame_ms: Option<u64>,
}

impl IslandConfig {
    /// Parses and validates the JSON config: the keys of [`LOOP_KEYS`] (and a
    /// `note`), each once.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the offending key: a duplicate or unknown key,
    /// then (in the order of [`LOOP_KEYS`]) a missing key, a wrong type (a
    /// non-integer number included) or a value out of range.
    pub fn from_json(bytes: &[u8]) -> Result<IslandConfig, ConfigError> {
        let c = ConfigObject::parse(bytes, &LOOP_KEYS)?;
        if c.has("version") {
            c.u32_in("version", 1, 1)?;
        }
        // Which game a config file was written for; any text.
        c.optional_str("game")?;
        // Keys are checked in the order the config file lists them, so the first
        // problem reported is the first one a reader meets.
        let seed = c.u32_in("seed", 0, u32::MAX)?;
        let step_ms = c.u64_in("stepMs", 1, MAX_STEP_MS)?;
        let accel = c.i64_in("accel", -1_000_000, 1_000_000)?;
        let friction_num = c.i64_in("frictionNum", 0, 1_000_000)?;
        let friction_den = c.i64_in("frictionDen", 1, 1_000_000)?;
        if friction_num > friction_den {
            return Err(ConfigError::Inconsistent {
                key: "frictionNum".into(),
                message: format!(
                    "must not exceed frictionDen ({friction_num} > {friction_den}): friction above 1 makes velocity grow without bound"
                ),
            });
        }
        let max_steps_per_frame = c.u32_in("maxStepsPerFrame", 1, 10_000)?;
        let rng_multiplier = c.u32_in("rngMultiplier", 0, u32::MAX)?;
        let rng_increment = c.u32_in("rngIncrement", 0, u32::MAX)?;
        let max_frame_ms = if c.has("maxFrameMs") {
            Some(c.u64_in("maxFrameMs", 1, 86_400_000)?)
        } else {
            None
        };
        Ok(IslandConfig {
            seed,
            step_ms,
            accel,
            friction_num,
            friction_den,
            max_steps_per_frame,
            rng_multiplier,
            rng_increment,
            max_frame_ms,
        })
    }

    /// The step length.
    #[must_use]
    pub fn step(&self) -> StepLength {
        // step_ms is validated to 1..=60000, which always converts.
        StepLength::from_millis(self.step_ms).unwrap_or(DEFAULT_STEP)
    }

    /// The clock configuration: the step, the step cap and the optional clamp.
    #[must_use]
    pub fn clock_config(&self) -> ClockConfig {
        let cap = core::num::NonZeroU32::new(self.max_steps_per_frame)
            .unwrap_or(tickwise::DEFAULT_MAX_STEPS_PER_FRAME);
        let c = ClockConfig::new(self.step()).with_max_steps_per_frame(cap);
        match self.max_frame_ms {
            Some(ms) => c.with_max_frame(Nanos::from_millis(ms)),
            None => c,
        }
    }
}

const DEFAULT_STEP: StepLength = match StepLength::from_millis(16) {
    Ok(s) => s,
    Err(_) => unreachable!(),
};

/// The lifecycle config (`config/island_lifecycle.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LifecycleConfig {
    /// Step in ms; must equal the loop's.
    pub step_ms: u64,
    /// The catch-up policy (`"policy"`: `capped` by default, or `full`, `freeze`).
    pub policy: CatchUpPolicy,
}

impl LifecycleConfig {
    /// Parses and validates the JSON config: the keys of [`LIFECYCLE_KEYS`]
    /// (and a `note`), each once.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the offending key.
    pub fn from_json(bytes: &[u8]) -> Result<LifecycleConfig, ConfigError> {
        let c = ConfigObject::parse(bytes, &LIFECYCLE_KEYS)?;
        if c.has("version") {
            c.u32_in("version", 1, 1)?;
        }
        let step_ms = c.u64_in("stepMs", 1, MAX_STEP_MS)?;
        let policy = match c.optional_str("policy")? {
            None | Some("capped") => CatchUpPolicy::Capped {
                max_steps: c.u64_in("maxCatchUpSteps", 0, 1_000_000)?,
                min_elapsed: Nanos::from_millis(c.u64_in("minCatchUpMs", 0, 86_400_000)?),
            },
            Some("full") => CatchUpPolicy::Full,
            Some("freeze") => CatchUpPolicy::Freeze,
            Some(other) => {
                return Err(ConfigError::OutOfRange {
                    key: "policy".into(),
                    expected: "one of \"capped\", \"full\", \"freeze\"".into(),
                    found: format!("{other:?}"),
                });
            }
        };
        Ok(LifecycleConfig { step_ms, policy })
    }
}

/// The island's scripted input for `tick`: `tick % 40 < 20 ? 1 : -1`
/// (20 ticks right, 20 ticks left), the pattern every golden digest of the
/// island is computed with. The catalog's `--inputs scripted` uses it.
#[must_use]
pub const fn scripted_input(tick: u64) -> i32 {
    if tick % 40 < 20 { 1 } else { -1 }
}

/// The scripted inputs ([`scripted_input`]) for ticks `0..len`.
#[must_use]
pub fn scripted_inputs(len: usize) -> Vec<i32> {
    (0..len as u64).map(scripted_input).collect()
}

/// The island world's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IslandWorld {
    tick: u64,
    pos_x: i64,
    pos_y: i64,
    vel_x: i64,
    vel_y: i64,
    score: u64,
    rng: Lcg32,
    dropped_ns: u64,
    accel: i64,
    friction_num: i64,
    friction_den: i64,
    /// `log2(friction_den)` when it is a power of two (16 in the island rules), so
    /// floor division can be an arithmetic shift (0 otherwise, unused).
    friction_shift: u32,
    /// The friction's fast path (`v * num >> shift`) is taken for
    /// `|v| < fast_bound`: 2^43 when the denominator is a power of two and
    /// `num < 2^20` (every config `from_json` accepts with such a
    /// denominator), 0 (never) otherwise; see [`fast_bound`].
    fast_bound: u64,
}

impl IslandWorld {
    /// The initial world for a config.
    #[must_use]
    pub const fn new(cfg: &IslandConfig) -> IslandWorld {
        // A friction outside 0 <= num <= den <= 2^31 can only come from a
        // config built by hand (`from_json` refuses it): clamped, the same
        // on every target (see `friction_split`).
        let (num, den) = clamp_friction(cfg.friction_num, cfg.friction_den);
        IslandWorld {
            tick: 0,
            pos_x: 0,
            pos_y: 0,
            vel_x: 0,
            vel_y: 0,
            score: 0,
            rng: Lcg32::new(cfg.seed, cfg.rng_multiplier, cfg.rng_increment),
            dropped_ns: 0,
            accel: cfg.accel,
            friction_num: num,
            friction_den: den,
            friction_shift: den.trailing_zeros(),
            fast_bound: fast_bound(num, den),
        }
    }

    /// Steps run.
    #[must_use]
    pub const fn tick(&self) -> u64 {
        self.tick
    }
    /// Horizontal position.
    #[must_use]
    pub const fn pos_x(&self) -> i64 {
        self.pos_x
    }
    /// Vertical position.
    #[must_use]
    pub const fn pos_y(&self) -> i64 {
        self.pos_y
    }
    /// Horizontal velocity.
    #[must_use]
    pub const fn vel_x(&self) -> i64 {
        self.vel_x
    }
    /// Vertical velocity.
    #[must_use]
    pub const fn vel_y(&self) -> i64 {
        self.vel_y
    }
    /// Score.
    #[must_use]
    pub const fn score(&self) -> u64 {
        self.score
    }
    /// RNG state.
    #[must_use]
    pub const fn rng(&self) -> u32 {
        self.rng.state()
    }
    /// Time dropped by the frame loop, in whole milliseconds.
    #[must_use]
    pub const fn dropped_ms(&self) -> u64 {
        self.dropped_ns / NANOS_PER_MILLI
    }
}

impl Sim for IslandWorld {
    type Input = i32;

    // Inlined across crates so a loop of steps keeps the world in registers.
    #[inline]
    fn step(&mut self, inputs: &[i32]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        let v = self
            .vel_x
            .wrapping_add(i64::from(*input).wrapping_mul(self.accel));
        // Floor division, also for negatives (JS Math.floor, Python //). With a
        // positive divisor, div_euclid and an arithmetic right shift both floor;
        // the shift keeps a step at a few ns instead of waiting on a divide.
        let (p, slow) = mul_or_flag(v, self.friction_num, self.fast_bound);
        let v = if slow {
            // Rare (a config whose denominator is not a power of two, or a
            // product past 64 bits) and laid out of the hot path.
            friction_slow(v, self.friction_num, self.friction_den)
        } else {
            p >> self.friction_shift
        };
        self.vel_x = v;
        self.pos_x = self.pos_x.wrapping_add(v);
        self.vel_y = self.vel_y.wrapping_add(1);
        self.pos_y = self.pos_y.wrapping_add(self.vel_y);
        let r = self.rng.next_u32();
        self.score = self.score.wrapping_add(u64::from(mod7(r)));
        self.tick = self.tick.wrapping_add(1);
    }

    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("tick");
        v.value(self.tick);
        v.field("posX");
        v.value_i64(self.pos_x);
        v.field("posY");
        v.value_i64(self.pos_y);
        v.field("velX");
        v.value_i64(self.vel_x);
        v.field("velY");
        v.value_i64(self.vel_y);
        v.field("score");
        v.value(self.score);
        v.field("rng");
        v.value(u64::from(self.rng.state()));
        v.field("droppedMs");
        v.value(self.dropped_ns / NANOS_PER_MILLI);
    }

    fn on_time_dropped(&mut self, dropped: Nanos) {
        self.dropped_ns = self.dropped_ns.saturating_add(dropped.as_nanos());
    }

    fn digest(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}|{}|{}|{}",
            self.tick,
            self.pos_x,
            self.pos_y,
            self.vel_x,
            self.vel_y,
            self.score,
            self.rng.state(),
            self.dropped_ms()
        )
    }
}

impl tickwise::Capture for IslandWorld {
    type Snapshot = IslandWorld;
    fn capture_into(&self, out: &mut IslandWorld) {
        out.clone_from(self);
    }
    fn capture(&self) -> IslandWorld {
        self.clone()
    }
}
