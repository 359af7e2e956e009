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
use super::par::CHUNK;

mod band_sort;
#[cfg(test)]
mod tests;

use band_sort::BAND_ENTRIES;

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

/// The most slots [`Grid::build`]'s serial sort places by rank (see
/// `Grid::sort_serial`): 32,768 ranks are 128 KB, which stay in cache with
/// the rest of such a world.
const RANKED_SORT_MAX: usize = 1 << 15;

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
    /// The parallel sort: each piece's old slots grouped by row band. The
    /// serial sort: each old slot's rank within its bucket.
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
    ///
    /// Up to [`RANKED_SORT_MAX`] slots, the count pass also keeps each
    /// slot's rank within its bucket (in `by_band`, the parallel sort's
    /// scratch), so the placement pass reads each bucket's start and never
    /// writes it. Consecutive slots mostly share a bucket (the enemies were
    /// sorted by cell a tick ago), and a placement that bumps the bucket's
    /// start makes each slot wait for the previous one's store to that same
    /// counter: in a world that fits in cache, that wait is what the pass
    /// costs. Past that size the pass waits on memory anyway, and the ranks
    /// would only add an array's worth of traffic and of resident memory.
    fn sort_serial(&mut self, pos: &[Body], hp: &[i32], r_lo: u32, c_lo: u32) {
        let n = hp.len();
        let div = self.div;
        let dead = (self.stride * (self.rows + 1)) as u32;
        let ranked = n <= RANKED_SORT_MAX;
        // Counts go to start[b + skip]; after the inclusive prefix sum
        // start[b + skip − 1] is the first slot of bucket b. Ranked, that is
        // start[b] already; bumped, the placement's increments leave start[b]
        // as the first slot of bucket b. Either way start[0] stays 0.
        let skip = if ranked { 1 } else { 2 };
        let start = &mut self.start[..dead as usize + 1 + skip];
        start.fill(0);
        let stride = self.stride as u32;
        // Column 0 is the left ghost: real columns start at 1.
        let c_base = c_lo.wrapping_sub(1);
        let key = &mut self.key[..n];
        let bucket = |x: i32, y: i32, h: i32| {
            if h > 0 {
                Grid::bucket(div, stride, r_lo, c_base, x, y)
            } else {
                dead
            }
        };
        // Two loops, so that neither tests `ranked` for every slot.
        let slots = pos.iter().zip(hp);
        if ranked {
            let rank = &mut self.by_band[..n];
            for ((&Body { x, y, .. }, &h), (b, r)) in slots.zip(key.iter_mut().zip(rank.iter_mut()))
            {
                *b = bucket(x, y, h);
                let count = &mut start[*b as usize + skip];
                *r = *count;
                *count += 1;
            }
        } else {
            for ((&Body { x, y, .. }, &h), b) in slots.zip(key.iter_mut()) {
                *b = bucket(x, y, h);
                start[*b as usize + skip] += 1;
            }
        }
        let mut sum = 0u32;
        for s in &mut start[skip..] {
            sum += *s;
            *s = sum;
        }
        let live = start[dead as usize + skip - 1] as usize;
        // Capacity was reserved: no allocation.
        self.slot_cell.resize(live, 0);
        let order = &mut self.order[..n];
        let slot_cell = &mut self.slot_cell[..];
        let mut place = |k: usize, b: u32, slot: u32| {
            order[slot as usize] = k as u32;
            if b != dead {
                slot_cell[slot as usize] = b;
            }
        };
        if ranked {
            let rank = &self.by_band[..n];
            for (k, (&b, &r)) in key.iter().zip(rank.iter()).enumerate() {
                place(k, b, start[b as usize] + r);
            }
        } else {
            for (k, &b) in key.iter().enumerate() {
                let next = &mut start[b as usize + 1];
                place(k, b, *next);
                *next += 1;
            }
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

    /// Calls `f(k, same_row_end, below)` for every live slot `k` of rows
    /// `r0..r1`, in order, with the spans of its cell:
    /// `k + 1..same_row_end` are the later slots of its cell and those of the
    /// cell to its right, `below` the slots of the three cells under it
    /// (both contiguous, since a row of cells is a contiguous run of slots;
    /// `below` reaches at most into row `r1`). Pairing each `k` with those
    /// visits every unordered pair of slots in touching cells exactly once.
    ///
    /// Slot by slot rather than cell by cell: a loop over a cell's slots
    /// ends after 1 to 3 of them at random, and its exit mispredicted; this
    /// one loop over the rows' slots reads its cell's bucket starts for
    /// each slot (in L1: the cells of a row in order) and has no such exit.
    #[inline]
    pub(super) fn for_each_slot_span_in_rows(
        &self,
        r0: usize,
        r1: usize,
        mut f: impl FnMut(usize, usize, core::ops::Range<usize>),
    ) {
        let start = &self.start;
        let stride = self.stride;
        let lo = self.row_start(r0);
        let hi = self.row_start(r1).min(self.slot_cell.len());
        for (k, &c) in (lo..).zip(&self.slot_cell[lo.min(hi)..hi]) {
            let c = c as usize;
            let same_end = start[c + 2] as usize;
            let below = start[c + stride - 1] as usize..start[c + stride + 2] as usize;
            f(k, same_end, below);
        }
    }

    /// Calls `f(k, m)` once for every unordered pair of sorted slots whose
    /// cells touch (same cell, or one of the 8 around it), `k` always the
    /// slot visited first: the walk of the sim's hot loop,
    /// [`Grid::for_each_slot_span_in_rows`], over every row. For tests.
    #[cfg(test)]
    pub(super) fn for_each_candidate_pair(&self, mut f: impl FnMut(usize, usize)) {
        self.for_each_slot_span_in_rows(0, self.rows, |k, same_end, below| {
            for m in (k + 1..same_end).chain(below) {
                f(k, m);
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
