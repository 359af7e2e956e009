//! Flag hints on top of library errors.
//!
//! The libraries state a limit or a fault; only the CLI knows which flag
//! changes it, so the hint is added here, once, for every command.

use tickwise::ReplayError;
use tickwise_catalog::CatalogError;
use tickwise_lab::budget::{BudgetError, TickCount};

/// The flag that raises the limit behind `e`, if there is one.
fn limit_flag(e: &CatalogError) -> Option<&'static str> {
    match e {
        CatalogError::TooMuchWork { .. } => Some("--max-work"),
        CatalogError::Replay(ReplayError::TooManyTicks { .. }) => Some("--max-ticks"),
        CatalogError::Replay(ReplayError::FileTooLarge { .. }) => Some("--max-file-bytes"),
        _ => None,
    }
}

/// `e`'s message with the flag that raises its limit, if any.
pub(crate) fn catalog_message(e: &CatalogError) -> String {
    let msg = e.to_string();
    match limit_flag(e) {
        Some(flag) => format!("{msg} (raise it with {flag})"),
        None => msg,
    }
}

/// `e` as an error for the CLI's failure path, with its flag hint.
pub(crate) fn catalog(e: CatalogError) -> anyhow::Error {
    anyhow::Error::msg(catalog_message(&e))
}

/// A budget error prefixed by the flag that set the offending number.
pub(crate) fn budget(e: BudgetError) -> anyhow::Error {
    let flag = match e {
        BudgetError::Headroom { .. } => "--headroom",
        BudgetError::Cost { .. } => "--cost-ms",
        BudgetError::TooManyTicks { which, .. } => match which {
            TickCount::Warmup => "--warmup",
            TickCount::Timed => "--ticks",
            TickCount::CatchUp => "--catch-up",
        },
        BudgetError::NoTimedTicks => "--ticks",
        _ => return anyhow::Error::msg(e.to_string()),
    };
    anyhow::anyhow!("{flag}: {e}")
}
