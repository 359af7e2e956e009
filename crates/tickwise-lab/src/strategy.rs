//! The loop designs under test.
//!
//! The three naive designs are written here, in a few lines each, because
//! they exist to fail. The three accumulator designs are the kernel's own
//! [`FixedLoop`] (and so its [`tickwise::Clock`]) with a [`Presenter`] for
//! interpolation: the lab demonstrates tickwise's clock, not a copy of it.

use core::num::NonZeroU32;

use tickwise::{
    CatchUpPolicy, ClockConfig, DEFAULT_MAX_STEPS_PER_FRAME, FixedLoop, Nanos, Presenter,
    StepLength, TickInputs,
};

use crate::world::{LabWorld, blend_px, upx_to_px};

/// The frame clamp of a guarded accumulator: a quarter second, the
/// `MaxFrameTime` of the tick-rate budget article (`docs/background.md`).
pub const GUARD_MAX_FRAME: Nanos = Nanos::from_millis(250);
/// The step cap of a guarded accumulator at 60 Hz and below (the island
/// rules' `maxStepsPerFrame`, 8); faster tick rates get [`guard_max_steps`].
pub const GUARD_MAX_STEPS: NonZeroU32 = DEFAULT_MAX_STEPS_PER_FRAME;

/// The step cap of a guarded accumulator at tick length `step`: the island
/// rules' 8 steps, or as many steps as cover the sim time those 8 steps cover at
/// 60 Hz (133⅓ ms) when the step is shorter, whichever is more.
///
/// Why not 8 at every rate: a cap in steps is a cap in sim time per frame,
/// and at 500 Hz 8 steps are 16 ms, less than one 60 Hz frame (16.7 ms) and
/// half a 30 fps one. The guard then threw time away on normal machines,
/// every frame: the guarded accumulators ran at 0.96× (60 Hz) and 0.48×
/// (30 fps) and failed the lab's pass condition at `--hz 500` and `1000`.
/// The guard exists to bound a frame's work when the machine cannot keep
/// up, so it must be stated in time; the same 133⅓ ms at every rate does
/// that and changes nothing at 60 Hz and below.
#[must_use]
pub fn guard_max_steps(step: StepLength) -> NonZeroU32 {
    // ceil(133 333 333⅓ ns / (num/den ns)) = ceil(8e9 * den / (60 * num)).
    let (num, den) = (u128::from(step.numerator()), u128::from(step.denominator()));
    let needed = (8 * u128::from(tickwise::NANOS_PER_SEC) * den).div_ceil(60 * num.max(1));
    let needed = u32::try_from(needed).unwrap_or(u32::MAX);
    NonZeroU32::new(needed).map_or(GUARD_MAX_STEPS, |n| n.max(GUARD_MAX_STEPS))
}
/// The step cap of an unguarded accumulator: as good as none. The lab's
/// machines bound the work anyway (every update costs simulated real time,
/// and a run stops at its length), see [`crate::experiment`].
pub const UNGUARDED_MAX_STEPS: NonZeroU32 = NonZeroU32::MAX;

/// A game-loop design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Design {
    /// `update(frame dt)`: one update per frame with the measured duration.
    Variable,
    /// One fixed update per frame, then `sleep(step)`: the loop experiment's
    /// sleep-capped design.
    Sleep,
    /// One fixed update per frame, no accumulator.
    FixedPerFrame,
    /// The accumulator: as many fixed steps as whole steps of time have passed.
    Accumulator,
    /// The accumulator, drawing interpolated between the last two ticks.
    Interpolated,
    /// The accumulator with interpolation and the kernel's jitter guard.
    JitterGuard,
}

impl Design {
    /// Every design, in table order.
    pub const ALL: [Design; 6] = [
        Design::Variable,
        Design::Sleep,
        Design::FixedPerFrame,
        Design::Accumulator,
        Design::Interpolated,
        Design::JitterGuard,
    ];

    /// The short name used in tables and JSON.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Design::Variable => "variable",
            Design::Sleep => "sleep",
            Design::FixedPerFrame => "fixed/frame",
            Design::Accumulator => "accum",
            Design::Interpolated => "accum+interp",
            Design::JitterGuard => "accum+jitter",
        }
    }

    /// One line saying what the design does.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Design::Variable => "update(dt) once per frame with the measured frame time",
            Design::Sleep => "one fixed update per frame, then sleep one step",
            Design::FixedPerFrame => "one fixed update per frame, no accumulator",
            Design::Accumulator => "accumulator: whole fixed steps per frame, draw the last tick",
            Design::Interpolated => "accumulator, draw interpolated by alpha",
            Design::JitterGuard => "accumulator + interpolation + jitter guard (1 ms at 60 Hz)",
        }
    }

    /// Whether the design has death-spiral guards to switch on and off.
    #[must_use]
    pub const fn has_guards(self) -> bool {
        matches!(
            self,
            Design::Accumulator | Design::Interpolated | Design::JitterGuard
        )
    }

    /// Whether the design runs the kernel's fixed-step clock.
    #[must_use]
    pub const fn is_accumulator(self) -> bool {
        self.has_guards()
    }
}

/// A design plus, for accumulators, whether the death-spiral guards are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Strategy {
    /// The design.
    pub design: Design,
    /// Guards on (step cap 8 and a 250 ms frame clamp) or off; always `false`
    /// for designs without guards.
    pub guards: bool,
}

impl Strategy {
    /// All nine strategies: the three naive designs, then each accumulator
    /// design with guards on and off.
    #[must_use]
    pub fn all() -> Vec<Strategy> {
        let mut v = Vec::new();
        for design in Design::ALL {
            if design.has_guards() {
                v.push(Strategy {
                    design,
                    guards: true,
                });
                v.push(Strategy {
                    design,
                    guards: false,
                });
            } else {
                v.push(Strategy {
                    design,
                    guards: false,
                });
            }
        }
        v
    }

    /// `on`, `off`, or `-` for designs without guards.
    #[must_use]
    pub const fn guards_label(self) -> &'static str {
        match (self.design.has_guards(), self.guards) {
            (false, _) => "-",
            (true, true) => "on",
            (true, false) => "off",
        }
    }

    /// A label such as `accum+interp (guards off)`, for charts.
    #[must_use]
    pub fn label(self) -> String {
        if self.design.has_guards() {
            format!("{} guards {}", self.design.name(), self.guards_label())
        } else {
            self.design.name().to_owned()
        }
    }

    /// The kernel clock configuration of an accumulator strategy.
    ///
    /// Guards on: step cap [`guard_max_steps`] and frame clamp
    /// [`GUARD_MAX_FRAME`]. Guards off: cap [`UNGUARDED_MAX_STEPS`], no clamp.
    /// The jitter design adds a tolerance of 6 % of the step (1 ms at 60 Hz).
    #[must_use]
    pub fn clock_config(self, step: StepLength) -> ClockConfig {
        let mut cfg = if self.guards {
            ClockConfig::new(step)
                .with_max_steps_per_frame(guard_max_steps(step))
                .with_max_frame(GUARD_MAX_FRAME)
        } else {
            ClockConfig::new(step).with_max_steps_per_frame(UNGUARDED_MAX_STEPS)
        };
        if self.design == Design::JitterGuard {
            // 3/50 of a step is under half a step, so this cannot fail; keep
            // the unguarded config rather than panic if it ever did.
            cfg = cfg
                .with_jitter_tolerance(jitter_tolerance(step))
                .unwrap_or(cfg);
        }
        cfg
    }
}

/// The jitter design's tolerance: 3/50 of the step (1 ms at 60 Hz).
#[must_use]
pub fn jitter_tolerance(step: StepLength) -> Nanos {
    let ns = u128::from(step.numerator()) * 3 / (u128::from(step.denominator()) * 50);
    Nanos::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// What one frame of a loop did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameOut {
    /// Updates run this frame.
    pub steps: u64,
    /// Where the runner was drawn, in pixels.
    pub drawn_px: f64,
    /// Interpolation factor after the frame (accumulators only).
    pub alpha: Option<f64>,
    /// Time the clock threw away this frame (clamped plus dropped).
    pub thrown_away: Nanos,
}

/// A loop under test, fed simulated frame durations.
#[derive(Debug)]
pub enum LoopUnderTest {
    /// The variable, sleep and fixed-per-frame designs.
    Naive {
        /// The design (one of the naive three).
        design: Design,
        /// The world.
        world: LabWorld,
        /// Updates run so far.
        updates: u64,
    },
    /// The accumulator designs, on the kernel's loop.
    Kernel {
        /// Whether to draw interpolated.
        interpolate: bool,
        /// The kernel loop.
        lp: Box<FixedLoop<LabWorld, TickInputs<()>>>,
        /// Previous and current snapshots.
        presenter: Presenter<i64>,
    },
}

impl LoopUnderTest {
    /// A fresh loop for `strategy` at tick rate `step`, probing the world at
    /// sim time `probe_ns`.
    #[must_use]
    pub fn new(strategy: Strategy, step: StepLength, probe_ns: u64) -> LoopUnderTest {
        match strategy.design {
            Design::Variable => LoopUnderTest::Naive {
                design: strategy.design,
                world: LabWorld::for_variable_step(probe_ns),
                updates: 0,
            },
            Design::Sleep | Design::FixedPerFrame => LoopUnderTest::Naive {
                design: strategy.design,
                world: LabWorld::new(step, probe_ns),
                updates: 0,
            },
            Design::Accumulator | Design::Interpolated | Design::JitterGuard => {
                let lp = FixedLoop::new(
                    LabWorld::new(step, probe_ns),
                    TickInputs::new(Vec::new()),
                    strategy.clock_config(step),
                    CatchUpPolicy::Full,
                );
                let presenter = Presenter::new(lp.sim());
                LoopUnderTest::Kernel {
                    interpolate: strategy.design != Design::Accumulator,
                    lp: Box::new(lp),
                    presenter,
                }
            }
        }
    }

    /// Runs one frame that the loop measured as `dt` long.
    pub fn frame(&mut self, dt: Nanos) -> FrameOut {
        match self {
            LoopUnderTest::Naive {
                design,
                world,
                updates,
            } => {
                if *design == Design::Variable {
                    world.advance_ns(dt.as_nanos());
                } else {
                    tickwise::Sim::step(world, &[()]);
                }
                *updates += 1;
                FrameOut {
                    steps: 1,
                    drawn_px: world.runner_px(),
                    alpha: None,
                    thrown_away: Nanos::ZERO,
                }
            }
            LoopUnderTest::Kernel {
                interpolate,
                lp,
                presenter,
            } => {
                let report = presenter.frame(lp, dt);
                let alpha = f64::from(report.alpha.as_f32());
                let drawn_px = if *interpolate {
                    blend_px(*presenter.previous(), *presenter.current(), alpha)
                } else {
                    upx_to_px(*presenter.current())
                };
                FrameOut {
                    steps: u64::from(report.steps),
                    drawn_px,
                    alpha: Some(alpha),
                    thrown_away: report.thrown_away(),
                }
            }
        }
    }

    /// Real time the loop sleeps after each frame: one step for the sleep design.
    #[must_use]
    pub fn sleep_after(&self, step: StepLength) -> Nanos {
        match self {
            LoopUnderTest::Naive {
                design: Design::Sleep,
                ..
            } => Nanos::from_nanos(step.as_nanos_floor()),
            _ => Nanos::ZERO,
        }
    }

    /// The world, read-only.
    #[must_use]
    pub fn world(&self) -> &LabWorld {
        match self {
            LoopUnderTest::Naive { world, .. } => world,
            LoopUnderTest::Kernel { lp, .. } => lp.sim(),
        }
    }

    /// Updates run so far.
    #[must_use]
    pub fn updates(&self) -> u64 {
        match self {
            LoopUnderTest::Naive { updates, .. } => *updates,
            LoopUnderTest::Kernel { lp, .. } => lp.tick().get(),
        }
    }
}
