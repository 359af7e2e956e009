//! The script language: one command per line, parsed whole before anything
//! runs, with every limit checked up front.

use tickwise::{
    CatchUpPolicy, MAX_SCENE_NAME, MAX_SPEED_RATIO, MAX_SPEED_TERM, Speed, is_valid_scene_name,
};

/// The most frames one `frames` line may feed (the session's per-call limit).
pub const MAX_FRAMES_PER_LINE: u64 = tickwise::MAX_FRAMES_PER_CALL;
/// The most durations one `frame` line may list.
pub const MAX_FRAME_LIST: usize = tickwise::MAX_FRAME_LIST;
/// The most steps one `advance` line may run.
pub const MAX_ADVANCE: u64 = tickwise::MAX_ADVANCE;
/// The longest duration a frame or resume may name, in ms (about 31.7 years).
pub const MAX_MS: u64 = tickwise::MAX_DURATION_MS;
/// The most frames plus direct steps a whole script may ask for.
pub const MAX_SCRIPT_WORK: u64 = 1_000_000_000;
/// The most milliseconds all of a script's durations (frames and absences) may
/// add up to: the session's wall-clock limit, checked before anything runs.
pub const MAX_SCRIPT_TIME_MS: u64 = tickwise::MAX_WALL_MS;
/// The largest script accepted, in bytes: 16 MiB (a front end reading a
/// script from a file or a stream stops there too).
pub const MAX_SCRIPT_BYTES: usize = 16 * 1024 * 1024;
/// The longest token quoted in full in an error message, in bytes.
pub const MAX_QUOTED_BYTES: usize = 64;

/// `token` for an error message: in full when short, otherwise its first
/// [`MAX_QUOTED_BYTES`] bytes (cut at a character boundary) followed by
/// `… (N bytes)`, so a 10 MB token never floods a terminal or a log.
#[must_use]
pub fn quote_token(token: &str) -> String {
    if token.len() <= MAX_QUOTED_BYTES {
        return format!("{token:?}");
    }
    let mut cut = MAX_QUOTED_BYTES;
    while !token.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{:?}… ({} bytes)", &token[..cut], token.len())
}

/// One script command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `frames N MS`.
    Frames {
        /// Frame count.
        count: u64,
        /// Duration of each.
        ms: u64,
    },
    /// `frame MS [MS ...]`.
    Frame(Vec<u64>),
    /// `advance N`.
    Advance(u64),
    /// `pause`.
    Pause,
    /// `background`.
    Background,
    /// `resume-after MS`.
    ResumeAfter(u64),
    /// `speed P Q`: the time scale P/Q from now on.
    Speed(Speed),
    /// `push NAME`.
    Push(String),
    /// `pop`.
    Pop,
}

impl Command {
    /// The command's name as written in scripts and output.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        match self {
            Command::Frames { .. } => "frames",
            Command::Frame(_) => "frame",
            Command::Advance(_) => "advance",
            Command::Pause => "pause",
            Command::Background => "background",
            Command::ResumeAfter(_) => "resume-after",
            Command::Speed(_) => "speed",
            Command::Push(_) => "push",
            Command::Pop => "pop",
        }
    }

    fn work(&self) -> u64 {
        match self {
            Command::Frames { count, .. } => *count,
            Command::Frame(v) => v.len() as u64,
            Command::Advance(n) => *n,
            _ => 0,
        }
    }

    /// Milliseconds of wall-clock time the command moves (saturating).
    fn time_ms(&self) -> u64 {
        match self {
            Command::Frames { count, ms } => count.saturating_mul(*ms),
            Command::Frame(v) => v.iter().fold(0u64, |a, ms| a.saturating_add(*ms)),
            Command::ResumeAfter(ms) => *ms,
            _ => 0,
        }
    }
}

/// A parsed line: its 1-based line number and command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number in the script.
    pub line: usize,
    /// The command.
    pub command: Command,
}

/// A script that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number (0 for whole-script errors).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "script: {}", self.message)
        } else {
            write!(f, "script line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for ParseError {}

fn number(tok: &str, what: &str, max: u64) -> Result<u64, String> {
    if tok.is_empty() || !tok.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{what} must be a non-negative integer, found {}",
            quote_token(tok)
        ));
    }
    match tok.parse::<u64>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(format!(
            "{what} must be at most {max}, found {}",
            quote_token(tok)
        )),
    }
}

fn parse_line(words: &[&str]) -> Result<Command, String> {
    let args = &words[1..];
    let arity = |n: usize, usage: &str| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("expected `{usage}`"))
        }
    };
    match words[0] {
        "frames" => {
            arity(2, "frames N MS")?;
            Ok(Command::Frames {
                count: number(args[0], "N", MAX_FRAMES_PER_LINE)?,
                ms: number(args[1], "MS", MAX_MS)?,
            })
        }
        "frame" => {
            if args.is_empty() {
                return Err("expected `frame MS [MS ...]`".into());
            }
            if args.len() > MAX_FRAME_LIST {
                return Err(format!(
                    "at most {MAX_FRAME_LIST} durations per `frame` line"
                ));
            }
            let ms = args
                .iter()
                .map(|t| number(t, "MS", MAX_MS))
                .collect::<Result<_, _>>()?;
            Ok(Command::Frame(ms))
        }
        "advance" => {
            arity(1, "advance N")?;
            Ok(Command::Advance(number(args[0], "N", MAX_ADVANCE)?))
        }
        "pause" => arity(0, "pause").map(|()| Command::Pause),
        "background" => arity(0, "background").map(|()| Command::Background),
        "resume-after" => {
            arity(1, "resume-after MS")?;
            Ok(Command::ResumeAfter(number(args[0], "MS", MAX_MS)?))
        }
        "speed" => {
            arity(2, "speed P Q")?;
            let p = number(args[0], "P", u64::from(MAX_SPEED_TERM))?;
            let q = number(args[1], "Q", u64::from(MAX_SPEED_TERM))?;
            let (Ok(p32), Ok(q32)) = (u32::try_from(p), u32::try_from(q)) else {
                return Err(format!("P and Q must be at most {MAX_SPEED_TERM}"));
            };
            if p32 == 0 || q32 == 0 {
                return Err(format!("P and Q must be at least 1, found {p} {q}"));
            }
            Speed::new(p32, q32)
                .map(Command::Speed)
                .map_err(|_| format!("speed {p}/{q} is faster than {MAX_SPEED_RATIO}"))
        }
        "push" => {
            arity(1, "push NAME")?;
            if !is_valid_scene_name(args[0]) {
                return Err(format!(
                    "scene name {} is invalid: use 1 to {MAX_SCENE_NAME} ASCII letters, digits, '_', '-' or '.'",
                    quote_token(args[0])
                ));
            }
            Ok(Command::Push(args[0].to_owned()))
        }
        "pop" => arity(0, "pop").map(|()| Command::Pop),
        other => Err(format!(
            "unknown command {} (expected frames, frame, advance, pause, background, resume-after, speed, push or pop)",
            quote_token(other)
        )),
    }
}

/// Parses a whole script.
///
/// # Errors
///
/// The first bad line, or a whole-script limit ([`MAX_SCRIPT_BYTES`],
/// [`MAX_SCRIPT_WORK`], [`MAX_SCRIPT_TIME_MS`]) being exceeded.
pub fn parse(text: &str) -> Result<Vec<Line>, ParseError> {
    if text.len() > MAX_SCRIPT_BYTES {
        return Err(ParseError {
            line: 0,
            message: format!(
                "{} bytes is more than the {MAX_SCRIPT_BYTES} accepted",
                text.len()
            ),
        });
    }
    let mut out = Vec::new();
    let mut work = 0u64;
    let mut time = 0u64;
    // Once a speed is set, every host ms may be worth up to MAX_SPEED_RATIO
    // ms of sim time (earlier lines included): the sim-time totals (the
    // world's dropped ns, a resume's scaled absence) must stay in range.
    let mut factor = 1u64;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split_once('#').map_or(raw, |(before, _)| before);
        let words: Vec<&str> = content.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let command = parse_line(&words).map_err(|message| ParseError { line, message })?;
        work = work.saturating_add(command.work());
        if work > MAX_SCRIPT_WORK {
            return Err(ParseError {
                line,
                message: format!(
                    "the script asks for more than {MAX_SCRIPT_WORK} frames and steps in total"
                ),
            });
        }
        time = time.saturating_add(command.time_ms());
        if matches!(command, Command::Speed(_)) {
            factor = u64::from(MAX_SPEED_RATIO);
        }
        if time.saturating_mul(factor) > MAX_SCRIPT_TIME_MS {
            let counted = if factor > 1 {
                format!(" (counted {MAX_SPEED_RATIO} times once a speed is set)")
            } else {
                String::new()
            };
            return Err(ParseError {
                line,
                message: format!(
                    "the script's durations add up to more than {MAX_SCRIPT_TIME_MS} ms{counted}"
                ),
            });
        }
        out.push(Line { line, command });
    }
    Ok(out)
}

/// Bounds the catch-up work of a script under the `full` policy, which runs
/// every step of every absence: the script's total time divided by the step
/// is the most that could be, and it counts toward [`MAX_SCRIPT_WORK`] along
/// with frames and direct steps. (`capped` and `freeze` catch up at most
/// `maxCatchUpSteps` per resume and need no extra bound.)
///
/// # Errors
///
/// A whole-script [`ParseError`] (line 0) when the bound exceeds the limit.
pub fn check_catch_up_work(
    lines: &[Line],
    policy: CatchUpPolicy,
    step_ms: u64,
) -> Result<(), ParseError> {
    let has_resume = lines
        .iter()
        .any(|l| matches!(l.command, Command::ResumeAfter(_)));
    if policy != CatchUpPolicy::Full || !has_resume {
        return Ok(());
    }
    let work = lines
        .iter()
        .fold(0u64, |a, l| a.saturating_add(l.command.work()));
    let time = lines
        .iter()
        .fold(0u64, |a, l| a.saturating_add(l.command.time_ms()));
    // At a speed above 1, each host ms can be worth up to MAX_SPEED_RATIO.
    let factor = if lines.iter().any(|l| matches!(l.command, Command::Speed(_))) {
        u64::from(MAX_SPEED_RATIO)
    } else {
        1
    };
    let catch_up = time.saturating_mul(factor) / step_ms.max(1);
    if work.saturating_add(catch_up) > MAX_SCRIPT_WORK {
        return Err(ParseError {
            line: 0,
            message: format!(
                "with the full catch-up policy this script's {time} ms could mean {catch_up} catch-up steps; with its {work} frames and steps that is more than {MAX_SCRIPT_WORK}"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_lines_are_checked_before_anything_runs() {
        let lines = parse("speed 1 2\nspeed 16 1\nspeed 1000 1000\n").unwrap();
        assert_eq!(
            lines[0].command,
            Command::Speed(tickwise::Speed::new(1, 2).unwrap())
        );
        for (bad, why) in [
            ("speed 0 1\n", "at least 1"),
            ("speed 1 0\n", "at least 1"),
            ("speed 1001 1000\n", "at most 1000"),
            ("speed 17 1\n", "faster than 16"),
            ("speed 1\n", "speed P Q"),
            ("speed 1 2 3\n", "speed P Q"),
            ("speed -1 2\n", "non-negative"),
        ] {
            let e = parse(&format!("frames 1 16\n{bad}")).unwrap_err();
            assert_eq!(e.line, 2, "{bad}");
            assert!(e.message.contains(why), "{bad}: {}", e.message);
        }
        // 10^12 ms is fine alone, but counts 16 times once a speed is set.
        assert!(parse("resume-after 1000000000000\n").is_ok());
        let e = parse("resume-after 1000000000000\nspeed 1 1\n").unwrap_err();
        assert_eq!(e.line, 2);
    }

    #[test]
    fn parses_every_command_and_skips_comments() {
        let s = "# the resume rules timeline\nframes 100 16\n\nframe 3 7 13 # irregular\nadvance 5\npause\nbackground\nresume-after 5000\npush popup\npop\n";
        let lines = parse(s).unwrap();
        let cmds: Vec<_> = lines.iter().map(|l| (l.line, l.command.clone())).collect();
        assert_eq!(
            cmds,
            vec![
                (2, Command::Frames { count: 100, ms: 16 }),
                (4, Command::Frame(vec![3, 7, 13])),
                (5, Command::Advance(5)),
                (6, Command::Pause),
                (7, Command::Background),
                (8, Command::ResumeAfter(5000)),
                (9, Command::Push("popup".into())),
                (10, Command::Pop),
            ]
        );
    }

    #[test]
    fn bad_lines_name_their_line() {
        for (script, line, needle) in [
            ("frames 1 16\nframes 10\n", 2, "frames N MS"),
            ("frame\n", 1, "frame MS"),
            ("frames -1 16\n", 1, "non-negative"),
            ("frames 1 16.5\n", 1, "non-negative"),
            ("advance 99999999999\n", 1, "at most"),
            ("pause now\n", 1, "`pause`"),
            ("jump 3\n", 1, "unknown command"),
            ("\n\npush a=b\n", 3, "invalid"),
            ("resume-after\n", 1, "resume-after MS"),
            ("frames 18446744073709551616 1\n", 1, "at most"),
        ] {
            let e = parse(script).unwrap_err();
            assert_eq!(e.line, line, "{script:?}");
            assert!(e.to_string().contains(needle), "{script:?}: {e}");
        }
    }

    #[test]
    fn total_work_is_bounded() {
        let s = "frames 10000000 16\n".repeat(101);
        let e = parse(&s).unwrap_err();
        assert_eq!(e.line, 101);
    }

    #[test]
    fn total_time_is_bounded_so_no_clock_saturates() {
        let e = parse("frames 10000000 1000000000000\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.to_string().contains("ms"), "{e}");
        let ok = "resume-after 1000000000000\n".repeat(10);
        assert!(parse(&ok).is_ok());
        let too_much = format!("{ok}resume-after 1\n");
        assert_eq!(parse(&too_much).unwrap_err().line, 11);
    }

    #[test]
    fn full_policy_catch_up_counts_as_work() {
        let lines = parse("pause\nresume-after 1000000000000\n").unwrap();
        let full = CatchUpPolicy::Full;
        let e = check_catch_up_work(&lines, full, 16).unwrap_err();
        assert_eq!(e.line, 0);
        // 10^12 ms / 16 ms = 62.5e9 steps: refused. 10 s of absence is fine.
        let small = parse("pause\nresume-after 10000\n").unwrap();
        assert!(check_catch_up_work(&small, full, 16).is_ok());
        let capped = CatchUpPolicy::Capped {
            max_steps: 300,
            min_elapsed: tickwise::Nanos::ZERO,
        };
        assert!(check_catch_up_work(&lines, capped, 16).is_ok());
        assert!(check_catch_up_work(&lines, CatchUpPolicy::RESUME_RULES, 16).is_ok());
    }

    #[test]
    fn long_tokens_are_quoted_cut_short() {
        assert_eq!(quote_token("12x"), "\"12x\"");
        // 70 ASCII bytes: the first 64, then the length.
        let long = "a".repeat(70);
        assert_eq!(
            quote_token(&long),
            format!("\"{}\"… (70 bytes)", "a".repeat(64))
        );
        // A cut inside a 2-byte character backs off to its start: 32 of
        // them fill exactly 64 bytes, a 33rd would cross the limit.
        let wide = "é".repeat(100);
        assert_eq!(
            quote_token(&wide),
            format!("\"{}\"… (200 bytes)", "é".repeat(32))
        );
        let e = parse(&format!("jump{}\n", "x".repeat(1000))).unwrap_err();
        assert!(e.message.contains("(1004 bytes)"), "{}", e.message);
    }
}
