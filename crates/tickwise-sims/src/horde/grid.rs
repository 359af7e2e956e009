//! The uniform spatial grid: a stable counting sort of the enemy slots by cell.
//!
//! Rebuilt every tick from scratch, in flat arrays allocated once:
//!
//! 1. the live enemies' bounding box ([`Bounds`], from raw positions, no
//!    division; the steering pass that moves them computes it); the grid
//!    covers that box only, so a small horde on a huge field clears and sums
//!    a few thousand cells, not the field's million;
//! 2. a pass computes each slot's cell (two multiply-shift divisions,
//!    [`DivBy`]; dead slots go to one bucket after every cell) and counts;
//! 3. prefix sums turn counts into bucket starts;
//! 4. a third pass gives every new slot its old slot: [`Grid::order`]. The
//!    sort is stable, so the new layout is a function of the old one.
//!
//! On several threads the same sort runs by bands of rows (see
//! [`Grid::build`]); a stable sort has exactly one result, so both agree.
//!
//! The world then moves its enemy arrays into that order, so everything after
//! (separation, contacts, the next tick's steering) walks memory in sequence.
//! Enemies move a fraction of a cell per tick, so the permutation is close to
//! the identity and applying it streams rather than scatters.
//!
//! Cells are numbered row-major with one empty ghost column on each side and
//! one ghost row below, so every real cell's right neighbour and the three
//! cells below it exist and need no boundary test, and a row of cells is one
//! contiguous run of slots: the neighbour stencil is two ranges.

use alloc::vec;
use alloc::vec::Vec;

use super::fixed::DivBy;
use super::par::{self, CHUNK, PerPiece};

/// What the grid sorts: a position in 1/256 px and the enemy it belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Body {
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) id: u32,
}

/// The live enemies' bounding box in sub-pixels (empty: `lo > hi`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Bounds {
    pub(super) x_lo: i32,
    pub(super) x_hi: i32,
    pub(super) y_lo: i32,
    pub(super) y_hi: i32,
}

impl Bounds {
    /// Nothing inside.
    pub(super) const EMPTY: Bounds = Bounds {
        x_lo: i32::MAX,
        x_hi: i32::MIN,
        y_lo: i32::MAX,
        y_hi: i32::MIN,
    };

    /// Grows the box to hold `(x, y)`.
    #[inline]
    pub(super) fn add(&mut self, x: i32, y: i32) {
        self.x_lo = self.x_lo.min(x);
        self.x_hi = self.x_hi.max(x);
        self.y_lo = self.y_lo.min(y);
        self.y_hi = self.y_hi.max(y);
    }

    /// The box holding both (min and max commute: any merge order agrees).
    #[must_use]
    pub(super) fn union(self, o: Bounds) -> Bounds {
        Bounds {
            x_lo: self.x_lo.min(o.x_lo),
            x_hi: self.x_hi.max(o.x_hi),
            y_lo: self.y_lo.min(o.y_lo),
            y_hi: self.y_hi.max(o.y_hi),
        }
    }

    /// The box of the live (`hp > 0`) positions.
    #[cfg(test)]
    pub(super) fn of(pos: &[Body], hp: &[i32]) -> Bounds {
        let mut b = Bounds::EMPTY;
        for (p, &h) in pos.iter().zip(hp) {
            if h > 0 {
                b.add(p.x, p.y);
            }
        }
        b
    }
}

/// The most row bands of the parallel sort (plus one band for the dead).
const SORT_BANDS: usize = 64;
/// Entries per piece of enemies in the parallel sort's band table: the
/// piece's first index of each band (real bands, the dead band, the end).
const BAND_ENTRIES: usize = SORT_BANDS + 2;

/// Bucket starts over the live bounding box, and the sorting permutation.
///
/// Everything but the shape is scratch, rebuilt by every [`Grid::build`]:
/// a clone carries the shape only and allocates its buffers on its first
/// build, so a world's snapshot does not copy (or keep) them.
#[derive(Debug)]
pub(super) struct Grid {
    /// Cell side in sub-pixels.
    cell: i32,
    /// Division by the cell side.
    div: DivBy,
    /// Buckets the field can need (every cell with its ghosts, the dead).
    max_buckets: usize,
    /// Rows the field can have.
    max_rows: usize,
    /// Enemy slots sorted.
    enemies: usize,
    /// The bounding box's first column and row (in field cells).
    col0: i32,
    row0: i32,
    /// The bounding box's size in real cells (0 when nothing is alive).
    cols: usize,
    rows: usize,
    /// Row stride: `cols + 2` (a ghost column on each side).
    stride: usize,
    /// `start[c]..start[c + 1]` are the (new) slots of cell `c`, where real
    /// cell (row, col) is `c = row * stride + col + 1`; the bucket after the
    /// last cell holds the dead. Capacity: the whole field with its ghosts.
    start: Vec<u32>,
    /// Each old slot's bucket.
    key: Vec<u32>,
    /// `order[new slot]` is the old slot that moves there.
    order: Vec<u32>,
    /// Each new live slot's cell.
    slot_cell: Vec<u32>,
    /// Parallel sort only: each piece's old slots grouped by row band.
    by_band: Vec<u32>,
    /// Parallel sort only: per piece, where each band starts in `by_band`.
    band_at: Vec<u32>,
    /// Parallel sort only: the row band of each row of the box.
    band_of_row: Vec<u8>,
}

impl Clone for Grid {
    /// The shape only: the buffers are scratch (see the type's docs).
    fn clone(&self) -> Grid {
        Grid {
            start: Vec::new(),
            key: Vec::new(),
            order: Vec::new(),
            slot_cell: Vec::new(),
            by_band: Vec::new(),
            band_at: Vec::new(),
            band_of_row: Vec::new(),
            ..*self
        }
    }

    /// Takes the shape and keeps this grid's buffers (resized, if the shape
    /// needs it, by the next build); the grid is empty until then.
    fn clone_from(&mut self, src: &Grid) {
        self.cell = src.cell;
        self.div = src.div;
        self.max_buckets = src.max_buckets;
        self.max_rows = src.max_rows;
        self.enemies = src.enemies;
        self.cols = 0;
        self.rows = 0;
        self.stride = 2;
        self.slot_cell.clear();
    }
}

impl Grid {
    /// A grid for `enemies` slots on a field of `max_cols × max_rows` cells of
    /// `cell` sub-pixels. Allocates everything it will ever use.
    pub(super) fn new(cell: i32, max_cols: u32, max_rows: u32, enemies: usize) -> Grid {
        let mut g = Grid {
            cell: cell.max(1),
            div: DivBy::new(cell.max(1).cast_unsigned()),
            max_buckets: (max_cols as usize + 2) * (max_rows as usize + 1) + 3,
            max_rows: max_rows as usize + 1,
            enemies,
            col0: 0,
            row0: 0,
            cols: 0,
            rows: 0,
            stride: 2,
            start: Vec::new(),
            key: Vec::new(),
            order: Vec::new(),
            slot_cell: Vec::new(),
            by_band: Vec::new(),
            band_at: Vec::new(),
            band_of_row: Vec::new(),
        };
        g.reserve();
        g
    }

    /// Allocates the buffers when their sizes do not fit the shape (a new
    /// grid, a clone's first build): never in a steady run.
    fn reserve(&mut self) {
        let n = self.enemies;
        if self.key.len() == n && self.start.len() == self.max_buckets {
            return;
        }
        self.start = vec![0; self.max_buckets];
        self.key = vec![0; n];
        self.order = vec![0; n];
        self.slot_cell = Vec::with_capacity(n);
        self.by_band = vec![0; n];
        self.band_at = vec![0; n.div_ceil(CHUNK).max(1) * BAND_ENTRIES];
        self.band_of_row = vec![0; self.max_rows];
    }

    /// Live enemies in the grid: after the sort they are slots `0..len()`.
    pub(super) fn len(&self) -> usize {
        self.slot_cell.len()
    }

    /// Each new slot's old slot: gather every enemy array through it.
    pub(super) fn order(&self) -> &[u32] {
        &self.order[..self.enemies]
    }

    /// Sorts slots by cell from positions and hit points (alive = `hp > 0`):
    /// live slots first, in row-major cell order, then the dead; ties keep
    /// their slot order. `live` is the live enemies' bounding box. Positions
    /// must be inside the field (non-negative, as the sim keeps them).
    ///
    /// A stable sort has one result, so the serial counting sort and the
    /// parallel one (`par`) give the same order.
    pub(super) fn build(&mut self, par: bool, live: Bounds, pos: &[Body], hp: &[i32]) {
        self.reserve();
        self.slot_cell.clear();
        let n = hp.len();
        let Bounds {
            x_lo,
            x_hi,
            y_lo,
            y_hi,
        } = live;
        if x_lo > x_hi {
            self.cols = 0;
            self.rows = 0;
            for (k, p) in self.order[..n].iter_mut().enumerate() {
                *p = k as u32;
            }
            return;
        }
        let div = self.div;
        let (c_lo, r_lo) = (div.div(x_lo), div.div(y_lo));
        self.col0 = c_lo.cast_signed();
        self.row0 = r_lo.cast_signed();
        self.cols = (div.div(x_hi) - c_lo) as usize + 1;
        self.rows = (div.div(y_hi) - r_lo) as usize + 1;
        self.stride = self.cols + 2;
        if par && n > CHUNK {
            self.sort_parallel(pos, hp, r_lo, c_lo);
        } else {
            self.sort_serial(pos, hp, r_lo, c_lo);
        }
    }

    /// The bucket of a live enemy at `(x, y)`.
    #[inline]
    fn bucket(div: DivBy, stride: u32, r_lo: u32, c_base: u32, x: i32, y: i32) -> u32 {
        (div.div(y) - r_lo) * stride + div.div(x).wrapping_sub(c_base)
    }

    /// One counting sort over every bucket.
    fn sort_serial(&mut self, pos: &[Body], hp: &[i32], r_lo: u32, c_lo: u32) {
        let n = hp.len();
        let div = self.div;
        let dead = (self.stride * (self.rows + 1)) as u32;
        // Counts go to start[b + 2]; after the inclusive prefix sum start[b + 1]
        // is the first slot of bucket b, and the placement's increments leave
        // start[b] as the first slot of bucket b for every b.
        let start = &mut self.start[..dead as usize + 3];
        start.fill(0);
        let stride = self.stride as u32;
        // Column 0 is the left ghost: real columns start at 1.
        let c_base = c_lo.wrapping_sub(1);
        let key = &mut self.key[..n];
        for ((&Body { x, y, .. }, &h), b) in pos.iter().zip(hp).zip(key.iter_mut()) {
            *b = if h > 0 {
                Grid::bucket(div, stride, r_lo, c_base, x, y)
            } else {
                dead
            };
            start[*b as usize + 2] += 1;
        }
        let mut sum = 0u32;
        for s in &mut start[2..] {
            sum += *s;
            *s = sum;
        }
        let live = start[dead as usize + 1] as usize;
        // Capacity was reserved: no allocation.
        self.slot_cell.resize(live, 0);
        let order = &mut self.order[..n];
        for (k, &b) in key.iter().enumerate() {
            let slot = &mut start[b as usize + 1];
            order[*slot as usize] = k as u32;
            if b != dead {
                self.slot_cell[*slot as usize] = b;
            }
            *slot += 1;
        }
    }

    /// The same counting sort, on every core: the rows are cut into bands
    /// (at most [`SORT_BANDS`], by the box's size alone). Each piece of
    /// [`CHUNK`] old slots computes its buckets and groups its slots by band
    /// (in slot order); then each band, on its own part of `start`, `order`
    /// and `slot_cell`, counts and places its slots, reading the pieces in
    /// order: the same stable order as [`Grid::sort_serial`].
    fn sort_parallel(&mut self, pos: &[Body], hp: &[i32], r_lo: u32, c_lo: u32) {
        let n = hp.len();
        let (rows, stride) = (self.rows, self.stride);
        let dead = (stride * (rows + 1)) as u32;
        let bands = rows.min(SORT_BANDS);
        let band_rows = |b: usize| (b * rows / bands, (b + 1) * rows / bands);
        for b in 0..bands {
            let (r0, r1) = band_rows(b);
            self.band_of_row[r0..r1].fill(b as u8);
        }
        let (div, s32, c_base) = (self.div, stride as u32, c_lo.wrapping_sub(1));
        let band_of_row = &self.band_of_row[..rows];
        // 1. Each piece: buckets, then its slots grouped by band.
        let part = (
            (&mut self.key[..n], &mut self.by_band[..n]),
            (
                &mut self.order[..n],
                PerPiece::<u32, BAND_ENTRIES>(&mut self.band_at[..]),
            ),
            (pos, hp),
        );
        par::pieces(
            true,
            part,
            0,
            n,
            &|first, ((key, by_band), (band, PerPiece(at)), (pos, hp))| {
                let mut count = [0u32; BAND_ENTRIES];
                for (((&Body { x, y, .. }, &h), k), b) in
                    pos.iter().zip(hp).zip(key.iter_mut()).zip(band.iter_mut())
                {
                    if h > 0 {
                        let row = (div.div(y) - r_lo) as usize;
                        *k = row as u32 * s32 + div.div(x).wrapping_sub(c_base);
                        *b = u32::from(band_of_row[row]);
                    } else {
                        *k = dead;
                        *b = bands as u32;
                    }
                    count[*b as usize + 1] += 1;
                }
                for i in 1..BAND_ENTRIES {
                    count[i] += count[i - 1];
                }
                at[..BAND_ENTRIES].copy_from_slice(&count);
                for (k, &b) in band.iter().enumerate() {
                    let c = &mut count[b as usize];
                    by_band[*c as usize] = (first + k) as u32;
                    *c += 1;
                }
            },
            &|(), ()| (),
        );
        // 2. Where each band's slots start in the new order.
        let pieces = n.div_ceil(CHUNK);
        let mut band_start = [0u32; BAND_ENTRIES];
        for p in 0..pieces {
            let at = &self.band_at[p * BAND_ENTRIES..][..BAND_ENTRIES];
            for b in 0..=bands {
                band_start[b + 1] += at[b + 1] - at[b];
            }
        }
        for b in 1..=bands + 1 {
            band_start[b] += band_start[b - 1];
        }
        let live = band_start[bands] as usize;
        self.slot_cell.resize(live, 0);
        // 3. Each band sorts its own slots into its own buckets. Band b owns
        // buckets c0..c1 and keeps their running starts in start[c0 + 1..c1 + 1]
        // (so start[c] ends as the first slot of bucket c); the dead band owns
        // the ghost row below and the dead bucket.
        self.start[0] = 0;
        let mut first_bucket = [0usize; BAND_ENTRIES];
        for (b, f) in first_bucket.iter_mut().enumerate().take(bands + 2) {
            *f = if b < bands {
                band_rows(b).0 * stride
            } else if b == bands {
                rows * stride
            } else {
                dead as usize + 1
            };
        }
        let job = BandSort {
            key: &self.key[..n],
            by_band: &self.by_band[..n],
            band_at: &self.band_at[..pieces * BAND_ENTRIES],
            pieces,
            band_start: &band_start,
            first_bucket: &first_bucket,
            dead,
        };
        job.run(
            0,
            bands + 1,
            &mut self.start[1..dead as usize + 2],
            &mut self.order[..n],
            &mut self.slot_cell[..live],
        );
    }
    /// Calls `f(cell, same_row_end, below)` for every non-empty cell, in
    /// row-major order: `cell` is the cell's range of (sorted) slots,
    /// `cell.start..same_row_end` covers it and the cell to its right, and
    /// `below` the three cells under it (both contiguous, since a row of cells
    /// is a contiguous run of slots). Pairing each slot `k` of `cell` with the
    /// slots `k + 1..same_row_end` and `below` visits every unordered pair of
    /// slots in touching cells exactly once. Walks the live slots, so empty
    /// cells cost nothing. (The sim walks the same spans a band of rows at a
    /// time, [`Grid::for_each_cell_span_in_rows`]; this whole-grid form is
    /// for tests.)
    #[cfg(test)]
    pub(super) fn for_each_cell_span(
        &self,
        mut f: impl FnMut(core::ops::Range<usize>, usize, core::ops::Range<usize>),
    ) {
        let start = &self.start;
        let stride = self.stride;
        let mut k = 0;
        while let Some(&c) = self.slot_cell.get(k) {
            let c = c as usize;
            let b = start[c + 1] as usize;
            let same_end = start[c + 2] as usize;
            let below = start[c + stride - 1] as usize..start[c + stride + 2] as usize;
            f(k..b, same_end, below);
            k = b;
        }
    }

    /// Whether two enemies in touching cells are less than 2^15 sub-pixels
    /// apart on each axis (cells of at most 2^14, 64 px): then their
    /// squared distance, below 2 · 2^30, fits an `i32`.
    pub(super) const fn small_cells(&self) -> bool {
        self.cell <= 1 << 14
    }

    /// Rows of real cells (0 when nothing is alive).
    pub(super) const fn rows(&self) -> usize {
        self.rows
    }

    /// The first sorted slot of row `r`, for `r <= rows` (row `rows` is the
    /// ghost row below: its start is the number of live slots). Rows are
    /// contiguous runs of slots, ghost cells empty.
    pub(super) fn row_start(&self, r: usize) -> usize {
        self.start.get(r * self.stride).map_or(0, |&s| s as usize)
    }

    /// The cell spans of `Grid::for_each_cell_span` for rows `r0..r1` only. The
    /// spans reach at most into row `r1` (the cells below the last row).
    #[inline]
    pub(super) fn for_each_cell_span_in_rows(
        &self,
        r0: usize,
        r1: usize,
        mut f: impl FnMut(core::ops::Range<usize>, usize, core::ops::Range<usize>),
    ) {
        let start = &self.start;
        let stride = self.stride;
        let end = self.row_start(r1);
        let mut k = self.row_start(r0);
        while k < end {
            let Some(&c) = self.slot_cell.get(k) else {
                return;
            };
            let c = c as usize;
            let b = start[c + 1] as usize;
            let same_end = start[c + 2] as usize;
            let below = start[c + stride - 1] as usize..start[c + stride + 2] as usize;
            f(k..b, same_end, below);
            k = b;
        }
    }

    /// Calls `f(k, m)` once for every unordered pair of sorted slots whose
    /// cells touch (same cell, or one of the 8 around it), `k` always the
    /// slot visited first. The sim's hot loop inlines the same walk over
    /// [`Grid::for_each_cell_span`]; this form is for tests.
    #[cfg(test)]
    pub(super) fn for_each_candidate_pair(&self, mut f: impl FnMut(usize, usize)) {
        self.for_each_cell_span(|cell, same_end, below| {
            for k in cell {
                for m in (k + 1..same_end).chain(below.clone()) {
                    f(k, m);
                }
            }
        });
    }

    /// The sorted slots of the cells overlapping the box
    /// `[x_lo, x_hi] × [y_lo, y_hi]` (sub-pixels), one contiguous range per
    /// row of cells, rows top to bottom. Empty when nothing is alive.
    pub(super) fn box_ranges(
        &self,
        x_lo: i64,
        x_hi: i64,
        y_lo: i64,
        y_hi: i64,
    ) -> impl Iterator<Item = core::ops::Range<usize>> + '_ {
        let cell = i64::from(self.cell);
        let clamp = |v: i64, origin: i32, n: usize| -> i64 {
            (v.div_euclid(cell) - i64::from(origin)).clamp(-1, n as i64)
        };
        let (c_lo, c_hi) = (
            clamp(x_lo, self.col0, self.cols).max(0),
            clamp(x_hi, self.col0, self.cols).min(self.cols as i64 - 1),
        );
        let (r_lo, r_hi) = (
            clamp(y_lo, self.row0, self.rows).max(0),
            clamp(y_hi, self.row0, self.rows).min(self.rows as i64 - 1),
        );
        let stride = self.stride;
        let rows = if c_lo <= c_hi && r_lo <= r_hi {
            r_lo..r_hi + 1
        } else {
            0..0
        };
        rows.map(move |r| {
            // Real column c is at c + 1 (after the left ghost).
            let base = r as usize * stride + 1;
            self.start[base + c_lo as usize] as usize..self.start[base + c_hi as usize + 1] as usize
        })
    }
}

/// The per-band half of [`Grid::sort_parallel`].
struct BandSort<'a> {
    /// Each old slot's bucket.
    key: &'a [u32],
    /// Each piece's old slots, grouped by band.
    by_band: &'a [u32],
    /// Per piece, where each band starts in its part of `by_band`.
    band_at: &'a [u32],
    pieces: usize,
    /// Each band's first new slot (and the end, after the dead band).
    band_start: &'a [u32; BAND_ENTRIES],
    /// Each band's first bucket (and the end, after the dead band).
    first_bucket: &'a [usize; BAND_ENTRIES],
    dead: u32,
}

impl BandSort<'_> {
    /// Bands `b0..b1`: `start` holds the running starts of their buckets,
    /// `order` and `cells` their new slots (`cells` the live ones only).
    fn run(&self, b0: usize, b1: usize, start: &mut [u32], order: &mut [u32], cells: &mut [u32]) {
        if b1 - b0 == 1 {
            self.one(b0, start, order, cells);
            return;
        }
        let mid = usize::midpoint(b0, b1);
        let (s0, s1) = start.split_at_mut(self.first_bucket[mid] - self.first_bucket[b0]);
        let (o0, o1) = order.split_at_mut((self.band_start[mid] - self.band_start[b0]) as usize);
        let (c0, c1) = cells.split_at_mut(o0.len().min(cells.len()));
        par::join(
            true,
            || self.run(b0, mid, s0, o0, c0),
            || self.run(mid, b1, s1, o1, c1),
        );
    }

    /// Calls `f` with band `b`'s old slots, piece by piece: in slot order.
    /// (Two plain loops: the `flat_map` they replace cost a fifth of the
    /// band sort's time in its iterator's state machine.)
    #[inline]
    fn for_each_slot(&self, b: usize, mut f: impl FnMut(u32)) {
        for p in 0..self.pieces {
            let at = &self.band_at[p * BAND_ENTRIES..][..BAND_ENTRIES];
            let base = p * CHUNK;
            for &k in &self.by_band[base + at[b] as usize..base + at[b + 1] as usize] {
                f(k);
            }
        }
    }

    /// One band's counting sort.
    fn one(&self, b: usize, start: &mut [u32], order: &mut [u32], cells: &mut [u32]) {
        start.fill(0);
        let c0 = self.first_bucket[b] as u32;
        self.for_each_slot(b, |k| {
            start[(self.key[k as usize] - c0) as usize] += 1;
        });
        let base = self.band_start[b];
        let mut run = base;
        for s in start.iter_mut() {
            let c = *s;
            *s = run;
            run += c;
        }
        self.for_each_slot(b, |k| {
            let bucket = self.key[k as usize];
            let s = &mut start[(bucket - c0) as usize];
            let new = (*s - base) as usize;
            order[new] = k;
            if bucket != self.dead {
                cells[new] = bucket;
            }
            *s += 1;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeSet;
    use tickwise::Pcg32;

    /// Random points in a `w × h` sub-pixel field, about a fifth dead.
    fn points(seed: u64, n: usize, w: i32, h: i32) -> (Vec<Body>, Vec<i32>) {
        let mut r = Pcg32::new(seed, 7);
        let pos = (0..n as u32)
            .map(|id| Body {
                x: r.range_i32(0, w - 1),
                y: r.range_i32(0, h - 1),
                id,
            })
            .collect();
        let hp = (0..n).map(|_| i32::from(r.below(5) != 0)).collect();
        (pos, hp)
    }

    /// Builds the grid and returns `sorted[new slot] = old slot`.
    fn sorted(g: &mut Grid, pos: &[Body], hp: &[i32]) -> Vec<usize> {
        sorted_by(g, false, pos, hp)
    }

    /// The same, serially or by bands (`par`), checking it is a permutation.
    fn sorted_by(g: &mut Grid, par: bool, pos: &[Body], hp: &[i32]) -> Vec<usize> {
        g.build(par, Bounds::of(pos, hp), pos, hp);
        let mut seen = alloc::vec![false; hp.len()];
        for &old in g.order() {
            assert!(!seen[old as usize], "slot {old} moved twice");
            seen[old as usize] = true;
        }
        g.order().iter().map(|&k| k as usize).collect()
    }

    #[test]
    fn stable_sort_by_cell_with_the_dead_last() {
        let (pos, hp) = points(1, 500, 4000, 3000);
        let mut g = Grid::new(300, 14, 10, 500);
        let inv = sorted(&mut g, &pos, &hp);
        let live = hp.iter().filter(|&&h| h > 0).count();
        assert_eq!(g.len(), live);
        // Independent key: (alive first, row, col, old slot) increases along
        // the new order.
        let key = |old: usize| {
            let Body { x, y, .. } = pos[old];
            (
                hp[old] <= 0,
                if hp[old] > 0 {
                    (y / 300, x / 300)
                } else {
                    (0, 0)
                },
                old,
            )
        };
        assert!(inv.windows(2).all(|w| key(w[0]) < key(w[1])));
    }

    #[test]
    fn candidate_pairs_cover_every_close_pair_exactly_once() {
        // Brute force: every live pair within one cell side (Chebyshev) must be
        // a candidate, and no pair may come twice.
        for seed in 0..20 {
            let (pos, hp) = points(seed, 300, 2000, 1500);
            let cell = 100;
            let mut g = Grid::new(cell, 20, 15, 300);
            let inv = sorted(&mut g, &pos, &hp);
            let mut got = BTreeSet::new();
            g.for_each_candidate_pair(|k, m| {
                assert!(k < g.len() && m < g.len());
                let (i, j) = (inv[k], inv[m]);
                assert!(got.insert((i.min(j), i.max(j))), "pair {i},{j} twice");
            });
            for i in 0..300usize {
                for j in i + 1..300 {
                    let close =
                        (pos[i].x - pos[j].x).abs() < cell && (pos[i].y - pos[j].y).abs() < cell;
                    if hp[i] > 0 && hp[j] > 0 && close {
                        assert!(got.contains(&(i, j)), "seed {seed}: missed {i},{j}");
                    }
                }
            }
        }
    }

    #[test]
    fn box_ranges_hold_every_enemy_in_the_box() {
        let (pos, hp) = points(3, 400, 5000, 5000);
        let mut g = Grid::new(250, 20, 20, 400);
        let inv = sorted(&mut g, &pos, &hp);
        for (x_lo, x_hi, y_lo, y_hi) in [
            (1000, 1600, 2000, 2100),
            (-500, 100, -500, 6000),
            (4900, 9000, 4900, 9000),
            (6000, 7000, 0, 10),
        ] {
            let found: BTreeSet<usize> = g
                .box_ranges(x_lo, x_hi, y_lo, y_hi)
                .flatten()
                .map(|k| inv[k])
                .collect();
            for i in 0..400usize {
                let inside = (x_lo..=x_hi).contains(&i64::from(pos[i].x))
                    && (y_lo..=y_hi).contains(&i64::from(pos[i].y));
                if hp[i] > 0 && inside {
                    assert!(found.contains(&i), "missed {i}");
                }
                if hp[i] <= 0 {
                    assert!(!found.contains(&i), "dead {i} listed");
                }
            }
        }
    }

    #[test]
    fn nothing_alive_is_an_empty_grid_and_the_identity() {
        let mut g = Grid::new(10, 4, 4, 3);
        let b = |v| Body { x: v, y: v, id: 0 };
        let (pos, hp) = ([b(1), b(2), b(3)], [0, 0, -5]);
        g.build(false, Bounds::of(&pos, &hp), &pos, &hp);
        assert_eq!(g.len(), 0);
        assert_eq!(g.order(), &[0, 1, 2]);
        g.for_each_candidate_pair(|_, _| panic!("no pairs"));
        assert_eq!(g.box_ranges(0, 100, 0, 100).count(), 0);
    }

    #[test]
    fn the_banded_sort_is_the_serial_sort() {
        // Several pieces of CHUNK slots and many bands; a clone sorts too
        // (its buffers come back on its first build). The serial result is
        // itself checked against an independent key above.
        for (seed, n, w, h) in [
            (4, 3 * CHUNK + 17, 90_000, 70_000),
            (5, 2 * CHUNK + 1, 3_000, 400_000),
            (6, 5 * CHUNK, 400_000, 2_000),
        ] {
            let (pos, hp) = points(seed, n, w, h);
            let mut g = Grid::new(1000, 400, 400, n);
            let serial = sorted_by(&mut g, false, &pos, &hp);
            let (start, cells) = (g.start.clone(), g.slot_cell.clone());
            let mut copy = g.clone();
            assert!(copy.start.is_empty());
            assert_eq!(sorted_by(&mut copy, true, &pos, &hp), serial);
            assert_eq!(copy.slot_cell, cells);
            let used = copy.stride * (copy.rows + 1) + 2;
            assert_eq!(copy.start[..used], start[..used]);
        }
    }
}
