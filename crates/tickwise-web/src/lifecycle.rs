//! Resume reports and visibility outcomes, as both pages report them.
//!
//! The keys of [`ResumeOutcome::to_json`] are the keys of `tickwise script`'s
//! `resume-after` line: tools compare the page and the CLI key by key.

use serde_json::{Value, json};
use tickwise::{AppState, Nanos, PlatformEvent, ResumeReport};

/// A resume as the pages report it: `ok`, `elapsedMs`, `wantedSteps`,
/// `catchUpSteps`, `carriedMs`, `droppedMs`, `digest`. A refused resume has
/// `ok: false` and zeros.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeOutcome {
    /// Whether the resume happened.
    pub ok: bool,
    /// Time away, whole ms.
    pub elapsed_ms: u64,
    /// Steps the time away is worth.
    pub wanted_steps: u64,
    /// Steps run.
    pub catch_up_steps: u64,
    /// Remainder returned to the accumulator, whole ms.
    pub carried_ms: u64,
    /// Time thrown away, whole ms.
    pub dropped_ms: u64,
    /// The world's digest after the resume.
    pub digest: String,
}

impl ResumeOutcome {
    /// The outcome of a resume (`None`: refused) that left the world at `digest`.
    #[must_use]
    pub fn new(report: Option<&ResumeReport>, digest: String) -> ResumeOutcome {
        let ms = |f: fn(&ResumeReport) -> Nanos| report.map_or(0, |r| f(r).as_millis());
        ResumeOutcome {
            ok: report.is_some(),
            elapsed_ms: ms(|r| r.elapsed),
            wanted_steps: report.map_or(0, |r| r.wanted_steps),
            catch_up_steps: report.map_or(0, |r| r.catch_up_steps),
            carried_ms: ms(|r| r.carried),
            dropped_ms: ms(|r| r.dropped),
            digest,
        }
    }

    /// The report as a JSON object with the script's keys.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "ok": self.ok,
            "elapsedMs": self.elapsed_ms,
            "wantedSteps": self.wanted_steps,
            "catchUpSteps": self.catch_up_steps,
            "carriedMs": self.carried_ms,
            "droppedMs": self.dropped_ms,
            "digest": self.digest,
        })
    }
}

/// What a platform visibility event did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VisibilityOutcome {
    /// No transition applied (hidden while paused, visible while running or
    /// paused by the player, a duplicate event).
    Ignored,
    /// Hidden: the app went to the background.
    Backgrounded,
    /// Visible: the app resumed from the background with this report.
    Resumed(ResumeOutcome),
}

impl VisibilityOutcome {
    /// Classifies what `FixedLoop::platform_event` did, from the state before
    /// and after and its report; `digest` is read only for a resume.
    pub fn classify(
        before: AppState,
        after: AppState,
        report: Option<&ResumeReport>,
        digest: impl FnOnce() -> String,
    ) -> VisibilityOutcome {
        match report {
            Some(r) => VisibilityOutcome::Resumed(ResumeOutcome::new(Some(r), digest())),
            None if after == AppState::Background && before != after => {
                VisibilityOutcome::Backgrounded
            }
            None => VisibilityOutcome::Ignored,
        }
    }

    /// JSON `{"outcome": "ignored"|"backgrounded"|"resumed", "resume": report|null}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let (outcome, resume) = match self {
            VisibilityOutcome::Ignored => ("ignored", Value::Null),
            VisibilityOutcome::Backgrounded => ("backgrounded", Value::Null),
            VisibilityOutcome::Resumed(r) => ("resumed", r.to_json()),
        };
        json!({ "outcome": outcome, "resume": resume })
    }
}

/// The kernel's event for `document.visibilityState === 'hidden'` (`true`) or not.
#[must_use]
pub const fn platform_event(hidden: bool) -> PlatformEvent {
    if hidden {
        PlatformEvent::Hidden
    } else {
        PlatformEvent::Visible
    }
}
