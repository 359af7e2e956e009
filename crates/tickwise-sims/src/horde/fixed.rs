//! Fixed-point geometry: sub-pixel units, an octagonal length and the
//! separation kernel, all in integers.
//!
//! No square root runs per tick. Lengths that steer a velocity use the
//! octagonal norm `max + 3/8·min`, which is a true norm (its unit ball is a
//! convex octagon) within −3 % / +7 % of the Euclidean length; the separation
//! kernel's `1/|d|` comes from a table filled once with [`u64::isqrt`].

/// Sub-pixels per pixel: positions and speeds are in 1/256 px.
pub const SUBPX: i32 = 256;

/// The octagonal length of `(dx, dy)`: `max(|dx|,|dy|) + ⌊3·min(|dx|,|dy|)/8⌋`.
///
/// Exact on the axes, 2.8 % short on the diagonal, at most 6.8 % long in
/// between. Homogeneous up to rounding, so `oct(c·d) ≈ c·oct(d)`.
#[must_use]
#[inline]
pub const fn oct_len(dx: i64, dy: i64) -> u64 {
    let a = dx.unsigned_abs();
    let b = dy.unsigned_abs();
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    hi + ((lo * 3) >> 3)
}

/// [`oct_len`] of an offset in `i32`, in `u32`, for `|dx|, |dy| < 2^30`
/// (then `3 · min` and the sum stay below 2^32). Steering's offsets lie
/// inside the field (below 2^28) and its velocities below 2^21 on an axis:
/// in 32 bits, the hot loop needs no widening. A debug build checks the
/// bound (an overflow panics).
#[must_use]
#[inline]
pub(super) const fn oct_len_i32(dx: i32, dy: i32) -> u32 {
    let a = dx.unsigned_abs();
    let b = dy.unsigned_abs();
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    hi + ((lo * 3) >> 3)
}

/// Exact division of non-negative `i32` values by a constant, as a multiply
/// and a shift (Granlund & Montgomery, 1994, with `N = 31`): with
/// `l = ⌈log₂ d⌉` and `m = ⌊2^(31+l) / d⌋ + 1`, `m·d` lies in
/// `(2^(31+l), 2^(31+l) + 2^l]`, which makes `⌊x·m / 2^(31+l)⌋ = ⌊x / d⌋` for
/// every `0 <= x < 2^31`. `x·m < 2^31 · 2^33` fits in a `u64`. The grid
/// divides every position by the cell size twice per tick; a hardware
/// divide costs several times more than this multiply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct DivBy {
    m: u64,
    shift: u32,
}

impl DivBy {
    /// Division by `d` (clamped to at least 1).
    pub(super) const fn new(d: u32) -> DivBy {
        let d = if d == 0 { 1 } else { d as u64 };
        let l = 64 - (d - 1).leading_zeros();
        DivBy {
            m: (1u64 << (31 + l)) / d + 1,
            shift: 31 + l,
        }
    }

    /// `⌊x / d⌋` for `x >= 0`; negative `x` is treated as 0.
    #[inline]
    pub(super) const fn div(self, x: i32) -> u32 {
        let x = if x < 0 { 0 } else { x as u64 };
        ((x * self.m) >> self.shift) as u32
    }
}

/// How many table entries the kernel may use; the squared distance is
/// quantised into at most this many buckets.
const KERNEL_BUCKETS: u64 = 4096;

/// Entries of the kernel's table: always `KERNEL_BUCKETS`, the buckets a
/// kernel does not use padded with 0, so the hot loop indexes a fixed-size
/// array.
const TABLE: usize = KERNEL_BUCKETS as usize;

/// The pairwise push between two overlapping enemies.
///
/// For two enemies closer than the separation distance `R` (two enemy radii),
/// with `d` the vector from the other enemy to this one and `L = |d|`, each
/// axis of the push is
///
/// ```text
/// push = trunc(d · w(d²) / 65536),   w ≈ 65536 · strength/256 · (R − L) / L
/// ```
///
/// so the push points away from the other enemy with length about
/// `strength/256 · (R − L)`: the overlap, scaled. `w` is read from a table
/// indexed by `d² >> shift` (at most 4096 buckets), each filled
/// with the integer square root of the bucket's upper end, so the push never
/// exceeds the overlap (near `d = 0` it is smaller). Truncation toward
/// zero makes the kernel odd, `push(−d) = −push(d)`, so a pair can be computed
/// once and applied with opposite signs to both enemies, in any order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct SeparationKernel {
    radius_sq: i64,
    shift: u32,
    /// Shared, read-only: a world's clone (a rollback snapshot) shares the
    /// table instead of copying its 16 KB.
    weights: alloc::sync::Arc<[u32; TABLE]>,
    nudge: i32,
}

impl SeparationKernel {
    /// A kernel for separation distance `radius` (sub-pixels, `1..=2^15`) and
    /// `strength` in 1/256 (`0..=256`). Out-of-range arguments are clamped.
    #[must_use]
    pub(super) fn new(radius: u32, strength: u32) -> SeparationKernel {
        let radius = i64::from(radius.clamp(1, 1 << 15));
        let strength = i64::from(strength.min(256));
        let radius_sq = radius * radius;
        let last = radius_sq.cast_unsigned() - 1;
        let mut shift = 0;
        while (last >> shift) >= KERNEL_BUCKETS {
            shift += 1;
        }
        // Padded with zeros to `TABLE` entries (an index past the real
        // table read 0 before, and reads 0 here).
        let mut weights = [0u32; TABLE];
        for (b, w) in (0..=(last >> shift)).zip(weights.iter_mut()) {
            // The bucket's upper end: |d| <= len, so push <= overlap.
            let len = ((b + 1) << shift).isqrt().max(1).cast_signed();
            let overlap = (radius - len).max(0);
            // overlap < 2^15, strength * 256 <= 2^16: below 2^31.
            *w = u32::try_from((overlap * strength * 256) / len).unwrap_or(u32::MAX);
        }
        // Two facts the hot loop ([`Pairing::push_if_overlapping`]) rests
        // on, tested over the whole range of radii and strengths in
        // `the_table_is_zero_from_r2_on_and_its_products_fit_an_i32`:
        //
        // * The weight is 0 for every bucket from `R² >> shift` on: such a
        //   bucket's upper end is above R², its length at least R, its
        //   overlap 0 (and the padding is 0). So every `d2 >= R²`, its
        //   index clamped to the last entry, reads 0: no select needed.
        // * `|d| · w < 2^31` for an offset `d` in a bucket: `|d|` is at most
        //   the bucket's length `len` (an integer below the square root of
        //   its upper end), and `w · len <= overlap · strength · 256 <=
        //   (2^15 − 1) · 2^16`. So the push's product is exact in `i32`.
        let weights = alloc::sync::Arc::new(weights);
        SeparationKernel {
            radius_sq,
            shift,
            weights,
            // Two enemies on the same spot: push them apart along x by half the
            // full-overlap push (see `Self::nudge`).
            nudge: i32::try_from((radius * strength) >> 9).unwrap_or(i32::MAX),
        }
    }

    /// Whether both are the same kernel: the same table (a clone's), or
    /// equal values.
    #[must_use]
    pub(super) fn same(&self, o: &SeparationKernel) -> bool {
        alloc::sync::Arc::ptr_eq(&self.weights, &o.weights) || self == o
    }

    /// The squared separation distance.
    #[must_use]
    pub(super) const fn radius_sq(&self) -> i64 {
        self.radius_sq
    }

    /// The push along x given to the lower-indexed of two enemies on exactly
    /// the same spot is `-nudge`, the higher-indexed one gets `+nudge`: the
    /// direction is fixed by index, never by visiting order.
    #[must_use]
    pub(super) const fn nudge(&self) -> i32 {
        self.nudge
    }

    /// The push on the enemy at `d = (dx, dy)` from another, given
    /// `d2 = dx² + dy² > 0`. Zero from `radius²` on (the last bucket ends at
    /// or beyond `radius²`, so its weight is 0; indices past the table read
    /// 0), so a caller that forgets the overlap test adds nothing wrong.
    #[must_use]
    #[inline]
    pub(super) fn push(&self, dx: i32, dy: i32, d2: i64) -> (i32, i32) {
        let idx = (d2.cast_unsigned() >> self.shift) as usize;
        let w = i64::from(self.weights.get(idx).copied().unwrap_or(0));
        // |d| < 2^15 and w <= 2^31, so the products fit; the quotients are
        // at most |d| * strength-ish, far inside i32.
        #[allow(clippy::cast_possible_truncation, reason = "|push| <= R * 256 / 256")]
        (
            ((i64::from(dx) * w) / 65_536) as i32,
            ((i64::from(dy) * w) / 65_536) as i32,
        )
    }
}

/// A [`SeparationKernel`] as plain values for the separation's hot loop:
/// the table's slice and the constants in registers, not behind the shared
/// table's pointer. Computes exactly [`SeparationKernel::push`] and the
/// same-spot nudge.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pairing<'a> {
    radius_sq: i64,
    shift: u32,
    /// The table as an array: every index below [`TABLE`] is in bounds.
    table: &'a [u32; TABLE],
    nudge: i32,
}

impl SeparationKernel {
    /// The kernel's values for the hot loop.
    #[must_use]
    pub(super) fn pairing(&self) -> Pairing<'_> {
        Pairing {
            radius_sq: self.radius_sq,
            shift: self.shift,
            table: &self.weights,
            nudge: self.nudge,
        }
    }
}

impl Pairing<'_> {
    /// The push on the first enemy of a candidate pair at offset `d` from
    /// the second (`d2 = dx² + dy²`), with no branch on the overlap test:
    /// when `d2 < R²`, [`SeparationKernel::push`] (on the same spot, the
    /// nudge along x, the lower id toward −x) and an overlap count of 1;
    /// else `(0, 0, 0)` (the table's weight is 0 there, so adding the
    /// result changes nothing). About a third of the separation's
    /// candidates overlap, at random: a branch on the test mispredicts
    /// often. Round 3 selected the weight to 0 beyond `R²`; the table's
    /// tail is 0 anyway (see [`SeparationKernel::new`]), so round 4 reads
    /// it unselected and multiplies in `i32` (exact, same place): 4 % fewer
    /// instructions and 25 % fewer simulated mispredicts in a rollback
    /// round at 10,000 enemies (the clamp of the index is the only select
    /// left). The same spot (`d2 == 0`, rare) keeps its branch.
    #[must_use]
    #[inline(always)]
    pub(super) fn push_if_overlapping(
        &self,
        dx: i32,
        dy: i32,
        d2: i64,
        first_is_lower: bool,
    ) -> (i32, i32, u32) {
        if d2 == 0 {
            return self.same_spot(first_is_lower);
        }
        let overlaps = d2 < self.radius_sq;
        // The table's weight is 0 from R² on (its tail, see
        // `SeparationKernel::new`), so no select: an index past the table
        // is clamped to its last entry, which is 0 too.
        let idx = d2.cast_unsigned() >> self.shift;
        #[allow(clippy::cast_possible_truncation, reason = "below TABLE when used")]
        let idx = core::hint::select_unpredictable(idx < TABLE as u64, idx as usize, TABLE - 1);
        // Below 2^31 (`SeparationKernel::new`).
        let w = self.table[idx].cast_signed();
        // |dx · w| < 2^31 (`SeparationKernel::new`): exact in `i32`.
        ((dx * w) / 65_536, (dy * w) / 65_536, u32::from(overlaps))
    }

    /// [`Pairing::push_if_overlapping`] for `d2 < 2^31` (both axes under
    /// 2^15, as in [`Grid::small_cells`](super::grid::Grid::small_cells)),
    /// in 32 bits: the same values with fewer instructions in the hot loop
    /// (no widening; the overlap test is the sign of `d2 − R²`, which
    /// cannot overflow since both are below 2^31).
    #[must_use]
    #[inline(always)]
    pub(super) fn push_if_overlapping_small(
        &self,
        dx: i32,
        dy: i32,
        d2: u32,
        first_is_lower: bool,
    ) -> (i32, i32, u32) {
        if d2 == 0 {
            return self.same_spot(first_is_lower);
        }
        // R <= 2^15: R² <= 2^30.
        #[allow(clippy::cast_possible_truncation, reason = "R² <= 2^30")]
        let overlaps = d2.wrapping_sub(self.radius_sq as u32) >> 31;
        let idx = (d2 >> self.shift) as usize;
        let w = self.table[idx.min(TABLE - 1)].cast_signed();
        ((dx * w) / 65_536, (dy * w) / 65_536, overlaps)
    }

    /// The push on the first of two enemies on the same spot: the nudge
    /// along x, the lower id toward −x; an overlap.
    #[inline(always)]
    const fn same_spot(&self, first_is_lower: bool) -> (i32, i32, u32) {
        (
            if first_is_lower {
                -self.nudge
            } else {
                self.nudge
            },
            0,
            1,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oct_len_by_hand() {
        assert_eq!(oct_len(0, 0), 0);
        assert_eq!(oct_len(-100, 0), 100);
        assert_eq!(oct_len(0, 7), 7);
        // 3-4-5 triangle: 4 + floor(9/8) = 5.
        assert_eq!(oct_len(3, -4), 5);
        // Diagonal 800: 800 + 300 = 1100 vs the true 1131.4.
        assert_eq!(oct_len(800, 800), 1100);
        assert_eq!(oct_len(i64::MIN + 1, 0), (i64::MAX).cast_unsigned());
    }

    #[test]
    fn oct_len_i32_is_oct_len_below_2_to_the_30() {
        let big = (1 << 30) - 1;
        // By hand: 4 + floor(9/8) = 5; the limit, diagonal: 2^30 − 1 plus
        // floor(3 · (2^30 − 1) / 8) = 402,653,183.
        assert_eq!(oct_len_i32(3, -4), 5);
        assert_eq!(oct_len_i32(-big, big), 1_476_395_006);
        let mut r = tickwise::Pcg32::new(0x0c7a_2026, 5);
        let edges = [0, 1, -1, 7, -8, big, -big, 1 << 28, -(1 << 28)];
        for i in 0..20_000 {
            let pick = |r: &mut tickwise::Pcg32, j: usize| {
                if i % 4 == 0 {
                    edges[(r.next_u32() as usize + j) % edges.len()]
                } else {
                    r.range_i32(-big, big)
                }
            };
            let (dx, dy) = (pick(&mut r, 0), pick(&mut r, 3));
            assert_eq!(
                u64::from(oct_len_i32(dx, dy)),
                oct_len(dx.into(), dy.into()),
                "{dx},{dy}"
            );
        }
    }

    #[test]
    fn oct_len_stays_within_its_bounds_of_the_euclidean_length() {
        // Compare against an integer square root: -3 % .. +7 %.
        for dx in (-300i64..=300).step_by(7) {
            for dy in (-300i64..=300).step_by(11) {
                let e = (dx * dx + dy * dy).cast_unsigned().isqrt();
                let o = oct_len(dx, dy);
                assert!(o * 100 <= e * 107 + 100, "{dx},{dy}: {o} vs {e}");
                assert!(o * 100 + 300 >= e * 97, "{dx},{dy}: {o} vs {e}");
            }
        }
    }

    #[test]
    fn div_by_is_exact() {
        let xs = [
            0,
            1,
            2,
            255,
            256,
            4095,
            4096,
            4097,
            1 << 20,
            i32::MAX - 1,
            i32::MAX,
        ];
        for d in (1..5000u32).chain([4096, 65_536, 1 << 20, 1 << 24, 1_000_003, u32::MAX >> 1]) {
            let q = DivBy::new(d);
            for &x in &xs {
                assert_eq!(q.div(x), x.cast_unsigned() / d, "{x} / {d}");
            }
            // Around multiples of d, where rounding would show.
            for k in [1u64, 2, 3, 1000, u64::from(i32::MAX.cast_unsigned() / d)] {
                for x in [k * u64::from(d) - 1, k * u64::from(d)] {
                    if let Ok(x) = i32::try_from(x) {
                        assert_eq!(q.div(x), x.cast_unsigned() / d, "{x} / {d}");
                    }
                }
            }
        }
        let mut r = tickwise::Pcg32::new(5, 5);
        for _ in 0..100_000 {
            let d = r.below(1 << 20) + 1;
            let x = r.range_i32(0, i32::MAX);
            assert_eq!(DivBy::new(d).div(x), x.cast_unsigned() / d, "{x} / {d}");
        }
        assert_eq!(DivBy::new(7).div(-5), 0);
    }

    #[test]
    fn kernel_push_by_hand() {
        // R = 4096 (two 8 px radii in sub-pixels), strength 128/256.
        let k = SeparationKernel::new(4096, 128);
        assert_eq!(k.radius_sq(), 1 << 24);
        // (2^24 - 1) >> 12 = 4095: 4096 buckets of width 2^12.
        assert_eq!(k.shift, 12);
        assert_eq!(k.weights.len(), 4096);
        // d = (2048, 0): d2 = 2^22, bucket 1024, upper end 1025 * 4096 =
        // 4_198_400, isqrt 2048 (2049^2 = 4_198_401 is larger).
        // w = (4096-2048)*128*256/2048 = 32768, push = 2048 * 32768 / 65536 = 1024:
        // half the overlap of 2048, as strength 128/256 says.
        assert_eq!(k.push(2048, 0, 1 << 22), (1024, 0));
        assert_eq!(k.push(-2048, 0, 1 << 22), (-1024, 0));
        // d = (1200, -1600), |d| = 2000: d2 = 4_000_000, bucket 976 (976.56),
        // upper end 977 * 4096 = 4_001_792, isqrt 2000 (2001^2 = 4_004_001).
        // w = 2096*32768/2000 = 34340 (34340.9); push = (1200*34340/65536,
        // -1600*34340/65536) = (628.8, -838.4) truncated toward zero.
        assert_eq!(k.push(1200, -1600, 4_000_000), (628, -838));
        assert_eq!(k.nudge(), 1024);
        // At and beyond the separation distance: nothing, even inside the
        // last bucket (4096^2 = 2^24 is bucket 4096, past the table) and
        // for a radius whose square is not a bucket boundary.
        assert_eq!(k.push(4096, 0, 1 << 24), (0, 0));
        assert_eq!(k.push(3000, 3000, 18_000_000), (0, 0));
        let odd = SeparationKernel::new(3001, 256);
        assert_eq!(odd.push(3001, 0, 3001 * 3001), (0, 0));
        assert_eq!(odd.push(3000, 1, 9_000_001), (0, 0));
        assert!(odd.push(2999, 0, 2999 * 2999).0 > 0);
    }

    #[test]
    fn branch_free_push_is_the_kernel_inside_and_nothing_outside() {
        // The hand values of `kernel_push_by_hand`, with the overlap count.
        let k = SeparationKernel::new(4096, 128);
        let p = k.pairing();
        assert_eq!(p.push_if_overlapping(2048, 0, 1 << 22, true), (1024, 0, 1));
        assert_eq!(
            p.push_if_overlapping(-2048, 0, 1 << 22, true),
            (-1024, 0, 1)
        );
        assert_eq!(
            p.push_if_overlapping(1200, -1600, 4_000_000, false),
            (628, -838, 1)
        );
        // The same spot: the nudge of 1024, the lower id toward -x.
        assert_eq!(p.push_if_overlapping(0, 0, 0, true), (-1024, 0, 1));
        assert_eq!(p.push_if_overlapping(0, 0, 0, false), (1024, 0, 1));
        // At and beyond R (also far past the table's end): nothing.
        assert_eq!(p.push_if_overlapping(4096, 0, 1 << 24, true), (0, 0, 0));
        assert_eq!(
            p.push_if_overlapping(8191, 8191, 2 * 8191 * 8191, true),
            (0, 0, 0)
        );
        // The overlap count on both sides of R² (d2 given as it is, so
        // exactly at the boundary), and at the largest d2 of small cells.
        for (d2, near) in [((1u32 << 24) - 1, 1), (1 << 24, 0), (u32::MAX >> 1, 0)] {
            assert_eq!(
                p.push_if_overlapping(4095, 0, d2.into(), true).2,
                near,
                "{d2}"
            );
            assert_eq!(
                p.push_if_overlapping_small(4095, 0, d2, true).2,
                near,
                "{d2}"
            );
        }
        // Every offset of a grid of them: the kernel's push inside R, zero
        // outside, for a radius whose square is not a bucket boundary too.
        for k in [
            SeparationKernel::new(4096, 128),
            SeparationKernel::new(3001, 256),
        ] {
            let p = k.pairing();
            let r2 = k.radius_sq();
            for dx in (-9000..=9000).step_by(97) {
                for dy in (-9000..=9000).step_by(89) {
                    let d2 = i64::from(dx) * i64::from(dx) + i64::from(dy) * i64::from(dy);
                    let want = if d2 == 0 {
                        (-k.nudge(), 0, 1)
                    } else if d2 < r2 {
                        let (x, y) = k.push(dx, dy, d2);
                        (x, y, 1)
                    } else {
                        (0, 0, 0)
                    };
                    assert_eq!(p.push_if_overlapping(dx, dy, d2, true), want, "{dx},{dy}");
                    let small = u32::try_from(d2).unwrap();
                    assert_eq!(
                        p.push_if_overlapping_small(dx, dy, small, true),
                        want,
                        "{dx},{dy}"
                    );
                }
            }
        }
    }

    #[test]
    fn kernel_is_odd_and_shrinks_with_distance() {
        // Full strength: the push is about the overlap R - |d| and never more.
        // Below R/8 the buckets are coarse and the push falls short (there it
        // is clamped by maxPush anyway); from R/8 on it is within 1/32 R of
        // the overlap and decreasing, up to the buckets' sawtooth: inside a
        // bucket w is constant and the push grows with d, by at most
        // R * (bucket width in |d|) / |d| = 4096 * 4 / 512 = 32 here.
        let k = SeparationKernel::new(4096, 256);
        let mut last = i32::MAX;
        for d in (1..4096).step_by(7) {
            let d2 = i64::from(d) * i64::from(d);
            let (p, q) = k.push(d, 0, d2);
            assert_eq!(k.push(-d, 0, d2), (-p, -q));
            assert_eq!(q, 0);
            assert!((0..=4096 - d).contains(&p), "d={d}: {p}");
            if d >= 512 {
                assert!(p >= 4096 - d - 128, "d={d}: {p}");
                assert!(p <= last + 32, "not decreasing at d={d}: {p} after {last}");
            }
            last = p;
        }
    }

    /// Radii and strengths at and around every edge of their ranges.
    const RADII: [u32; 14] = [
        1, 2, 3, 64, 100, 2047, 3001, 4095, 4096, 4097, 8191, 16_384, 32_767, 32_768,
    ];
    const STRENGTHS: [u32; 6] = [0, 1, 127, 128, 255, 256];

    #[test]
    fn the_table_is_zero_from_r2_on_and_its_products_fit_an_i32() {
        // The two facts `push_if_overlapping` rests on, checked entry by
        // entry for every edge radius and strength (the table depends on
        // nothing else).
        for radius in RADII {
            for strength in STRENGTHS {
                let k = SeparationKernel::new(radius, strength);
                let r2 = k.radius_sq().cast_unsigned();
                for (b, &w) in k.weights.iter().enumerate() {
                    let b = b as u64;
                    // Every d2 >= R² falls in a bucket from R² >> shift on.
                    if b >= r2 >> k.shift {
                        assert_eq!(w, 0, "R {radius} s {strength}: bucket {b}");
                    }
                    // Every d2 in bucket b is below its upper end.
                    let upper = (b + 1) << k.shift;
                    // The largest |dx| in the bucket: isqrt(upper - 1).
                    let most = (upper - 1).isqrt();
                    assert!(
                        u64::from(w) * most < 1 << 31,
                        "R {radius} s {strength}: bucket {b}, w {w}, |d| {most}"
                    );
                }
                // The clamp's target, for indices past the table.
                assert_eq!(k.weights[TABLE - 1], 0, "R {radius} s {strength}");
            }
        }
    }

    /// Round 3's form of `push_if_overlapping`, in `i64`, with the weight
    /// selected to 0 beyond R²: the reference the `i32` form must equal.
    fn push_i64(k: &SeparationKernel, dx: i32, dy: i32, d2: i64, lower: bool) -> (i32, i32, u32) {
        if d2 == 0 {
            return (if lower { -k.nudge() } else { k.nudge() }, 0, 1);
        }
        if d2 >= k.radius_sq() {
            return (0, 0, 0);
        }
        let idx = (d2.cast_unsigned() >> k.shift) as usize;
        let w = i64::from(k.weights.get(idx).copied().unwrap_or(0));
        #[allow(clippy::cast_possible_truncation, reason = "the reference's own cast")]
        (
            ((i64::from(dx) * w) / 65_536) as i32,
            ((i64::from(dy) * w) / 65_536) as i32,
            1,
        )
    }

    #[test]
    fn i32_push_is_the_i64_push_at_the_edges() {
        for radius in RADII {
            for strength in STRENGTHS {
                let k = SeparationKernel::new(radius, strength);
                let p = k.pairing();
                let r = radius.min(1 << 15).cast_signed();
                // Around R on the axes and the diagonal, at the table's
                // bucket edges, and far away (the large-cell path).
                let mut offsets = alloc::vec![0, 1, 2, r / 2, r - 2, r - 1, r, r + 1];
                offsets.extend([(1 << 15) - 1, 1 << 20, (1 << 22) + 3, (1 << 28) - 1]);
                for &dx in &offsets {
                    for &dy in &offsets {
                        for (dx, dy) in [(dx, dy), (-dx, dy), (dx, -dy), (-dx, -dy)] {
                            let d2 = i64::from(dx) * i64::from(dx) + i64::from(dy) * i64::from(dy);
                            for lower in [false, true] {
                                assert_eq!(
                                    p.push_if_overlapping(dx, dy, d2, lower),
                                    push_i64(&k, dx, dy, d2, lower),
                                    "R {radius} s {strength}: ({dx}, {dy})"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// The full input range: any radius and strength, offsets up to
        /// the field's size on each axis (the large-cell path passes
        /// offsets of several cells), and closer ones where the pushes
        /// are (a debug build also checks the `i32` products for
        /// overflow).
        #[test]
        fn i32_push_is_the_i64_push(
            radius in 1u32..=(1 << 15),
            strength in 0u32..=256,
            far in proptest::bool::ANY,
            dx in -(1i32 << 28)..=(1 << 28),
            dy in -(1i32 << 28)..=(1 << 28),
            lower in proptest::bool::ANY,
        ) {
            let k = SeparationKernel::new(radius, strength);
            // Near: the offset folded into R's square, where pushes are.
            let (dx, dy) = if far {
                (dx, dy)
            } else {
                let r = radius.cast_signed();
                (dx % (r + 1), dy % (r + 1))
            };
            let d2 = i64::from(dx) * i64::from(dx) + i64::from(dy) * i64::from(dy);
            proptest::prop_assert_eq!(
                k.pairing().push_if_overlapping(dx, dy, d2, lower),
                push_i64(&k, dx, dy, d2, lower)
            );
        }
    }
}
