//! The `tickwise` command. See `tickwise --help` and the README.
use std::process::ExitCode;

fn main() -> ExitCode {
    tickwise_cli::main_with_args(std::env::args_os())
}
