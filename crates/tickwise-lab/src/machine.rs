//! Simulated machines: when frames start, on a deterministic clock.
//!
//! A machine shows frames on a display with vsync: a frame's work (render,
//! plus each update the loop ran, plus any sleep the loop asked for, plus an
//! injected stall) starts at a vsync and the next frame starts at the first
//! vsync after the work ends. So a machine that finishes early still waits for
//! the display, and one that overruns misses a vsync and shows the frame late;
//! that is where 30 fps on a 60 Hz display and the death spiral come from.
//!
//! The loop reads the clock at each frame start. On the jittery machine that
//! reading carries noise (scheduling delay, coarse or fuzzed timestamps):
//! `k * 16.667 ms ± 0.5 ms`, drawn from a seeded [`Pcg32`], so frame durations
//! wander around the step length. Everything is integer nanoseconds and the
//! same seed gives the same frames.

use tickwise::{NANOS_PER_MILLI, NANOS_PER_SEC, Nanos, Pcg32, StepLength};

/// A simulated machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Profile {
    /// A fast machine on a 144 Hz display: 2 ms of render per frame.
    Hz144,
    /// A typical machine on a 60 Hz display: 4 ms of render per frame.
    Hz60,
    /// A slow machine: 25 ms of render on a 60 Hz display, so every frame
    /// misses one vsync and it runs at 30 fps.
    Hz30,
    /// 60 Hz, but the loop reads frame timestamps with ±0.5 ms of noise.
    Jittery,
    /// Fault injection: the 60 Hz machine with a 300 ms stall every 120 frames.
    Stalls,
    /// Fault injection: one update costs 1.2 steps of real time, so catching
    /// up makes the next frame longer still.
    Overloaded,
}

/// How a profile behaves; see [`Profile::describe`].
#[derive(Clone, Copy, Debug)]
struct Spec {
    display_hz: u64,
    render: Nanos,
    /// Update cost as a fraction `num / den` of the step length.
    cost: (u64, u64),
    /// Half-width of the timestamp noise in ns.
    noise: i32,
    /// `(every, extra)`: frames `every - 1`, `2 * every - 1`, ... take `extra` longer.
    stall: Option<(u64, Nanos)>,
}

impl Profile {
    /// Every profile, in table order.
    pub const ALL: [Profile; 6] = [
        Profile::Hz144,
        Profile::Hz60,
        Profile::Hz30,
        Profile::Jittery,
        Profile::Stalls,
        Profile::Overloaded,
    ];

    /// The short name used in tables, JSON and file names.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Profile::Hz144 => "144hz",
            Profile::Hz60 => "60hz",
            Profile::Hz30 => "30hz",
            Profile::Jittery => "jittery",
            Profile::Stalls => "stalls",
            Profile::Overloaded => "overloaded",
        }
    }

    /// A profile by its [`Profile::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Fault-injection profiles are excluded from the pass condition: they
    /// show what the guards cost and what they prevent.
    #[must_use]
    pub const fn is_fault(self) -> bool {
        matches!(self, Profile::Stalls | Profile::Overloaded)
    }

    /// One line saying what the machine does.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Profile::Hz144 => "144 Hz display, 2 ms render",
            Profile::Hz60 => "60 Hz display, 4 ms render",
            Profile::Hz30 => "60 Hz display, 25 ms render: 30 fps",
            Profile::Jittery => "60 Hz, frame timestamps read with +-0.5 ms noise",
            Profile::Stalls => "60 Hz with a 300 ms stall every 120 frames (fault)",
            Profile::Overloaded => "60 Hz, one update costs 1.2 steps (fault)",
        }
    }

    const fn spec(self) -> Spec {
        let normal = Spec {
            display_hz: 60,
            render: Nanos::from_millis(4),
            cost: (1, 40),
            noise: 0,
            stall: None,
        };
        match self {
            Profile::Hz144 => Spec {
                display_hz: 144,
                render: Nanos::from_millis(2),
                ..normal
            },
            Profile::Hz60 => normal,
            Profile::Hz30 => Spec {
                render: Nanos::from_millis(25),
                ..normal
            },
            Profile::Jittery => Spec {
                noise: 500_000,
                ..normal
            },
            Profile::Stalls => Spec {
                stall: Some((120, Nanos::from_millis(300))),
                ..normal
            },
            Profile::Overloaded => Spec {
                cost: (6, 5),
                ..normal
            },
        }
    }

    /// The render time of one frame (without updates, sleeps or stalls).
    #[must_use]
    pub const fn render_time(self) -> Nanos {
        self.spec().render
    }

    /// The display refresh period, rounded to the nearest nanosecond
    /// (16 666 667 ns at 60 Hz, 6 944 444 ns at 144 Hz).
    #[must_use]
    pub const fn vsync_interval(self) -> Nanos {
        let hz = self.spec().display_hz;
        Nanos::from_nanos((NANOS_PER_SEC + hz / 2) / hz)
    }

    /// The real time one update costs on this machine for a given step.
    #[must_use]
    pub fn update_cost(self, step: StepLength) -> Nanos {
        let (num, den) = self.spec().cost;
        let ns = u128::from(step.numerator()) * u128::from(num)
            / (u128::from(step.denominator()) * u128::from(den));
        Nanos::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

impl core::fmt::Display for Profile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// When one frame starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameStart {
    /// The true start (a vsync), in ns since the run began.
    pub true_ns: u64,
    /// What the loop's clock read, in ns since the run began (the true start
    /// plus noise, never earlier than the previous reading).
    pub seen_ns: u64,
}

/// A running simulated machine.
#[derive(Clone, Debug)]
pub struct Machine {
    profile: Profile,
    spec: Spec,
    cost: Nanos,
    rng: Pcg32,
    vsync: u64,
    frame: u64,
    last_seen: u64,
}

impl Machine {
    /// A machine at time zero, running a sim with fixed step `step` (which
    /// sets the overloaded machine's update cost), with timestamp noise
    /// drawn from `seed`.
    #[must_use]
    pub fn new(profile: Profile, step: StepLength, seed: u64) -> Machine {
        Machine {
            profile,
            spec: profile.spec(),
            cost: profile.update_cost(step),
            rng: Pcg32::new(seed, profile as u64),
            vsync: 0,
            frame: 0,
            last_seen: 0,
        }
    }

    /// The profile.
    #[must_use]
    pub const fn profile(&self) -> Profile {
        self.profile
    }

    /// See [`Profile::vsync_interval`]. A whole number of nanoseconds, not an
    /// exact fraction of a second: a 60 Hz display whose vsync times were
    /// `floor(k / 60 s)` would sit exactly on the 60 Hz tick boundary and
    /// make the accumulator alternate on rounding alone.
    fn period_ns(&self) -> u64 {
        self.profile.vsync_interval().as_nanos()
    }

    fn vsync_ns(&self, k: u64) -> u64 {
        k.saturating_mul(self.period_ns())
    }

    /// The start of the current frame.
    pub fn frame_start(&mut self) -> FrameStart {
        let true_ns = self.vsync_ns(self.vsync);
        let seen = if self.frame == 0 || self.spec.noise == 0 {
            true_ns
        } else {
            let noise = self.rng.range_i32(-self.spec.noise, self.spec.noise);
            true_ns.saturating_add_signed(i64::from(noise))
        };
        let seen_ns = seen.max(self.last_seen);
        self.last_seen = seen_ns;
        FrameStart { true_ns, seen_ns }
    }

    /// The work of the current frame given the updates it ran and any sleep
    /// the loop added: render + updates * cost + sleep + stall.
    #[must_use]
    pub fn frame_work(&self, updates: u64, sleep: Nanos) -> Nanos {
        let mut work = self.spec.render.as_nanos();
        work = work.saturating_add(updates.saturating_mul(self.cost.as_nanos()));
        work = work.saturating_add(sleep.as_nanos());
        if let Some((every, extra)) = self.spec.stall
            && every > 0
            && self.frame % every == every - 1
        {
            work = work.saturating_add(extra.as_nanos());
        }
        Nanos::from_nanos(work)
    }

    /// Ends the current frame after `work`: the next frame starts at the
    /// first vsync at or after the work ends, and at least one vsync later.
    pub fn finish_frame(&mut self, work: Nanos) {
        let end = self.vsync_ns(self.vsync).saturating_add(work.as_nanos());
        let first = end.div_ceil(self.period_ns());
        self.vsync = first.max(self.vsync.saturating_add(1));
        self.frame = self.frame.saturating_add(1);
    }
}

/// Milliseconds as `f64`, for reports.
#[must_use]
pub fn ms(ns: u64) -> f64 {
    ns as f64 / NANOS_PER_MILLI as f64
}
