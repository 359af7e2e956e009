//! What a lab run is asked for (its length in simulated seconds, its seed,
//! its tick rate), the bounds those are checked against, and the error that
//! names the bound a request broke.

use core::fmt;

use tickwise::{NANOS_PER_SEC, StepLength};

/// The longest run the lab accepts, in seconds of simulated real time.
pub const MAX_SECONDS: u32 = 120;
/// The fastest tick rate the lab accepts.
pub const MAX_TICK_HZ: u32 = 1_000;
/// The fewest fixed steps a run may hold. An accumulator always owes up to
/// one step that it has not run yet, so a run's measured sim speed can be
/// one step short of real time: within [`RATE_TOLERANCE`](super::RATE_TOLERANCE) (1 %) only when
/// the run holds at least 1 / 0.01 = 100 steps. A shorter run fails the
/// correct designs for its length alone (`--seconds 1 --hz 30`: 30 steps,
/// one step is 3.3 %), so it is refused.
pub const MIN_RUN_STEPS: u32 = 100;

/// The shortest run, in whole seconds, that holds [`MIN_RUN_STEPS`] steps
/// at `tick_hz` (1 s from 100 Hz up; 100 s at 1 Hz).
#[must_use]
pub const fn min_seconds(tick_hz: u32) -> u32 {
    if tick_hz == 0 {
        return MAX_SECONDS;
    }
    let s = MIN_RUN_STEPS.div_ceil(tick_hz);
    if s == 0 { 1 } else { s }
}

/// Why lab settings were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LabError {
    /// Run length outside `1..=MAX_SECONDS`.
    Seconds(u32),
    /// Tick rate outside `1..=MAX_TICK_HZ`.
    TickRate(u32),
    /// A run with fewer than [`MIN_RUN_STEPS`] steps: too short to measure
    /// sim speed within [`RATE_TOLERANCE`](super::RATE_TOLERANCE).
    TooShort {
        /// The run length asked for, in seconds.
        seconds: u32,
        /// The tick rate.
        tick_hz: u32,
        /// The shortest run that holds enough steps at this rate.
        min_seconds: u32,
    },
}

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LabError::Seconds(s) => write!(
                f,
                "run length must be 1..={MAX_SECONDS} seconds of simulated time, got {s}"
            ),
            LabError::TickRate(hz) => {
                write!(f, "tick rate must be 1..={MAX_TICK_HZ} Hz, got {hz}")
            }
            LabError::TooShort {
                seconds,
                tick_hz,
                min_seconds,
            } => write!(
                f,
                "a run of {seconds} s at {tick_hz} Hz holds {} steps, too few to measure sim \
                 speed within 1 % (an accumulator may owe one step, which alone is more than \
                 1 % of the run); the shortest run at {tick_hz} Hz is {min_seconds} s \
                 ({MIN_RUN_STEPS} steps or more)",
                u64::from(*seconds) * u64::from(*tick_hz)
            ),
        }
    }
}

impl core::error::Error for LabError {}

/// What the lab runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabSettings {
    seconds: u32,
    seed: u64,
    tick_hz: u32,
    step: StepLength,
}

impl Default for LabSettings {
    /// 10 s per cell, 60 Hz ticks, seed 1.
    fn default() -> Self {
        LabSettings {
            seconds: 10,
            seed: 1,
            tick_hz: 60,
            step: SIXTY_HZ,
        }
    }
}

impl LabSettings {
    /// Settings with `seconds` of simulated real time per cell, a tick rate of
    /// `tick_hz`, and `seed` for the jittery machine's noise.
    ///
    /// # Errors
    ///
    /// [`LabError::Seconds`] outside `1..=120`, [`LabError::TickRate`]
    /// outside `1..=1000`, [`LabError::TooShort`] for a run of fewer than
    /// [`MIN_RUN_STEPS`] steps (shorter than [`min_seconds`]).
    pub fn new(seconds: u32, seed: u64, tick_hz: u32) -> Result<LabSettings, LabError> {
        if !(1..=MAX_SECONDS).contains(&seconds) {
            return Err(LabError::Seconds(seconds));
        }
        let step = match StepLength::from_hz(u64::from(tick_hz)) {
            Ok(step) if tick_hz <= MAX_TICK_HZ => step,
            _ => return Err(LabError::TickRate(tick_hz)),
        };
        if seconds < min_seconds(tick_hz) {
            return Err(LabError::TooShort {
                seconds,
                tick_hz,
                min_seconds: min_seconds(tick_hz),
            });
        }
        Ok(LabSettings {
            seconds,
            seed,
            tick_hz,
            step,
        })
    }

    /// Seconds of simulated real time per cell.
    #[must_use]
    pub const fn seconds(&self) -> u32 {
        self.seconds
    }

    /// The noise seed.
    #[must_use]
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// The tick rate.
    #[must_use]
    pub const fn tick_hz(&self) -> u32 {
        self.tick_hz
    }

    /// The fixed step.
    #[must_use]
    pub const fn step(&self) -> StepLength {
        self.step
    }

    /// The run length in nanoseconds.
    #[must_use]
    pub const fn run_ns(&self) -> u64 {
        self.seconds as u64 * NANOS_PER_SEC
    }

    /// The sim time at which the world is compared across machines: a
    /// quarter of the run, so even a design running at half speed reaches it.
    #[must_use]
    pub const fn probe_ns(&self) -> u64 {
        self.run_ns() / 4
    }

    pub(super) fn max_frames(&self) -> u64 {
        // Every profile shows at most 144 frames a second; 1000/s is a hard stop.
        u64::from(self.seconds) * 1_000 + 1_000
    }

    pub(super) fn max_updates(&self) -> u64 {
        // Correct loops run seconds * hz updates; an unguarded spiral about 1.5x.
        4 * u64::from(self.seconds) * u64::from(self.tick_hz) + 10_000
    }
}

const SIXTY_HZ: StepLength = match StepLength::from_hz(60) {
    Ok(s) => s,
    Err(_) => unreachable!(),
};
