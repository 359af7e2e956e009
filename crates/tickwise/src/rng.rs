//! Seeded random number generators, advanced by simulation steps only.
//!
//! Both generators are written here, not taken from a crate, so their output
//! can never change under us: replays and golden digests depend on every bit.
//! Changing either output is a breaking change (the golden-vector tests fail).

/// The island rules' 32-bit linear congruential generator: `state = state * mul + inc
/// (mod 2^32)`, returning the new state.
///
/// Kept for parity with the island rules (multiplier 1103515245, increment
/// 12345; see `docs/background.md`).
/// Its low bits are weak (bit 0 alternates), so prefer [`Pcg32`] for new sims.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lcg32 {
    state: u32,
    mul: u32,
    inc: u32,
}

impl Lcg32 {
    /// The island rules' multiplier, 1103515245.
    pub const SEED_MULTIPLIER: u32 = 1_103_515_245;
    /// The island rules' increment, 12345.
    pub const SEED_INCREMENT: u32 = 12_345;

    /// A generator with the given seed and parameters.
    #[must_use]
    pub const fn new(seed: u32, mul: u32, inc: u32) -> Lcg32 {
        Lcg32 {
            state: seed,
            mul,
            inc,
        }
    }

    /// Advances one step and returns the new state.
    pub const fn next_u32(&mut self) -> u32 {
        self.state = self.state.wrapping_mul(self.mul).wrapping_add(self.inc);
        self.state
    }

    /// The current state.
    #[must_use]
    pub const fn state(&self) -> u32 {
        self.state
    }
}

/// PCG-XSH-RR 64/32 (O'Neill, 2014): 64-bit LCG state, 32-bit output through
/// an xorshift and a data-dependent rotation. Small, fast, and statistically
/// far better than [`Lcg32`]; its reference implementation gives us
/// independent golden vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pcg32 {
    state: u64,
    inc: u64,
}

const PCG_MULTIPLIER: u64 = 6_364_136_223_846_793_005;

impl Pcg32 {
    /// Seeds the generator like the reference `pcg32_srandom_r(seed, stream)`.
    /// Different `stream` values give independent sequences.
    #[must_use]
    pub const fn new(seed: u64, stream: u64) -> Pcg32 {
        let mut rng = Pcg32 {
            state: 0,
            inc: (stream << 1) | 1,
        };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(seed);
        rng.next_u32();
        rng
    }

    /// The generator's internal `(state, increment)`, for checksums and
    /// snapshots: two generators with equal parts produce equal sequences.
    #[must_use]
    pub const fn parts(&self) -> (u64, u64) {
        (self.state, self.inc)
    }

    /// The generator with these [`Pcg32::parts`] (a snapshot read back);
    /// `None` for an even increment, which no seeding produces.
    #[must_use]
    pub const fn from_parts(state: u64, inc: u64) -> Option<Pcg32> {
        if inc & 1 == 0 {
            return None;
        }
        Some(Pcg32 { state, inc })
    }

    /// The next 32 random bits.
    pub const fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(PCG_MULTIPLIER).wrapping_add(self.inc);
        #[allow(
            clippy::cast_possible_truncation,
            reason = "PCG output function truncates by design"
        )]
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// The next 64 random bits (two outputs, high word first).
    pub const fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        (hi << 32) | self.next_u32() as u64
    }

    /// A uniform integer in `0..bound` without modulo bias (Lemire's method
    /// with rejection). Returns 0 when `bound` is 0.
    pub const fn below(&mut self, bound: u32) -> u32 {
        if bound == 0 {
            return 0;
        }
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let m = self.next_u32() as u64 * bound as u64;
            #[allow(clippy::cast_possible_truncation, reason = "low word of the product")]
            if (m as u32) >= threshold {
                return (m >> 32) as u32;
            }
        }
    }

    /// A uniform integer in `lo..=hi` (returns `lo` when `hi <= lo`).
    pub const fn range_i32(&mut self, lo: i32, hi: i32) -> i32 {
        if hi <= lo {
            return lo;
        }
        let span = hi.abs_diff(lo);
        if span == u32::MAX {
            return self.next_u32().cast_signed();
        }
        lo.wrapping_add_unsigned(self.below(span + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcg_matches_island_rules_sequence() {
        // The island rules' golden digest ends with rng = 3492529440 after 100
        // steps from 20261012.
        let mut r = Lcg32::new(20_261_012, Lcg32::SEED_MULTIPLIER, Lcg32::SEED_INCREMENT);
        let mut last = 0;
        for _ in 0..100 {
            last = r.next_u32();
        }
        assert_eq!(last, 3_492_529_440);
    }

    #[test]
    fn lcg_first_outputs_by_hand() {
        // (1 * 1103515245 + 12345) mod 2^32 = 1103527590, then
        // (1103527590 * 1103515245 + 12345) mod 2^32 = 2524885223.
        let mut r = Lcg32::new(1, Lcg32::SEED_MULTIPLIER, Lcg32::SEED_INCREMENT);
        assert_eq!(r.next_u32(), 1_103_527_590);
        assert_eq!(r.next_u32(), 2_524_885_223);
    }

    #[test]
    fn pcg32_reference_vectors() {
        // pcg32-demo from pcg-c-basic, `pcg32_srandom_r(&rng, 42u, 54u)`.
        let mut r = Pcg32::new(42, 54);
        let got: [u32; 6] = core::array::from_fn(|_| r.next_u32());
        assert_eq!(
            got,
            [
                0xa15c_02b7,
                0x7b47_f409,
                0xba1d_3330,
                0x83d2_f293,
                0xbfa4_784b,
                0xcbed_606e
            ]
        );
    }

    #[test]
    fn parts_follow_the_reference_seeding() {
        // pcg32_srandom_r(42, 54): inc = 54*2+1 = 109; state = (0*M + 109 + 42)*M + 109 (mod 2^64).
        let r = Pcg32::new(42, 54);
        let m = PCG_MULTIPLIER;
        let expected = 109u64.wrapping_add(42).wrapping_mul(m).wrapping_add(109);
        assert_eq!(r.parts(), (expected, 109));
    }

    #[test]
    fn below_is_in_range_and_unbiased_enough() {
        let mut r = Pcg32::new(1, 2);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[r.below(6) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(r.below(0), 0);
        for _ in 0..1000 {
            let v = r.range_i32(-3, 3);
            assert!((-3..=3).contains(&v));
        }
        assert_eq!(r.range_i32(5, 5), 5);
    }
}
