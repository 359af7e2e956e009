//! Why a soak failed: one variant per check, with the values that broke it.

use core::fmt;

use tickwise::{LifecycleError, ResumeReport};

/// Why a soak failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum SoakError {
    /// The straight run's thread could not start.
    Spawn(std::io::Error),
    /// The straight run's thread panicked.
    StraightPanicked,
    /// The loop side sent a message for a tick the straight run had passed.
    OutOfOrder {
        /// The message's tick.
        tick: u64,
        /// The straight run's tick.
        after: u64,
    },
    /// The two runs' states differ at a checkpoint.
    Diverged {
        /// The checkpoint's tick.
        tick: u64,
        /// The fields whose hashes differ.
        fields: Vec<&'static str>,
    },
    /// Host time is not accounted for exactly at a checkpoint:
    /// `host·den != tick·num + acc + drift + dropped + clamped·den`.
    TimeNotConserved {
        /// The loop's tick.
        tick: u64,
        /// Host time in ns.
        host_ns: i128,
        /// The step's denominator.
        den: i128,
        /// Host time times the denominator.
        host_scaled: i128,
        /// The sum the clock accounts for.
        accounted: i128,
    },
    /// The clock's dropped total does not fit an `i128`.
    DroppedOverflow,
    /// The loop's host clock is not the time the soak fed it (saturated?).
    HostClock {
        /// The loop's host time in ns.
        clock_ns: u64,
        /// The time fed, summed by the soak in 128 bits.
        fed_ns: u128,
    },
    /// A pause, background or resume was refused.
    Lifecycle {
        /// `leaving` or `resume`.
        action: &'static str,
        /// The loop's tick.
        tick: u64,
        /// The refusal.
        error: LifecycleError,
    },
    /// A resume under the `Full` policy dropped time.
    ResumeDropped(ResumeReport),
    /// Counters disagree at the end (one line per fault): something
    /// saturated, wrapped or was counted twice.
    Counters(Vec<CounterFault>),
}

/// A counter that disagrees at the end of a soak.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CounterFault {
    /// The tick counts of the loop, the wrapped sim and the straight run.
    Ticks {
        /// The loop's tick.
        looped: u64,
        /// Steps the wrapped sim counted.
        wrapped: u64,
        /// The straight run's tick.
        straight: u64,
    },
    /// The clock's frame and step counts against the soak's.
    Clock {
        /// Frames the clock counted.
        frames: u64,
        /// Steps the clock counted.
        steps: u64,
        /// Frames the soak fed while running.
        fed: u64,
        /// Steps the soak saw in frame reports.
        seen: u64,
    },
    /// Steps from frames plus catch-up steps against the ticks.
    Steps {
        /// Steps run by frames.
        frames: u64,
        /// Steps run by resumes.
        catch_up: u64,
        /// Ticks.
        ticks: u64,
    },
    /// The final digests.
    Digests {
        /// The loop side's.
        looped: String,
        /// The straight run's.
        straight: String,
    },
    /// Frames that threw time away against drops the straight run applied.
    Drops {
        /// Frames that threw time away.
        events: u64,
        /// `on_time_dropped` calls applied.
        applied: u64,
    },
    /// Checkpoints sent against compared.
    Checkpoints {
        /// Sent by the loop side.
        sent: u64,
        /// Compared by the straight run.
        compared: u64,
    },
}

impl fmt::Display for CounterFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CounterFault::Ticks {
                looped,
                wrapped,
                straight,
            } => write!(
                f,
                "tick counts differ: loop {looped}, wrapped sim {wrapped}, straight {straight}"
            ),
            CounterFault::Clock {
                frames,
                steps,
                fed,
                seen,
            } => write!(
                f,
                "clock counted {frames} frames and {steps} steps, the soak fed {fed} and saw {seen}"
            ),
            CounterFault::Steps {
                frames,
                catch_up,
                ticks,
            } => write!(
                f,
                "steps from frames ({frames}) + catch-up ({catch_up}) != ticks ({ticks})"
            ),
            CounterFault::Digests { looped, straight } => {
                write!(f, "final digests differ: {looped} vs {straight}")
            }
            CounterFault::Drops { events, applied } => write!(
                f,
                "{events} frames threw time away but the straight run applied {applied} drops"
            ),
            CounterFault::Checkpoints { sent, compared } => {
                write!(f, "{sent} checkpoints sent, {compared} compared")
            }
        }
    }
}

impl fmt::Display for SoakError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SoakError::Spawn(e) => write!(f, "cannot start the straight run's thread: {e}"),
            SoakError::StraightPanicked => f.write_str("the straight run's thread panicked"),
            SoakError::OutOfOrder { tick, after } => {
                write!(f, "message for tick {tick} after tick {after}")
            }
            SoakError::Diverged { tick, fields } => write!(
                f,
                "DIVERGED at tick {tick}: fields {fields:?} differ between the loop and the straight run"
            ),
            SoakError::TimeNotConserved {
                tick,
                host_ns,
                den,
                host_scaled,
                accounted,
            } => write!(
                f,
                "time not conserved at tick {tick}: host {host_ns} ns × {den} = {host_scaled}, accounted {accounted}"
            ),
            SoakError::DroppedOverflow => f.write_str("dropped total beyond i128"),
            SoakError::HostClock { clock_ns, fed_ns } => write!(
                f,
                "host clock {clock_ns} ns, but {fed_ns} ns were fed (saturated?)"
            ),
            SoakError::Lifecycle {
                action,
                tick,
                error,
            } => write!(f, "{action} at tick {tick}: {error}"),
            SoakError::ResumeDropped(r) => write!(f, "a Full resume dropped time: {r:?}"),
            SoakError::Counters(faults) => {
                for (i, fault) in faults.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{fault}")?;
                }
                Ok(())
            }
        }
    }
}

impl core::error::Error for SoakError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SoakError::Spawn(e) => Some(e),
            SoakError::Lifecycle { error, .. } => Some(error),
            _ => None,
        }
    }
}
