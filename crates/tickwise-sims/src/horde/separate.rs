//! Step 5, separation over the grid: every overlapping pair of live
//! enemies, its push summed for both, then each enemy's sum applied.
//!
//! One thread walks the grid a row of cells at a time and applies a row's
//! sums as soon as they are final, while that row is still in cache: a
//! row's pairs reach only into the row below, so once row `r` is done no
//! later row adds to its sums or reads its positions. Several threads cut
//! the rows into bands (even bands together, then the odd ones) and apply
//! every sum afterwards, in pieces of [`par::CHUNK`]. The sums are wrapping
//! additions, so both ways give the same state, bit for bit.

use super::fixed::Pairing;
use super::grid::{Body, Grid};
use super::par;
use super::rules::{Params, Push, apply_push};

/// What the separation pass reads.
pub(super) struct Separate<'a> {
    pub(super) grid: &'a Grid,
    pub(super) kernel: Pairing<'a>,
    /// Bands of rows (each at least one row), for the parallel pass.
    pub(super) bands: usize,
}

impl Separate<'_> {
    /// One thread: every pair, each row's sums applied when final (see the
    /// module docs). The slices hold the grid's live slots. `acc` need not
    /// be zero: a row's sums are cleared just before the first pairs that
    /// add to them (those of the row above), while that row is in cache,
    /// instead of in a pass of their own. Returns how many pairs overlap.
    pub(super) fn serial(
        &self,
        p: &Params,
        body: &mut [Body],
        vel: &mut [[i32; 2]],
        crowd: &mut [u16],
        acc: &mut [Push],
    ) -> u64 {
        let mut pairs = 0;
        let rows = self.grid.rows();
        acc[..self.grid.row_start(1.min(rows))].fill(Push::ZERO);
        for r in 0..rows {
            // Row r's pairs add to rows r and r + 1; row r is clear already.
            acc[self.grid.row_start(r + 1)..self.grid.row_start((r + 2).min(rows))]
                .fill(Push::ZERO);
            pairs += self.rows(body, acc, 0, r, r + 1);
            let row = self.grid.row_start(r)..self.grid.row_start(r + 1);
            apply(
                p,
                &mut body[row.clone()],
                &mut vel[row.clone()],
                &mut crowd[row.clone()],
                &acc[row],
            );
        }
        pairs
    }

    /// Several threads: the pairs by bands, then every sum applied. `acc`
    /// must be zero (the re-sort clears it on several threads).
    pub(super) fn parallel(
        &self,
        p: &Params,
        body: &mut [Body],
        vel: &mut [[i32; 2]],
        crowd: &mut [u16],
        acc: &mut [Push],
    ) -> u64 {
        let even = self.bands_of(body, acc, 0, 0, self.bands);
        let odd = self.bands_of(body, acc, 0, 1, self.bands);
        apply_chunks(true, p, body, vel, crowd, acc);
        even + odd
    }

    /// The rows of band `b`.
    const fn band_rows(&self, b: usize) -> (usize, usize) {
        let rows = self.grid.rows();
        (b * rows / self.bands, (b + 1) * rows / self.bands)
    }

    /// The pairs of bands `first, first + 2, ... < last` (one parity), with
    /// `acc` the sums from slot `base` on; returns how many pairs overlap.
    /// Bands two apart never write the same sums: a band writes its own rows
    /// and the first row of the next band, which lies before the band after.
    fn bands_of(
        &self,
        body: &[Body],
        acc: &mut [Push],
        base: usize,
        first: usize,
        last: usize,
    ) -> u64 {
        let count = last.saturating_sub(first).div_ceil(2);
        if count == 0 {
            return 0;
        }
        if count == 1 {
            let (r0, r1) = self.band_rows(first);
            return self.rows(body, acc, base, r0, r1);
        }
        let mid = first + 2 * (count / 2);
        let split = self.grid.row_start(self.band_rows(mid).0) - base;
        let (left, right) = acc.split_at_mut(split);
        let (a, b) = par::join(
            true,
            || self.bands_of(body, left, base, first, mid),
            || self.bands_of(body, right, base + split, mid, last),
        );
        a + b
    }

    /// Every slot of rows `r0..r1` against the later slots of its cell and
    /// the cell to its right (one range), then the three cells below; `acc`
    /// holds the sums from slot `base` on.
    #[inline]
    fn rows(&self, body: &[Body], acc: &mut [Push], base: usize, r0: usize, r1: usize) -> u64 {
        if self.grid.small_cells() {
            self.rows_of::<true>(body, acc, base, r0, r1)
        } else {
            self.rows_of::<false>(body, acc, base, r0, r1)
        }
    }

    /// [`Separate::rows`], with squared distances in `i32` when `SMALL`
    /// ([`Grid::small_cells`]).
    #[inline]
    fn rows_of<const SMALL: bool>(
        &self,
        body: &[Body],
        acc: &mut [Push],
        base: usize,
        r0: usize,
        r1: usize,
    ) -> u64 {
        let kernel = &self.kernel;
        let mut pairs = 0u64;
        self.grid
            .for_each_slot_span_in_rows(r0, r1, |k, same_end, below| {
                let me = body[k];
                let mut sum = Push::ZERO;
                let later = k + 1..same_end;
                let later_acc = &mut acc[later.start - base..later.end - base];
                pairs_against::<SMALL>(kernel, me, &body[later], later_acc, &mut sum);
                let below_bodies = &body[below.clone()];
                let below = below.start - base..below.end - base;
                pairs_against::<SMALL>(kernel, me, below_bodies, &mut acc[below], &mut sum);
                // Its overlaps found here are the pairs it leads.
                pairs += u64::from(sum.near);
                acc[k - base].add(sum);
            });
        pairs
    }
}

/// Pairs one enemy (`me`) with each of `others` (their bodies and sums):
/// for every overlapping pair, the push on `me` goes to `sum` and the
/// opposite push to the other's sum; `sum.near` counts `me`'s overlaps,
/// which is how the caller counts pairs (a count per candidate was one
/// more register in a loop that spilled).
///
/// Every candidate adds its push, zero beyond `R²`, with no branch on the
/// overlap test ([`Pairing::push_if_overlapping`]): about a third of the
/// candidates overlap, at random, and that branch was half of the
/// separation's mispredicts. Restore + 8 ticks at 10,000 enemies: 25 %
/// more instructions, 38 % fewer mispredicts, 11 % less time. (An earlier
/// try, whose select the compiler turned back into a branch, cut only 8 %
/// of the mispredicts and was slower; `select_unpredictable` keeps it a
/// conditional move. Collecting the overlapping candidates' indices first
/// and pushing them in a second loop traded the test's mispredicts for
/// that loop's exits: 9 % fewer, slower.) Round 4 dropped the select
/// itself: the table reads 0 beyond `R²` anyway. It also tried a block of
/// 8 lanes per cell (no loop exits, but SSE2's vector code ran 42 % more
/// instructions and took 2.6× as long) and one loop over both runs (more
/// instructions, hardly fewer mispredicts): `docs/benchmarks.md`.
///
/// `SMALL`: the candidates lie less than 2^15 from `me` on each axis, so
/// the squared distance is computed in `i32` (it cannot overflow) and the
/// pair in 32 bits ([`Pairing::push_if_overlapping_small`]); the same
/// values as in `i64`.
#[inline(always)]
fn pairs_against<const SMALL: bool>(
    kernel: &Pairing<'_>,
    me: Body,
    others: &[Body],
    sums: &mut [Push],
    sum: &mut Push,
) {
    let n = others.len().min(sums.len());
    let (others, sums) = (&others[..n], &mut sums[..n]);
    for i in 0..n {
        let o = others[i];
        let (dx, dy) = (me.x - o.x, me.y - o.y);
        let (fx, fy, near) = if SMALL {
            let d2 = (dx * dx + dy * dy).cast_unsigned();
            kernel.push_if_overlapping_small(dx, dy, d2, me.id < o.id)
        } else {
            let d2 = i64::from(dx) * i64::from(dx) + i64::from(dy) * i64::from(dy);
            kernel.push_if_overlapping(dx, dy, d2, me.id < o.id)
        };
        sum.add(Push { x: fx, y: fy, near });
        sums[i].add(Push {
            x: fx.wrapping_neg(),
            y: fy.wrapping_neg(),
            near,
        });
    }
}

/// Applies each live enemy's summed push and records its crowd.
#[inline]
fn apply(p: &Params, body: &mut [Body], vel: &mut [[i32; 2]], crowd: &mut [u16], acc: &[Push]) {
    let live = body.iter_mut().zip(vel.iter_mut()).zip(crowd.iter_mut());
    for (((pos, vel), crowd), a) in live.zip(acc) {
        *crowd = u16::try_from(a.near).unwrap_or(u16::MAX);
        apply_push(pos, vel, (a.x, a.y), p);
    }
}

/// [`apply`] in pieces of [`par::CHUNK`] ([`par::pieces`]), in parallel
/// when `par`: each enemy reads only its own sum.
fn apply_chunks(
    par: bool,
    p: &Params,
    body: &mut [Body],
    vel: &mut [[i32; 2]],
    crowd: &mut [u16],
    acc: &[Push],
) {
    let n = body.len();
    par::pieces(
        par,
        ((body, vel), (crowd, acc)),
        0,
        n,
        &|_, ((body, vel), (crowd, acc))| apply(p, body, vel, crowd, acc),
        &|(), ()| (),
    );
}
