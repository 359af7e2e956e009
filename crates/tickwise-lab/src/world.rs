//! The lab's world: a runner crossing the screen and a bouncing ball.
//!
//! Two bodies, two questions. The **runner** moves at a constant
//! [`RUNNER_SPEED_PX_PER_S`], so its ideal on-screen position at real time `t`
//! is exactly `speed * t`: comparing what each loop draws against that line
//! measures lag and judder, and shows what interpolation buys. The **ball**
//! falls under gravity and bounces: its integration depends on the step
//! size, so two machines that step with different `dt` end up with different
//! worlds at the same sim time. That is how the lab catches variable-step
//! loops, whose sim *clock* is right on every machine but whose *world* is not.
//!
//! All state is integer (micro-pixels, micrometres), so "the same world" means
//! bit-identical, checked with the kernel's FNV-1a checksum.

use tickwise::{Capture, Sim, StateVisitor, StepLength};

/// The runner's speed on screen: 600 px/s, 10 px per 60 Hz tick.
pub const RUNNER_SPEED_PX_PER_S: u64 = 600;
/// Micro-pixels per pixel (runner position unit).
const MICRO: i128 = 1_000_000;
/// Nanoseconds per second.
const NS: i128 = 1_000_000_000;
/// Gravity in µm/s² (pointing down).
const GRAVITY_UM_PER_S2: i128 = -9_810_000;
/// The ball's launch speed in µm/s: up at 12 m/s, a bounce period near 2.45 s.
const LAUNCH_UM_PER_S: i64 = 12_000_000;

/// A one-nanosecond step (denominator 1).
const ONE_NS: StepLength = match StepLength::from_nanos_ratio(1, 1) {
    Ok(s) => s,
    Err(_) => unreachable!(),
};

/// The world state, plus the probe that records it at one sim time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabWorld {
    /// Runner position in micro-pixels.
    runner_upx: i64,
    /// Ball height in µm (0 is the floor).
    ball_um: i64,
    /// Ball velocity in µm/s.
    ball_vel: i64,
    /// Sim time in units of `1 / time_den` ns.
    time_num: u128,
    /// Denominator of the sim time (the fixed step's, or 1 for whole-ns steps).
    time_den: u64,
    /// The fixed step used by [`Sim::step`].
    step: StepLength,
    /// The probe time in the same units as `time_num`.
    probe_at: u128,
    probe: Option<ProbeReading>,
}

/// A reading of the world taken at the probe time: the state as it was at
/// the first update that reached that sim time.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeReading {
    /// The sim time the update ended at, in ns (rounded down); equal to the
    /// probe time for fixed-step loops, at or just past it for variable step.
    pub sim_ns: u64,
    /// FNV-1a checksum of the state ([`Sim::checksum`]).
    pub checksum: u64,
    /// The ball's height then, in µm (readable evidence of the checksum).
    pub ball_um: i64,
}

impl LabWorld {
    /// A fresh world whose [`Sim::step`] advances `step`, recording a probe at
    /// sim time `probe_ns`. Variable-step loops call [`LabWorld::advance_ns`]
    /// instead and should pass a step with denominator 1 here.
    #[must_use]
    pub fn new(step: StepLength, probe_ns: u64) -> LabWorld {
        let den = step.denominator();
        LabWorld {
            runner_upx: 0,
            ball_um: 0,
            ball_vel: LAUNCH_UM_PER_S,
            time_num: 0,
            time_den: den,
            step,
            probe_at: u128::from(probe_ns) * u128::from(den),
            probe: None,
        }
    }

    /// A world for a variable-step loop (whole-nanosecond time, no fixed
    /// step of its own), probing at sim time `probe_ns`.
    #[must_use]
    pub fn for_variable_step(probe_ns: u64) -> LabWorld {
        // 1 ns with denominator 1: never stepped by `Sim::step` in that loop.
        LabWorld::new(ONE_NS, probe_ns)
    }

    /// Advances by a variable `dt_ns` nanoseconds (the variable-step loop's update).
    ///
    /// Exact only when the world was built with a whole-nanosecond step
    /// (denominator 1); otherwise the time is scaled into the step's units.
    pub fn advance_ns(&mut self, dt_ns: u64) {
        self.integrate(u128::from(dt_ns) * u128::from(self.time_den));
    }

    /// Integrates `dt` given in units of `1 / time_den` ns: semi-implicit
    /// Euler (velocity first), floor division, an elastic floor.
    fn integrate(&mut self, dt_scaled: u128) {
        let den = i128::from(self.time_den);
        let dt = i128::try_from(dt_scaled).unwrap_or(i128::MAX / 4);
        let per_s = NS * den;
        let speed = i128::from(RUNNER_SPEED_PX_PER_S) * MICRO;
        self.runner_upx = saturate(i128::from(self.runner_upx) + (speed * dt).div_euclid(per_s));
        let vel = i128::from(self.ball_vel) + (GRAVITY_UM_PER_S2 * dt).div_euclid(per_s);
        let mut y = i128::from(self.ball_um) + (vel * dt).div_euclid(per_s);
        let mut vel = vel;
        if y < 0 {
            y = -y;
            vel = -vel;
        }
        self.ball_vel = saturate(vel);
        self.ball_um = saturate(y);
        self.time_num = self.time_num.saturating_add(dt_scaled);
        if self.probe.is_none() && self.time_num >= self.probe_at {
            self.probe = Some(ProbeReading {
                sim_ns: u64::try_from(self.time_num / u128::from(self.time_den))
                    .unwrap_or(u64::MAX),
                checksum: self.checksum(),
                ball_um: self.ball_um,
            });
        }
    }

    /// The runner's position in pixels (presentation only).
    #[must_use]
    pub fn runner_px(&self) -> f64 {
        self.runner_upx as f64 / MICRO as f64
    }

    /// Sim time in seconds.
    #[must_use]
    pub fn sim_seconds(&self) -> f64 {
        self.time_num as f64 / self.time_den as f64 / NS as f64
    }

    /// The probe, once the sim time reached it.
    #[must_use]
    pub const fn probe(&self) -> Option<ProbeReading> {
        self.probe
    }
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

impl Sim for LabWorld {
    type Input = ();

    fn step(&mut self, _inputs: &[()]) {
        self.integrate(u128::from(self.step.numerator()));
    }

    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("runner_upx");
        v.value_i64(self.runner_upx);
        v.field("ball_um");
        v.value_i64(self.ball_um);
        v.field("ball_vel");
        v.value_i64(self.ball_vel);
    }
}

impl Capture for LabWorld {
    /// The runner's position in micro-pixels: all a renderer draws.
    type Snapshot = i64;

    fn capture_into(&self, out: &mut i64) {
        *out = self.runner_upx;
    }

    fn capture(&self) -> i64 {
        self.runner_upx
    }
}

/// Interpolates the runner between two snapshots, in pixels (presentation only).
#[must_use]
pub fn blend_px(prev_upx: i64, curr_upx: i64, alpha: f64) -> f64 {
    let prev = prev_upx as f64;
    let curr = curr_upx as f64;
    (prev + (curr - prev) * alpha) / MICRO as f64
}

/// A runner snapshot in pixels.
#[must_use]
pub fn upx_to_px(upx: i64) -> f64 {
    upx as f64 / MICRO as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_hz_step_moves_runner_ten_px_exactly() {
        // 600 px/s * 1/60 s = 10 px = 10_000_000 µpx, with no rounding.
        let mut w = LabWorld::new(StepLength::from_hz(60).unwrap(), u64::MAX);
        w.step(&[()]);
        assert_eq!(w.runner_upx, 10_000_000);
        // Ball: v = 12e6 + floor(-9.81e6 / 60) = 12e6 - 163_500 = 11_836_500 µm/s;
        // y = floor(11_836_500 / 60) = 197_275 µm.
        assert_eq!((w.ball_vel, w.ball_um), (11_836_500, 197_275));
    }

    #[test]
    fn probe_records_first_update_at_or_past_probe_time() {
        let step = StepLength::from_hz(60).unwrap();
        let mut w = LabWorld::new(step, 50_000_000); // 3 ticks
        w.step(&[()]);
        w.step(&[()]);
        assert!(w.probe().is_none());
        w.step(&[()]);
        let p = w.probe().unwrap();
        assert_eq!(p.sim_ns, 50_000_000);
        assert_eq!(p.checksum, w.checksum());
    }
}
