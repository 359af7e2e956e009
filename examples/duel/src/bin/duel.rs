//! The duel's replay tools: `duel record|verify|compare|sync-test|budget`.
use std::process::ExitCode;

use tickwise_cli::{Catalog, ToolInfo};
use tickwise_example_duel::Duel;

/// The tool's name, version and description: its `--help`, `--version`,
/// errors and banners are the duel's own.
const TOOL: ToolInfo = ToolInfo::new(
    "duel",
    env!("CARGO_PKG_VERSION"),
    "The duel's replay tools: record, verify, compare, sync-test, budget and the verification service.",
);

fn main() -> ExitCode {
    tickwise_cli::main_with(TOOL, Catalog::empty().with::<Duel>())
}
