//! The duel's replay tools: `duel record|verify|compare|sync-test|budget`.
use std::process::ExitCode;

use tickwise_cli::Catalog;
use tickwise_example_duel::Duel;

fn main() -> ExitCode {
    tickwise_cli::main_with(Catalog::empty().with::<Duel>())
}
