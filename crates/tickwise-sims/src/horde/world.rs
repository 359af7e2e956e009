//! The horde world: its state, a new world, and the step's phases (read
//! access, the digest and captures are in `read`).

use alloc::vec;
use alloc::vec::Vec;

use tickwise::{Pcg32, TickInput};

use super::HordeConfig;
use super::fixed::SeparationKernel;
use super::grid::{Body, Bounds, Grid};
use super::hero::{Hero, MAX_HEROES};
use super::par;
use super::rules::{Params, Push, Tally, clamp_i32, strike_one};
use super::separate::Separate;
use super::spawn::SpawnBand;

mod heroes;
mod read;
mod slot_of;
mod steer;

pub use read::Enemy;
use slot_of::SlotOf;

/// The PCG stream the horde draws from (any constant; fixed forever).
const RNG_STREAM: u64 = 0x0004_4f52_4445;

/// How the step finds pairs of enemies and enemies near the player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Neighbours {
    /// The uniform grid: O(n + pairs).
    Grid,
    /// Every pair: O(n²), the reference.
    AllPairs,
}

/// The enemies, structure of arrays, by storage slot. Slot order is an
/// implementation detail (the grid re-sorts slots by cell every tick, so the
/// hot loops walk memory in sequence); an enemy's identity is its `id`, and
/// everything observable (digest, snapshots, accessors, respawn order) goes
/// by id.
#[derive(Debug, Default)]
pub(super) struct Enemies {
    /// Position and id, together: the separation loop reads both per candidate.
    pub(super) body: Vec<Body>,
    pub(super) vel: Vec<[i32; 2]>,
    pub(super) hp: Vec<i32>,
    /// Overlapping neighbours in the last separation (saturating).
    pub(super) crowd: Vec<u16>,
}

impl Clone for Enemies {
    fn clone(&self) -> Enemies {
        Enemies {
            body: self.body.clone(),
            vel: self.vel.clone(),
            hp: self.hp.clone(),
            crowd: self.crowd.clone(),
        }
    }

    /// Reuses the buffers (`Vec::clone_from`): no allocation when the sizes match.
    fn clone_from(&mut self, src: &Enemies) {
        self.body.clone_from(&src.body);
        self.vel.clone_from(&src.vel);
        self.hp.clone_from(&src.hp);
        self.crowd.clone_from(&src.crowd);
    }
}

impl Enemies {
    fn new(n: usize) -> Enemies {
        Enemies {
            body: (0..n as u32).map(|id| Body { x: 0, y: 0, id }).collect(),
            vel: vec![[0; 2]; n],
            hp: vec![0; n],
            crowd: vec![0; n],
        }
    }
}

/// The survivors-style horde: 1 to 4 heroes (one per player) and `enemies`
/// enemies on a field.
///
/// See the [module docs](super) for the rules of one tick. All buffers are
/// allocated by [`HordeWorld::new`]; [`Sim::step`](tickwise::Sim::step) never allocates.
///
/// A clone is the state only: the scratch buffers (grid, back buffer,
/// separation sums; rebuilt by every step) are left out, so a snapshot holds
/// about 30 bytes per enemy, and a clone allocates its scratch on its first
/// step. `Clone::clone_from` copies the state into the world's existing
/// buffers and keeps its scratch, so a rollback session that saves a
/// snapshot every tick and restores into its live world allocates nothing
/// after the first save.
#[derive(Debug)]
pub struct HordeWorld {
    pub(super) p: Params,
    pub(super) kernel: SeparationKernel,
    band: SpawnBand,
    /// `want[min(c, K)]`: the speed an enemy with `c` overlapping neighbours
    /// steers for, `enemySpeed · (K − c) / K` (a table: no division per enemy).
    want: Vec<i64>,
    // State (visited).
    pub(super) tick: u64,
    pub(super) rng: Pcg32,
    /// Heroes in use (`players`, 1..=[`MAX_HEROES`]); fixed when built.
    pub(super) players: usize,
    /// The heroes; only `heroes[..players]` exist.
    pub(super) heroes: [Hero; MAX_HEROES],
    /// Times every hero was down at once.
    pub(super) wipes: u64,
    pub(super) kills: u64,
    pub(super) waves: u64,
    pub(super) alive: u32,
    pub(super) last_pairs: u64,
    pub(super) last_contacts: u32,
    pub(super) e: Enemies,
    /// `slot_of[id]`: where enemy `id` is stored.
    pub(super) slot_of: SlotOf,
    // Scratch, rebuilt every tick; not part of a clone.
    grid: Grid,
    back: Enemies,
    /// Separation sums by slot.
    pub(super) acc: Vec<Push>,
}

impl Clone for HordeWorld {
    fn clone(&self) -> HordeWorld {
        HordeWorld {
            p: self.p,
            kernel: self.kernel.clone(),
            band: self.band,
            want: self.want.clone(),
            tick: self.tick,
            rng: self.rng,
            players: self.players,
            heroes: self.heroes,
            wipes: self.wipes,
            kills: self.kills,
            waves: self.waves,
            alive: self.alive,
            last_pairs: self.last_pairs,
            last_contacts: self.last_contacts,
            e: self.e.clone(),
            slot_of: self.slot_of.clone(),
            grid: self.grid.clone(),
            back: Enemies::default(),
            acc: Vec::new(),
        }
    }

    /// Copies the state into this world's existing buffers. The scratch
    /// buffers (grid, back buffer, separation sums) are rebuilt by every
    /// step, so they are kept as they are, never copied (the next step
    /// resizes them if `src` has another shape).
    fn clone_from(&mut self, src: &HordeWorld) {
        self.p = src.p;
        if !self.kernel.same(&src.kernel) {
            self.kernel.clone_from(&src.kernel);
        }
        self.band = src.band;
        self.want.clone_from(&src.want);
        self.tick = src.tick;
        self.rng = src.rng;
        self.players = src.players;
        self.heroes = src.heroes;
        self.wipes = src.wipes;
        self.kills = src.kills;
        self.waves = src.waves;
        self.alive = src.alive;
        self.last_pairs = src.last_pairs;
        self.last_contacts = src.last_contacts;
        self.e.clone_from(&src.e);
        self.slot_of.clone_from(&src.slot_of);
        self.grid.clone_from(&src.grid);
    }
}

impl HordeWorld {
    /// The world at tick 0: the config's `players` heroes around the middle
    /// of the field (`docs/horde.md`, "Heroes"), every enemy alive at full
    /// hit points, dealt out in turn to the heroes' spawn bands.
    #[must_use]
    pub fn new(cfg: &HordeConfig) -> HordeWorld {
        let sub = |px: u32| HordeConfig::subpx(px);
        let to_i32 = |v: i64| i32::try_from(v).unwrap_or(i32::MAX);
        let p = Params::of(cfg);
        let n = cfg.enemies as usize;
        let (cols, rows) = cfg.grid_dims();
        let sep = u32::try_from(sub(2 * cfg.enemy_radius)).unwrap_or(u32::MAX);
        let mut w = HordeWorld {
            p,
            kernel: SeparationKernel::new(sep, cfg.separation_strength),
            band: SpawnBand::new(cfg.spawn_distance, cfg.spawn_spacing, cfg.enemies),
            want: match p.crowd_limit {
                0 => vec![p.enemy_speed],
                k => (0..=k)
                    .map(|c| p.enemy_speed * i64::from(k - c) / i64::from(k))
                    .collect(),
            },
            tick: 0,
            rng: Pcg32::new(cfg.seed, RNG_STREAM),
            players: cfg.players(),
            heroes: core::array::from_fn(|i| {
                let (x, y) = super::hero::start(i, cfg.players(), p.max_x, p.max_y);
                Hero {
                    x,
                    y,
                    hp: p.player_hp,
                    ..Hero::default()
                }
            }),
            wipes: 0,
            kills: 0,
            waves: 0,
            alive: 0,
            last_pairs: 0,
            last_contacts: 0,
            e: Enemies::new(n),
            slot_of: SlotOf::identity(n),
            grid: Grid::new(to_i32(sub(cfg.grid_cell)), cols, rows, n),
            back: Enemies::new(n),
            acc: vec![Push::ZERO; n],
        };
        w.respawn_dead();
        w
    }

    // ---- the step -------------------------------------------------------

    /// One tick with every player's input: `inputs[p]` moves hero `p` (a
    /// player missing from `inputs` stands still; inputs past
    /// [`HordeWorld::players`] are ignored). Never allocates. This is
    /// [`Sim::step`](tickwise::Sim::step).
    pub fn step_players(&mut self, inputs: &[TickInput]) {
        self.step_with(inputs, Neighbours::Grid);
    }

    /// The number of heroes (players), 1..=[`MAX_HEROES`], fixed by the
    /// config's `players` key.
    #[must_use]
    pub const fn players(&self) -> usize {
        self.players
    }

    /// One tick, finding neighbours with `how`. Both ways give the same state.
    pub(super) fn step_with(&mut self, inputs: &[TickInput], how: Neighbours) {
        self.reserve_scratch();
        self.move_heroes(inputs);
        if self.tick > 0 && self.tick.is_multiple_of(self.p.wave_ticks) {
            self.heroes_get_up();
            self.respawn_dead();
            self.waves = self.waves.wrapping_add(1);
        }
        let separating = self.p.separates(self.tick);
        let live = self.steer(separating && how == Neighbours::Grid);
        let contacts = match (how, separating) {
            // No separation this tick: no grid either. One pass over the
            // enemies costs less than building it for the heroes alone.
            (Neighbours::Grid, false) => self.strike_every_enemy(par::enabled(self.e.hp.len())),
            (Neighbours::AllPairs, false) => self.strike_all(),
            (Neighbours::Grid, true) => {
                self.sort_by_cell(live);
                self.separate_grid();
                self.strike_grid()
            }
            (Neighbours::AllPairs, true) => {
                self.separate_all_pairs();
                self.strike_all()
            }
        };
        self.take_contacts(&contacts);
        self.tick = self.tick.wrapping_add(1);
    }

    /// Gives a clone (which carries no scratch) its back buffer and sums;
    /// the grid sizes its own. Nothing to do in a steady run.
    fn reserve_scratch(&mut self) {
        let n = self.slot_of.len();
        if self.back.body.len() != n {
            self.back = Enemies::new(n);
        }
        if self.acc.len() != n {
            self.acc = vec![Push::ZERO; n];
        }
    }

    /// Every dead enemy, in id order, comes back at full hit points, at rest,
    /// in the spawn band of hero `j mod players` for the `j`-th of them (every
    /// hero is up here: at tick 0, and after a wave's get-up).
    fn respawn_dead(&mut self) {
        let e = &mut self.e;
        let mut dealt = 0;
        for k in self.slot_of.of(&e.body).iter() {
            if e.hp[k] <= 0 {
                let hero = self.heroes[dealt % self.players];
                dealt += 1;
                let (px, py) = (i64::from(hero.x), i64::from(hero.y));
                let (dx, dy) = self.band.sample(&mut self.rng);
                e.body[k].x = clamp_i32(px + dx, self.p.max_x);
                e.body[k].y = clamp_i32(py + dy, self.p.max_y);
                e.vel[k] = [0, 0];
                e.crowd[k] = 0;
                e.hp[k] = self.p.enemy_hp;
                self.alive += 1;
            }
        }
    }

    /// Rebuilds the grid and moves every enemy array into its order (live
    /// enemies by cell, then the dead), marking `slot_of` stale, in pieces of
    /// [`par::CHUNK`] new slots (each piece gathers its own enemies). On
    /// several threads it clears the separation sums on the way; one thread
    /// clears them row by row in the separation, while they are in cache.
    ///
    /// A live enemy's crowd is not moved: the separation, which always
    /// follows, overwrites every live crowd with its new count before
    /// anything reads it, so only the dead carry theirs over. Skipping
    /// that 2-byte gather made restore + 8 ticks at 10,000 enemies 2 %
    /// faster (`docs/benchmarks.md`, round 20).
    fn sort_by_cell(&mut self, live: Bounds) {
        let par = par::enabled(self.e.hp.len());
        self.grid.build(par, live, &self.e.body, &self.e.hp);
        let live = self.grid.len();
        let (e, b) = (&self.e, &mut self.back);
        let order = self.grid.order();
        let n = e.hp.len();
        let src = (&e.body[..n], &e.vel[..n], &e.hp[..n]);
        let part = (
            (&mut b.body[..], &mut b.vel[..]),
            (&mut b.hp[..], (order, &mut self.acc[..])),
        );
        par::pieces(
            par,
            part,
            0,
            order.len(),
            &|_, ((body, vel), (hp, (order, acc)))| {
                // Locals: the loop reads the flag once (a store below could
                // alias a captured one, so it was reloaded for every enemy),
                // and the sources cut to one length need one bounds check.
                // `k < n` always holds (the order is a permutation of
                // 0..n); testing it lets the compiler drop the three checks.
                let (clear, n) = (par, src.0.len());
                let src = (src.0, &src.1[..n], &src.2[..n]);
                let dst = body.iter_mut().zip(vel.iter_mut()).zip(hp.iter_mut());
                for ((((body, vel), hp), &k), acc) in dst.zip(order).zip(acc.iter_mut()) {
                    let k = k as usize;
                    if k < n {
                        *body = src.0[k];
                        *vel = src.1[k];
                        *hp = src.2[k];
                    }
                    if clear {
                        *acc = Push::ZERO;
                    }
                }
            },
            &|(), ()| (),
        );
        // The dead come after every live slot and keep their crowds.
        for (crowd, &k) in b.crowd[live..n].iter_mut().zip(&order[live..]) {
            *crowd = e.crowd[k as usize];
        }
        core::mem::swap(&mut self.e, &mut self.back);
        self.slot_of.stale();
    }

    /// Separation over the grid's candidate pairs ([`Separate`]): one
    /// thread applies each row's sums as soon as they are final; several
    /// threads cut the rows into bands (at most [`par::MAX_BANDS`], each at
    /// least one row) whose sums are applied afterwards. The sums are
    /// wrapping additions: the same result in any order, on any number of
    /// threads.
    fn separate_grid(&mut self) {
        let n = self.grid.len();
        let s = Separate {
            grid: &self.grid,
            kernel: self.kernel.pairing(),
            bands: self.grid.rows().min(par::MAX_BANDS),
        };
        let e = &mut self.e;
        let parts = (&mut e.body[..n], &mut e.vel[..n], &mut e.crowd[..n]);
        // Cleared by the re-sort on several threads, by `serial` on one.
        let acc = &mut self.acc[..n];
        self.last_pairs = if par::enabled(e.hp.len()) && s.bands > 1 {
            s.parallel(&self.p, parts.0, parts.1, parts.2, acc)
        } else {
            s.serial(&self.p, parts.0, parts.1, parts.2, acc)
        };
    }

    /// The half-size of the box around a hero that holds every enemy
    /// this tick's contact and attack checks can reach: positions moved at
    /// most `maxPush · separationTicks` per axis since the grid was built.
    fn reach(&self, attacking: bool) -> i64 {
        let r = if attacking {
            self.p.contact_r.max(self.p.attack_r)
        } else {
            self.p.contact_r
        };
        r + self.p.max_step_push()
    }

    /// Contacts and the auto-attacks over the grid cells near each hero that
    /// is up, hero by hero; returns each hero's contacts. The grid holds the
    /// enemies alive when this step began: one that an earlier hero killed
    /// still counts as a contact, but takes no more damage.
    fn strike_grid(&mut self) -> [u32; MAX_HEROES] {
        let mut contacts = [0; MAX_HEROES];
        let heroes = self.heroes;
        for (h, hero) in heroes[..self.players].iter().enumerate() {
            if !hero.is_up() {
                continue;
            }
            let attacking = hero.attack_timer == 0;
            let reach = self.reach(attacking);
            let at = (i64::from(hero.x), i64::from(hero.y));
            let (px, py) = at;
            let mut tally = Tally::default();
            for range in self
                .grid
                .box_ranges(px - reach, px + reach, py - reach, py + reach)
            {
                let e = &mut self.e;
                for (pos, hp) in e.body[range.clone()].iter().zip(e.hp[range].iter_mut()) {
                    strike_one(&self.p, attacking, at, *pos, hp, &mut tally);
                }
            }
            contacts[h] = tally.contacts;
            self.book_kills(tally.kills);
        }
        contacts
    }

    /// Books kills (one per enemy whose hit points ran out).
    pub(super) const fn book_kills(&mut self, kills: u32) {
        self.kills = self.kills.wrapping_add(kills as u64);
        self.alive -= kills;
    }
}

#[cfg(test)]
mod tests;
