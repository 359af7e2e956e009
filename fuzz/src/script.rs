//! The `script_parser` target: `tickwise script`'s parser and its
//! `--inputs` reader, with a renderer of the script language's canonical
//! spelling to check round trips.

use std::fmt::Write as _;

use tickwise_lab::script::{self, Command};
use tickwise_sims::island::IslandWorld;

/// One command in the script language's canonical spelling.
fn render(command: &Command) -> String {
    let mut s = String::from(command.name());
    match command {
        Command::Frames { count, ms } => write!(s, " {count} {ms}"),
        Command::Frame(list) => list.iter().try_for_each(|ms| write!(s, " {ms}")),
        Command::Advance(n) => write!(s, " {n}"),
        Command::ResumeAfter(ms) => write!(s, " {ms}"),
        Command::Speed(speed) => write!(s, " {} {}", speed.numerator(), speed.denominator()),
        Command::Push(name) => write!(s, " {name}"),
        Command::Pause | Command::Background | Command::Pop => Ok(()),
    }
    .unwrap_or_default();
    s
}

/// `tickwise script`'s parser and its `--inputs` reader: a result or an
/// error naming a line that exists; accepted scripts have strictly increasing
/// line numbers, and rendering their commands back to text parses to the same
/// commands (the parser reads exactly what the script language says).
pub fn script_parser(data: &[u8]) {
    if let Ok(text) = core::str::from_utf8(data) {
        let lines = text.lines().count();
        match script::parse(text) {
            Ok(parsed) => {
                let mut last = 0;
                for l in &parsed {
                    assert!(
                        l.line > last && l.line <= lines,
                        "line number {} out of order",
                        l.line
                    );
                    last = l.line;
                }
                let rendered: String = parsed.iter().map(|l| render(&l.command) + "\n").collect();
                let again = match script::parse(&rendered) {
                    Ok(again) => again,
                    Err(e) => panic!("canonical rendering refused: {e}\n{rendered}"),
                };
                assert!(
                    again.len() == parsed.len(),
                    "rendering changed the command count"
                );
                for (a, b) in parsed.iter().zip(&again) {
                    assert!(
                        a.command == b.command,
                        "{:?} rendered as {:?}",
                        a.command,
                        b.command
                    );
                }
            }
            Err(e) => {
                assert!(e.line <= lines, "error names line {} of {lines}", e.line);
                assert!(!e.message.is_empty(), "empty error message");
            }
        }
    }
    if let Err(e) = tickwise_catalog::parse_inputs::<IslandWorld>(data, 1) {
        assert!(!e.to_string().is_empty(), "empty error message");
    }
}
