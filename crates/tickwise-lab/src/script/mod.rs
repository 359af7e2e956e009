//! The script language: drive any catalog sim in its loop from a text
//! script, one JSON line out per command.
//!
//! The sim runs in its loop ([`Catalog::play`](tickwise_catalog::Catalog::play)):
//! its clock, its catch-up policy, the scene stack `menu`, `game`. The
//! island is built from its loop and lifecycle configs instead
//! ([`island_script_session`]) and adds its own key, `droppedMs`; the
//! output keys are otherwise the same for every sim.
//!
//! One command per line; blank lines and `#` comments are ignored:
//!
//! | command | effect |
//! |---|---|
//! | `frames N MS` | N frames of MS milliseconds |
//! | `frame MS [MS ...]` | one frame per listed duration |
//! | `advance N` | N direct steps (whatever the lifecycle state) |
//! | `pause`, `background` | leave the running state |
//! | `resume-after MS` | the wall clock moves MS, then resume (refused, changing nothing, when running) |
//! | `speed P Q` | time scale P/Q from now on (1 ≤ P, Q ≤ 1000, P/Q ≤ 16): frames and time away are scaled exactly |
//! | `push NAME`, `pop` | scene stack |
//!
//! The wall clock also moves with every frame, paused or not. The whole script
//! is parsed before anything runs ([`parse`], [`check_catch_up_work`]); a bad
//! line is an error naming the line. Output: one JSON object per command
//! (see [`execute`]); the key names are a contract shared with the Python
//! reference and the browser page.
//!
//! Why here and not in the command-line tool: a game's own tool, a test or a
//! fuzzer drives sims with the same language and gets the same output; the
//! tool only reads files and prints ([`run_script`]).
//!
//! ```
//! use tickwise_lab::script::{IslandParts, Session, island_script_session, run_script};
//!
//! let mut session = Session::Island(Box::new(island_script_session(&IslandParts::default())?));
//! let mut out = Vec::new();
//! run_script(&mut session, "frames 100 16\npause\nresume-after 5000\n", &mut out)?;
//! let text = String::from_utf8(out)?;
//! let lines: Vec<&str> = text.lines().collect();
//! // The resume rules' timeline: 5000 ms away, 312 steps owed, 300 caught up.
//! assert!(lines[2].contains("\"wantedSteps\":312,\"catchUpSteps\":300"), "{}", lines[2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io::Write;

use tickwise::PlayError;

mod island;
mod language;
mod session;

pub use island::{
    DEFAULT_INPUT_TICKS, DEFAULT_LIFECYCLE_CONFIG, DEFAULT_LOOP_CONFIG, IslandParts,
    IslandSetupError, island_script_session,
};
pub use language::{
    Command, Line, MAX_ADVANCE, MAX_FRAME_LIST, MAX_FRAMES_PER_LINE, MAX_MS, MAX_QUOTED_BYTES,
    MAX_SCRIPT_BYTES, MAX_SCRIPT_TIME_MS, MAX_SCRIPT_WORK, ParseError, check_catch_up_work, parse,
    quote_token,
};
pub use session::{Session, execute};

/// Why a script stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum ScriptError {
    /// The script was refused before anything ran: a bad line or a
    /// whole-script limit.
    Parse(ParseError),
    /// The session refused a command (a limit it enforces).
    Play {
        /// The 1-based line of the command.
        line: usize,
        /// What the session said.
        source: PlayError,
    },
    /// The output could not be written.
    Write(std::io::Error),
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptError::Parse(e) => write!(f, "{e}"),
            ScriptError::Play { line, source } => write!(f, "script line {line}: {source}"),
            ScriptError::Write(e) => write!(f, "cannot write output: {e}"),
        }
    }
}

impl std::error::Error for ScriptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ScriptError::Parse(e) => Some(e),
            ScriptError::Play { source, .. } => Some(source),
            ScriptError::Write(e) => Some(e),
        }
    }
}

impl From<ParseError> for ScriptError {
    fn from(e: ParseError) -> ScriptError {
        ScriptError::Parse(e)
    }
}

/// Parses `text` whole, bounds its catch-up work under the session's
/// policy, then runs every command on `session`, writing one JSON line per
/// command to `out`. Returns the number of commands run.
///
/// # Errors
///
/// [`ScriptError::Parse`] before anything runs or is written;
/// [`ScriptError::Play`] or [`ScriptError::Write`] after the lines before
/// it were written.
pub fn run_script(
    session: &mut Session,
    text: &str,
    out: &mut dyn Write,
) -> Result<usize, ScriptError> {
    let lines = parse(text)?;
    check_catch_up_work(&lines, session.view().policy(), session.view().step_ms())?;
    for line in &lines {
        let json = execute(session, line).map_err(|source| ScriptError::Play {
            line: line.line,
            source,
        })?;
        out.write_all(json.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .map_err(ScriptError::Write)?;
    }
    out.flush().map_err(ScriptError::Write)?;
    Ok(lines.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_stops_the_script_before_any_output() {
        let mut s = Session::Island(Box::new(
            island_script_session(&IslandParts::default()).unwrap(),
        ));
        let mut out = Vec::new();
        let e = run_script(&mut s, "frames 10 16\njump\n", &mut out).unwrap_err();
        assert!(
            matches!(e, ScriptError::Parse(ParseError { line: 2, .. })),
            "{e}"
        );
        assert!(out.is_empty());
        assert_eq!(s.view().tick(), 0);
    }

    #[test]
    fn full_policy_absences_are_bounded_before_anything_runs() {
        // A full-catch-up lifecycle and a 10^12 ms absence: 62.5e9 steps
        // at 16 ms, more than MAX_SCRIPT_WORK.
        let lc = String::from_utf8(DEFAULT_LIFECYCLE_CONFIG.to_vec())
            .unwrap()
            .replace("\"capped\"", "\"full\"");
        let parts = IslandParts {
            lifecycle: Some(lc.as_bytes()),
            ..IslandParts::default()
        };
        let mut s = Session::Island(Box::new(island_script_session(&parts).unwrap()));
        let mut out = Vec::new();
        let e = run_script(&mut s, "pause\nresume-after 1000000000000\n", &mut out).unwrap_err();
        assert!(
            matches!(e, ScriptError::Parse(ParseError { line: 0, .. })),
            "{e}"
        );
        assert!(out.is_empty());
    }

    #[test]
    fn a_refused_resume_prints_ok_false_and_the_script_goes_on() {
        let mut s = Session::Island(Box::new(
            island_script_session(&IslandParts::default()).unwrap(),
        ));
        let mut out = Vec::new();
        assert_eq!(
            run_script(&mut s, "resume-after 5\nframes 1 16\n", &mut out).unwrap(),
            2
        );
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("{\"line\":1,\"cmd\":\"resume-after\",\"tick\":0,"));
        assert!(
            lines[0].contains("\"ok\":false,\"elapsedMs\":0"),
            "{}",
            lines[0]
        );
        assert!(lines[1].contains("\"tick\":1,"), "{}", lines[1]);
    }
}
