//! Reading a world: what a game draws and checks (ticks, heroes, enemies
//! by id, counters), and what the kernel reads through [`Sim`] and
//! [`Capture`] (the state visit behind the checksum, the digest line, the
//! snapshot a renderer interpolates). Nothing here changes a world.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use tickwise::{Capture, Sim, StateVisitor, TickInput};

use super::HordeWorld;
use crate::horde::hero::{HERO_FIELDS, Hero};
use crate::horde::snapshot::HordeSnapshot;

/// One enemy as seen from outside, by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enemy {
    /// x in 1/256 px.
    pub x: i32,
    /// y in 1/256 px (down positive).
    pub y: i32,
    /// Velocity x in 1/256 px per tick.
    pub vx: i32,
    /// Velocity y in 1/256 px per tick.
    pub vy: i32,
    /// Hit points; alive when positive. A dead enemy keeps its last position.
    pub hp: i32,
}

impl HordeWorld {
    /// Ticks run.
    #[must_use]
    pub const fn tick(&self) -> u64 {
        self.tick
    }
    /// The heroes, by player index ([`HordeWorld::players`] of them).
    #[must_use]
    pub fn heroes(&self) -> &[Hero] {
        &self.heroes[..self.players]
    }
    /// Hero `i`, or `None` past [`HordeWorld::players`].
    #[must_use]
    pub fn hero(&self, i: usize) -> Option<Hero> {
        self.heroes().get(i).copied()
    }
    /// How often every hero was down at once: the game was over, and all
    /// heroes got up (so a run never ends). A game ends its match at the
    /// first wipe.
    #[must_use]
    pub const fn wipes(&self) -> u64 {
        self.wipes
    }
    /// Hero 0's x in 1/256 px (the one-player name).
    #[must_use]
    pub const fn player_x(&self) -> i32 {
        self.heroes[0].x
    }
    /// Hero 0's y in 1/256 px (down positive).
    #[must_use]
    pub const fn player_y(&self) -> i32 {
        self.heroes[0].y
    }
    /// Hero 0's hit points.
    #[must_use]
    pub const fn player_hp(&self) -> i64 {
        self.heroes[0].hp
    }
    /// How often hero 0's hit points ran out (with one hero: each time it is
    /// restored).
    #[must_use]
    pub const fn player_downs(&self) -> u64 {
        self.heroes[0].downs
    }
    /// Enemies killed so far.
    #[must_use]
    pub const fn kills(&self) -> u64 {
        self.kills
    }
    /// Respawn waves so far (the initial spawn is not counted).
    #[must_use]
    pub const fn waves(&self) -> u64 {
        self.waves
    }
    /// Enemies (alive or dead); ids are `0..enemy_count()`.
    #[must_use]
    pub fn enemy_count(&self) -> usize {
        self.slot_of.len()
    }
    /// Enemies alive.
    #[must_use]
    pub const fn alive(&self) -> u32 {
        self.alive
    }
    /// Overlapping enemy pairs the last separation pass found (a tick
    /// without one, see `separationTicks`, keeps the count of the pass
    /// before).
    #[must_use]
    pub const fn last_pairs(&self) -> u64 {
        self.last_pairs
    }
    /// Contacts in the last tick, summed over the heroes (an enemy touching
    /// two heroes counts twice).
    #[must_use]
    pub const fn last_contacts(&self) -> u32 {
        self.last_contacts
    }
    /// Enemy `id`, or `None` past [`HordeWorld::enemy_count`].
    #[must_use]
    pub fn enemy(&self, id: usize) -> Option<Enemy> {
        self.slot_of.of(&self.e.body).get(id).map(|k| self.at(k))
    }
    /// All enemies in id order.
    pub fn enemies(&self) -> impl ExactSizeIterator<Item = Enemy> + '_ {
        self.slot_of.of(&self.e.body).iter().map(|k| self.at(k))
    }
    /// Field width in 1/256 px.
    #[must_use]
    pub const fn field_width(&self) -> i32 {
        self.p.max_x + 1
    }
    /// Field height in 1/256 px.
    #[must_use]
    pub const fn field_height(&self) -> i32 {
        self.p.max_y + 1
    }

    /// The enemy in storage slot `k`.
    fn at(&self, k: usize) -> Enemy {
        let e = &self.e;
        Enemy {
            x: e.body[k].x,
            y: e.body[k].y,
            vx: e.vel[k][0],
            vy: e.vel[k][1],
            hp: e.hp[k],
        }
    }
}

impl Sim for HordeWorld {
    type Input = TickInput;

    /// One hero per player: hero `p` moves by `inputs[p]` only.
    fn players(&self) -> usize {
        HordeWorld::players(self)
    }

    /// The co-op step ([`HordeWorld::step_players`]).
    fn step(&mut self, inputs: &[TickInput]) {
        self.step_players(inputs);
    }

    /// Scalars, then each enemy array in id order (never storage order, which
    /// is the grid's business).
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("tick");
        v.value(self.tick);
        v.field("rng");
        let (state, inc) = self.rng.parts();
        v.value(state);
        v.value(inc);
        for (h, names) in self.heroes().iter().zip(HERO_FIELDS) {
            let values = [
                i64::from(h.x),
                i64::from(h.y),
                h.hp,
                h.downs.cast_signed(),
                i64::from(h.invuln),
                i64::from(h.attack_timer),
            ];
            for (name, value) in names.into_iter().zip(values) {
                v.field(name);
                v.value_i64(value);
            }
        }
        v.field("kills");
        v.value(self.kills);
        v.field("waves");
        v.value(self.waves);
        v.field("alive");
        v.value(u64::from(self.alive));
        v.field("lastPairs");
        v.value(self.last_pairs);
        v.field("lastContacts");
        v.value(u64::from(self.last_contacts));
        // Only with two heroes or more: with one, a wipe is hero 0's down,
        // and the values visited stay version 2's.
        if self.players > 1 {
            v.field("wipes");
            v.value(self.wipes);
        }
        let e = &self.e;
        let fields: [(&'static str, &dyn Fn(usize) -> i64); 6] = [
            ("enemyX", &|k| i64::from(e.body[k].x)),
            ("enemyY", &|k| i64::from(e.body[k].y)),
            ("enemyVx", &|k| i64::from(e.vel[k][0])),
            ("enemyVy", &|k| i64::from(e.vel[k][1])),
            ("enemyHp", &|k| i64::from(e.hp[k])),
            ("enemyCrowd", &|k| i64::from(e.crowd[k])),
        ];
        for (name, get) in fields {
            v.field(name);
            for k in self.slot_of.of(&e.body).iter() {
                v.value_i64(get(k));
            }
        }
    }

    /// `tick|alive|kills|hp|downs|checksum` with the checksum in 16 hex
    /// digits: the counters a person reads, and the hash that pins
    /// everything else. `hp` and `downs` list every hero's, comma-separated.
    fn digest(&self) -> String {
        let list =
            |f: fn(&Hero) -> String| self.heroes().iter().map(f).collect::<Vec<_>>().join(",");
        format!(
            "{}|{}|{}|{}|{}|{:016x}",
            self.tick,
            self.alive,
            self.kills,
            list(|h| h.hp.to_string()),
            list(|h| h.downs.to_string()),
            self.checksum()
        )
    }
}

impl Capture for HordeWorld {
    type Snapshot = HordeSnapshot;

    fn capture_into(&self, out: &mut HordeSnapshot) {
        out.fill(
            self.tick,
            self.heroes(),
            self.slot_of.of(&self.e.body).iter().map(|k| {
                let b = self.e.body[k];
                ([b.x, b.y], self.e.hp[k] > 0)
            }),
        );
    }

    fn capture(&self) -> HordeSnapshot {
        let mut s = HordeSnapshot::default();
        self.capture_into(&mut s);
        s
    }
}
