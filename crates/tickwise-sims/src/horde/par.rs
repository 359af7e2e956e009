//! Deterministic fork-join for the horde's tick (feature `parallel`).
//!
//! The work is split the same way whatever the pool: enemies in fixed-size
//! chunks, grid rows in bands fixed by the grid's own size. Each piece
//! writes only its own slice, and the separation sums are wrapping
//! additions (commutative), so the state after a tick is bit-identical at
//! any thread count, one thread included.
//!
//! Without the feature (the `no_std` build), or outside a rayon pool of
//! more than one thread, [`join`] runs both halves in order on the calling
//! thread: the same pieces, the same results, and no heap call at all.

/// Enemies per piece of the per-enemy phases (steering, applying pushes).
pub(super) const CHUNK: usize = 8192;

/// The most separation bands (a band is at least one row of grid cells).
pub(super) const MAX_BANDS: usize = 64;

/// Whether splitting pays: inside a rayon pool of more than one thread.
#[cfg(feature = "parallel")]
pub(super) fn enabled() -> bool {
    rayon::current_thread_index().is_some() && rayon::current_num_threads() > 1
}

/// Without the `parallel` feature there is one thread.
#[cfg(not(feature = "parallel"))]
pub(super) const fn enabled() -> bool {
    false
}

/// Runs `a` and `b`, in parallel when `par` (both always run; the results
/// do not depend on the order).
#[cfg(feature = "parallel")]
pub(super) fn join<RA: Send, RB: Send>(
    par: bool,
    a: impl FnOnce() -> RA + Send,
    b: impl FnOnce() -> RB + Send,
) -> (RA, RB) {
    if par { rayon::join(a, b) } else { (a(), b()) }
}

/// One thread: `a`, then `b`.
#[cfg(not(feature = "parallel"))]
pub(super) fn join<RA, RB>(_par: bool, a: impl FnOnce() -> RA, b: impl FnOnce() -> RB) -> (RA, RB) {
    (a(), b())
}
