//! A script's session and running one command on it.

use std::fmt::Write as _;

use tickwise::{PlayError, ResumeSummary};
use tickwise_catalog::Playable;
use tickwise_sims::island::IslandSession;

use super::language::{Command, Line};

fn push_str(out: &mut String, key: &str, value: &str) {
    // serde_json escapes exactly as JSON requires.
    let _ = write!(out, ",\"{key}\":{}", serde_json::Value::from(value));
}

fn push_num(out: &mut String, key: &str, value: u64) {
    let _ = write!(out, ",\"{key}\":{value}");
}

fn push_bool(out: &mut String, key: &str, value: bool) {
    let _ = write!(out, ",\"{key}\":{value}");
}

/// A script's session: the island's (with its own `droppedMs` key) or any
/// other catalog sim's.
pub enum Session {
    /// The island, built from its loop and lifecycle configs.
    Island(Box<IslandSession>),
    /// Any other catalog sim ([`tickwise_catalog::Catalog::play`]).
    Other(Box<dyn Playable>),
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Session::Island(s) => f.debug_tuple("Island").field(s).finish(),
            Session::Other(p) => f.debug_tuple("Other").field(&p.digest()).finish(),
        }
    }
}

impl Session {
    fn play(&mut self) -> &mut dyn Playable {
        match self {
            Session::Island(s) => s.as_mut(),
            Session::Other(p) => p.as_mut(),
        }
    }

    /// The session, read-only.
    #[must_use]
    pub fn view(&self) -> &dyn Playable {
        match self {
            Session::Island(s) => s.as_ref(),
            Session::Other(p) => p.as_ref(),
        }
    }

    /// The island world's dropped time; other sims have no such key.
    fn dropped_ms(&self) -> Option<u64> {
        match self {
            Session::Island(s) => Some(s.world().dropped_ms()),
            Session::Other(_) => None,
        }
    }
}

/// Runs one command on a session and returns its JSON output line.
///
/// Keys: `line`, `cmd`, `tick`, `digest` always; `steps` and (the island
/// only) `droppedMs` (the world's total) for `frames`, `frame` and `advance`; `ok` for `pause`,
/// `background`, `push` and `pop`; `ok`, `elapsedMs`, `wantedSteps`,
/// `catchUpSteps`, `carriedMs`, `droppedMs` for `resume-after` (zeros when
/// refused); `scenes` for `push` and `pop`.
///
/// # Errors
///
/// A [`PlayError`] for a limit the session enforces (a parsed script stays
/// within them, so this does not happen for the output of [`super::parse`]); a
/// refused resume is not an error, it prints `"ok":false`.
pub fn execute(session: &mut Session, line: &Line) -> Result<String, PlayError> {
    let mut extra = String::new();
    let frames_out = |extra: &mut String, steps: u64, session: &Session| {
        push_num(extra, "steps", steps);
        if let Some(ms) = session.dropped_ms() {
            push_num(extra, "droppedMs", ms);
        }
    };
    let p = session.play();
    match &line.command {
        Command::Frames { count, ms } => {
            let steps = p.frames(*count, *ms)?;
            frames_out(&mut extra, steps, session);
        }
        Command::Frame(list) => {
            let steps = p.frame_list(list)?;
            frames_out(&mut extra, steps, session);
        }
        Command::Advance(n) => {
            p.advance(*n)?;
            frames_out(&mut extra, *n, session);
        }
        Command::Pause => push_bool(&mut extra, "ok", p.pause()),
        Command::Background => push_bool(&mut extra, "ok", p.background()),
        Command::ResumeAfter(ms) => {
            let r = match p.resume_after(*ms) {
                Ok(r) => Some(r),
                Err(PlayError::Lifecycle(_)) => None,
                Err(e) => return Err(e),
            };
            let summary = ResumeSummary::new(r.as_ref());
            push_bool(&mut extra, "ok", summary.ok);
            for (key, value) in summary.numbers() {
                push_num(&mut extra, key, value);
            }
        }
        Command::Speed(speed) => {
            p.set_speed(*speed);
            push_bool(&mut extra, "ok", true);
        }
        Command::Push(name) => {
            push_bool(&mut extra, "ok", p.push(name).is_ok());
            push_str(&mut extra, "scenes", &p.scenes());
        }
        Command::Pop => {
            push_bool(&mut extra, "ok", p.pop().is_ok());
            push_str(&mut extra, "scenes", &p.scenes());
        }
    }
    let v = session.view();
    let mut out = format!(
        "{{\"line\":{},\"cmd\":\"{}\"",
        line.line,
        line.command.name()
    );
    push_num(&mut out, "tick", v.tick());
    push_str(&mut out, "digest", &v.digest());
    out.push_str(&extra);
    out.push('}');
    Ok(out)
}
