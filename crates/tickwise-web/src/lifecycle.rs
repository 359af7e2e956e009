//! Resume reports and visibility outcomes, as every page reports them.
//!
//! The keys of [`ResumeOutcome::to_json`] are the keys of `tickwise script`'s
//! `resume-after` line: tools compare the page and the CLI key by key.

use serde_json::{Map, Value, json};
use tickwise::{AppState, PlatformEvent, ResumeReport, ResumeSummary};

/// A resume as the pages report it: the kernel's [`ResumeSummary`], which is
/// what `tickwise script` prints (`ok`, `elapsedMs`, `wantedSteps`,
/// `catchUpSteps`, `carriedMs`, `droppedMs`; zeros when refused), plus the
/// sim's `digest` after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeOutcome {
    /// The numbers, exactly as the script reports them.
    pub summary: ResumeSummary,
    /// The world's digest after the resume.
    pub digest: String,
}

impl ResumeOutcome {
    /// The outcome of a resume (`None`: refused) that left the world at `digest`.
    #[must_use]
    pub fn new(report: Option<&ResumeReport>, digest: String) -> ResumeOutcome {
        ResumeOutcome {
            summary: ResumeSummary::new(report),
            digest,
        }
    }

    /// The report as a JSON object with the script's keys.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("ok".into(), self.summary.ok.into());
        for (key, value) in self.summary.numbers() {
            obj.insert(key.into(), value.into());
        }
        obj.insert("digest".into(), self.digest.clone().into());
        Value::Object(obj)
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
