//! A resume in whole milliseconds: the report that tools and pages print.
//!
//! [`ResumeReport`] is exact (nanoseconds, the clock's remainder). People and
//! tools compare something coarser: `tickwise script`'s `resume-after` line,
//! the Python reference and every browser page print the same six numbers
//! under the same keys. Keeping that one definition here, next to the report
//! it summarises, lets a sim crate, the CLI and a web adapter share it without
//! depending on each other.

use crate::lifecycle::ResumeReport;

/// A resume in whole milliseconds, with zeros when the resume was refused.
///
/// The key names of [`ResumeSummary::numbers`] are a contract shared by the
/// CLI's script output, the Python reference and the browser pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResumeSummary {
    /// Whether the resume happened.
    pub ok: bool,
    /// Host time away, whole ms (rounded down).
    pub elapsed_ms: u64,
    /// Steps the time away is worth.
    pub wanted_steps: u64,
    /// Steps run.
    pub catch_up_steps: u64,
    /// Remainder returned to the accumulator, whole ms (rounded down).
    pub carried_ms: u64,
    /// Time thrown away, whole ms (rounded down).
    pub dropped_ms: u64,
}

impl ResumeSummary {
    /// The summary of a resume; `None` for a refused one (all zeros, `ok: false`).
    #[must_use]
    pub fn new(report: Option<&ResumeReport>) -> ResumeSummary {
        report.map_or_else(ResumeSummary::default, |r| ResumeSummary {
            ok: true,
            elapsed_ms: r.elapsed.as_millis(),
            wanted_steps: r.wanted_steps,
            catch_up_steps: r.catch_up_steps,
            carried_ms: r.carried.as_millis(),
            dropped_ms: r.dropped.as_millis(),
        })
    }

    /// The numbers under their contract keys, in output order (after `ok`):
    /// `elapsedMs`, `wantedSteps`, `catchUpSteps`, `carriedMs`, `droppedMs`.
    #[must_use]
    pub const fn numbers(&self) -> [(&'static str, u64); 5] {
        [
            ("elapsedMs", self.elapsed_ms),
            ("wantedSteps", self.wanted_steps),
            ("catchUpSteps", self.catch_up_steps),
            ("carriedMs", self.carried_ms),
            ("droppedMs", self.dropped_ms),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CatchUpPolicy, Lifecycle, Nanos, StepLength, Timestamp};

    #[test]
    fn refused_is_all_zeros() {
        let s = ResumeSummary::new(None);
        assert!(!s.ok);
        assert!(s.numbers().iter().all(|&(_, v)| v == 0));
    }

    #[test]
    fn a_capped_resume_in_whole_ms() {
        // Away 5 000.9 ms at 16 ms steps, cap 300: 312 steps are owed
        // (4 992 ms), 300 run (4 800 ms); the 8.9 ms under a step are not a
        // whole step, so with a cap hit everything past the catch-up is dropped:
        // 5 000.9 - 4 800 = 200.9 ms -> 200 whole ms.
        let mut lc = Lifecycle::new(CatchUpPolicy::Capped {
            max_steps: 300,
            min_elapsed: Nanos::from_millis(32),
        });
        lc.pause(Timestamp::ZERO).unwrap();
        let step = StepLength::from_millis(16).unwrap();
        let r = lc
            .resume(Timestamp::from_nanos(5_000_900_000), step)
            .unwrap();
        let s = ResumeSummary::new(Some(&r));
        assert!(s.ok);
        assert_eq!(
            s.numbers(),
            [
                ("elapsedMs", 5000),
                ("wantedSteps", 312),
                ("catchUpSteps", 300),
                ("carriedMs", 0),
                ("droppedMs", 200),
            ]
        );
    }
}
