//! Flag hints on top of library errors.
//!
//! The libraries state a limit or a fault; only the CLI knows which flag
//! changes it, so the hint is added here, once, for every command.

use tickwise::ReplayError;
use tickwise_catalog::CatalogError;
use tickwise_lab::budget::{BudgetError, TickCount};

use crate::bounded::{InputKind, ReadError};

/// The flag that raises the limit behind `e`, if there is one.
fn limit_flag(e: &CatalogError) -> Option<&'static str> {
    match e {
        CatalogError::TooMuchWork { .. } => Some("--max-work"),
        CatalogError::TooMuchMemory { .. } => Some("--max-memory"),
        CatalogError::ReplayTooLarge { .. } => Some("--max-file-bytes"),
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

/// A verdict's message with the flag that raises the limit that refused
/// it, if any (the JSON keeps the library's words).
pub(crate) fn verdict_message(v: &tickwise_catalog::Verdict) -> String {
    let msg = v.message.clone().unwrap_or_default();
    let flag = match v.limit {
        Some("max_work") => "--max-work",
        Some("max_ticks") => "--max-ticks",
        Some("max_file_bytes") => "--max-file-bytes",
        _ => return msg,
    };
    format!("{msg} (raise it with {flag})")
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

/// A bounded-reader error with the flag or usage that gets past it, if any.
pub(crate) fn read(e: ReadError) -> anyhow::Error {
    let hint = match (&e, e.kind()) {
        (_, InputKind::Replay) if e.is_over_limit() => " (raise it with --max-file-bytes)",
        (ReadError::NotRegular { .. }, InputKind::Script) => {
            " (to read a script from a pipe, give `-` and redirect it to stdin)"
        }
        _ => "",
    };
    anyhow::Error::msg(format!("{e}{hint}"))
}

/// An error and its causes on one line, `outer: inner: …`, like anyhow's
/// `{:#}`, except that a cause whose text the line already contains is left
/// out: a context that repeats its source prints once, not as `X: X`.
pub(crate) fn render(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// A service's start-up error; when the Redis at `url` refused the
/// connection, with how to start one there and the queue that needs none.
pub(crate) fn redis_start(
    e: tickwise_service::ServiceError,
    url: &tickwise_service::RedisUrl,
) -> anyhow::Error {
    if !e.is_connection_refused() {
        return anyhow::Error::new(e);
    }
    let msg = e.to_string();
    anyhow::anyhow!(
        "{msg}: no Redis is listening at {url}. Start one there with \
         `redis-server --port {port} --daemonize yes` (Debian: apt-get install redis-server), \
         or run `verifyd --queue memory`, the embedded queue, which needs no Redis",
        url = url.as_str(),
        port = url.port()
    )
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn a_cause_repeating_its_context_prints_once() {
        let inner = anyhow::anyhow!("config key `seed` is missing");
        let twice = inner.context("config key `seed` is missing");
        assert_eq!(render(&twice), "config key `seed` is missing");
        let nested = anyhow::anyhow!("no such file").context("cannot read a.json");
        assert_eq!(render(&nested), "cannot read a.json: no such file");
        // The old rendering would print the doubled text.
        assert_eq!(
            format!("{twice:#}"),
            "config key `seed` is missing: config key `seed` is missing"
        );
    }
}
