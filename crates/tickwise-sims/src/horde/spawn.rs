//! Where waves put enemies: a square ring around the player, sized to the horde.

use tickwise::Pcg32;

use super::fixed::SUBPX;

/// The spawn band: the points whose Chebyshev distance from the player is in
/// `inner..=outer` (sub-pixels).
///
/// `inner` is the config's `spawnDistance` (enemies appear off screen);
/// `outer` is the smallest whole pixel count with
/// `4·(outer² − inner²) > enemies · spawnSpacing²`, so the band has room for
/// the whole horde at the configured spacing: 300 enemies get a thin ring,
/// 100,000 a thick one, and neither starts as one overlapping pile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SpawnBand {
    inner_px: u32,
    outer_px: u32,
}

impl SpawnBand {
    /// The band for `enemies` at `spacing_px` outside `distance_px`.
    pub(super) fn new(distance_px: u32, spacing_px: u32, enemies: u32) -> SpawnBand {
        let inner = u64::from(distance_px);
        let need = (u64::from(enemies) * u64::from(spacing_px) * u64::from(spacing_px)).div_ceil(4);
        // inner <= 10^6 and need <= 2.5 * 10^11: no overflow, and outer < 2^21.
        let outer = (inner * inner + need).isqrt() + 1;
        SpawnBand {
            inner_px: distance_px,
            outer_px: u32::try_from(outer).unwrap_or(u32::MAX / 8),
        }
    }

    /// The outer half-size in pixels.
    pub(super) const fn outer_px(self) -> u32 {
        self.outer_px
    }

    /// A point of the band, as an offset from the player in sub-pixels.
    ///
    /// Three draws: a side (north and south strips are `2·outer` long, west
    /// and east `2·inner`, so a side's chance is its length), a position along
    /// it and one across it. Uniform over the band up to the corners' shares.
    pub(super) fn sample(self, rng: &mut Pcg32) -> (i64, i64) {
        let (i, o) = (self.inner_px, self.outer_px);
        let side = rng.below(4 * (o + i));
        let sub = SUBPX.cast_unsigned();
        let across = i64::from(rng.below((o - i) * sub)) + i64::from(i * sub);
        let (long, half) = if side < 4 * o {
            (2 * o * sub, o)
        } else {
            (2 * i * sub, i)
        };
        let along = i64::from(rng.below(long)) - i64::from(half * sub);
        match side {
            s if s < 2 * o => (along, -across),
            s if s < 4 * o => (along, across),
            s if s < 4 * o + 2 * i => (-across, along),
            _ => (across, along),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn band_sizes_by_hand() {
        // 300 enemies at 16 px outside 400 px: need = 300*256/4 = 19200,
        // isqrt(160000 + 19200) = 423 (423^2 = 178929, 424^2 = 179776), + 1.
        assert_eq!(SpawnBand::new(400, 16, 300).outer_px(), 424);
        // 100,000 enemies: need = 6,400,000; isqrt(6,560,000) = 2561.
        assert_eq!(SpawnBand::new(400, 16, 100_000).outer_px(), 2562);
        // No inner distance: a square of side 2*outer holding the horde.
        assert_eq!(SpawnBand::new(0, 10, 4).outer_px(), 11);
    }

    #[test]
    fn samples_stay_in_the_band_and_reach_every_side() {
        let band = SpawnBand::new(400, 16, 300);
        let mut rng = Pcg32::new(9, 9);
        let (inner, outer) = (400 * 256, 424 * 256);
        let mut sides = [0u32; 4];
        for _ in 0..20_000 {
            let (dx, dy) = band.sample(&mut rng);
            let cheb = dx.abs().max(dy.abs());
            assert!((inner..=outer).contains(&cheb), "({dx}, {dy})");
            let side = if dy <= -inner {
                0
            } else if dy >= inner {
                1
            } else if dx < 0 {
                2
            } else {
                3
            };
            sides[side] += 1;
        }
        // Each side's share is its length: 848 / 848 / 800 / 800 of 3296.
        for (got, want) in sides.iter().zip([848u32, 848, 800, 800]) {
            let expect = 20_000 * want / 3296;
            assert!(got.abs_diff(expect) < 300, "{sides:?}");
        }
    }

    #[test]
    fn zero_inner_distance_never_divides_by_zero() {
        let band = SpawnBand::new(0, 1, 1);
        let mut rng = Pcg32::new(1, 1);
        for _ in 0..1000 {
            let (dx, dy) = band.sample(&mut rng);
            assert!(dx.abs().max(dy.abs()) <= 2 * 256);
        }
    }
}
