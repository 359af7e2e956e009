//! `tickwise run` (not built yet).
use crate::Failure;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the command.
///
/// # Errors
///
/// Always, until built.
pub fn run(_args: &Args) -> Result<u8, Failure> {
    Err(Failure::usage(anyhow::anyhow!("`run` is not built yet")))
}
