//! The duel's config: a flat JSON object, every key required, nothing else allowed.
//!
//! A replay stores the config bytes and a verifier rebuilds the sim from them,
//! so the parser is strict: a typo'd key would otherwise be ignored on one
//! machine and mean something on the next build, and a key given twice read
//! differently by two JSON readers. The library's reader
//! ([`tickwise_catalog::ConfigObject`]) refuses both by name; every error
//! names its key.

use core::num::NonZeroU32;

use tickwise::{ClockConfig, StepLength};
use tickwise_catalog::ConfigObject;

/// The config the duel ships with (a 640 × 360 field at 62.5 Hz, first to 7).
pub const DEFAULT_CONFIG: &[u8] = br#"{
  "seed": 42,
  "stepMs": 16,
  "maxStepsPerFrame": 8,
  "width": 640,
  "height": 360,
  "paddleInset": 16,
  "paddleHalf": 32,
  "paddleSpeed": 6,
  "ballSpeed": 5,
  "maxBallSpeed": 12,
  "maxServeVy": 3,
  "smashBoost": 3,
  "serveDelay": 30,
  "winScore": 7
}
"#;

/// Every key a config must have, in the order the errors list them.
pub const KEYS: [&str; 14] = [
    "seed",
    "stepMs",
    "maxStepsPerFrame",
    "width",
    "height",
    "paddleInset",
    "paddleHalf",
    "paddleSpeed",
    "ballSpeed",
    "maxBallSpeed",
    "maxServeVy",
    "smashBoost",
    "serveDelay",
    "winScore",
];

/// Why config bytes were refused: the library's strict reader's error
/// ([`tickwise_catalog::ConfigError`]), naming the key, with "did you mean"
/// for a typo and the duplicate for a key given twice.
pub use tickwise_catalog::ConfigError;

/// A validated duel config. Lengths are in field units, speeds in units per
/// tick, delays in ticks. Only [`DuelConfig::parse`] makes one, so every
/// value the sim sees has passed the checks that keep its integer maths in range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DuelConfig {
    pub(crate) seed: u64,
    pub(crate) step: StepLength,
    pub(crate) max_steps_per_frame: NonZeroU32,
    pub(crate) width: i32,
    pub(crate) height: i32,
    pub(crate) paddle_inset: i32,
    pub(crate) paddle_half: i32,
    pub(crate) paddle_speed: i32,
    pub(crate) ball_speed: i32,
    pub(crate) max_ball_speed: i32,
    pub(crate) max_serve_vy: i32,
    pub(crate) smash_boost: i32,
    pub(crate) serve_delay: u32,
    pub(crate) win_score: u32,
}

/// Reads `key` as an integer in `min..=max` and converts it to `T`.
fn int<T: TryFrom<i64>>(
    obj: &ConfigObject,
    key: &'static str,
    min: i64,
    max: i64,
) -> Result<T, ConfigError> {
    let n = obj.i64_in(key, min, max)?;
    // In range, so it fits every `T` the duel asks for.
    T::try_from(n).map_err(|_| inconsistent(key, format!("must fit in {min}..={max}")))
}

fn inconsistent(key: &'static str, message: String) -> ConfigError {
    ConfigError::Inconsistent {
        key: key.into(),
        message,
    }
}

impl DuelConfig {
    /// Parses and validates config bytes (see [`DEFAULT_CONFIG`] for the shape).
    ///
    /// # Errors
    ///
    /// [`ConfigError`] naming the key: not a JSON object, an unknown,
    /// duplicate or missing key, a value that is not an integer in its range, or a value
    /// that contradicts another (a paddle as tall as the field, a paddle
    /// inset past a quarter of the width, a top speed under the serve speed
    /// or over half the height, a serve angle over the top speed).
    pub fn parse(bytes: &[u8]) -> Result<DuelConfig, ConfigError> {
        // Duplicate and unknown keys are refused here, by name.
        let obj = ConfigObject::parse(bytes, &KEYS)?;
        let seed = obj.u64_in("seed", 0, u64::MAX)?;
        let step_ms: u64 = int(&obj, "stepMs", 1, 1000)?;
        let step = StepLength::from_millis(step_ms)
            .map_err(|e| inconsistent("stepMs", format!("gives no valid step: {e}")))?;
        let max_steps = obj.u32_in("maxStepsPerFrame", 1, 1000)?;
        let max_steps_per_frame = NonZeroU32::new(max_steps)
            .ok_or_else(|| inconsistent("maxStepsPerFrame", "must be at least 1".into()))?;
        let c = DuelConfig {
            seed,
            step,
            max_steps_per_frame,
            width: int(&obj, "width", 64, 10_000)?,
            height: int(&obj, "height", 32, 10_000)?,
            paddle_inset: int(&obj, "paddleInset", 1, 2_500)?,
            paddle_half: int(&obj, "paddleHalf", 1, 5_000)?,
            paddle_speed: int(&obj, "paddleSpeed", 0, 1_000)?,
            ball_speed: int(&obj, "ballSpeed", 1, 1_000)?,
            max_ball_speed: int(&obj, "maxBallSpeed", 1, 1_000)?,
            max_serve_vy: int(&obj, "maxServeVy", 0, 1_000)?,
            smash_boost: int(&obj, "smashBoost", 0, 1_000)?,
            serve_delay: int(&obj, "serveDelay", 1, 10_000)?,
            win_score: int(&obj, "winScore", 1, 99)?,
        };
        c.check()
    }

    /// The cross-key rules. They keep the sim's clamps well formed (a
    /// paddle's centre range is never empty) and its reflections inside the
    /// field (one tick of travel never crosses more than half the field).
    fn check(self) -> Result<DuelConfig, ConfigError> {
        if 2 * self.paddle_half >= self.height {
            let msg = format!("must be under half the height ({})", self.height / 2);
            return Err(inconsistent("paddleHalf", msg));
        }
        if self.paddle_inset > self.width / 4 {
            let msg = format!(
                "must be at most a quarter of the width ({})",
                self.width / 4
            );
            return Err(inconsistent("paddleInset", msg));
        }
        if self.max_ball_speed < self.ball_speed {
            let msg = format!("must be at least ballSpeed ({})", self.ball_speed);
            return Err(inconsistent("maxBallSpeed", msg));
        }
        let limit = (self.height / 2).min(self.width / 4);
        if self.max_ball_speed > limit {
            let msg =
                format!("must be at most half the height and a quarter of the width ({limit})");
            return Err(inconsistent("maxBallSpeed", msg));
        }
        if self.max_serve_vy > self.max_ball_speed {
            let msg = format!("must be at most maxBallSpeed ({})", self.max_ball_speed);
            return Err(inconsistent("maxServeVy", msg));
        }
        Ok(self)
    }

    /// The seed of the serve generator.
    #[must_use]
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// The clock the duel runs on: `stepMs` per tick, at most
    /// `maxStepsPerFrame` steps per frame.
    #[must_use]
    pub const fn clock_config(&self) -> ClockConfig {
        ClockConfig::new(self.step).with_max_steps_per_frame(self.max_steps_per_frame)
    }

    /// The field's size in units, `(width, height)`.
    #[must_use]
    pub const fn field(&self) -> (i32, i32) {
        (self.width, self.height)
    }

    /// Points needed to win.
    #[must_use]
    pub const fn win_score(&self) -> u32 {
        self.win_score
    }

    /// The paddles' distance from their side of the field, and half their
    /// height, in units `(inset, half)`: for drawing.
    #[must_use]
    pub const fn paddle(&self) -> (i32, i32) {
        (self.paddle_inset, self.paddle_half)
    }
}
