//! The `tickwise` command over the built-in sims. See `tickwise --help`,
//! the README, and [`tickwise_cli::main_with`] for a game's own binary.
use std::process::ExitCode;

use tickwise_cli::Catalog;

fn main() -> ExitCode {
    tickwise_cli::main_with(tickwise_cli::ToolInfo::TICKWISE, Catalog::builtin())
}
