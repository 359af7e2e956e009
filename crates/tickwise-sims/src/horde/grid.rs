//! The uniform spatial grid: a stable counting sort of the enemy slots by cell.
//!
//! Rebuilt every tick from scratch, in flat arrays allocated once:
//!
//! 1. one pass over the live enemies finds their bounding box (from raw
//!    positions, no division); the grid covers that box only, so a small
//!    horde on a huge field clears and sums a few thousand cells, not the
//!    field's million;
//! 2. a second pass computes each slot's cell (two multiply-shift divisions,
//!    [`DivBy`]; dead slots go to one bucket after every cell) and counts;
//! 3. prefix sums turn counts into bucket starts;
//! 4. a third pass gives every slot its new place: [`Grid::perm`]. The sort
//!    is stable, so the new layout is a function of the old one.
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

/// What the grid sorts: a position in 1/256 px and the enemy it belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Body {
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) id: u32,
}

/// Bucket starts over the live bounding box, and the sorting permutation.
#[derive(Clone, Debug)]
pub(super) struct Grid {
    /// Cell side in sub-pixels.
    cell: i32,
    /// Division by the cell side.
    div: DivBy,
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
    /// Each old slot's new slot.
    perm: Vec<u32>,
    /// Each new live slot's cell.
    slot_cell: Vec<u32>,
}

impl Grid {
    /// A grid for `enemies` slots on a field of `max_cols × max_rows` cells of
    /// `cell` sub-pixels. Allocates everything it will ever use.
    pub(super) fn new(cell: i32, max_cols: u32, max_rows: u32, enemies: usize) -> Grid {
        let cells = (max_cols as usize + 2) * (max_rows as usize + 1);
        Grid {
            cell: cell.max(1),
            div: DivBy::new(cell.max(1).cast_unsigned()),
            col0: 0,
            row0: 0,
            cols: 0,
            rows: 0,
            stride: 2,
            start: vec![0; cells + 3],
            key: vec![0; enemies],
            perm: vec![0; enemies],
            slot_cell: Vec::with_capacity(enemies),
        }
    }

    /// Live enemies in the grid: after the sort they are slots `0..len()`.
    pub(super) fn len(&self) -> usize {
        self.slot_cell.len()
    }

    /// Each slot's new place: apply it to every enemy array.
    pub(super) fn perm(&self) -> &[u32] {
        &self.perm
    }

    /// Sorts slots by cell from positions and hit points (alive = `hp > 0`):
    /// live slots first, in row-major cell order, then the dead; ties keep
    /// their slot order. Positions must be inside the field (non-negative, as
    /// the sim keeps them).
    pub(super) fn build(&mut self, pos: &[Body], hp: &[i32]) {
        // The live bounding box from raw positions: no division per enemy.
        let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (i32::MAX, i32::MIN, i32::MAX, i32::MIN);
        for (&Body { x, y, .. }, &h) in pos.iter().zip(hp) {
            if h > 0 {
                x_lo = x_lo.min(x);
                x_hi = x_hi.max(x);
                y_lo = y_lo.min(y);
                y_hi = y_hi.max(y);
            }
        }
        self.slot_cell.clear();
        let n = hp.len();
        if x_lo > x_hi {
            self.cols = 0;
            self.rows = 0;
            for (k, p) in self.perm[..n].iter_mut().enumerate() {
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
                (div.div(y) - r_lo) * stride + div.div(x).wrapping_sub(c_base)
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
        // Capacity was reserved at construction: no allocation.
        self.slot_cell.resize(live, 0);
        for (&b, p) in key.iter().zip(self.perm[..n].iter_mut()) {
            let slot = &mut start[b as usize + 1];
            *p = *slot;
            if b != dead {
                self.slot_cell[*slot as usize] = b;
            }
            *slot += 1;
        }
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
        g.build(pos, hp);
        let mut inv = alloc::vec![usize::MAX; hp.len()];
        for (old, &new) in g.perm()[..hp.len()].iter().enumerate() {
            assert_eq!(inv[new as usize], usize::MAX, "slot {new} given twice");
            inv[new as usize] = old;
        }
        inv
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
        g.build(&[b(1), b(2), b(3)], &[0, 0, -5]);
        assert_eq!(g.len(), 0);
        assert_eq!(g.perm(), &[0, 1, 2]);
        g.for_each_candidate_pair(|_, _| panic!("no pairs"));
        assert_eq!(g.box_ranges(0, 100, 0, 100).count(), 0);
    }
}
