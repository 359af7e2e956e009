//! The accumulator: variable frame durations in, whole fixed steps out.
//!
//! The clock is pure time arithmetic. It does not run the simulation; it says
//! how many steps a frame owes and the caller runs them (see [`crate::FixedLoop`]).
//! That keeps it usable from any loop: a desktop runner, `requestAnimationFrame`,
//! an engine's update callback, or a test feeding durations by hand.
//!
//! Per frame of duration `dt`:
//!
//! 1. **Frame clamp** (optional; the tick-rate budget article puts a quarter-second
//!    `MaxFrameTime` in front of its accumulator, see `docs/background.md`): `dt`
//!    above the clamp is cut to the clamp; the excess is reported as
//!    [`FrameReport::clamped`].
//! 2. **Jitter guard** (optional, off by default): a `dt` within the tolerance of
//!    a whole number of steps counts as exactly that many steps; the difference is
//!    kept aside (never lost) and paid back once it exceeds the tolerance.
//! 3. `dt` is added to the accumulator; `floor(acc / step)` steps are owed.
//! 4. **Step cap** (`max_steps_per_frame`): at most that many run. If at least one
//!    whole step is still owed after the cap, the *whole* accumulator is thrown
//!    away and reported as [`FrameReport::dropped`] (the island rules' `droppedMs`).
//!
//! All arithmetic is integer, in units of `1/den` ns where the step is `num/den` ns,
//! so any rational rate is exact. The accumulator is kept in 128 bits, which no
//! frame can overflow; a frame whose sum fits in 64 bits (every frame shorter
//! than 194 years at 60 Hz, without the jitter guard) is computed in 64-bit
//! arithmetic, with the same result: the per-frame cost is about half.

use core::fmt;
use core::num::NonZeroU32;

use crate::time::{Nanos, StepLength};
use crate::time_error::TimeError;

/// The default cap on steps per frame: 8, the island rules' `maxStepsPerFrame`.
///
/// Eight 16 ms steps cover a 128 ms frame, longer than any hitch a player
/// accepts as "a stutter"; past that, catching up would only make the next
/// frame slower still (the death spiral), so the rest is dropped and reported.
pub const DEFAULT_MAX_STEPS_PER_FRAME: NonZeroU32 = match NonZeroU32::new(8) {
    Some(n) => n,
    None => unreachable!(),
};

/// How a [`Clock`] turns frame time into steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockConfig {
    step: StepLength,
    max_steps_per_frame: NonZeroU32,
    max_frame: Option<Nanos>,
    jitter_tolerance: Option<Nanos>,
}

impl ClockConfig {
    /// A configuration with the given step, a cap of
    /// [`DEFAULT_MAX_STEPS_PER_FRAME`], no frame clamp and no jitter guard.
    #[must_use]
    pub const fn new(step: StepLength) -> ClockConfig {
        ClockConfig {
            step,
            max_steps_per_frame: DEFAULT_MAX_STEPS_PER_FRAME,
            max_frame: None,
            jitter_tolerance: None,
        }
    }

    /// Sets the cap on steps run by one frame.
    #[must_use]
    pub const fn with_max_steps_per_frame(mut self, n: NonZeroU32) -> ClockConfig {
        self.max_steps_per_frame = n;
        self
    }

    /// Clamps every frame's duration to at most `max` (a frame clamp, like the
    /// quarter-second `MaxFrameTime` of the tick-rate budget article);
    /// the excess is reported as clamped time.
    #[must_use]
    pub const fn with_max_frame(mut self, max: Nanos) -> ClockConfig {
        self.max_frame = Some(max);
        self
    }

    /// Enables the jitter guard: frames within `tolerance` of a whole number of
    /// steps run exactly that many steps.
    ///
    /// # Errors
    ///
    /// [`TimeError::TooLarge`] unless `tolerance` is under half a step (a larger
    /// tolerance would make every frame "close" to some whole number of steps).
    pub fn with_jitter_tolerance(mut self, tolerance: Nanos) -> Result<ClockConfig, TimeError> {
        let twice = self.step.scale(tolerance).saturating_mul(2);
        if twice >= u128::from(self.step.numerator()) {
            return Err(TimeError::TooLarge);
        }
        self.jitter_tolerance = Some(tolerance);
        Ok(self)
    }

    /// The fixed step length.
    #[must_use]
    pub const fn step(&self) -> StepLength {
        self.step
    }

    /// The cap on steps per frame.
    #[must_use]
    pub const fn max_steps_per_frame(&self) -> NonZeroU32 {
        self.max_steps_per_frame
    }

    /// The frame clamp, if any.
    #[must_use]
    pub const fn max_frame(&self) -> Option<Nanos> {
        self.max_frame
    }

    /// The jitter tolerance, if the guard is on.
    #[must_use]
    pub const fn jitter_tolerance(&self) -> Option<Nanos> {
        self.jitter_tolerance
    }
}

/// The interpolation factor between the previous and the current tick, as an
/// exact fraction `numerator / denominator` in `[0, 1)`.
///
/// It is the accumulated remainder divided by the step. Renderers blend
/// `prev + (curr - prev) * alpha`; use [`Alpha::as_f32`] for that, and only there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Alpha {
    num: u64,
    den: u64,
}

impl Alpha {
    /// Alpha of zero (exactly on a tick).
    pub const ZERO: Alpha = Alpha { num: 0, den: 1 };

    /// The numerator (in the clock's `1/den` ns units).
    #[must_use]
    pub const fn numerator(self) -> u64 {
        self.num
    }

    /// The denominator (the step length in the same units); never zero.
    #[must_use]
    pub const fn denominator(self) -> u64 {
        self.den
    }

    /// `numerator * scale / denominator`, rounded down: alpha in integer
    /// fixed point (for example `scale = 65536` for 16.16).
    #[must_use]
    pub const fn scaled(self, scale: u64) -> u64 {
        (self.num as u128 * scale as u128 / self.den as u128) as u64
    }

    /// Alpha as an `f32` in `[0, 1)`, for renderers only: never feed it back
    /// into a simulation.
    #[must_use]
    #[allow(
        clippy::disallowed_types,
        clippy::float_arithmetic,
        clippy::cast_precision_loss,
        reason = "presentation output: the only float the clock produces"
    )]
    pub fn as_f32(self) -> f32 {
        (self.num as f64 / self.den as f64) as f32
    }
}

impl fmt::Display for Alpha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

/// What one frame did. Read it: `dropped` and `clamped` are time the simulation
/// will never see, and a game that keeps dropping time is too slow for its rate.
///
/// All durations here are **sim time**: at a speed other than 1/1
/// ([`crate::FixedLoop::set_speed`]) the loop scales the host frame first and
/// the clock only ever sees the scaled duration, [`FrameReport::sim_dt`]. The
/// speed itself never throws time away (its sub-nanosecond remainder is carried
/// to the next frame), so `clamped` and `dropped` are the only losses: a frame
/// longer than the clamp, or a frame owing more steps than the step cap allows
/// (`capped`). Fast-forward multiplies the steps a frame owes, so a cap that
/// never triggers at 1× can drop time at 4×; [`crate::Speed::step_cap_for`]
/// says how large the cap must be.
#[must_use = "a frame report says how many steps to run and what time was thrown away"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameReport {
    /// Fixed steps this frame owes (already run when returned by [`crate::FixedLoop`]).
    pub steps: u32,
    /// The sim-time duration the clock was given: the host frame scaled by the
    /// loop's speed (equal to the frame at 1/1), before the frame clamp. Zero
    /// for a frame that arrives while paused or in the background.
    pub sim_dt: Nanos,
    /// Sim time cut off by the frame clamp.
    pub clamped: Nanos,
    /// Accumulated sim time thrown away because the step cap was hit (rounded
    /// down to whole nanoseconds; the clock's total is exact). Non-zero only
    /// when `capped` is set; never caused by the speed.
    pub dropped: Nanos,
    /// Whether the step cap stopped this frame with a whole step still owed
    /// (and so dropped the accumulator: see `dropped`).
    pub capped: bool,
    /// Interpolation factor after this frame.
    pub alpha: Alpha,
    /// `false` when the frame was ignored because the app was paused or in
    /// the background (lifecycle time is accounted at resume instead).
    pub running: bool,
}

impl FrameReport {
    /// Clamped plus dropped time: all the time this frame threw away.
    #[must_use]
    pub const fn thrown_away(&self) -> Nanos {
        self.clamped.saturating_add(self.dropped)
    }
}

/// `(dt + unit / 2) / unit` for `dt >= 0`, `unit > 0`: in 64 bits when both
/// fit (a hardware divide instead of a 128-bit library call on every frame).
#[inline]
fn nearest_steps(dt: i128, unit: i128) -> i128 {
    let half = unit / 2;
    match (u64::try_from(dt + half), u64::try_from(unit)) {
        (Ok(n), Ok(u)) => i128::from(n / u),
        _ => (dt + half) / unit,
    }
}

/// `floor(acc / unit)` for `acc > 0`, else 0. Most frames owe zero or one
/// step, so those are answered without a 128-bit division (a library call
/// costing tens of nanoseconds).
#[inline]
fn owed_steps(acc: i128, unit: i128) -> i128 {
    if acc < unit {
        0
    } else if acc < 2 * unit {
        1
    } else if let (Ok(a), Ok(u)) = (u64::try_from(acc), u64::try_from(unit)) {
        i128::from(a / u)
    } else {
        acc / unit
    }
}

/// The fixed-step accumulator: frame durations in, whole steps out (the
/// algorithm is described on [`Clock::advance`] and in the crate docs).
#[derive(Clone, Debug)]
pub struct Clock {
    config: ClockConfig,
    /// Accumulated time in `1/den` ns; negative only by jitter-guard borrowing.
    acc: i128,
    /// Jitter-guard snapping error not yet applied to `acc` (|drift| <= tolerance).
    drift: i128,
    dropped_total: u128,
    clamped_total: u128,
    frames: u64,
    steps: u64,
}

impl Clock {
    /// A clock with an empty accumulator.
    #[must_use]
    pub const fn new(config: ClockConfig) -> Clock {
        Clock {
            config,
            acc: 0,
            drift: 0,
            dropped_total: 0,
            clamped_total: 0,
            frames: 0,
            steps: 0,
        }
    }

    /// The configuration.
    #[must_use]
    pub const fn config(&self) -> &ClockConfig {
        &self.config
    }

    /// Feeds one frame of duration `dt` and says how many steps it owes.
    ///
    /// 1. **Frame clamp** (optional): `dt` above the clamp is cut to it; the
    ///    excess is reported as [`FrameReport::clamped`].
    /// 2. **Jitter guard** (optional): a `dt` within the tolerance of a whole
    ///    number of steps counts as exactly that many steps; the difference is
    ///    kept aside and paid back once it exceeds the tolerance.
    /// 3. `dt` joins the accumulator; `floor(acc / step)` steps are owed.
    /// 4. **Step cap**: at most `max_steps_per_frame` run. If a whole step is
    ///    still owed after that, the whole accumulator is thrown away and
    ///    reported as [`FrameReport::dropped`].
    ///
    /// The work is O(1) whatever `dt` is: a frame of a year still owes at most
    /// `max_steps_per_frame` steps.
    #[inline]
    pub fn advance(&mut self, dt: Nanos) -> FrameReport {
        if self.config.jitter_tolerance.is_none()
            && let Some(report) = self.advance_narrow(dt)
        {
            return report;
        }
        self.advance_wide(dt)
    }

    /// [`Clock::advance`] in 64-bit arithmetic: the common case, tried first.
    ///
    /// Without the jitter guard the drift is always zero and the accumulator
    /// never negative, so when the accumulator plus the (clamped) frame in
    /// `1/den` ns units fits in a `u64`, every quantity of the frame does:
    /// the owed steps times the step are at most that sum, and so is what the
    /// cap drops. A frame at 60 Hz (den 3) qualifies up to 194 years; only
    /// frames of centuries, or steps with a huge denominator, take the
    /// 128-bit path. Returns `None`, with the clock untouched, when the sum
    /// does not fit; the result is otherwise exactly
    /// [`Clock::advance_wide`]'s (the `narrow_path_equals_wide_path` proptest
    /// compares them frame by frame).
    #[inline]
    fn advance_narrow(&mut self, dt: Nanos) -> Option<FrameReport> {
        debug_assert!(self.config.jitter_tolerance.is_none() && self.drift == 0);
        let step = self.config.step;
        let unit = step.numerator();
        let acc = u64::try_from(self.acc).ok()?;
        let (clamped_dt, clamped) = match self.config.max_frame {
            Some(max) if dt > max => (max, dt.saturating_sub(max)),
            _ => (dt, Nanos::ZERO),
        };
        let total = clamped_dt
            .as_nanos()
            .checked_mul(step.denominator())?
            .checked_add(acc)?;
        // From here on the frame is committed: no early return.
        self.frames = self.frames.saturating_add(1);
        self.clamped_total += u128::from(clamped.as_nanos());
        // floor(total / unit) without a division for the usual 0 or 1 step
        // (`total - unit < unit`, as `2 * unit` may not fit in 64 bits).
        let owed = if total < unit {
            0
        } else if total - unit < unit {
            1
        } else {
            total / unit
        };
        let steps = owed.min(u64::from(self.config.max_steps_per_frame.get()));
        // steps * unit <= owed * unit <= total: no overflow, no underflow.
        let rest = total - steps * unit;
        let capped = rest >= unit;
        let (acc, dropped) = if capped { (0, rest) } else { (rest, 0) };
        self.acc = i128::from(acc);
        self.dropped_total += u128::from(dropped);
        self.steps = self.steps.saturating_add(steps);
        #[allow(clippy::cast_possible_truncation, reason = "steps <= cap (u32)")]
        let steps = steps as u32;
        Some(FrameReport {
            steps,
            sim_dt: dt,
            clamped,
            dropped: step.unscale_floor(u128::from(dropped)),
            capped,
            // acc < unit, as the 128-bit path's clamp to [0, unit) gives.
            alpha: Alpha {
                num: acc,
                den: unit,
            },
            running: true,
        })
    }

    /// [`Clock::advance`] in 128-bit arithmetic: any frame, any step, the
    /// jitter guard. Exact for every input the types allow (see
    /// [`crate::MAX_STEP_DENOMINATOR`]).
    fn advance_wide(&mut self, dt: Nanos) -> FrameReport {
        let step = self.config.step;
        let unit = i128::from(step.numerator());
        self.frames = self.frames.saturating_add(1);

        let sim_dt = dt;
        let (dt, clamped) = match self.config.max_frame {
            Some(max) if dt > max => (max, dt.saturating_sub(max)),
            _ => (dt, Nanos::ZERO),
        };
        self.clamped_total += u128::from(clamped.as_nanos());
        // dt < 2^64 and den <= MAX_STEP_DENOMINATOR < 2^32 (checked when the
        // step was built), so the product is below 2^96 and fits in i128.
        let dt_scaled = step.scale(dt) as i128;

        match self.config.jitter_tolerance {
            Some(tol) => {
                let tol = step.scale(tol) as i128;
                let k = nearest_steps(dt_scaled, unit); // nearest whole step count
                let err = dt_scaled - k * unit;
                if k >= 1 && err.abs() <= tol && (self.drift + err).abs() <= tol {
                    self.acc += k * unit;
                    self.drift += err;
                } else {
                    self.acc += dt_scaled + self.drift;
                    self.drift = 0;
                }
            }
            None => self.acc += dt_scaled,
        }

        let owed = owed_steps(self.acc, unit);
        let cap = i128::from(self.config.max_steps_per_frame.get());
        let steps = owed.min(cap);
        self.acc -= steps * unit;
        let mut dropped = 0u128;
        let capped = self.acc >= unit;
        if capped {
            // The island rules: once the cap is hit with a whole step still owed,
            // the whole accumulator goes (a partial remainder would only be
            // dropped next frame anyway).
            let total = (self.acc + self.drift).max(0);
            dropped = total as u128;
            self.acc = 0;
            self.drift = 0;
        }
        self.dropped_total += dropped;
        #[allow(clippy::cast_possible_truncation, reason = "steps <= cap (u32)")]
        let steps = steps as u32;
        self.steps = self.steps.saturating_add(u64::from(steps));
        FrameReport {
            steps,
            sim_dt,
            clamped,
            dropped: step.unscale_floor(dropped),
            capped,
            alpha: self.alpha(),
            running: true,
        }
    }

    /// Adds time owed from elsewhere (a lifecycle resume's carried remainder)
    /// to the accumulator, in exact `1/den` ns units. The next frame runs it.
    pub(crate) fn carry_scaled(&mut self, scaled: u128) {
        // The carried remainder is under one step (< 2^64), so this cannot overflow.
        self.acc += scaled as i128;
    }

    /// The current interpolation factor (zero while borrowing under the jitter guard).
    #[must_use]
    #[inline]
    pub fn alpha(&self) -> Alpha {
        let den = self.config.step.numerator();
        let num = self.acc.clamp(0, i128::from(den - 1));
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to [0, den)"
        )]
        Alpha {
            num: num as u64,
            den,
        }
    }

    /// The accumulated time not yet turned into steps, rounded down to whole
    /// nanoseconds (zero while the jitter guard is borrowing).
    #[must_use]
    pub fn accumulator(&self) -> Nanos {
        #[allow(clippy::cast_sign_loss, reason = "clamped at zero")]
        self.config.step.unscale_floor(self.acc.max(0) as u128)
    }

    /// Total time thrown away by the step cap since creation (exact, rounded down).
    #[must_use]
    pub fn dropped_total(&self) -> Nanos {
        self.config.step.unscale_floor(self.dropped_total)
    }

    /// Total time cut by the frame clamp since creation.
    #[must_use]
    pub fn clamped_total(&self) -> Nanos {
        if self.clamped_total > u128::from(u64::MAX) {
            Nanos::MAX
        } else {
            #[allow(clippy::cast_possible_truncation, reason = "checked above")]
            Nanos::from_nanos(self.clamped_total as u64)
        }
    }

    /// Frames fed since creation.
    #[must_use]
    pub const fn frames(&self) -> u64 {
        self.frames
    }

    /// Steps owed by all frames since creation.
    #[must_use]
    pub const fn steps(&self) -> u64 {
        self.steps
    }

    /// Exact accounting, for tests and reports: `(accumulator, drift,
    /// dropped_total)` in `1/den` ns units.
    #[must_use]
    pub const fn exact_parts(&self) -> (i128, i128, u128) {
        (self.acc, self.drift, self.dropped_total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time_bounds::MAX_STEP_DENOMINATOR;
    use proptest::prelude::*;

    fn island_rules_clock() -> Clock {
        Clock::new(ClockConfig::new(StepLength::from_millis(16).unwrap()))
    }

    #[test]
    fn owed_steps_matches_division() {
        let unit = 50_000_000i128;
        for acc in [
            -5,
            0,
            1,
            unit - 1,
            unit,
            2 * unit - 1,
            2 * unit,
            7 * unit + 3,
            i128::from(u64::MAX) + 9,
        ] {
            let want = if acc > 0 { acc / unit } else { 0 };
            assert_eq!(owed_steps(acc, unit), want, "{acc}");
        }
    }

    #[test]
    fn fifteen_then_one_ms() {
        // The island rules' golden case: a 15 ms frame owes nothing; 1 ms more
        // owes one step, acc 0.
        let mut c = island_rules_clock();
        assert_eq!(c.advance(Nanos::from_millis(15)).steps, 0);
        assert_eq!(c.accumulator(), Nanos::from_millis(15));
        assert_eq!(c.advance(Nanos::from_millis(1)).steps, 1);
        assert_eq!(c.accumulator(), Nanos::ZERO);
    }

    #[test]
    fn huge_frame_hits_cap_and_drops_everything() {
        // The island rules' golden case: one 100 000 ms frame runs exactly 8
        // steps; the rest is dropped.
        let mut c = island_rules_clock();
        let r = c.advance(Nanos::from_millis(100_000));
        assert_eq!(r.steps, 8);
        assert!(r.capped);
        assert_eq!(r.dropped, Nanos::from_millis(100_000 - 8 * 16));
        assert_eq!(c.accumulator(), Nanos::ZERO);
        assert_eq!(c.dropped_total(), Nanos::from_millis(99_872));
    }

    #[test]
    fn cap_reached_exactly_keeps_partial_remainder() {
        // 8 steps owed plus 5 ms: the cap is reached but no whole step is left,
        // so nothing is dropped (the island rules drop only when a whole step is
        // still owed after the capped loop).
        let mut c = island_rules_clock();
        let r = c.advance(Nanos::from_millis(8 * 16 + 5));
        assert_eq!((r.steps, r.capped, r.dropped), (8, false, Nanos::ZERO));
        assert_eq!(c.accumulator(), Nanos::from_millis(5));
    }

    #[test]
    fn sixty_hz_for_a_day_is_exact() {
        // 86 400 s of 144 Hz vsync timestamps rounded to whole nanoseconds:
        // frame lengths alternate between 6 944 444 and 6 944 445 ns, and the
        // clock must still owe exactly 60 * 86 400 = 5 184 000 ticks.
        let mut c = Clock::new(ClockConfig::new(StepLength::from_hz(60).unwrap()));
        let frames: u64 = 144 * 86_400;
        let mut prev = 0u64;
        let mut ticks = 0u64;
        for i in 1..=frames {
            let now = (u128::from(i) * 1_000_000_000 / 144) as u64;
            ticks += u64::from(c.advance(Nanos::from_nanos(now - prev)).steps);
            prev = now;
        }
        assert_eq!(prev, 86_400 * 1_000_000_000);
        assert_eq!(ticks, 5_184_000);
        assert_eq!(c.exact_parts(), (0, 0, 0));
    }

    #[test]
    fn frame_clamp_reports_cut_time() {
        let cfg = ClockConfig::new(StepLength::from_millis(16).unwrap())
            .with_max_frame(Nanos::from_millis(250));
        let mut c = Clock::new(cfg);
        let r = c.advance(Nanos::from_millis(1_000));
        assert_eq!(r.clamped, Nanos::from_millis(750));
        // 250 ms = 15 steps + 10 ms, capped at 8: the rest (122 ms) is dropped.
        assert_eq!((r.steps, r.dropped), (8, Nanos::from_millis(122)));
        assert_eq!(r.thrown_away(), Nanos::from_millis(872));
    }

    #[test]
    #[allow(clippy::float_arithmetic, reason = "checks the renderer convenience")]
    fn alpha_is_exact_fraction() {
        let mut c = island_rules_clock();
        let r = c.advance(Nanos::from_millis(20));
        assert_eq!(r.steps, 1);
        assert_eq!(
            (r.alpha.numerator(), r.alpha.denominator()),
            (4_000_000, 16_000_000)
        );
        assert_eq!(r.alpha.scaled(1 << 16), 16_384);
        assert!((r.alpha.as_f32() - 0.25).abs() < 1e-7);
    }

    fn jittery_frames(seed: u64, n: usize) -> impl Iterator<Item = Nanos> {
        // A 60 Hz display whose frame *timestamps* carry up to 1 ms of
        // deterministic noise (vsync plus scheduling delay): durations wander
        // between 15.7 and 17.7 ms around 16.667 ms.
        let mut x = seed;
        let mut noise = move || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % 1_000_001
        };
        let mut prev = noise();
        (0..n).map(move |_| {
            let cur = noise();
            let dt = 16_666_667 + cur - prev;
            prev = cur;
            Nanos::from_nanos(dt)
        })
    }

    #[test]
    fn jitter_guard_removes_zero_two_alternation() {
        let step = StepLength::from_hz(60).unwrap();
        let mut plain = Clock::new(ClockConfig::new(step));
        let guarded_cfg = ClockConfig::new(step)
            .with_jitter_tolerance(Nanos::from_millis(1))
            .unwrap();
        let mut guarded = Clock::new(guarded_cfg);
        // Put both accumulators right at a step boundary, where jitter hurts most.
        let _ = plain.advance(Nanos::from_nanos(16_666_666));
        let _ = guarded.advance(Nanos::from_nanos(16_666_666));
        let (mut plain_off, mut guarded_off) = (0, 0);
        for dt in jittery_frames(7, 10_000) {
            plain_off += usize::from(plain.advance(dt).steps != 1);
            guarded_off += usize::from(guarded.advance(dt).steps != 1);
        }
        assert!(plain_off > 1_000, "unguarded clock alternates: {plain_off}");
        assert!(guarded_off < 20, "guarded clock is steady: {guarded_off}");
        // And no time was lost: both owe the same number of steps to within one.
        assert!(plain.steps().abs_diff(guarded.steps()) <= 1);
    }

    #[test]
    fn jitter_tolerance_must_be_under_half_a_step() {
        let cfg = ClockConfig::new(StepLength::from_millis(16).unwrap());
        assert!(cfg.with_jitter_tolerance(Nanos::from_millis(8)).is_err());
        assert!(cfg.with_jitter_tolerance(Nanos::from_millis(7)).is_ok());
    }

    /// Everything the two paths must agree on after a frame.
    impl Clock {
        /// `advance_narrow` where `advance` would call it (no jitter guard).
        fn advance_narrow_checked(&mut self, dt: Nanos) -> Option<FrameReport> {
            if self.config.jitter_tolerance.is_some() {
                return None;
            }
            self.advance_narrow(dt)
        }
    }

    fn clock_state(c: &Clock) -> (i128, i128, u128, u128, u64, u64) {
        (
            c.acc,
            c.drift,
            c.dropped_total,
            c.clamped_total,
            c.frames,
            c.steps,
        )
    }

    #[test]
    fn narrow_path_takes_usual_frames_and_refuses_what_does_not_fit() {
        // 60 Hz: den = 3. A 16.7 ms frame is 50 000 001 units: 64-bit.
        let step = StepLength::from_hz(60).unwrap();
        let mut c = Clock::new(ClockConfig::new(step));
        let r = c.advance_narrow(Nanos::from_nanos(16_666_667)).unwrap();
        assert_eq!((r.steps, r.alpha.numerator()), (1, 1));
        // u64::MAX ns times 3 does not fit in 64 bits: refused, clock untouched.
        let before = clock_state(&c);
        assert_eq!(c.advance_narrow(Nanos::MAX), None);
        assert_eq!(clock_state(&c), before);
        // The last frame that fits: acc (1) + dt * 3 <= u64::MAX.
        let edge = (u64::MAX - 1) / 3;
        assert!(c.clone().advance_narrow(Nanos::from_nanos(edge)).is_some());
        assert_eq!(c.advance_narrow(Nanos::from_nanos(edge + 1)), None);
        // The public entry point takes the 128-bit path then, and the step
        // cap drops all but 8 steps of the frame.
        let r = c.advance(Nanos::MAX);
        assert_eq!((r.steps, r.capped), (8, true));
    }

    /// A frame for the narrow/wide comparison.
    #[derive(Clone, Debug)]
    enum TestFrame {
        /// A frame of this many ns.
        Ns(u64),
        /// The longest frame the 64-bit path takes given the accumulator
        /// at that moment, moved by the offset (so either side of the edge).
        Edge(i16),
        /// The frame that brings the accumulator to exactly this many whole
        /// steps (rounded down when `den` does not divide it): the
        /// boundaries of the step count and of the step cap.
        Steps(u8),
        /// A resume's carried remainder: this fraction (of 2^16) of a step
        /// is added to the accumulator before the frame.
        Carry(u16),
    }

    fn test_frame() -> impl Strategy<Value = TestFrame> {
        prop_oneof![
            4 => (0u64..100_000_000).prop_map(TestFrame::Ns),
            1 => any::<u64>().prop_map(TestFrame::Ns),
            1 => (0u64..1_000_000).prop_map(|d| TestFrame::Ns(u64::MAX - d)),
            2 => any::<i16>().prop_map(TestFrame::Edge),
            1 => any::<u16>().prop_map(TestFrame::Carry),
            3 => (0u8..48).prop_map(TestFrame::Steps),
        ]
    }

    proptest! {
        /// The 64-bit path gives exactly what the 128-bit path gives, report
        /// and state, frame by frame: any step (denominators up to
        /// `MAX_STEP_DENOMINATOR`), frames up to `u64::MAX` and right at the
        /// edge where the 64-bit sum overflows, the step cap, the frame
        /// clamp, carried remainders, and speeds (host frames scaled by
        /// `Speed::scale` with its remainder carried, as the loop does).
        /// With the jitter guard on, `advance` must take the 128-bit path.
        #[test]
        fn narrow_path_equals_wide_path(
            num in prop_oneof![1u64..1_000, 1_000_000u64..100_000_000, 1u64..=u64::MAX],
            den in prop_oneof![2 => Just(1u64), 1 => 1u64..1_000, 1 => (MAX_STEP_DENOMINATOR - 1_000)..=MAX_STEP_DENOMINATOR],
            cap in prop_oneof![1u32..20, 1u32..=u32::MAX],
            clamp in proptest::option::of(prop_oneof![0u64..300_000_000, any::<u64>()]),
            jitter in proptest::option::of(3u64..100),
            speed in proptest::option::of((1u32..=1_000, 1u32..=1_000)),
            frames in proptest::collection::vec(test_frame(), 1..80),
        ) {
            let Ok(step) = StepLength::from_nanos_ratio(num, den) else {
                return Ok(());
            };
            let mut cfg = ClockConfig::new(step)
                .with_max_steps_per_frame(NonZeroU32::new(cap).unwrap());
            if let Some(c) = clamp {
                cfg = cfg.with_max_frame(Nanos::from_nanos(c));
            }
            if let Some(k) = jitter
                && let Ok(j) = cfg.with_jitter_tolerance(Nanos::from_nanos(step.as_nanos_floor() / k))
            {
                cfg = j;
            }
            let speed = speed.and_then(|(p, q)| crate::Speed::new(p, q).ok());
            let mut fast = Clock::new(cfg);
            let mut wide = Clock::new(cfg);
            let mut rem = 0u64;
            for f in &frames {
                let host = match *f {
                    TestFrame::Ns(ns) => Nanos::from_nanos(ns),
                    TestFrame::Edge(off) => {
                        let acc = u64::try_from(fast.acc.max(0)).unwrap_or(u64::MAX);
                        let edge = (u64::MAX - acc) / den;
                        Nanos::from_nanos(edge.saturating_add_signed(i64::from(off)))
                    }
                    TestFrame::Steps(k) => {
                        let acc = u128::try_from(fast.acc.max(0)).unwrap_or(0);
                        let ns = (u128::from(k) * u128::from(num)).saturating_sub(acc) / u128::from(den);
                        Nanos::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
                    }
                    TestFrame::Carry(frac) => {
                        let carried = (u128::from(num) * u128::from(frac)) >> 16;
                        fast.carry_scaled(carried);
                        wide.carry_scaled(carried);
                        continue;
                    }
                };
                let dt = match speed {
                    Some(s) => {
                        let (sim, r) = s.scale(host, rem);
                        rem = r;
                        sim
                    }
                    None => host,
                };
                let before = clock_state(&fast);
                let mut probe = fast.clone();
                let narrow = probe.advance_narrow_checked(dt);
                let want = wide.advance_wide(dt);
                match narrow {
                    Some(r) => {
                        prop_assert_eq!(r, want);
                        prop_assert_eq!(clock_state(&probe), clock_state(&wide));
                    }
                    None => prop_assert_eq!(clock_state(&probe), before),
                }
                let got = fast.advance(dt);
                prop_assert_eq!(got, want);
                prop_assert_eq!(clock_state(&fast), clock_state(&wide));
                prop_assert_eq!(fast.alpha(), wide.alpha());
                prop_assert_eq!(fast.accumulator(), wide.accumulator());
                prop_assert_eq!(fast.dropped_total(), wide.dropped_total());
                prop_assert_eq!(fast.clamped_total(), wide.clamped_total());
            }
        }

        /// Time is conserved: every nanosecond fed is a step, in the
        /// accumulator, in the drift, dropped or clamped.
        #[test]
        fn time_is_conserved(
            frames in proptest::collection::vec(0u64..200_000_000, 1..200),
            hz in 1u64..240,
            cap in 1u32..16,
            clamp in proptest::option::of(1u64..300_000_000),
            jitter in any::<bool>(),
        ) {
            let step = StepLength::from_hz(hz).unwrap();
            let mut cfg = ClockConfig::new(step)
                .with_max_steps_per_frame(NonZeroU32::new(cap).unwrap());
            if let Some(c) = clamp { cfg = cfg.with_max_frame(Nanos::from_nanos(c)); }
            if jitter { cfg = cfg.with_jitter_tolerance(Nanos::from_nanos(step.as_nanos_floor() / 4)).unwrap(); }
            let mut c = Clock::new(cfg);
            let mut fed = 0u128;
            let unit = i128::from(step.numerator());
            for f in &frames {
                let (acc0, _, _) = c.exact_parts();
                let r = c.advance(Nanos::from_nanos(*f));
                prop_assert!(r.steps <= cap);
                // The clock steps, it does not just account: never a whole
                // step left behind, and without the jitter guard exactly the
                // whole steps owed, up to the cap.
                let (acc1, _, _) = c.exact_parts();
                prop_assert!(acc1 < unit, "a whole step left in the accumulator");
                if !jitter {
                    let dt = clamp.map_or(*f, |m| (*f).min(m));
                    let owed = (acc0 + i128::from(dt) * i128::from(step.denominator())) / unit;
                    prop_assert_eq!(i128::from(r.steps), owed.min(i128::from(cap)));
                    prop_assert!(acc1 >= 0);
                }
                fed += u128::from(*f);
            }
            let (acc, drift, dropped) = c.exact_parts();
            let den = u128::from(step.denominator());
            let accounted = i128::try_from(u128::from(c.steps()) * u128::from(step.numerator()) + dropped + u128::from(c.clamped_total().as_nanos()) * den).unwrap() + acc + drift;
            prop_assert_eq!(accounted, i128::try_from(fed * den).unwrap());
        }
    }
}
