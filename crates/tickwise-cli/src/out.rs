//! Standard output that a closed reader cannot crash.
//!
//! `println!` panics when stdout is a pipe whose reader has gone
//! (`tickwise run --json | head -c 10`). Every command prints through
//! `outln!` and `out!` instead: a failed write becomes a [`StdoutClosed`]
//! error that stops the command, and [`crate::main_with_args`] exits with
//! code 141 (128 + SIGPIPE, what a shell reports for a tool killed by the
//! signal) without a message, as `cat` or `grep` would.

use std::fmt;
use std::io;

/// Standard output could not be written (the reader closed the pipe, the
/// disk is full): the command stops.
#[derive(Debug)]
pub(crate) struct StdoutClosed(pub(crate) io::Error);

impl fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write to standard output: {}", self.0)
    }
}

impl std::error::Error for StdoutClosed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl StdoutClosed {
    /// Whether the reader went away (a broken pipe), which is not worth a
    /// message: the reader took what it wanted.
    #[must_use]
    pub(crate) fn is_broken_pipe(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

/// `println!` that returns [`StdoutClosed`] from the enclosing function
/// (which returns a `Result` whose error converts from it) instead of
/// panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use ::std::io::Write as _;
        writeln!(::std::io::stdout().lock(), $($t)*).map_err($crate::out::StdoutClosed)?
    }};
}

/// A server's "listening on" line: written when stdout can take it, and never
/// a reason to stop serving (the server's work does not go to stdout).
macro_rules! banner {
    ($($t:tt)*) => {{
        use ::std::io::Write as _;
        let _ = writeln!(::std::io::stdout().lock(), $($t)*);
    }};
}

/// `print!` that returns [`StdoutClosed`] instead of panicking (see
/// `outln!`).
macro_rules! out {
    ($($t:tt)*) => {{
        use ::std::io::Write as _;
        write!(::std::io::stdout().lock(), $($t)*).map_err($crate::out::StdoutClosed)?
    }};
}
