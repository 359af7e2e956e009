//! Helpers the page tests share.

/// `tickwise verify`'s check on a page's replay: the built-in catalog
/// re-simulates it. Returns the ticks run and the verified final digest, and
/// panics (failing the test) when the replay is unreadable or diverges.
pub(crate) fn verified(bytes: &[u8]) -> (u64, String) {
    let report = tickwise_catalog::Catalog::builtin()
        .verify(bytes, &tickwise::ReplayLimits::DEFAULT)
        .expect("a readable replay");
    match report.verdict {
        tickwise::ReplayVerdict::Match { digest } => (report.ticks_run, digest),
        other => panic!("the page's replay did not verify: {other:?}"),
    }
}
