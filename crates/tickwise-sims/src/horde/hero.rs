//! The heroes of the co-op horde: one per player, 1 to [`MAX_HEROES`].
//!
//! Everything a hero does that is not about finding enemies lives here: where
//! heroes start, how each player's input moves its own hero, the damage
//! bookkeeping (down, getting up, a wipe) and which hero an enemy chases.
//! The rules are `docs/horde.md`'s "Heroes" and "One tick".

/// The most heroes (players) a horde takes.
pub const MAX_HEROES: usize = 4;

/// Hero `i` of `n` starts `(2i − (n − 1)) · HERO_SPREAD_PX` px right of the
/// field's centre.
pub const HERO_SPREAD_PX: i64 = 24;

/// One hero as seen from outside (and as stored).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hero {
    /// x in 1/256 px.
    pub x: i32,
    /// y in 1/256 px (down positive).
    pub y: i32,
    /// Hit points; 0 while the hero is down.
    pub hp: i64,
    /// How often its hit points ran out.
    pub downs: u64,
    /// Ticks of invulnerability left.
    pub invuln: u32,
    /// Ticks until its next attack (it attacks on a tick that starts at 0).
    pub attack_timer: u32,
}

impl Hero {
    /// Whether the hero is up: moving, chased, touchable and attacking.
    #[must_use]
    pub const fn is_up(&self) -> bool {
        self.hp > 0
    }
}

/// The state's field names, hero by hero (names are not hashed: only the
/// values are, so a one-hero world checksums as version 2 did).
pub(super) const HERO_FIELDS: [[&str; 6]; MAX_HEROES] = [
    [
        "hero0.x",
        "hero0.y",
        "hero0.hp",
        "hero0.downs",
        "hero0.invuln",
        "hero0.attackTimer",
    ],
    [
        "hero1.x",
        "hero1.y",
        "hero1.hp",
        "hero1.downs",
        "hero1.invuln",
        "hero1.attackTimer",
    ],
    [
        "hero2.x",
        "hero2.y",
        "hero2.hp",
        "hero2.downs",
        "hero2.invuln",
        "hero2.attackTimer",
    ],
    [
        "hero3.x",
        "hero3.y",
        "hero3.hp",
        "hero3.downs",
        "hero3.invuln",
        "hero3.attackTimer",
    ],
];

/// Where hero `i` of `n` starts: `(2i − (n − 1)) · 24` px right of the
/// centre `(max_x / 2, max_y / 2)`, clamped to the field.
pub(super) fn start(i: usize, n: usize, max_x: i32, max_y: i32) -> (i32, i32) {
    // i, n <= 4: the offset is at most 3 · 24 · 256 sub-pixels.
    let offset = (2 * i as i64 - (n as i64 - 1)) * HERO_SPREAD_PX * super::SUBPX as i64;
    let x = (i64::from(max_x / 2) + offset).clamp(0, i64::from(max_x));
    (i32::try_from(x).unwrap_or(0), max_y / 2)
}

/// The heroes an enemy can chase this tick (those that are up), in index
/// order: [`Targets::nearest`] breaks ties toward the first.
#[derive(Clone, Copy, Debug)]
pub(super) struct Targets {
    at: [(i32, i32); MAX_HEROES],
    len: usize,
}

impl Targets {
    /// The positions of the heroes that are up.
    pub(super) fn of(heroes: &[Hero]) -> Targets {
        let mut t = Targets {
            at: [(0, 0); MAX_HEROES],
            len: 0,
        };
        for h in heroes.iter().filter(|h| h.is_up()) {
            t.at[t.len] = (h.x, h.y);
            t.len += 1;
        }
        t
    }

    /// The one target when exactly one hero is up (always, in a one-hero
    /// world): then every enemy's nearest, with no distance to compare.
    #[inline]
    pub(super) fn single(&self) -> Option<(i32, i32)> {
        (self.len == 1).then_some(self.at[0])
    }

    /// The nearest target to `(x, y)` by squared Euclidean distance, the
    /// lowest index on a tie. Heroes and enemies stand on the field (below
    /// 2^28; a rejoin snapshot with either off it is refused): each axis
    /// differs by less than 2^28, so their squares sum below 2^57, exact in
    /// `i64`. There is always at least one hero up while enemies steer (a
    /// wipe gets everyone up in the same tick); with none, `(x, y)` itself
    /// (the enemy stands still).
    #[inline]
    pub(super) fn nearest(&self, x: i32, y: i32) -> (i32, i32) {
        if let Some(one) = self.single() {
            return one;
        }
        let mut best = (x, y);
        let mut best_d2 = i64::MAX;
        for &(hx, hy) in &self.at[..self.len] {
            let (dx, dy) = (i64::from(hx) - i64::from(x), i64::from(hy) - i64::from(y));
            let d2 = dx * dx + dy * dy;
            if d2 < best_d2 {
                best = (hx, hy);
                best_d2 = d2;
            }
        }
        best
    }
}
