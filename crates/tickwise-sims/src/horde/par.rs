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

/// Enemies per piece of the per-enemy phases (steering, the grid's sort,
/// the gather, applying pushes, the strike between separations).
///
/// Small enough that two threads share a mid-sized horde evenly: with
/// pieces of 8192 a horde of 10,000 split 8192 / 1808, so one thread did
/// four fifths of the steering and the gather, and one of 8000 did not
/// split at all. `tickwise horde --ticks 2000 --threads 2`, 8192 against
/// 1024, alternating on a 2-core Zen 5: 4000 enemies 117 → 85 µs a tick,
/// 8000 227 → 165 µs, 10,000 (1000 ticks) 267 → 207 µs; 100,000 and
/// 1,000,000 and one thread unchanged. Pieces of 512 were no better.
pub(super) const CHUNK: usize = 1024;

/// The most separation bands (a band is at least one row of grid cells).
pub(super) const MAX_BANDS: usize = 64;

/// Enemies (live and dead slots) below which a tick stays on the calling
/// thread. Measured with `tickwise horde --ticks 2000 --threads 1|2` on two
/// free cores (2-core Zen 5, pieces of [`CHUNK`], the tick made to split at
/// every size): 2000 enemies 58 vs 61 µs a tick, 2300 68 vs 76 µs, 2800 84
/// vs 93 µs, 3000 88 vs 67 µs, 4000 124 vs 83 µs, 5000 157 vs 104 µs; below
/// about 3000 the fork-joins cost more than they save. (With pieces of 8192
/// the same held from 2048: 2000 75.2 vs 75.4 µs and 4000 180 vs 150 µs on
/// an earlier machine.) The results are the same either way.
#[cfg(feature = "parallel")]
pub(super) const MIN_PARALLEL: usize = 3 * CHUNK;

/// Whether splitting pays for `n` enemies: at least [`MIN_PARALLEL`], inside
/// a rayon pool of more than one thread.
#[cfg(feature = "parallel")]
pub(super) fn enabled(n: usize) -> bool {
    n >= MIN_PARALLEL && rayon::current_thread_index().is_some() && rayon::current_num_threads() > 1
}

/// Without the `parallel` feature there is one thread.
#[cfg(not(feature = "parallel"))]
pub(super) const fn enabled(_n: usize) -> bool {
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

/// Work that splits at an enemy index: slices of per-enemy data, per-piece
/// data ([`PerPiece`]) and tuples of them, all cut at the same place.
pub(super) trait Split: Sized + Send {
    /// The parts before and after enemy `mid` (a multiple of [`CHUNK`]).
    fn split(self, mid: usize) -> (Self, Self);
}

impl<T: Send> Split for &mut [T] {
    fn split(self, mid: usize) -> (Self, Self) {
        self.split_at_mut(mid)
    }
}

impl<T: Sync> Split for &[T] {
    fn split(self, mid: usize) -> (Self, Self) {
        self.split_at(mid)
    }
}

/// Data kept per piece of [`CHUNK`] enemies: `W` entries each.
#[derive(Debug)]
pub(super) struct PerPiece<'a, T, const W: usize>(pub(super) &'a mut [T]);

impl<T: Send, const W: usize> Split for PerPiece<'_, T, W> {
    fn split(self, mid: usize) -> (Self, Self) {
        let (a, b) = self.0.split_at_mut(mid / CHUNK * W);
        (PerPiece(a), PerPiece(b))
    }
}

impl<A: Split, B: Split> Split for (A, B) {
    fn split(self, mid: usize) -> (Self, Self) {
        let (a0, a1) = self.0.split(mid);
        let (b0, b1) = self.1.split(mid);
        ((a0, b0), (a1, b1))
    }
}

impl<A: Split, B: Split, C: Split> Split for (A, B, C) {
    fn split(self, mid: usize) -> (Self, Self) {
        let (a0, a1) = self.0.split(mid);
        let (b0, b1) = self.1.split(mid);
        let (c0, c1) = self.2.split(mid);
        ((a0, b0, c0), (a1, b1, c1))
    }
}

/// Calls `f(first, part)` for the pieces of `len` enemies (from enemy
/// `first`) cut at multiples of [`CHUNK`], each piece at most `CHUNK` long,
/// in parallel when `par`, and folds the results with `merge` in a tree
/// fixed by `len` alone: the same pieces and the same merges on any pool.
pub(super) fn pieces<S: Split, R: Send>(
    par: bool,
    part: S,
    first: usize,
    len: usize,
    f: &(impl Fn(usize, S) -> R + Sync),
    merge: &(impl Fn(R, R) -> R + Sync),
) -> R {
    if len <= CHUNK {
        return f(first, part);
    }
    let mid = (len / CHUNK / 2).max(1) * CHUNK;
    let (a, b) = part.split(mid);
    let (ra, rb) = join(
        par,
        || pieces(par, a, first, mid, f, merge),
        || pieces(par, b, first + mid, len - mid, f, merge),
    );
    merge(ra, rb)
}
