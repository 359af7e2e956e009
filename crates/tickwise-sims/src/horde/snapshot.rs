//! What the browser draws of one tick.

use alloc::vec::Vec;

/// A compact copy of the drawable state: the player, enemy positions and
/// alive flags. [`tickwise::Capture::capture_into`] refills it in place,
/// reusing its buffers, so a renderer keeping two of them (previous and
/// current tick, for interpolation) allocates nothing after the first frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HordeSnapshot {
    tick: u64,
    player: (i32, i32),
    player_hp: i64,
    xs: Vec<i32>,
    ys: Vec<i32>,
    alive: Vec<bool>,
}

impl HordeSnapshot {
    pub(super) fn fill(
        &mut self,
        tick: u64,
        player: (i32, i32),
        player_hp: i64,
        enemies: impl Iterator<Item = ([i32; 2], bool)>,
    ) {
        self.tick = tick;
        self.player = player;
        self.player_hp = player_hp;
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
    /// The player's position in 1/256 px.
    #[must_use]
    pub const fn player(&self) -> (i32, i32) {
        self.player
    }
    /// The player's hit points.
    #[must_use]
    pub const fn player_hp(&self) -> i64 {
        self.player_hp
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
