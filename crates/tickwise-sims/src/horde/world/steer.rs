//! Steering: every live enemy turns toward its nearest hero, slowed by its
//! crowd, its speed capped; the step's first pass over the enemies.

use super::HordeWorld;
use crate::horde::fixed::oct_len;
use crate::horde::grid::{Body, Bounds};
use crate::horde::hero::Targets;
use crate::horde::par;
use crate::horde::rules::clamp_i32;

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
        let mut live = Bounds::EMPTY;
        let most = self.want.len() - 1;
        let (speed, shift) = (self.speed, self.shift);
        let enemies = body
            .iter_mut()
            .zip(vel.iter_mut())
            .zip(hp.iter().zip(crowd));
        for ((pos, vel), (&h, &c)) in enemies {
            if h <= 0 {
                continue;
            }
            let want = self.want[usize::from(c).min(most)];
            let (x, y) = (i64::from(pos.x), i64::from(pos.y));
            let (px, py) = self.targets.nearest(x, y);
            let (dx, dy) = (px - x, py - y);
            let len = oct_len(dx, dy);
            // desired = d * want / len, as one division: k = want * 2^32 / len.
            // |d| <= len makes |d * k| <= want * 2^32 < 2^47. On the hero
            // (len 0) the desired velocity is zero.
            let (wx, wy) = match ((want as u64) << 32).checked_div(len) {
                Some(k) => {
                    let k = k.cast_signed();
                    ((dx * k) >> 32, (dy * k) >> 32)
                }
                None => (0, 0),
            };
            let (vx, vy) = (i64::from(vel[0]), i64::from(vel[1]));
            let mut nvx = vx + ((wx - vx) >> shift);
            let mut nvy = vy + ((wy - vy) >> shift);
            let vlen = oct_len(nvx, nvy);
            if vlen > speed as u64 {
                // v * speed / vlen with one division; `/ 2^32` truncates
                // toward zero, so the result stays within the cap.
                let k = (((speed as u64) << 32) / vlen).cast_signed();
                nvx = nvx * k / (1 << 32);
                nvy = nvy * k / (1 << 32);
            }
            // |v| <= speed <= 2^14: fits.
            *vel = [nvx as i32, nvy as i32];
            // In `i64`: a state read from bytes (a rejoin snapshot) may hold
            // any `i32` position, which this clamps into the field.
            pos.x = clamp_i32(i64::from(pos.x) + nvx, self.max_x);
            pos.y = clamp_i32(i64::from(pos.y) + nvy, self.max_y);
            if BOX {
                live.add(pos.x, pos.y);
            }
        }
        live
    }
}
