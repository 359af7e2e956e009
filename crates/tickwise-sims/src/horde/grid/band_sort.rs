//! The grid's counting sort on several threads: by bands of rows.

use super::{Body, Grid};
use crate::horde::par::{self, CHUNK, PerPiece};

/// The most row bands of the parallel sort (plus one band for the dead).
const SORT_BANDS: usize = 64;
/// Entries per piece of enemies in the parallel sort's band table: the
/// piece's first index of each band (real bands, the dead band, the end).
pub(super) const BAND_ENTRIES: usize = SORT_BANDS + 2;

impl Grid {
    /// The same counting sort, on every core: the rows are cut into bands
    /// (at most [`SORT_BANDS`], by the box's size alone). Each piece of
    /// [`CHUNK`] old slots computes its buckets and groups its slots by band
    /// (in slot order); then each band, on its own part of `start`, `order`
    /// and `slot_cell`, counts and places its slots, reading the pieces in
    /// order: the same stable order as [`Grid::sort_serial`].
    pub(super) fn sort_parallel(&mut self, pos: &[Body], hp: &[i32], r_lo: u32, c_lo: u32) {
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
