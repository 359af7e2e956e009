//! The island step's integer arithmetic: the friction `floor(v·num/den)`
//! (a shift on the fast path, exact slow paths natively and on wasm32) and
//! `r % 7`, each in the form its target compiles well, with the tests that
//! hold the forms equal.

/// `floor(v * num / den)` when the denominator is not a power of two, or
/// when the product overflows 64 bits (then in 128 bits, exactly).
///
/// Cold and panic-free on purpose: the branch that calls it is laid out of
/// the hot path, and with no call and no panic left in a loop of steps the
/// compiler keeps the world's fields in registers for the whole loop (a
/// call that may unwind forces every field back to memory each step). The
/// world keeps `1 <= den` and `0 <= num <= den`, so the checked divisions
/// never fail; their fallback (0) is unreachable. Native targets only: on
/// wasm32 the 128-bit operations are library calls, and [`friction_split`]
/// computes the same value without them (a test compares the two).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
#[cold]
#[inline(always)]
fn friction_by_division(v: i64, num: i64, den: i64) -> i64 {
    match v.checked_mul(num) {
        Some(p) => floor_div_i64(p, den),
        None => {
            let p = i128::from(v) * i128::from(num);
            let den = i128::from(den);
            let (q, r) = (p.checked_div(den), p.checked_rem(den));
            let q = match (q, r) {
                (Some(q), Some(r)) if r < 0 => q - 1,
                (Some(q), _) => q,
                (None, _) => 0,
            };
            #[allow(
                clippy::cast_possible_truncation,
                reason = "|v * num / den| <= |v| since num <= den"
            )]
            let q = q as i64;
            q
        }
    }
}

/// [`friction_by_division`] in 64-bit operations only, for
/// `0 <= num <= den <= 2^31` and any `v`: the same value, with no 128-bit
/// multiply or divide. wasm32 has no instructions for those (they are
/// library calls there), and a call anywhere in a loop of steps, even on a
/// branch never taken, makes V8 keep the world's fields on the stack
/// instead of in registers: 3.7 instead of 2.6 ns a step. (So do a larger
/// slow path or more loop-invariant values here, such as a general
/// 128-by-64-bit division, or reducing `num` modulo `den` too: 6.3 ns.
/// Hence the friction's range, which [`IslandWorld::new`](super::IslandWorld::new) enforces.)
/// No call, no loop, no panic path.
///
/// With `v = q·den + r`, `0 <= r < den` (floor division),
/// `v·num/den = q·num + r·num/den` and `q·num` is whole, so
/// `floor(v·num/den) = q·num + floor(r·num/den)`, where
/// `r·num < den² <= 2^62` is exact. The result lies between 0 and `v`
/// (`num <= den`), so it fits in an `i64`; `q·num` alone may not (by less
/// than `num`, near `i64::MIN`), but a sum whose exact value fits is exact
/// in wrapping (mod 2^64) arithmetic.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline(always)]
fn friction_split(v: i64, num: i64, den: i64) -> i64 {
    let (q, r) = floor_div_rem(v, den);
    let tail = (r * num).checked_div(den).unwrap_or_default();
    q.wrapping_mul(num).wrapping_add(tail)
}

/// The friction's slow path: [`friction_by_division`] natively,
/// [`friction_split`] (the same value without 128-bit operations) on wasm32.
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
pub(super) fn friction_slow(v: i64, num: i64, den: i64) -> i64 {
    friction_by_division(v, num, den)
}

/// See the native version.
#[cfg(target_arch = "wasm32")]
#[inline(always)]
pub(super) fn friction_slow(v: i64, num: i64, den: i64) -> i64 {
    friction_split(v, num, den)
}

/// `(floor(x / d), x - d·floor(x / d))` for `d >= 1`, with no panic path
/// (a panic is a call too; see [`friction_split`]); `(0, 0)` for `d < 1`,
/// which its caller never passes.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline(always)]
const fn floor_div_rem(x: i64, d: i64) -> (i64, i64) {
    match (x.checked_div(d), x.checked_rem(d)) {
        // d >= 2 whenever r < 0, so q - 1 >= i64::MIN / 2 - 1, r + d < d.
        (Some(q), Some(r)) if r < 0 => (q - 1, r + d),
        (Some(q), Some(r)) => (q, r),
        _ => (0, 0),
    }
}

/// The largest friction denominator a world keeps ([`IslandWorld::new`](super::IslandWorld::new)):
/// the 64-bit friction split needs `den² <= 2^62`. `from_json` allows 10^6.
pub const MAX_FRICTION_DEN: i64 = 1 << 31;

/// The friction a world runs with: `(num, den)` clamped into
/// `0 <= num <= den`, `1 <= den <=` [`MAX_FRICTION_DEN`]. Every config
/// `from_json` accepts is inside already; only a hand-built one changes.
pub(super) const fn clamp_friction(num: i64, den: i64) -> (i64, i64) {
    let den = if den < 1 {
        1
    } else if den > MAX_FRICTION_DEN {
        MAX_FRICTION_DEN
    } else {
        den
    };
    let num = if num < 0 {
        0
    } else if num > den {
        den
    } else {
        num
    };
    (num, den)
}

/// `floor(p / den)` for `den > 0` (the quotient rounded toward minus
/// infinity, as `div_euclid` for a positive divisor), written out so that
/// no library function is called (see [`friction_by_division`]).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
#[inline(always)]
fn floor_div_i64(p: i64, den: i64) -> i64 {
    match (p.checked_div(den), p.checked_rem(den)) {
        (Some(q), Some(r)) if r < 0 => q - 1,
        (Some(q), _) => q,
        (None, _) => 0,
    }
}

/// `r % 7` for any `u32` with one 64×64→128-bit multiply: `q = (r * M) >> 64`
/// with `M = ceil(2^64 / 7)` is exact because `M * 7 - 2^64 = 5` and
/// `5 * 2^32 < 2^64` (Granlund–Montgomery). The compiler's own `u32 % 7`
/// needs a 33-bit magic number and a fix-up, twice the instructions, on the
/// hottest line of the step.
#[cfg(not(target_arch = "wasm32"))]
#[inline]
pub(super) const fn mod7(r: u32) -> u32 {
    const MAGIC: u128 = 2_635_249_153_387_078_803; // ceil(2^64 / 7)
    #[allow(clippy::cast_possible_truncation, reason = "q <= r / 7 < 2^32")]
    let q = ((r as u128 * MAGIC) >> 64) as u32;
    r - q * 7
}

/// `r % 7` on wasm32: [`mod7_direct`]. wasm has no 64×64→128-bit multiply
/// (the trick above becomes a call to a 128-bit multiply routine), and V8
/// compiles `i32.rem_u` by 7 to eight instructions (a 32-bit multiply-high
/// pinned to two fixed registers, a fix-up for the 33-bit magic number, a
/// multiply back and a subtraction).
#[cfg(target_arch = "wasm32")]
#[inline]
pub(super) const fn mod7(r: u32) -> u32 {
    mod7_direct(r)
}

/// `r % 7` by direct remainder computation (Lemire, Kaser and Kurz, "Faster
/// Remainder by Direct Computation", 2019) in 64-bit operations only: with
/// `C = ceil(2^35 / 7)`, the low 35 bits of `r·C` are the fraction `r/7`
/// scaled by 2^35, and multiplying that fraction by 7 gives the remainder in
/// the bits above 35. Exact for every `u32` because `F = 35 >= N + L = 32 +
/// 3` (`2^L >= 7`), the paper's Theorem 1; `mod7_direct_matches_the_remainder_operator`
/// checks a sweep, and an exhaustive check of all 2^32 values is an
/// ignored test. Four 64-bit operations (multiply, mask, multiply by 7, shift)
/// that need no fixed registers.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline(always)]
const fn mod7_direct(r: u32) -> u32 {
    const C: u64 = 4_908_534_053; // ceil(2^35 / 7) = (2^35 + 3) / 7
    const MASK: u64 = (1 << 35) - 1;
    let fraction = (r as u64).wrapping_mul(C) & MASK;
    #[allow(
        clippy::cast_possible_truncation,
        reason = "fraction * 7 < 7 * 2^35, so the result is < 7"
    )]
    let rem = ((fraction * 7) >> 35) as u32;
    rem
}

/// The island world's `fast_bound` for a friction `num / den`:
/// `|v| < 2^43` and `|num| < 2^20` guarantee `|v * num| < 2^63`, and a
/// power-of-two denominator makes the floor division a shift. 0 sends every
/// step to the slow path (a denominator that is not a power of two, or a
/// hand-built numerator of 2^20 or more).
pub(super) const fn fast_bound(num: i64, den: i64) -> u64 {
    if den.count_ones() == 1 && num.unsigned_abs() < 1 << 20 {
        1 << 43
    } else {
        0
    }
}

/// `v * num` and whether the caller must take the exact slow path instead
/// ([`friction_by_division`], or [`friction_split`] on wasm32) because the
/// product may have overflowed or the denominator is not a power of two.
/// Natively the multiply's own overflow flag, and `bound == 0` for the
/// denominator (hoisted out of a loop of steps).
#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
pub(super) const fn mul_or_flag(v: i64, num: i64, bound: u64) -> (i64, bool) {
    let (p, overflow) = v.overflowing_mul(num);
    (p, overflow | (bound == 0))
}

/// See the native version.
#[cfg(target_arch = "wasm32")]
#[inline(always)]
pub(super) const fn mul_or_flag(v: i64, num: i64, bound: u64) -> (i64, bool) {
    mul_bounded(v, num, bound)
}

/// The wasm32 form of [`mul_or_flag`], compiled everywhere so that native
/// tests check it. wasm has no overflow flag (an overflow-checked 64-bit
/// multiply becomes a 128-bit multiply call), so one comparison with the
/// world's bound ([`fast_bound`]) decides: the product is used only when it
/// is exact, so both forms give the same velocity. One comparison against
/// one loop-invariant value, rather than a bound and a flag: V8 has few
/// registers to keep a loop's invariants in.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline(always)]
const fn mul_bounded(v: i64, num: i64, bound: u64) -> (i64, bool) {
    (v.wrapping_mul(num), v.unsigned_abs() >= bound)
}

#[cfg(test)]
mod tests {
    use super::{
        MAX_FRICTION_DEN, clamp_friction, fast_bound, friction_by_division, friction_split, mod7,
        mod7_direct, mul_bounded,
    };
    use proptest::prelude::*;

    proptest! {
        /// The wasm32 friction equals the 128-bit one over its whole domain
        /// (`0 <= num <= den <= 2^31`, any velocity), edges included; the
        /// expected value is also checked against i128 `div_euclid`.
        #[test]
        fn friction_split_equals_the_128_bit_division(
            v in prop_oneof![any::<i64>(), -100_000i64..100_000, Just(i64::MIN), Just(i64::MAX),
                (0i64..64).prop_map(|k| i64::MIN + k), (0i64..64).prop_map(|k| i64::MAX - k)],
            den in prop_oneof![1i64..=16, 1i64..=1_000_000, (MAX_FRICTION_DEN - 64)..=MAX_FRICTION_DEN],
            num_frac in 0u32..=1 << 16,
            num_edge in 0i64..4,
        ) {
            let num = match num_edge {
                0 => 0,
                1 => den,
                2 => den - 1,
                _ => i64::try_from((i128::from(den) * i128::from(num_frac)) >> 16).unwrap(),
            };
            let want = friction_by_division(v, num, den);
            prop_assert_eq!(friction_split(v, num, den), want, "{} * {} / {}", v, num, den);
            let exact = (i128::from(v) * i128::from(num)).div_euclid(i128::from(den));
            prop_assert_eq!(i128::from(want), exact);
        }
    }

    #[test]
    fn hand_built_friction_is_clamped_into_the_split_domain() {
        assert_eq!(clamp_friction(15, 16), (15, 16), "the island rules");
        assert_eq!(clamp_friction(1_000_000, 1_000_000), (1_000_000, 1_000_000));
        assert_eq!(clamp_friction(5, 0), (1, 1));
        assert_eq!(clamp_friction(-3, -7), (0, 1));
        assert_eq!(clamp_friction(9, 4), (4, 4));
        assert_eq!(
            clamp_friction(i64::MAX, i64::MAX),
            (MAX_FRICTION_DEN, MAX_FRICTION_DEN)
        );
    }

    #[test]
    fn friction_division_floors_like_div_euclid() {
        // The out-of-line path (denominators that are not powers of two, and
        // products past 64 bits) against i128 `div_euclid`, which floors for
        // a positive divisor: negative values round down, not toward zero.
        let values = [
            0i64,
            1,
            -1,
            7,
            -7,
            15,
            -15,
            1_000_003,
            -1_000_003,
            i64::MAX,
            i64::MIN,
            i64::MAX / 3,
            i64::MIN / 3,
        ];
        for v in values {
            for (num, den) in [
                (1, 3),
                (2, 3),
                (15, 16),
                (999_999, 1_000_000),
                (7, 7),
                (0, 5),
            ] {
                let want = (i128::from(v) * i128::from(num)).div_euclid(i128::from(den));
                assert_eq!(
                    i128::from(friction_by_division(v, num, den)),
                    want,
                    "{v} * {num} / {den}"
                );
            }
        }
        assert_eq!(friction_by_division(-1, 1, 3), -1, "floor, not truncation");
    }

    #[test]
    fn the_wasm_overflow_bound_never_lets_a_wrapped_product_through() {
        // Whenever the bound says "exact", the product must be the exact one;
        // it may send exact products to the slow path, never wrong ones.
        let vs = [
            0i64,
            1,
            -1,
            (1 << 43) - 1,
            -(1 << 43) + 1,
            1 << 43,
            i64::MAX,
            i64::MIN,
        ];
        for v in vs {
            for num in [0i64, 1, 15, 1_000_000, (1 << 20) - 1, 1 << 20, i64::MAX] {
                for den in [1i64, 2, 3, 16, 1_000_000, 1 << 20, MAX_FRICTION_DEN] {
                    let (p, flag) = mul_bounded(v, num, fast_bound(num, den));
                    if !flag {
                        assert_eq!(Some(p), v.checked_mul(num), "{v} * {num}");
                        assert_eq!(den.count_ones(), 1, "{den}: a shift would not floor-divide");
                    }
                }
            }
            // The configs' range (num <= 10^6) with |v| < 2^43 and a
            // power-of-two denominator: never flagged.
            if v.unsigned_abs() < 1 << 43 {
                assert!(
                    !mul_bounded(v, 1_000_000, fast_bound(1_000_000, 1 << 20)).1,
                    "{v}"
                );
                assert!(!mul_bounded(v, 15, fast_bound(15, 16)).1, "{v}");
            }
        }
        assert_eq!(fast_bound(15, 16), 1 << 43, "the island rules");
        assert_eq!(fast_bound(2, 3), 0);
        assert_eq!(fast_bound(1 << 20, 1 << 21), 0);
    }

    /// The values a remainder-by-7 routine is checked on: edges, every
    /// residue near each multiple of 7 at the top of the range, and a strided
    /// sweep of the whole `u32` range.
    fn mod7_samples() -> impl Iterator<Item = u32> {
        let edges = [
            0,
            1,
            6,
            7,
            8,
            u32::MAX,
            u32::MAX - 1,
            u32::MAX - 6,
            u32::MAX / 7 * 7,
        ];
        edges
            .into_iter()
            .chain((0..=u32::MAX / 9_973).map(|k| k * 9_973))
            .chain((0..14).map(|k| u32::MAX - k))
            .chain((1..14).map(|k| (1 << 31) - 7 + k))
    }

    #[test]
    fn mod7_direct_matches_the_remainder_operator() {
        // Hand-checked values first: 2^32 - 1 = 7 * 613566756 + 3.
        assert_eq!(mod7_direct(u32::MAX), 3);
        assert_eq!(mod7_direct(13), 6);
        assert_eq!(mod7_direct(14), 0);
        for r in mod7_samples() {
            assert_eq!(mod7_direct(r), r % 7, "{r}");
        }
    }

    /// All 2^32 values (about 30 s of CPU in a debug build, 73 s on a busy machine): run with
    /// `cargo test -p tickwise-sims --release -- --ignored mod7_direct_is_exact`.
    #[test]
    #[ignore = "exhaustive over u32: slow in a debug build"]
    fn mod7_direct_is_exact_for_every_u32() {
        let mut bad = 0u64;
        for r in 0..=u32::MAX {
            bad += u64::from(mod7_direct(r) != r % 7);
        }
        assert_eq!(bad, 0);
    }

    #[test]
    fn mod7_matches_the_remainder_operator() {
        // Edges, every residue near each multiple of 7 at the top of the range,
        // and a strided sweep of the whole u32 range.
        for r in [
            0,
            1,
            6,
            7,
            8,
            u32::MAX,
            u32::MAX - 1,
            u32::MAX - 6,
            u32::MAX / 7 * 7,
        ] {
            assert_eq!(mod7(r), r % 7, "{r}");
        }
        let mut r: u32 = 0;
        while let Some(next) = r.checked_add(9_973) {
            assert_eq!(mod7(r), r % 7, "{r}");
            r = next;
        }
    }
}
