//! The horde's per-tick rules that the grid world and the all-pairs
//! reference share: the constants a tick uses ([`Params`]), one pair's push
//! and applying a summed push, and one hero's strike on one enemy.
//!
//! A module of its own so that the world, the separation pass and the
//! reference all depend on it and none of them on another: the same rules,
//! one copy, no loop of imports.

use super::HordeConfig;
use super::fixed::SeparationKernel;
use super::grid::Body;
use super::hero::{Hero, MAX_HEROES};

/// Per-tick constants derived from the config, in sub-pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Params {
    pub(super) max_x: i32,
    pub(super) max_y: i32,
    pub(super) player_speed: i64,
    pub(super) player_hp: i64,
    pub(super) invuln_ticks: u32,
    pub(super) contact_r: i64,
    pub(super) attack_r: i64,
    pub(super) attack_damage: i32,
    pub(super) attack_cooldown: u32,
    pub(super) enemy_speed: i64,
    pub(super) enemy_hp: i32,
    pub(super) contact_damage: i64,
    pub(super) steer_shift: u32,
    pub(super) crowd_limit: u16,
    pub(super) max_push: i32,
    /// Ticks from one separation pass to the next, `1..=64`; also what a
    /// pass's clamped push is multiplied by.
    pub(super) separation_ticks: u64,
    pub(super) wave_ticks: u64,
}

impl Params {
    /// Whether tick `tick` runs the separation pass: every
    /// `separationTicks`-th tick, from tick 0.
    pub(super) const fn separates(&self, tick: u64) -> bool {
        tick.is_multiple_of(self.separation_ticks)
    }

    /// The most a separation pass moves an enemy per axis:
    /// `maxPush · separationTicks` (at most 2^14 · 64 = 2^20).
    pub(super) const fn max_step_push(&self) -> i64 {
        self.max_push as i64 * self.separation_ticks as i64
    }

    /// The constants of a world of `cfg`, in sub-pixels.
    pub(super) fn of(cfg: &HordeConfig) -> Params {
        let sub = |px: u32| HordeConfig::subpx(px);
        let to_i32 = |v: i64| i32::try_from(v).unwrap_or(i32::MAX);
        Params {
            max_x: to_i32(sub(cfg.field_width) - 1),
            max_y: to_i32(sub(cfg.field_height) - 1),
            player_speed: i64::from(cfg.player_speed),
            player_hp: i64::from(cfg.player_hp),
            invuln_ticks: cfg.invuln_ticks,
            contact_r: sub(cfg.player_radius + cfg.enemy_radius),
            attack_r: sub(cfg.attack_radius),
            attack_damage: i32::try_from(cfg.attack_damage).unwrap_or(i32::MAX),
            attack_cooldown: cfg.attack_cooldown_ticks.max(1),
            enemy_speed: i64::from(cfg.enemy_speed),
            enemy_hp: i32::try_from(cfg.enemy_hp).unwrap_or(i32::MAX),
            contact_damage: i64::from(cfg.contact_damage),
            steer_shift: cfg.steer_shift,
            crowd_limit: u16::try_from(cfg.crowd_limit).unwrap_or(u16::MAX),
            max_push: i32::try_from(cfg.max_push).unwrap_or(i32::MAX),
            separation_ticks: u64::from(cfg.separation_ticks.max(1)),
            wave_ticks: u64::from(cfg.wave_ticks.max(1)),
        }
    }
}

/// No run moves an enemy faster than this on an axis: steering leaves each
/// axis within `enemySpeed` (at most 2^14, its cap), and a separation pass
/// adds at most `maxPush · separationTicks` (at most 2^20). A rejoin
/// snapshot with a faster enemy is refused, so steering adds a velocity to
/// a position (on the field, below 2^28) in `i32`.
pub(super) const MAX_ENEMY_VELOCITY: i32 = 1 << 21;

/// `v` clamped into `0..=hi`.
pub(super) const fn clamp_i32(v: i64, hi: i32) -> i32 {
    if v < 0 {
        0
    } else if v > hi as i64 {
        hi
    } else {
        v as i32
    }
}

/// One enemy's separation sum: its push and how many enemies overlap it.
/// Wrapping additions commute, so the sum does not depend on the order pairs
/// are found in. The count cannot wrap: it is below the enemy count (at most
/// a million).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Push {
    pub(super) x: i32,
    pub(super) y: i32,
    pub(super) near: u32,
}

impl Push {
    pub(super) const ZERO: Push = Push {
        x: 0,
        y: 0,
        near: 0,
    };

    #[inline]
    pub(super) const fn add(&mut self, o: Push) {
        self.x = self.x.wrapping_add(o.x);
        self.y = self.y.wrapping_add(o.y);
        self.near = self.near.wrapping_add(o.near);
    }
}

/// The push on the first enemy of a pair at offset `d` from the second, with
/// `0 <= d2 < R²`. Two enemies on the same spot are split along x, the lower
/// id toward −x: the rule depends on ids, never on visiting order.
#[inline]
pub(super) fn pair_push(
    kernel: &SeparationKernel,
    dx: i32,
    dy: i32,
    d2: i64,
    first_is_lower: bool,
) -> (i32, i32) {
    if d2 == 0 {
        let n = kernel.nudge();
        (if first_is_lower { -n } else { n }, 0)
    } else {
        kernel.push(dx, dy, d2)
    }
}

/// Clamps a summed push to `maxPush` per axis and multiplies it by
/// `separationTicks` (a pass stands for that many ticks of pushing), moves
/// the enemy (inside the field) and adds the push to its velocity: velocity
/// is what the enemy actually did, so one held back by the crowd stops
/// driving into it (the next tick's steering caps the speed again).
#[inline]
pub(super) fn apply_push(pos: &mut Body, vel: &mut [i32; 2], (fx, fy): (i32, i32), p: &Params) {
    // 1..=64 (`MAX_SEPARATION_TICKS`).
    #[allow(clippy::cast_possible_truncation, reason = "at most 64")]
    let times = p.separation_ticks as i32;
    let (fx, fy) = (
        fx.clamp(-p.max_push, p.max_push) * times,
        fy.clamp(-p.max_push, p.max_push) * times,
    );
    // Only live enemies get here, steered into the field this tick (0..=max,
    // below 2^28), and |f| <= maxPush · 64 <= 2^20: the sum fits an `i32`,
    // and clamping it there is `clamp_i32`'s value.
    pos.x = (pos.x + fx).clamp(0, p.max_x);
    pos.y = (pos.y + fy).clamp(0, p.max_y);
    // |v| <= enemySpeed <= 2^14 and |f| <= 2^20.
    vel[0] += fx;
    vel[1] += fy;
}

/// What one hero's strike found: its contacts, and the kills it made.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tally {
    pub(super) contacts: u32,
    pub(super) kills: u32,
}

impl Tally {
    /// Two pieces' tallies of one hero together. Neither count can wrap:
    /// each is at most the enemy count (a million).
    #[must_use]
    pub(super) const fn plus(self, o: Tally) -> Tally {
        Tally {
            contacts: self.contacts + o.contacts,
            kills: self.kills + o.kills,
        }
    }
}

/// One enemy (alive when the strike began) against one hero at `(px, py)`:
/// a contact when it touches the hero (even if it died in this strike); the
/// attack's damage when attacking, in range and the enemy still has hit
/// points (a kill when they run out: two heroes never kill one enemy twice).
#[inline]
pub(super) fn strike_one(
    p: &Params,
    attacking: bool,
    (px, py): (i64, i64),
    Body { x, y, .. }: Body,
    hp: &mut i32,
    tally: &mut Tally,
) {
    let (dx, dy) = (i64::from(x) - px, i64::from(y) - py);
    let d2 = dx * dx + dy * dy;
    if attacking && d2 < p.attack_r * p.attack_r && *hp > 0 {
        *hp = hp.saturating_sub(p.attack_damage);
        if *hp <= 0 {
            *hp = 0;
            tally.kills += 1;
        }
    }
    tally.contacts += u32::from(d2 < p.contact_r * p.contact_r);
}

/// One enemy, if alive, against every hero that is up, in hero order
/// ([`strike_one`] each): the enemy-by-enemy strike of the reference and of
/// a tick without separation.
#[inline]
pub(super) fn strike_enemy(
    p: &Params,
    heroes: &[Hero],
    pos: Body,
    hp: &mut i32,
    tally: &mut [Tally; MAX_HEROES],
) {
    if *hp <= 0 {
        return;
    }
    for (h, t) in heroes.iter().zip(tally.iter_mut()) {
        if h.is_up() {
            let at = (i64::from(h.x), i64::from(h.y));
            strike_one(p, h.attack_timer == 0, at, pos, hp, t);
        }
    }
}
