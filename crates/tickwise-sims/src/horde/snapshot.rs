//! What the browser draws of one tick.

use alloc::vec::Vec;

use super::hero::{Hero, MAX_HEROES};

/// A compact copy of the drawable state: the heroes, enemy positions and
/// alive flags. [`tickwise::Capture::capture_into`] refills it in place,
/// reusing its buffers, so a renderer keeping two of them (previous and
/// current tick, for interpolation) allocates nothing after the first frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HordeSnapshot {
    tick: u64,
    heroes: [Hero; MAX_HEROES],
    players: usize,
    xs: Vec<i32>,
    ys: Vec<i32>,
    alive: Vec<bool>,
}

impl HordeSnapshot {
    pub(super) fn fill(
        &mut self,
        tick: u64,
        heroes: &[Hero],
        enemies: impl Iterator<Item = ([i32; 2], bool)>,
    ) {
        self.tick = tick;
        self.players = heroes.len().min(MAX_HEROES);
        self.heroes = [Hero::default(); MAX_HEROES];
        self.heroes[..self.players].copy_from_slice(&heroes[..self.players]);
        self.xs.clear();
        self.ys.clear();
        self.alive.clear();
        for ([x, y], alive) in enemies {
            self.xs.push(x);
            self.ys.push(y);
            self.alive.push(alive);
        }
    }

    /// The tick this snapshot was taken after.
    #[must_use]
    pub const fn tick(&self) -> u64 {
        self.tick
    }
    /// Hero 0's position in 1/256 px.
    #[must_use]
    pub const fn player(&self) -> (i32, i32) {
        (self.heroes[0].x, self.heroes[0].y)
    }
    /// Hero 0's hit points.
    #[must_use]
    pub const fn player_hp(&self) -> i64 {
        self.heroes[0].hp
    }
    /// Every hero, by player index (empty for a snapshot never filled).
    #[must_use]
    pub fn heroes(&self) -> &[Hero] {
        &self.heroes[..self.players]
    }
    /// Enemy x positions in 1/256 px, by enemy id.
    #[must_use]
    pub fn enemy_x(&self) -> &[i32] {
        &self.xs
    }
    /// Enemy y positions in 1/256 px, by enemy id.
    #[must_use]
    pub fn enemy_y(&self) -> &[i32] {
        &self.ys
    }
    /// Whether each enemy (by id) is alive. An enemy that died and respawned
    /// between two snapshots is alive in both but jumped: renderers should
    /// not interpolate an enemy that moved more than a few speeds.
    #[must_use]
    pub fn alive(&self) -> &[bool] {
        &self.alive
    }
}
