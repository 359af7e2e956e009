//! The O(n²) reference: the same rules, every pair instead of the grid.

use alloc::string::String;

use tickwise::{Sim, StateVisitor, TickInput};

use super::hero::MAX_HEROES;
use super::rules::{Push, Tally, apply_push, pair_push, strike_enemy};
use super::world::Neighbours;
use super::{HordeConfig, HordeWorld};

/// The horde stepped with all-pairs neighbour search.
///
/// Separation sums one integer push per overlapping pair, and the kernel is
/// odd (`push(−d) = −push(d)`), so the sum does not depend on the order pairs
/// are found in; contacts and the attack touch each enemy once. The grid and
/// this reference therefore reach the same state exactly when the grid finds
/// exactly the overlapping pairs and the enemies near the player — which is
/// what the tests check, digest against digest, for hundreds of ticks.
/// O(n²) per tick: for tests with up to a few thousand enemies.
#[derive(Clone, Debug)]
pub struct NaiveHorde(pub(super) HordeWorld);

impl NaiveHorde {
    /// The reference world at tick 0 (identical to [`HordeWorld::new`]).
    #[must_use]
    pub fn new(cfg: &HordeConfig) -> NaiveHorde {
        NaiveHorde(HordeWorld::new(cfg))
    }

    /// The world it steps.
    #[must_use]
    pub const fn world(&self) -> &HordeWorld {
        &self.0
    }

    /// One tick with every player's input, as [`HordeWorld::step_players`].
    pub fn step_players(&mut self, inputs: &[TickInput]) {
        self.0.step_with(inputs, Neighbours::AllPairs);
    }
}

impl Sim for NaiveHorde {
    type Input = TickInput;

    fn players(&self) -> usize {
        self.0.players()
    }

    fn step(&mut self, inputs: &[TickInput]) {
        self.step_players(inputs);
    }

    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.0.visit_state(v);
    }

    fn digest(&self) -> String {
        self.0.digest()
    }
}

/// The reference's phases: the same rules as the grid's separation and strike,
/// over every pair and every enemy. Only [`NaiveHorde`] runs them (its step is
/// `step_with` with `Neighbours::AllPairs`); they live here, not in
/// `world.rs`, so that the world's file holds only what the shipped sim runs.
impl HordeWorld {
    /// Separation over every pair of live enemies, by slot (which is by id:
    /// the reference never sorts): the reference.
    pub(super) fn separate_all_pairs(&mut self) {
        let e = &mut self.e;
        let n = e.hp.len();
        self.acc.fill(Push::ZERO);
        let r2 = self.kernel.radius_sq();
        let mut pairs = 0u64;
        for i in 0..n {
            if e.hp[i] <= 0 {
                continue;
            }
            for j in i + 1..n {
                if e.hp[j] <= 0 {
                    continue;
                }
                let (bi, bj) = (e.body[i], e.body[j]);
                let (dx, dy) = (bi.x - bj.x, bi.y - bj.y);
                let d2 = i64::from(dx) * i64::from(dx) + i64::from(dy) * i64::from(dy);
                if d2 < r2 {
                    pairs += 1;
                    let (fx, fy) = pair_push(&self.kernel, dx, dy, d2, bi.id < bj.id);
                    self.acc[i].add(Push {
                        x: fx,
                        y: fy,
                        near: 1,
                    });
                    self.acc[j].add(Push {
                        x: fx.wrapping_neg(),
                        y: fy.wrapping_neg(),
                        near: 1,
                    });
                }
            }
        }
        self.last_pairs = pairs;
        let p = self.p;
        for i in 0..n {
            if e.hp[i] > 0 {
                let a = self.acc[i];
                e.crowd[i] = u16::try_from(a.near).unwrap_or(u16::MAX);
                apply_push(&mut e.body[i], &mut e.vel[i], (a.x, a.y), &p);
            }
        }
    }

    /// Contacts and the auto-attacks over every live enemy, enemy by enemy
    /// (each against every hero that is up), in one plain loop: the
    /// reference never splits its work. The grid goes hero by hero instead
    /// (and a grid world's tick without separation by pieces of enemies);
    /// each enemy's outcome is the same either way.
    pub(super) fn strike_all(&mut self) -> [u32; MAX_HEROES] {
        let mut tally = [Tally::default(); MAX_HEROES];
        let heroes = &self.heroes[..self.players];
        let e = &mut self.e;
        for (pos, hp) in e.body.iter().zip(e.hp.iter_mut()) {
            strike_enemy(&self.p, heroes, *pos, hp, &mut tally);
        }
        let kills = tally.iter().map(|t| t.kills).sum();
        self.book_kills(kills);
        tally.map(|t| t.contacts)
    }
}
