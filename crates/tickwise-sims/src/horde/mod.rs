//! The survivors-style horde of the tick-rate budget article
//! (`docs/background.md`): a player, up to a million enemies,
//! a uniform grid, separation, damage, deaths and respawn waves.
//!
//! That article chose 30 Hz after measuring 300 enemies at 9.2 ms per tick. This
//! is that workload on the tickwise kernel, in integers, built to be fast:
//! structure-of-arrays, a counting-sort grid over the live enemies' bounding
//! box, every buffer allocated once. `tickwise budget` measures it and turns
//! the cost into a tick rate.
//!
//! # Units
//!
//! Positions and speeds are in 1/256 px (`i32`; the field is at most 10⁶ px
//! a side). Config lengths are whole pixels, config speeds 1/256 px per tick,
//! times whole ticks. No floats, no square roots per tick: steering uses the
//! octagonal length `max + 3/8·min`, separation a table of `1/|d|` filled
//! once with an integer square root.
//!
//! # One tick
//!
//! 1. **Player** moves by the tick's input ([`move_vector`]): stick axes 0/1,
//!    or buttons 0–3 (up, down, left, right) when both axes are zero; speed
//!    `playerSpeed`, clamped to the field.
//! 2. **Wave:** on ticks `t > 0` with `t % waveTicks == 0`, every dead slot
//!    in index order respawns at full hit points, at rest, at a point of the
//!    spawn band drawn from the sim's [`tickwise::Pcg32`] (three draws per
//!    enemy). The band is the square ring from `spawnDistance` px around the
//!    player, thick enough to hold the whole horde at `spawnSpacing` px
//!    apart. Tick 0's world starts fully spawned the same way.
//! 3. **Steering,** each live enemy in index order: desired velocity =
//!    `enemySpeed` toward the player, scaled down linearly to 0 as the
//!    enemy's overlapping neighbours in the last tick reach `crowdLimit` (a
//!    packed crowd stops pushing inward, which bounds its density; 0 turns
//!    this off); velocity += (desired − velocity) >> `steerShift`; capped at
//!    `enemySpeed` (octagonal length); position += velocity, clamped to the
//!    field.
//! 4. **Grid:** rebuilt from the live enemies (cells of `gridCell` px, at
//!    least two enemy radii, so every overlapping pair is in the 3×3 block).
//! 5. **Separation:** for every pair of live enemies closer than two enemy
//!    radii, a push of about `separationStrength/256 ×` the overlap, away
//!    from each other (odd in the offset, so computed once per pair and
//!    applied with opposite signs). All pushes are summed first (positions
//!    are read as they were after step 3), then each enemy's sum is clamped
//!    to `maxPush` per axis and applied, clamped to the field, and added to
//!    the velocity (velocity is what the enemy actually did, so one held
//!    back by the crowd stops accelerating into it). Each enemy's count of
//!    overlapping neighbours is kept for the next tick's steering.
//! 6. **Contact and attack:** each live enemy within `playerRadius +
//!    enemyRadius` of the player is a contact. Every `attackCooldownTicks`
//!    ticks (from tick 0) the player hits each live enemy within
//!    `attackRadius` for `attackDamage`; an enemy at 0 hit points is dead
//!    (a kill) until the next wave.
//! 7. **Damage:** unless invulnerable, contacts cost the player
//!    `contactDamage` each, and the player is then invulnerable for
//!    `invulnTicks` ticks. At 0 hit points the player is *downed*: counted,
//!    and restored to full, so a benchmark run never ends.
//!
//! Every loop runs in index order, grid cells in row-major order; the only
//! order-dependent sums are integer (wrapping) additions, which commute.
//! [`NaiveHorde`] runs the same rules with all-pairs search and must reach
//! the same digest.
//!
//! # Digest
//!
//! [`tickwise::Sim::visit_state`] names every field (`tick`, `rng`,
//! `playerX`, `playerY`, `playerHp`, `playerDowns`, `invuln`, `attackTimer`,
//! `kills`, `waves`, `alive`, `lastPairs`, `lastContacts`, then the arrays
//! `enemyX`, `enemyY`, `enemyVx`, `enemyVy`, `enemyHp`, `enemyCrowd`). `rng` is the
//! generator's 64-bit state followed by its 64-bit increment.
//! [`tickwise::Sim::digest`] is `tick|alive|kills|playerHp|playerDowns|checksum`
//! with the FNV-1a checksum in 16 hex digits.
//!
//! ```
//! use tickwise::Sim;
//! use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};
//!
//! let cfg = HordeConfig::from_json(include_bytes!("../../../../config/horde.json"))?
//!     .with_enemies(500)?;
//! let mut world = HordeWorld::new(&cfg);
//! for t in 0..60 {
//!     world.step(&[scripted_input(t)]);
//! }
//! assert_eq!(world.tick(), 60);
//! assert_eq!(world.enemy_count(), 500);
//! assert!(world.digest().starts_with("60|"));
//! # Ok::<(), tickwise_sims::ConfigError>(())
//! ```

mod config;
mod fixed;
mod grid;
mod hero;
mod input;
mod par;
mod reference;
mod snapshot;
mod spawn;
mod world;

pub use config::{
    HORDE_KEYS, HordeConfig, MAX_ENEMIES, MAX_ENEMY_RADIUS_PX, MAX_FIELD_PX, MAX_GRID_CELLS,
    MAX_SETTLE_TICKS,
};
pub use fixed::{SUBPX, oct_len};
pub use hero::{HERO_SPREAD_PX, Hero, MAX_HEROES};
pub use input::{DOWN, LEFT, RIGHT, STICK_MAX, UP, move_vector, scripted_input};
pub use reference::NaiveHorde;
pub use snapshot::HordeSnapshot;
pub use world::{Enemy, HordeWorld};
