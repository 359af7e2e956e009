//! The survivors-style horde of the tick-rate budget article
//! (`docs/background.md`): 1 to 4 heroes (co-op, one per player), up to a
//! million enemies, a uniform grid, separation, damage, deaths and respawn
//! waves.
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
//! # Heroes
//!
//! The config's `players` (1 to [`MAX_HEROES`], default 1) is the number of
//! heroes; hero `i` of `n` starts `(2i − (n − 1)) · 24` px right of the
//! field's centre. Hero `p` moves only by player `p`'s input
//! ([`HordeWorld::step_players`]). A hero at 0 hit points is *down*: it
//! stays put, ignores its input, is not chased, touched or attacking, and
//! gets up at the next wave; when the last hero standing goes down (a
//! *wipe*, the game is over) all heroes get up at once, so a run never ends.
//! With one hero this is version 2's horde exactly.
//!
//! # One tick
//!
//! 1. **Heroes** that are up move by their own player's input
//!    ([`move_vector`]): stick axes 0/1, or buttons 0–3 (up, down, left,
//!    right) when both axes are zero; speed `playerSpeed`, clamped to the
//!    field.
//! 2. **Wave:** on ticks `t > 0` with `t % waveTicks == 0`, heroes that are
//!    down get up; then every dead slot
//!    in index order respawns at full hit points, at rest, at a point of the
//!    spawn band drawn from the sim's [`tickwise::Pcg32`] (three draws per
//!    enemy). The `j`-th respawned enemy's band is the square ring from
//!    `spawnDistance` px around hero `j mod n`, thick enough to hold the
//!    whole horde at `spawnSpacing` px apart. Tick 0's world starts fully
//!    spawned the same way.
//! 3. **Steering,** each live enemy in index order: desired velocity =
//!    `enemySpeed` toward the nearest hero that is up (squared distance,
//!    ties to the lowest index), scaled down linearly to 0 as the
//!    enemy's overlapping neighbours in the last tick reach `crowdLimit` (a
//!    packed crowd stops pushing inward, which bounds its density; 0 turns
//!    this off); velocity += (desired − velocity) >> `steerShift`; capped at
//!    `enemySpeed` (octagonal length); position += velocity, clamped to the
//!    field.
//! 4. **Grid:** rebuilt from the live enemies (cells of `gridCell` px, at
//!    least two enemy radii, so every overlapping pair is in the 3×3 block).
//!    Steps 4 and 5 run only on ticks `t` with `t % separationTicks == 0`
//!    (optional key, default 1: every tick; at most
//!    [`MAX_SEPARATION_TICKS`]). A big horde spends most of a tick on them:
//!    every second tick about halves its average tick (`docs/horde.md`).
//! 5. **Separation:** for every pair of live enemies closer than two enemy
//!    radii, a push of about `separationStrength/256 ×` the overlap, away
//!    from each other (odd in the offset, so computed once per pair and
//!    applied with opposite signs). All pushes are summed first (positions
//!    are read as they were after step 3), then each enemy's sum is clamped
//!    to `maxPush` per axis, multiplied by `separationTicks` (one pass pushes
//!    for the ticks it stands for), applied, clamped to the field, and added
//!    to the velocity (velocity is what the enemy actually did, so one held
//!    back by the crowd stops accelerating into it). Each enemy's count of
//!    overlapping neighbours is kept for the next ticks' steering, and the
//!    count of pairs found for `lastPairs`, until the next pass.
//! 6. **Contact and attack,** per hero that is up: each live enemy within
//!    `playerRadius + enemyRadius` of it is a contact of that hero. Every
//!    `attackCooldownTicks` ticks (from tick 0) each hero hits each live
//!    enemy within `attackRadius` of it for `attackDamage`; an enemy at 0
//!    hit points is dead (one kill) until the next wave.
//! 7. **Damage,** per hero: unless invulnerable, its own contacts cost it
//!    `contactDamage` each, and it is then invulnerable for `invulnTicks`
//!    ticks. At 0 hit points it is down (counted); if no hero is up, a wipe.
//!
//! Every loop runs in index order, grid cells in row-major order; the only
//! order-dependent sums are integer (wrapping) additions, which commute.
//! [`NaiveHorde`] runs the same rules with all-pairs search and must reach
//! the same digest.
//!
//! # Digest
//!
//! [`tickwise::Sim::visit_state`] names every field (`tick`, `rng`, per hero
//! `hero{i}.x`, `.y`, `.hp`, `.downs`, `.invuln`, `.attackTimer`, then
//! `kills`, `waves`, `alive`, `lastPairs`, `lastContacts`, `wipes` (two or
//! more heroes only), then the arrays `enemyX`, `enemyY`, `enemyVx`,
//! `enemyVy`, `enemyHp`, `enemyCrowd`). `rng` is the generator's 64-bit state
//! followed by its 64-bit increment. A one-hero world visits the same values
//! as version 2. [`tickwise::Sim::digest`] is
//! `tick|alive|kills|hp|downs|checksum` (`hp` and `downs` comma-separated per
//! hero) with the FNV-1a checksum in 16 hex digits.
//!
//! ```
//! use tickwise::Sim;
//! use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};
//!
//! let cfg = HordeConfig::from_json(tickwise_sims::HORDE_JSON)?
//!     .with_enemies(500)?;
//! let mut world = HordeWorld::new(&cfg);
//! for t in 0..60 {
//!     world.step(&[scripted_input(t)]);
//! }
//! assert_eq!(world.tick(), 60);
//! assert_eq!(world.enemy_count(), 500);
//! assert!(world.digest().starts_with("60|"));
//!
//! // Co-op: two heroes, each moved by its own player's input.
//! let mut coop = HordeWorld::new(&cfg.with_players(2)?);
//! for t in 0..60 {
//!     coop.step_players(&[scripted_input(t), scripted_input(t + 180)]);
//! }
//! assert_eq!(coop.heroes().len(), 2);
//! assert!(coop.heroes()[0].x > coop.heroes()[1].x);
//! # Ok::<(), tickwise_config::ConfigError>(())
//! ```

mod config;
mod fixed;
mod grid;
mod hero;
mod input;
mod par;
mod persist;
mod reference;
mod rules;
mod separate;
mod snapshot;
mod spawn;
mod world;

pub use config::{
    HORDE_KEYS, HordeConfig, MAX_ENEMIES, MAX_ENEMY_RADIUS_PX, MAX_FIELD_PX, MAX_GRID_CELLS,
    MAX_SEPARATION_TICKS, MAX_SETTLE_TICKS,
};
pub use fixed::{SUBPX, oct_len};
pub use hero::{HERO_SPREAD_PX, Hero, MAX_HEROES};
pub use input::{DOWN, LEFT, RIGHT, STICK_MAX, UP, move_vector, scripted_input};
pub use reference::NaiveHorde;
pub use snapshot::HordeSnapshot;
pub use world::{Enemy, HordeWorld};
