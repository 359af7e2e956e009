//! The loop: owns a sim, its clock, its lifecycle and its input source.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::clock::{Clock, ClockConfig, FrameReport};
use crate::input::InputSource;
use crate::lifecycle::{AppState, CatchUpPolicy, Lifecycle};
use crate::replay::{HostEventKind, Recording};
use crate::sim::Sim;
use crate::speed::Speed;
use crate::time::{Nanos, Tick, Timestamp};

mod away;
mod record;

pub use away::{OfflineSettlement, PlatformEvent};

/// `ceil(scaled / divisor)` as a timestamp, clamped to the `u64` range: the
/// exclusive end of a tick window in whole ns (`t < x/d  <=>  t < ceil(x/d)`).
/// Fast paths avoid a 128-bit division (a library call) on every step.
#[inline]
fn ceil_to_nanos(scaled: i128, divisor: i128) -> Timestamp {
    if scaled <= 0 || divisor <= 0 {
        return Timestamp::ZERO;
    }
    let ns = match (u64::try_from(scaled), u64::try_from(divisor)) {
        (Ok(v), Ok(1)) => v,
        (Ok(v), Ok(d)) => v.div_ceil(d),
        _ => {
            let q = scaled / divisor + i128::from(scaled % divisor != 0);
            u64::try_from(q).unwrap_or(u64::MAX)
        }
    };
    Timestamp::from_nanos(ns)
}

/// A fixed-timestep loop over a [`Sim`].
///
/// The loop is the only owner of the sim: presentation code gets `&S` from
/// [`FixedLoop::sim`] and can never step or mutate it, so interpolated values
/// cannot flow back into the simulation.
///
/// The loop keeps a host clock: [`FixedLoop::frame`] moves it by the frame's
/// duration, [`FixedLoop::frame_at`] sets it from a host timestamp. Tick `k`'s
/// input window on that clock ends at `origin + (k + 1) * step`, where `origin`
/// shifts by any time the sim never saw (dropped, clamped, or spent away).
///
/// **Speed.** [`FixedLoop::set_speed`] runs sim time at an exact rational
/// `P/Q` of host time (slow motion, fast-forward). Every stretch of host time
/// the loop turns into sim time (a frame, the gap run before a pause, the time
/// away at a resume) is scaled by [`Speed::scale`] with the remainder carried,
/// and the clock, its clamp, jitter guard and step cap see only sim time. Tick
/// windows are mapped back to the host clock, so timestamped events land in
/// the right tick at any speed: with `host_now`, the carried remainder `rem`
/// and the clock's exact accumulator `acc + drift` (in `1/den` ns), the last
/// tick a frame runs ends at host time
/// `(host_now·P·den − rem·den − (acc + drift)·Q) / (den·P)` ns and each earlier
/// tick `step·Q/P` before it, rounded up to whole nanoseconds. At 1/1 that is
/// `host_now − (acc + drift)/den`.
///
/// **Live recording.** [`FixedLoop::start_recording`] at tick 0 makes the loop
/// record what it runs: the input of every tick as the sim consumed it
/// (catch-up ticks included) and every call it makes to
/// [`Sim::on_time_dropped`], as a host event at the tick it happened.
/// [`FixedLoop::replay`] returns the session so far as a [`Replay`](crate::Replay) that
/// [`crate::verify`] re-simulates to the same final state.
#[derive(Debug)]
pub struct FixedLoop<S: Sim, I> {
    sim: S,
    inputs: I,
    clock: Clock,
    lifecycle: Lifecycle,
    tick: Tick,
    host_now: Timestamp,
    backwards_frames: u64,
    speed: Speed,
    /// Carried remainder of the speed scaling, in `1/Q` ns (`< Q`).
    speed_rem: u64,
    /// Calls made to `Sim::on_time_dropped`.
    host_events: u64,
    recording: Option<Box<Recording<S::Input>>>,
    /// Every player's input of the tick being run, for sims of more than
    /// one player (empty for one player: the fast paths pass the source's
    /// input directly).
    players: Vec<S::Input>,
}

impl<S: Sim, I: InputSource<S::Input>> FixedLoop<S, I> {
    /// A running loop at tick 0, host time 0 and speed 1/1.
    #[must_use]
    pub fn new(sim: S, inputs: I, clock: ClockConfig, policy: CatchUpPolicy) -> Self {
        let players = match sim.players() {
            0 | 1 => Vec::new(),
            n => alloc::vec![S::Input::default(); n],
        };
        FixedLoop {
            players,
            sim,
            inputs,
            clock: Clock::new(clock),
            lifecycle: Lifecycle::new(policy),
            tick: Tick::ZERO,
            host_now: Timestamp::ZERO,
            backwards_frames: 0,
            speed: Speed::NORMAL,
            speed_rem: 0,
            host_events: 0,
            recording: None,
        }
    }

    /// Read-only access to the sim, for presentation and digests.
    #[must_use]
    pub const fn sim(&self) -> &S {
        &self.sim
    }

    /// The next tick to run (the number of steps run so far).
    #[must_use]
    pub const fn tick(&self) -> Tick {
        self.tick
    }

    /// The clock.
    #[must_use]
    pub const fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The lifecycle state.
    #[must_use]
    pub const fn state(&self) -> AppState {
        self.lifecycle.state()
    }

    /// The lifecycle.
    #[must_use]
    pub const fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }

    /// The input source.
    #[must_use]
    pub const fn inputs(&self) -> &I {
        &self.inputs
    }

    /// The input source, mutably (to push events into an event buffer).
    pub const fn inputs_mut(&mut self) -> &mut I {
        &mut self.inputs
    }

    /// The loop's host clock.
    #[must_use]
    pub const fn host_time(&self) -> Timestamp {
        self.host_now
    }

    /// Frames whose timestamp was earlier than the previous one (treated as
    /// zero-length frames).
    #[must_use]
    pub const fn backwards_frames(&self) -> u64 {
        self.backwards_frames
    }

    /// The current speed ([`Speed::NORMAL`] unless set).
    #[must_use]
    pub const fn speed(&self) -> Speed {
        self.speed
    }

    /// Runs sim time at `speed` from now on (between frames, or while paused:
    /// the time away is scaled at resume with the speed in force then).
    ///
    /// Setting the speed already in force changes nothing. Changing it drops
    /// the sub-nanosecond remainder carried by the old speed (less than one
    /// nanosecond of sim time): a remainder in units of `1/Q` ns has no exact
    /// meaning under another `Q`, and dropping it keeps every speed change
    /// reproducible from the speed alone.
    ///
    /// Fast-forward multiplies the steps a frame owes: size the clock's step
    /// cap for the fastest speed with [`Speed::step_cap_for`], or the cap will
    /// drop time on long frames ([`FrameReport::capped`]). The tick count and
    /// the sim's states per tick do not depend on the speed; only how many
    /// ticks a stretch of host time is worth does.
    pub fn set_speed(&mut self, speed: Speed) {
        if speed != self.speed {
            self.speed = speed;
            self.speed_rem = 0;
        }
    }

    /// Host time `dt` as sim time at the current speed, carrying the remainder.
    #[inline]
    fn scale(speed: Speed, rem: &mut u64, dt: Nanos) -> Nanos {
        if speed.is_normal() {
            return dt;
        }
        let (sim, r) = speed.scale(dt, *rem);
        *rem = r;
        sim
    }

    /// Feeds a frame of duration `dt` and runs the steps it owes.
    ///
    /// While paused or in the background the host clock moves but no steps run
    /// (the report has `running: false`); the time is accounted at resume.
    #[inline]
    pub fn frame(&mut self, dt: Nanos) -> FrameReport {
        self.frame_with(dt, |_| {})
    }

    /// Like [`FixedLoop::frame`], calling `before_last_step(&sim)` just before
    /// the frame's last step (not at all when it runs none). An interpolating
    /// renderer captures its "previous" snapshot there.
    #[inline]
    pub fn frame_with(&mut self, dt: Nanos, before_last_step: impl FnOnce(&S)) -> FrameReport {
        self.host_now = self.host_now.saturating_add(dt);
        if !self.lifecycle.is_running() {
            return self.idle_report();
        }
        let sim_dt = Self::scale(self.speed, &mut self.speed_rem, dt);
        let report = self.clock.advance(sim_dt);
        self.run_steps(u64::from(report.steps), before_last_step);
        // Usually both are zero: test that without the saturating sum.
        if (report.clamped.as_nanos() | report.dropped.as_nanos()) != 0 {
            self.time_dropped(report.thrown_away());
        }
        report
    }

    /// The report of a frame that arrives while paused or in the background
    /// (out of line: the running frame is the one to keep small).
    #[cold]
    fn idle_report(&self) -> FrameReport {
        FrameReport {
            steps: 0,
            sim_dt: Nanos::ZERO,
            clamped: Nanos::ZERO,
            dropped: Nanos::ZERO,
            capped: false,
            alpha: self.clock.alpha(),
            running: false,
        }
    }

    /// Tells the sim about time it will never see, and records it.
    #[cold]
    fn time_dropped(&mut self, thrown: Nanos) {
        self.sim.on_time_dropped(thrown);
        self.host_events = self.host_events.saturating_add(1);
        if let Some(rec) = self.recording.as_deref_mut() {
            rec.record_event(HostEventKind::TimeDropped(thrown));
        }
    }

    /// Hosted mode: a frame at host timestamp `now` (a `requestAnimationFrame`
    /// timestamp, a vsync callback). The duration is the time since the
    /// previous frame; a timestamp earlier than the previous one counts as a
    /// zero-length frame and is counted in [`FixedLoop::backwards_frames`].
    pub fn frame_at(&mut self, now: Timestamp) -> FrameReport {
        self.frame_at_with(now, |_| {})
    }

    /// [`FixedLoop::frame_at`] with the hook of [`FixedLoop::frame_with`].
    pub fn frame_at_with(
        &mut self,
        now: Timestamp,
        before_last_step: impl FnOnce(&S),
    ) -> FrameReport {
        let dt = match now.checked_since(self.host_now) {
            Some(dt) => dt,
            None => {
                self.backwards_frames += 1;
                Nanos::ZERO
            }
        };
        self.frame_with(dt, before_last_step)
    }

    /// Runs `n` steps directly, whatever the clock or lifecycle say (tests,
    /// tools, and catch-up). Returns the new tick. A recording records them.
    pub fn advance(&mut self, n: u64) -> Tick {
        self.run_steps(n, |_| {});
        self.tick
    }

    #[inline]
    fn run_steps(&mut self, n: u64, before_last_step: impl FnOnce(&S)) {
        if n == 0 {
            return;
        }
        if !I::NEEDS_WINDOW && self.players.is_empty() {
            // Simple inputs: no tick windows to compute. The hook runs before
            // the last step, as on the windowed path.
            if n > 1 {
                self.run_simple(n - 1);
            }
            before_last_step(&self.sim);
            self.run_simple(1);
            return;
        }
        self.run_windowed(n, before_last_step);
    }

    /// `n` steps from a source that ignores the tick window; the recording
    /// test is made once per batch, not once per step.
    #[inline]
    fn run_simple(&mut self, n: u64) {
        let FixedLoop {
            sim,
            inputs,
            tick,
            recording,
            ..
        } = self;
        match recording.as_deref_mut() {
            // One step (a frame's usual load): no batch set-up.
            None if n == 1 => {
                let input = inputs.input(*tick, Timestamp::ZERO);
                sim.step(core::slice::from_ref(&input));
                *tick = tick.next();
            }
            None => *tick = Self::steps_plain(sim, inputs, *tick, n),
            Some(rec) => {
                for _ in 0..n {
                    let input = inputs.input(*tick, Timestamp::ZERO);
                    let one = core::slice::from_ref(&input);
                    sim.step(one);
                    *tick = tick.next();
                    rec.record_step(sim, one);
                }
            }
        }
    }

    /// The plain loop of steps, a function of its own: nothing here takes
    /// the sim's address (the recording branch hands it to the recorder), so
    /// the compiler may keep a small sim's fields in registers for the whole
    /// loop instead of storing them back every step.
    #[inline(never)]
    fn steps_plain(sim: &mut S, inputs: &mut I, tick: Tick, n: u64) -> Tick {
        inputs.for_each_input(tick, n, |input| sim.step(core::slice::from_ref(&input)));
        Tick(tick.get().saturating_add(n))
    }

    /// Steps with each tick's window end computed (event-mode inputs).
    fn run_windowed(&mut self, n: u64, before_last_step: impl FnOnce(&S)) {
        // Tick windows (see the type's docs): in units of 1/(den·P) host ns,
        // the last tick of this batch ends at
        // host_now·P·den − rem·den − (acc + drift)·Q and each earlier one
        // step·Q before. At 1/1 (P = Q = 1, rem = 0) this is the clock's own
        // 1/den ns unit. Saturating arithmetic: only absurd step
        // denominators (above 2^53) come near the i128 range.
        let step = self.clock.config().step();
        let den = i128::from(step.denominator());
        let p = i128::from(self.speed.numerator());
        let q = i128::from(self.speed.denominator());
        let inc = i128::from(step.numerator()) * q;
        let divisor = den * p;
        let (acc, drift, _) = self.clock.exact_parts();
        let last_end = i128::from(self.host_now.as_nanos())
            .saturating_mul(divisor)
            .saturating_sub(i128::from(self.speed_rem).saturating_mul(den))
            .saturating_sub(acc.saturating_add(drift).saturating_mul(q));
        let mut end_scaled = last_end.saturating_sub(i128::from(n - 1).saturating_mul(inc));
        let mut before = Some(before_last_step);
        for j in 0..n {
            if j + 1 == n
                && let Some(f) = before.take()
            {
                f(&self.sim);
            }
            let window_end = ceil_to_nanos(end_scaled, divisor);
            if self.players.is_empty() {
                let input = self.inputs.input(self.tick, window_end);
                let one = core::slice::from_ref(&input);
                self.sim.step(one);
                if let Some(rec) = self.recording.as_deref_mut() {
                    rec.record_step(&self.sim, one);
                }
            } else {
                self.inputs.inputs(self.tick, window_end, &mut self.players);
                self.sim.step(&self.players);
                if let Some(rec) = self.recording.as_deref_mut() {
                    rec.record_step(&self.sim, &self.players);
                }
            }
            self.tick = self.tick.next();
            end_scaled = end_scaled.saturating_add(inc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_to_nanos_rounds_up_and_clamps() {
        assert_eq!(ceil_to_nanos(-7, 3), Timestamp::ZERO);
        assert_eq!(ceil_to_nanos(0, 3), Timestamp::ZERO);
        assert_eq!(ceil_to_nanos(9, 1), Timestamp::from_nanos(9));
        assert_eq!(ceil_to_nanos(9, 3), Timestamp::from_nanos(3));
        assert_eq!(ceil_to_nanos(10, 3), Timestamp::from_nanos(4));
        let big = i128::from(u64::MAX) * 3 + 1;
        assert_eq!(ceil_to_nanos(big, 3), Timestamp::from_nanos(u64::MAX));
        assert_eq!(ceil_to_nanos(i128::MAX, 1), Timestamp::from_nanos(u64::MAX));
        // A divisor past u64 (a step denominator times a speed numerator).
        let d = i128::from(u64::MAX) * 2;
        assert_eq!(ceil_to_nanos(d * 5 + 1, d), Timestamp::from_nanos(6));
        assert_eq!(ceil_to_nanos(5, 0), Timestamp::ZERO);
    }
}
