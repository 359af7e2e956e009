//! Running, paused and background, and what happens to the time spent away.
//!
//! Pausing is easy; resuming is the design decision. A tab hidden for an hour
//! owes 225 000 steps of 16 ms; running them in one frame freezes the page, and
//! running none breaks idle games. The [`CatchUpPolicy`] decides, and the
//! [`ResumeReport`] says exactly what was decided: elapsed, wanted, caught up,
//! carried into the accumulator, dropped.
//!
//! The kernel knows no platform API. A platform adapter (the browser's
//! `visibilitychange`, a mini-game's `onHide`/`onShow`, a desktop window's focus
//! events) translates host events into [`Lifecycle::background`] and
//! [`Lifecycle::resume`] calls with host timestamps.
//!
//! ## Held buttons while hidden
//!
//! A hidden app gets no key-up events: the platform sends the release to
//! whatever window has focus now. Left alone, a key held at hide time would
//! stay held through every catch-up tick of the resume (300 ticks of a
//! player "holding right" who is in another app). So
//! [`crate::FixedLoop::background`] (and a `Hidden` platform event) calls
//! [`crate::InputSource::release_all`] at the hide time: an
//! [`crate::InputBuffer`] queues a release of every button held then, so the
//! tick whose window contains the hide time sees the release edges and later
//! ticks (the catch-up included) see nothing held. A player who still holds
//! the key when the app returns presses it again; the platform's next key-down
//! is a new press. A pause does **not** release anything: the app keeps focus,
//! key-ups still arrive, and a pause menu may want to know what is held.
//!
//! ## Speed
//!
//! At a loop speed other than 1/1 ([`crate::FixedLoop::set_speed`]) the
//! time away is scaled exactly like a frame: [`ResumeReport::elapsed`] is the
//! host time away, [`ResumeReport::sim_elapsed`] the sim time it is worth,
//! and the policy (wanted, caught up, carried, dropped, and the
//! `min_elapsed` jitter threshold) works on the sim time.

use core::fmt;

use crate::time::{Nanos, StepLength, Timestamp};

/// Where the app is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AppState {
    /// Frames run steps.
    Running,
    /// Paused by the game (a pause menu); frames run no steps.
    Paused,
    /// Hidden by the platform (tab hidden, app switched away); frames run no steps.
    Background,
}

impl AppState {
    /// The lower-case name used in reports: `running`, `paused`, `background`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            AppState::Running => "running",
            AppState::Paused => "paused",
            AppState::Background => "background",
        }
    }
}

impl fmt::Display for AppState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How time spent paused or in the background becomes fixed steps at resume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatchUpPolicy {
    /// Run no steps: the world resumes where it stopped; all the time away is dropped.
    Freeze,
    /// Run every step the time away is worth and carry the remainder, exactly as
    /// if the app had stayed in the foreground. Work grows with the time away,
    /// so use it where that time is bounded (tests, servers), not in a game.
    Full,
    /// The resume rules' capped policy (`docs/background.md`): time away under
    /// `min_elapsed` is dropped as jitter;
    /// otherwise run up to `max_steps` steps. Below the cap the remainder is
    /// carried; at the cap everything past `max_steps` steps is dropped.
    Capped {
        /// The most steps one resume runs (the resume rules' `maxCatchUpSteps`, 300).
        max_steps: u64,
        /// Time away shorter than this is dropped (the resume rules' `minCatchUpMs`,
        /// 32 ms).
        min_elapsed: Nanos,
    },
}

impl CatchUpPolicy {
    /// The resume rules' capped policy (`docs/background.md`): at most 300
    /// catch-up steps per resume (`maxCatchUpSteps`), and time away under
    /// 32 ms dropped as jitter (`minCatchUpMs`). What a game that has no
    /// reason to choose otherwise should use, and what `tickwise run` uses.
    pub const RESUME_RULES: CatchUpPolicy = CatchUpPolicy::Capped {
        max_steps: 300,
        min_elapsed: Nanos::from_millis(32),
    };
}

/// Why a lifecycle transition was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LifecycleError {
    /// `pause` or `background` while not running.
    NotRunning {
        /// The state the app was in.
        state: AppState,
    },
    /// `resume` while already running (a resume without a pause).
    AlreadyRunning,
}

impl fmt::Display for LifecycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LifecycleError::NotRunning { state } => {
                write!(
                    f,
                    "cannot pause or background: the app is {state}, not running"
                )
            }
            LifecycleError::AlreadyRunning => {
                f.write_str("cannot resume: the app is already running")
            }
        }
    }
}

impl core::error::Error for LifecycleError {}

/// Everything a resume decided. `sim_elapsed = catch_up_steps * step + carried
/// + dropped` exactly (up to nanosecond rounding of non-integral steps).
#[must_use = "a resume report says how many catch-up steps to run and what time was dropped"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResumeReport {
    /// The state resumed from.
    pub from: AppState,
    /// Host time between leaving `Running` and this resume (zero if the host
    /// clock went backwards; see `clock_went_backwards`).
    pub elapsed: Nanos,
    /// The sim time `elapsed` is worth: equal to `elapsed` at speed 1/1,
    /// `elapsed × P/Q` (with the loop's carried remainder) at speed `P/Q`.
    /// Every field below is computed from it.
    pub sim_elapsed: Nanos,
    /// Whole steps the time away is worth.
    pub wanted_steps: u64,
    /// Steps the policy allows to run now.
    pub catch_up_steps: u64,
    /// The remainder under one step, returned to the accumulator.
    pub carried: Nanos,
    /// Sim time thrown away (offline settlement receives it).
    pub dropped: Nanos,
    /// The host clock read earlier at resume than at pause; elapsed was taken as zero.
    pub clock_went_backwards: bool,
    /// Exact carried remainder in the clock's `1/den` ns units.
    pub(crate) carried_scaled: u128,
}

/// The running / paused / background state machine and its catch-up policy.
#[derive(Clone, Debug)]
pub struct Lifecycle {
    state: AppState,
    away_since: Timestamp,
    policy: CatchUpPolicy,
}

impl Lifecycle {
    /// A running lifecycle with the given policy.
    #[must_use]
    pub const fn new(policy: CatchUpPolicy) -> Lifecycle {
        Lifecycle {
            state: AppState::Running,
            away_since: Timestamp::ZERO,
            policy,
        }
    }

    /// The current state.
    #[must_use]
    pub const fn state(&self) -> AppState {
        self.state
    }

    /// The catch-up policy.
    #[must_use]
    pub const fn policy(&self) -> CatchUpPolicy {
        self.policy
    }

    /// Whether frames run steps.
    #[must_use]
    pub const fn is_running(&self) -> bool {
        matches!(self.state, AppState::Running)
    }

    /// Pauses at host time `now`.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running (a second pause, or a pause
    /// while in the background, changes nothing).
    pub fn pause(&mut self, now: Timestamp) -> Result<(), LifecycleError> {
        self.leave(AppState::Paused, now)
    }

    /// Goes to the background at host time `now` (the platform hid the app).
    ///
    /// # Errors
    ///
    /// [`LifecycleError::NotRunning`] unless running.
    pub fn background(&mut self, now: Timestamp) -> Result<(), LifecycleError> {
        self.leave(AppState::Background, now)
    }

    fn leave(&mut self, to: AppState, now: Timestamp) -> Result<(), LifecycleError> {
        if self.state != AppState::Running {
            return Err(LifecycleError::NotRunning { state: self.state });
        }
        self.state = to;
        self.away_since = now;
        Ok(())
    }

    /// Resumes at host time `now` and decides, under the policy, how the time
    /// away becomes steps. The caller runs `catch_up_steps` steps and returns
    /// the carried remainder to its clock ([`crate::FixedLoop::resume`] does both).
    ///
    /// # Errors
    ///
    /// [`LifecycleError::AlreadyRunning`] when not paused or in the background.
    pub fn resume(
        &mut self,
        now: Timestamp,
        step: StepLength,
    ) -> Result<ResumeReport, LifecycleError> {
        self.resume_scaled(now, step, |host| host)
    }

    /// [`Lifecycle::resume`] at a time scale: `scale` turns the host time
    /// away into sim time (called once, and only when the resume happens),
    /// and the policy decides on the scaled duration. [`crate::FixedLoop`]
    /// passes its speed's exact scaling here; `|host| host` is real time.
    ///
    /// # Errors
    ///
    /// [`LifecycleError::AlreadyRunning`] when not paused or in the background
    /// (`scale` is not called then).
    pub fn resume_scaled(
        &mut self,
        now: Timestamp,
        step: StepLength,
        scale: impl FnOnce(Nanos) -> Nanos,
    ) -> Result<ResumeReport, LifecycleError> {
        if self.state == AppState::Running {
            return Err(LifecycleError::AlreadyRunning);
        }
        let from = self.state;
        self.state = AppState::Running;
        let (elapsed, backwards) = match now.checked_since(self.away_since) {
            Some(d) => (d, false),
            None => (Nanos::ZERO, true),
        };
        let sim_elapsed = scale(elapsed);
        let (wanted, remainder) = step.split(sim_elapsed);
        let elapsed_scaled = step.scale(sim_elapsed);
        let (catch_up, carried) = match self.policy {
            CatchUpPolicy::Freeze => (0, 0),
            CatchUpPolicy::Full => (wanted, remainder),
            CatchUpPolicy::Capped { min_elapsed, .. } if sim_elapsed < min_elapsed => (0, 0),
            CatchUpPolicy::Capped { max_steps, .. } if wanted > max_steps => (max_steps, 0),
            CatchUpPolicy::Capped { .. } => (wanted, remainder),
        };
        // catch_up <= wanted, so catch_up * num + carried <= elapsed_scaled.
        let dropped = elapsed_scaled
            .saturating_sub(u128::from(catch_up) * u128::from(step.numerator()))
            .saturating_sub(carried);
        Ok(ResumeReport {
            from,
            elapsed,
            sim_elapsed,
            wanted_steps: wanted,
            catch_up_steps: catch_up,
            carried: step.unscale_floor(carried),
            dropped: step.unscale_floor(dropped),
            clock_went_backwards: backwards,
            carried_scaled: carried,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capped_policy() -> (Lifecycle, StepLength) {
        (
            Lifecycle::new(CatchUpPolicy::RESUME_RULES),
            StepLength::from_millis(16).unwrap(),
        )
    }

    #[test]
    fn resume_rules_constant_is_the_documented_300_steps_and_32_ms() {
        // docs/background.md: `maxCatchUpSteps` 300, `minCatchUpMs` 32.
        assert_eq!(
            CatchUpPolicy::RESUME_RULES,
            CatchUpPolicy::Capped {
                max_steps: 300,
                min_elapsed: Nanos::from_nanos(32_000_000),
            }
        );
    }

    #[test]
    fn resume_rules_timeline_numbers() {
        // The resume rules' browser timeline: 5000 ms away -> wanted 312,
        // caught up 300, dropped 200.
        let (mut lc, step) = capped_policy();
        lc.pause(Timestamp::from_millis(1_600)).unwrap();
        let r = lc.resume(Timestamp::from_millis(6_600), step).unwrap();
        assert_eq!(r.elapsed, Nanos::from_millis(5_000));
        assert_eq!((r.wanted_steps, r.catch_up_steps), (312, 300));
        assert_eq!(
            (r.carried, r.dropped),
            (Nanos::ZERO, Nanos::from_millis(200))
        );
        // One hour away -> wanted 225 000, still 300.
        lc.pause(Timestamp::from_millis(6_600)).unwrap();
        let r = lc
            .resume(Timestamp::from_millis(6_600 + 3_600_000), step)
            .unwrap();
        assert_eq!((r.wanted_steps, r.catch_up_steps), (225_000, 300));
        assert_eq!(r.dropped, Nanos::from_millis(3_600_000 - 4_800));
    }

    #[test]
    fn below_cap_carries_remainder() {
        let (mut lc, step) = capped_policy();
        lc.background(Timestamp::ZERO).unwrap();
        let r = lc.resume(Timestamp::from_millis(500), step).unwrap();
        assert_eq!(r.from, AppState::Background);
        assert_eq!((r.wanted_steps, r.catch_up_steps), (31, 31));
        assert_eq!((r.carried, r.dropped), (Nanos::from_millis(4), Nanos::ZERO));
    }

    #[test]
    fn short_absence_is_jitter() {
        let (mut lc, step) = capped_policy();
        lc.pause(Timestamp::ZERO).unwrap();
        let r = lc.resume(Timestamp::from_millis(31), step).unwrap();
        assert_eq!((r.wanted_steps, r.catch_up_steps), (1, 0));
        assert_eq!(
            (r.carried, r.dropped),
            (Nanos::ZERO, Nanos::from_millis(31))
        );
    }

    #[test]
    fn freeze_and_full() {
        let step = StepLength::from_millis(16).unwrap();
        let mut f = Lifecycle::new(CatchUpPolicy::Freeze);
        f.pause(Timestamp::ZERO).unwrap();
        let r = f.resume(Timestamp::from_millis(100), step).unwrap();
        assert_eq!((r.catch_up_steps, r.dropped), (0, Nanos::from_millis(100)));
        let mut u = Lifecycle::new(CatchUpPolicy::Full);
        u.pause(Timestamp::ZERO).unwrap();
        let r = u.resume(Timestamp::from_millis(3_600_000), step).unwrap();
        assert_eq!((r.catch_up_steps, r.dropped), (225_000, Nanos::ZERO));
    }

    #[test]
    fn refusals() {
        let (mut lc, step) = capped_policy();
        assert_eq!(
            lc.resume(Timestamp::ZERO, step),
            Err(LifecycleError::AlreadyRunning)
        );
        lc.pause(Timestamp::ZERO).unwrap();
        assert_eq!(
            lc.pause(Timestamp::ZERO),
            Err(LifecycleError::NotRunning {
                state: AppState::Paused
            })
        );
        assert_eq!(
            lc.background(Timestamp::ZERO),
            Err(LifecycleError::NotRunning {
                state: AppState::Paused
            })
        );
        assert_eq!(lc.state(), AppState::Paused);
    }

    #[test]
    fn scaled_resume_decides_on_sim_time() {
        // Half speed, 5000 ms away: 2500 ms of sim time = 156 steps + 4 ms,
        // under the cap of 300, so all 156 run and 4 ms is carried.
        let (mut lc, step) = capped_policy();
        lc.pause(Timestamp::ZERO).unwrap();
        let r = lc
            .resume_scaled(Timestamp::from_millis(5_000), step, |d| {
                Nanos::from_nanos(d.as_nanos() / 2)
            })
            .unwrap();
        assert_eq!(
            (r.elapsed, r.sim_elapsed),
            (Nanos::from_millis(5_000), Nanos::from_millis(2_500))
        );
        assert_eq!((r.wanted_steps, r.catch_up_steps), (156, 156));
        assert_eq!((r.carried, r.dropped), (Nanos::from_millis(4), Nanos::ZERO));
        // 40 ms away at half speed is 20 ms of sim time: under min_elapsed (32 ms).
        lc.pause(Timestamp::ZERO).unwrap();
        let r = lc
            .resume_scaled(Timestamp::from_millis(40), step, |d| {
                Nanos::from_nanos(d.as_nanos() / 2)
            })
            .unwrap();
        assert_eq!((r.catch_up_steps, r.dropped), (0, Nanos::from_millis(20)));
        // A refused resume never calls the scale.
        let refused = lc.resume_scaled(Timestamp::ZERO, step, |_| unreachable!());
        assert_eq!(refused, Err(LifecycleError::AlreadyRunning));
    }

    #[test]
    fn clock_going_backwards_counts_as_zero() {
        let (mut lc, step) = capped_policy();
        lc.pause(Timestamp::from_millis(1_000)).unwrap();
        let r = lc.resume(Timestamp::from_millis(10), step).unwrap();
        assert!(r.clock_went_backwards);
        assert_eq!(
            (r.elapsed, r.catch_up_steps, r.dropped),
            (Nanos::ZERO, 0, Nanos::ZERO)
        );
        assert!(lc.is_running());
    }
}
