//! Steering: every live enemy turns toward its nearest hero, slowed by its
//! crowd, its speed capped; the step's first pass over the enemies.

use super::HordeWorld;
use crate::horde::fixed::{oct_len, oct_len_i32};
use crate::horde::grid::{Body, Bounds};
use crate::horde::hero::Targets;
use crate::horde::par;

impl HordeWorld {
    /// Velocity toward the nearest hero that is up (lerp by
    /// `2^-steerShift`, speed capped), then position += velocity, clamped to
    /// the field. An enemy with `c`
    /// overlapping neighbours last tick wants `speed · (K − min(c, K)) / K`
    /// (`K = crowdLimit`; 0 turns this off): a packed crowd stops driving
    /// inward, which bounds its density. Returns the live enemies' bounding
    /// box (for the grid) when `boxed`, else [`Bounds::EMPTY`]: a tick
    /// without separation builds no grid, and skips the box's four
    /// comparisons per enemy.
    pub(super) fn steer(&mut self, boxed: bool) -> Bounds {
        let c = Steer {
            targets: Targets::of(&self.heroes[..self.players]),
            speed: self.p.enemy_speed,
            want: &self.want[..],
            shift: self.p.steer_shift,
            max_x: self.p.max_x,
            max_y: self.p.max_y,
        };
        let e = &mut self.e;
        let n = e.hp.len();
        let part = ((&mut e.body[..], &mut e.vel[..]), (&e.hp[..], &e.crowd[..]));
        par::pieces(
            par::enabled(n),
            part,
            0,
            n,
            &|_, ((body, vel), (hp, crowd))| {
                if boxed {
                    c.run::<true>(body, vel, hp, crowd)
                } else {
                    c.run::<false>(body, vel, hp, crowd)
                }
            },
            &|a: Bounds, b| a.union(b),
        )
    }
}

/// What steering needs besides the enemies (see [`HordeWorld::steer`]).
struct Steer<'a> {
    targets: Targets,
    speed: i64,
    want: &'a [i64],
    shift: u32,
    max_x: i32,
    max_y: i32,
}

/// Enemies steered a block at a time: four short loops over a block that
/// stays in L1, with room for its wanted velocities and its list of enemies
/// over the speed cap on the stack.
const BLOCK: usize = 256;

impl Steer<'_> {
    /// Velocity toward the nearest hero that is up (lerp by
    /// `2^-steerShift`, speed capped), then position += velocity, clamped to
    /// the field. Each enemy depends on its own state and the heroes only.
    /// Returns the live enemies' bounding box when `BOX`, else
    /// [`Bounds::EMPTY`].
    fn run<const BOX: bool>(
        &self,
        body: &mut [Body],
        vel: &mut [[i32; 2]],
        hp: &[i32],
        crowd: &[u16],
    ) -> Bounds {
        let blocks = body
            .chunks_mut(BLOCK)
            .zip(vel.chunks_mut(BLOCK))
            .zip(hp.chunks(BLOCK).zip(crowd.chunks(BLOCK)));
        let mut live = Bounds::EMPTY;
        for ((body, vel), (hp, crowd)) in blocks {
            live = live.union(self.block::<BOX>(body, vel, hp, crowd));
        }
        live
    }

    /// [`Steer::run`] for at most [`BLOCK`] enemies, in four passes:
    ///
    /// 1. every live enemy's wanted velocity ([`Steer::wanted`]), kept on
    ///    the stack;
    /// 2. its new velocity before the cap (between its old velocity and the
    ///    wanted one), stored, and its slot listed if that is over the cap,
    ///    without a branch;
    /// 3. the listed enemies' velocities capped;
    /// 4. every live enemy moved.
    ///
    /// About one enemy in eight is over the cap, at random, so a branch on
    /// it mispredicted, and each mispredict also threw away the next
    /// enemies' divisions in flight; without it the divisions overlap.
    /// Passes 1 and 2 were one loop, which held more values than x86-64 has
    /// registers and reloaded a dozen from the stack per enemy: as two,
    /// restore + 8 ticks runs 3.3 % fewer instructions and 5 % faster
    /// (`docs/benchmarks.md`, round 21). The same values as one pass, enemy
    /// by enemy.
    fn block<const BOX: bool>(
        &self,
        body: &mut [Body],
        vel: &mut [[i32; 2]],
        hp: &[i32],
        crowd: &[u16],
    ) -> Bounds {
        let n = body.len().min(BLOCK);
        let mut wanted = [[0i32; 2]; BLOCK];
        let (body_n, hp_n, crowd_n) = (&body[..n], &hp[..n], &crowd[..n]);
        // One hero up (always, in a one-hero world): chosen once per block,
        // not tested per enemy.
        if let Some(hero) = self.targets.single() {
            self.wanted(body_n, hp_n, crowd_n, &mut wanted, |_| hero);
        } else {
            self.wanted(body_n, hp_n, crowd_n, &mut wanted, |pos| {
                self.targets.nearest(pos.x, pos.y)
            });
        }
        // At most 2^14 (`enemySpeed`).
        let speed_u32 = u32::try_from(self.speed).unwrap_or(u32::MAX);
        let mut over = [0u8; BLOCK];
        let mut n_over = 0;
        let (vel_n, shift) = (&mut vel[..n], self.shift);
        // By index: the iterator form carried the index through the skip of
        // the dead in a register more and spent six instructions a slot
        // rebuilding it.
        for i in 0..n {
            if hp_n[i] <= 0 {
                continue;
            }
            let (v, w) = (vel_n[i], wanted[i]);
            // Each between the old velocity (below 2^21) and the wanted one
            // (at most `want`, 2^14): in `i32`.
            let nvx = v[0] + ((w[0] - v[0]) >> shift);
            let nvy = v[1] + ((w[1] - v[1]) >> shift);
            vel_n[i] = [nvx, nvy];
            // `n_over <= i < BLOCK` here: the mask changes nothing and spares
            // a bounds check.
            #[allow(clippy::cast_possible_truncation, reason = "i < BLOCK <= 256")]
            {
                over[n_over & (BLOCK - 1)] = i as u8;
            }
            n_over += usize::from(oct_len_i32(nvx, nvy) > speed_u32);
        }
        let speed = self.speed;
        for &i in &over[..n_over] {
            let v = &mut vel[usize::from(i)];
            let (nvx, nvy) = (i64::from(v[0]), i64::from(v[1]));
            // v * speed / vlen with one division; `/ 2^32` truncates toward
            // zero, so the result stays within the cap (|v| <= speed <=
            // 2^14: fits).
            let k = (((speed as u64) << 32) / oct_len(nvx, nvy)).cast_signed();
            *v = [(nvx * k / (1 << 32)) as i32, (nvy * k / (1 << 32)) as i32];
        }
        let mut live = Bounds::EMPTY;
        for ((pos, vel), &h) in body[..n].iter_mut().zip(&*vel).zip(hp) {
            if h <= 0 {
                continue;
            }
            // A position on the field (below 2^28) plus a velocity below
            // 2^21 fits an `i32`: no widening, and the compiler moves both
            // axes in one vector register. Restore + 8 ticks 3 % faster than
            // the same in `i64` (`docs/benchmarks.md`, round 21).
            pos.x = (pos.x + vel[0]).clamp(0, self.max_x);
            pos.y = (pos.y + vel[1]).clamp(0, self.max_y);
            if BOX {
                live.add(pos.x, pos.y);
            }
        }
        live
    }

    /// Pass 1 of [`Steer::block`]: each live enemy's wanted velocity,
    /// toward `hero(enemy)` at the speed its crowd allows (`want`), into
    /// `out` (the dead keep whatever is there; pass 2 skips them).
    ///
    /// In `i32` up to the division: an enemy and its hero stand on the
    /// field (below 2^28); the snapshot reader refuses an enemy off it. The
    /// same values as in `i64` (the tests' one-pass reference), with no
    /// widening (`docs/benchmarks.md`, round 21).
    #[inline(always)]
    fn wanted(
        &self,
        body: &[Body],
        hp: &[i32],
        crowd: &[u16],
        out: &mut [[i32; 2]; BLOCK],
        hero: impl Fn(&Body) -> (i32, i32),
    ) {
        let most = self.want.len() - 1;
        for ((pos, w), (&h, &c)) in body.iter().zip(out.iter_mut()).zip(hp.iter().zip(crowd)) {
            if h <= 0 {
                continue;
            }
            let want = self.want[usize::from(c).min(most)];
            let (px, py) = hero(pos);
            let (dx, dy) = (px - pos.x, py - pos.y);
            let len = oct_len_i32(dx, dy);
            // desired = d * want / len, as one division: k = want * 2^32 / len.
            // |d| <= len makes |d * k| <= want * 2^32 < 2^47, and the
            // quotient |d * k / 2^32| <= want <= 2^14. On the hero (len 0)
            // the desired velocity is zero.
            *w = match ((want as u64) << 32).checked_div(u64::from(len)) {
                Some(k) => {
                    let k = k.cast_signed();
                    let scale = |d: i32| ((i64::from(d) * k) >> 32) as i32;
                    [scale(dx), scale(dy)]
                }
                None => [0, 0],
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use tickwise::Pcg32;

    use super::*;
    use crate::horde::hero::{Hero, MAX_HEROES};
    use crate::horde::rules::{MAX_ENEMY_VELOCITY, clamp_i32};

    /// Steering in one pass, enemy by enemy, with the cap as a branch: the
    /// form the golden digests were made with, as the reference for the
    /// blocks' four passes.
    fn one_pass(
        s: &Steer<'_>,
        body: &mut [Body],
        vel: &mut [[i32; 2]],
        hp: &[i32],
        crowd: &[u16],
    ) -> Bounds {
        let mut live = Bounds::EMPTY;
        for ((pos, vel), (&h, &c)) in body
            .iter_mut()
            .zip(vel.iter_mut())
            .zip(hp.iter().zip(crowd))
        {
            if h <= 0 {
                continue;
            }
            let want = s.want[usize::from(c).min(s.want.len() - 1)];
            let (x, y) = (i64::from(pos.x), i64::from(pos.y));
            let (px, py) = s.targets.nearest(pos.x, pos.y);
            let (dx, dy) = (i64::from(px) - x, i64::from(py) - y);
            let (wx, wy) = match ((want as u64) << 32).checked_div(oct_len(dx, dy)) {
                Some(k) => ((dx * k.cast_signed()) >> 32, (dy * k.cast_signed()) >> 32),
                None => (0, 0),
            };
            let (vx, vy) = (i64::from(vel[0]), i64::from(vel[1]));
            let mut nvx = vx + ((wx - vx) >> s.shift);
            let mut nvy = vy + ((wy - vy) >> s.shift);
            let vlen = oct_len(nvx, nvy);
            if vlen > s.speed as u64 {
                let k = (((s.speed as u64) << 32) / vlen).cast_signed();
                nvx = nvx * k / (1 << 32);
                nvy = nvy * k / (1 << 32);
            }
            *vel = [i32::try_from(nvx).unwrap(), i32::try_from(nvy).unwrap()];
            pos.x = clamp_i32(i64::from(pos.x) + nvx, s.max_x);
            pos.y = clamp_i32(i64::from(pos.y) + nvy, s.max_y);
            live.add(pos.x, pos.y);
        }
        live
    }

    /// Random worlds of up to three blocks and a bit: positions and
    /// velocities on the field at play speeds, or at the limits a rejoin
    /// snapshot may carry (the largest field, its edges, velocities up to
    /// [`MAX_ENEMY_VELOCITY`]), a tenth of the enemies dead, one to four
    /// heroes, on or off an enemy's spot. Every enemy's velocity and
    /// position and the box agree with [`one_pass`] (in `i64`), bit for
    /// bit; both forms of the box (none, and the live box) move the same
    /// enemies. A debug build checks every `i32` sum for overflow.
    #[test]
    fn blocks_move_every_enemy_as_one_pass_does() {
        let mut r = Pcg32::new(0x57ee_2026, 3);
        let mut capped = 0;
        for case in 0..300 {
            let hostile = case % 3 == 0;
            let largest = i32::try_from(crate::horde::MAX_FIELD_PX * 256 - 1).unwrap();
            let (max_x, max_y) = if hostile {
                (largest, r.range_i32(1, largest))
            } else {
                (r.range_i32(1, 1 << 20), r.range_i32(1, 1 << 20))
            };
            let speed = i64::from(r.range_i32(0, 1 << 14));
            let want: Vec<i64> = (0..=r.below(6))
                .map(|c| speed * 6 / (6 + i64::from(c)))
                .collect();
            // One of three at an edge, when hostile.
            let pick = |r: &mut Pcg32, lo: i32, hi: i32| match r.below(3) {
                0 if hostile => lo,
                1 if hostile => hi,
                _ => r.range_i32(lo, hi),
            };
            let coord = |r: &mut Pcg32, hi: i32| pick(r, 0, hi);
            let heroes: Vec<Hero> = (0..r.range_i32(1, MAX_HEROES as i32))
                .map(|_| Hero {
                    x: r.range_i32(0, max_x),
                    y: r.range_i32(0, max_y),
                    hp: i64::from(r.range_i32(-1, 3)).max(i64::from(case % 2)),
                    ..Hero::default()
                })
                .collect();
            let n = r.below(3 * BLOCK as u32 + 40) as usize;
            let mut body: Vec<Body> = (0..n as u32)
                .map(|id| Body {
                    x: coord(&mut r, max_x),
                    y: coord(&mut r, max_y),
                    id,
                })
                .collect();
            if let (Some(b), Some(h)) = (body.first_mut(), heroes.first()) {
                (b.x, b.y) = (h.x, h.y);
            }
            let v = |r: &mut Pcg32| {
                if hostile {
                    pick(r, -MAX_ENEMY_VELOCITY, MAX_ENEMY_VELOCITY)
                } else {
                    r.range_i32(-2 * speed as i32, 2 * speed as i32)
                }
            };
            let mut vel: Vec<[i32; 2]> = (0..n).map(|_| [v(&mut r), v(&mut r)]).collect();
            let hp: Vec<i32> = (0..n).map(|_| r.range_i32(-1, 8)).collect();
            let crowd: Vec<u16> = (0..n).map(|_| r.below(9) as u16).collect();
            let s = Steer {
                targets: Targets::of(&heroes),
                speed,
                want: &want,
                shift: r.below(5),
                max_x,
                max_y,
            };
            let (mut b1, mut v1) = (body.clone(), vel.clone());
            let want_box = one_pass(&s, &mut b1, &mut v1, &hp, &crowd);
            let (mut b2, mut v2) = (body.clone(), vel.clone());
            assert_eq!(
                s.run::<true>(&mut b2, &mut v2, &hp, &crowd),
                want_box,
                "case {case}"
            );
            assert_eq!((&b2, &v2), (&b1, &v1), "case {case}");
            assert_eq!(
                s.run::<false>(&mut body, &mut vel, &hp, &crowd),
                Bounds::EMPTY
            );
            assert_eq!((&body, &vel), (&b1, &v1), "case {case}");
            capped += v1
                .iter()
                .filter(|v| oct_len(v[0].into(), v[1].into()) == speed as u64)
                .count();
        }
        // The cap was reached, not only approached (a sample of the pass 2).
        assert!(capped > 1000, "{capped}");
    }
}
