//! The horde config (`config/horde.json`), validated key by key.

use alloc::format;
use alloc::string::String;

use tickwise::{CatchUpPolicy, ClockConfig, Nanos, StepLength};

use super::fixed::SUBPX;
use super::hero::MAX_HEROES;
use tickwise_config::{ConfigError, ConfigObject};

/// The most enemies a config may ask for. Memory is about 80 bytes per
/// enemy (the sorted arrays are double-buffered), so this is 80 MB; the
/// issue asks for at least 100,000.
pub const MAX_ENEMIES: u32 = 1_000_000;

/// The largest field side in pixels. In 1/256 px an `i32` position reaches
/// 8.3 million px; this leaves room for every sum of a position and a speed.
pub const MAX_FIELD_PX: u32 = 1_000_000;

/// The most grid cells the field may be divided into (16 MiB of cell starts).
pub const MAX_GRID_CELLS: u64 = 1 << 22;

/// The largest enemy radius in pixels: two radii in sub-pixels stay below
/// 2^15, which keeps every separation product inside 64 bits.
pub const MAX_ENEMY_RADIUS_PX: u32 = 64;

/// The largest `separationTicks`: separation at least every 64 ticks. A
/// push is at most `maxPush · separationTicks` ≤ 2^20 sub-pixels per axis,
/// which keeps every position and velocity sum far inside `i32`.
pub const MAX_SEPARATION_TICKS: u32 = 64;

/// The most ticks [`HordeConfig::settle_ticks`] returns.
pub const MAX_SETTLE_TICKS: u64 = 100_000;

/// The keys of the horde config: the optional ones first (`version`, `sim`,
/// `players`, `tickHz`, `maxCatchUpSteps`, `minCatchUpMs`, `maxStepsPerFrame`,
/// `separationTicks`), then the required ones. Any other key, except a `note`
/// ([`tickwise_config::NOTE_KEYS`]), is refused.
pub const HORDE_KEYS: [&str; 31] = [
    "version",
    "sim",
    "players",
    "tickHz",
    "maxCatchUpSteps",
    "minCatchUpMs",
    "maxStepsPerFrame",
    "separationTicks",
    "seed",
    "fieldWidth",
    "fieldHeight",
    "enemies",
    "gridCell",
    "playerRadius",
    "playerSpeed",
    "playerHp",
    "invulnTicks",
    "attackRadius",
    "attackDamage",
    "attackCooldownTicks",
    "enemyRadius",
    "enemySpeed",
    "enemyHp",
    "contactDamage",
    "steerShift",
    "crowdLimit",
    "separationStrength",
    "maxPush",
    "waveTicks",
    "spawnDistance",
    "spawnSpacing",
];

/// A validated horde config. Lengths are whole pixels, speeds 1/256 px per
/// tick, times whole ticks. Build one with [`HordeConfig::from_json`]; every
/// value has passed its range check and the cross-checks between them, so
/// [`super::HordeWorld::new`] cannot fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HordeConfig {
    pub(super) seed: u64,
    pub(super) players: u8,
    pub(super) tick_hz: u32,
    pub(super) max_catch_up_steps: u64,
    pub(super) min_catch_up_ms: u64,
    pub(super) max_steps_per_frame: u32,
    pub(super) field_width: u32,
    pub(super) field_height: u32,
    pub(super) enemies: u32,
    pub(super) grid_cell: u32,
    pub(super) player_radius: u32,
    pub(super) player_speed: u32,
    pub(super) player_hp: u32,
    pub(super) invuln_ticks: u32,
    pub(super) attack_radius: u32,
    pub(super) attack_damage: u32,
    pub(super) attack_cooldown_ticks: u32,
    pub(super) enemy_radius: u32,
    pub(super) enemy_speed: u32,
    pub(super) enemy_hp: u32,
    pub(super) contact_damage: u32,
    pub(super) steer_shift: u32,
    pub(super) crowd_limit: u32,
    pub(super) separation_strength: u32,
    pub(super) max_push: u32,
    pub(super) separation_ticks: u32,
    pub(super) wave_ticks: u32,
    pub(super) spawn_distance: u32,
    pub(super) spawn_spacing: u32,
}

/// An optional key: its value when present, `default` when absent.
fn optional_u64(
    c: &ConfigObject,
    key: &str,
    lo: u64,
    hi: u64,
    default: u64,
) -> Result<u64, ConfigError> {
    if c.has(key) {
        c.u64_in(key, lo, hi)
    } else {
        Ok(default)
    }
}

impl HordeConfig {
    /// Parses and validates the JSON config.
    ///
    /// Required keys (see `docs/horde.md` for their meaning): `seed`,
    /// `fieldWidth`, `fieldHeight`, `enemies`, `gridCell`, `playerRadius`,
    /// `playerSpeed`, `playerHp`, `invulnTicks`, `attackRadius`,
    /// `attackDamage`, `attackCooldownTicks`, `enemyRadius`, `enemySpeed`,
    /// `enemyHp`, `contactDamage`, `steerShift`, `crowdLimit`, `separationStrength`,
    /// `maxPush`, `waveTicks`, `spawnDistance`, `spawnSpacing`. Optional:
    /// `version` (1), `sim` (`"horde"`), `players` (1, at most
    /// [`super::MAX_HEROES`]), `tickHz` (30), `maxCatchUpSteps`
    /// (300), `minCatchUpMs` (32), `maxStepsPerFrame` (8), `separationTicks`
    /// (1, at most [`MAX_SEPARATION_TICKS`]). Free text goes in
    /// `note` (or `$comment`); any other key is refused ([`HORDE_KEYS`]).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the offending key: syntax, a duplicate or
    /// unknown key, missing key, wrong type, out of range, or [`ConfigError::Inconsistent`] when the grid cell
    /// is smaller than two enemy radii (the 3×3 neighbour search would miss
    /// pairs) or the field needs more than [`MAX_GRID_CELLS`] cells.
    pub fn from_json(bytes: &[u8]) -> Result<HordeConfig, ConfigError> {
        let c = ConfigObject::parse(bytes, &HORDE_KEYS)?;
        if c.has("version") {
            c.u32_in("version", 1, 1)?;
        }
        if let Some(sim) = c.optional_str("sim")?
            && sim != "horde"
        {
            return Err(ConfigError::OutOfRange {
                key: "sim".into(),
                expected: "\"horde\"".into(),
                found: format!("{sim:?}"),
            });
        }
        let field_width = c.u32_in("fieldWidth", 16, MAX_FIELD_PX)?;
        let field_height = c.u32_in("fieldHeight", 16, MAX_FIELD_PX)?;
        let short_side = field_width.min(field_height);
        let cfg = HordeConfig {
            seed: c.u64_in("seed", 0, u64::MAX)?,
            players: u8::try_from(optional_u64(&c, "players", 1, MAX_HEROES as u64, 1)?)
                .unwrap_or(1),
            tick_hz: u32::try_from(optional_u64(&c, "tickHz", 1, 1000, 30)?).unwrap_or(30),
            max_catch_up_steps: optional_u64(&c, "maxCatchUpSteps", 0, 1_000_000, 300)?,
            min_catch_up_ms: optional_u64(&c, "minCatchUpMs", 0, 86_400_000, 32)?,
            max_steps_per_frame: u32::try_from(optional_u64(&c, "maxStepsPerFrame", 1, 10_000, 8)?)
                .unwrap_or(8),
            field_width,
            field_height,
            enemies: c.u32_in("enemies", 1, MAX_ENEMIES)?,
            grid_cell: c.u32_in("gridCell", 1, short_side)?,
            player_radius: c.u32_in("playerRadius", 0, short_side)?,
            player_speed: c.u32_in("playerSpeed", 0, 64 * 256)?,
            player_hp: c.u32_in("playerHp", 1, 1_000_000_000)?,
            invuln_ticks: c.u32_in("invulnTicks", 0, 1_000_000)?,
            attack_radius: c.u32_in("attackRadius", 0, short_side)?,
            attack_damage: c.u32_in("attackDamage", 0, 1_000_000_000)?,
            attack_cooldown_ticks: c.u32_in("attackCooldownTicks", 1, 1_000_000)?,
            enemy_radius: c.u32_in("enemyRadius", 1, MAX_ENEMY_RADIUS_PX)?,
            enemy_speed: c.u32_in("enemySpeed", 0, 64 * 256)?,
            enemy_hp: c.u32_in("enemyHp", 1, 1_000_000_000)?,
            contact_damage: c.u32_in("contactDamage", 0, 1_000_000_000)?,
            steer_shift: c.u32_in("steerShift", 0, 16)?,
            crowd_limit: c.u32_in("crowdLimit", 0, 1000)?,
            separation_strength: c.u32_in("separationStrength", 0, 256)?,
            max_push: c.u32_in("maxPush", 0, 64 * 256)?,
            separation_ticks: u32::try_from(optional_u64(
                &c,
                "separationTicks",
                1,
                u64::from(MAX_SEPARATION_TICKS),
                1,
            )?)
            .unwrap_or(1),
            wave_ticks: c.u32_in("waveTicks", 1, 1_000_000)?,
            spawn_distance: c.u32_in("spawnDistance", 0, MAX_FIELD_PX)?,
            spawn_spacing: c.u32_in("spawnSpacing", 1, 1024)?,
        };
        cfg.check()
    }

    /// The cross-checks between keys.
    fn check(self) -> Result<HordeConfig, ConfigError> {
        if self.grid_cell < 2 * self.enemy_radius {
            return Err(ConfigError::Inconsistent {
                key: "gridCell".into(),
                message: format!(
                    "must be at least two enemy radii ({} px): a smaller cell makes the 3x3 neighbour search miss overlapping pairs",
                    2 * self.enemy_radius
                ),
            });
        }
        let (cols, rows) = self.grid_dims();
        let cells = u64::from(cols) * u64::from(rows);
        if cells > MAX_GRID_CELLS {
            return Err(ConfigError::Inconsistent {
                key: "gridCell".into(),
                message: format!(
                    "a {}x{} px field in {} px cells has {cells} cells, more than {MAX_GRID_CELLS}: use larger cells or a smaller field",
                    self.field_width, self.field_height, self.grid_cell
                ),
            });
        }
        Ok(self)
    }

    /// The same config with `n` enemies (the CLI's `--enemies`).
    ///
    /// # Errors
    ///
    /// [`ConfigError::OutOfRange`] for key `enemies` unless `1 <= n <=` [`MAX_ENEMIES`].
    pub fn with_enemies(self, n: u64) -> Result<HordeConfig, ConfigError> {
        match u32::try_from(n) {
            Ok(n) if (1..=MAX_ENEMIES).contains(&n) => Ok(HordeConfig { enemies: n, ..self }),
            _ => Err(ConfigError::OutOfRange {
                key: "enemies".into(),
                expected: format!("1..={MAX_ENEMIES}"),
                found: format!("{n}"),
            }),
        }
    }

    /// The same config with `n` heroes (one per player).
    ///
    /// # Errors
    ///
    /// [`ConfigError::OutOfRange`] for key `players` unless `1 <= n <=`
    /// [`super::MAX_HEROES`].
    pub fn with_players(self, n: u64) -> Result<HordeConfig, ConfigError> {
        match u8::try_from(n) {
            Ok(p) if (1..=MAX_HEROES as u64).contains(&n) => Ok(HordeConfig { players: p, ..self }),
            _ => Err(ConfigError::OutOfRange {
                key: "players".into(),
                expected: format!("1..={MAX_HEROES}"),
                found: format!("{n}"),
            }),
        }
    }

    /// The same config with separation every `n` ticks (the key
    /// `separationTicks`; see the module docs of [`super`]).
    ///
    /// # Errors
    ///
    /// [`ConfigError::OutOfRange`] for key `separationTicks` unless
    /// `1 <= n <=` [`MAX_SEPARATION_TICKS`].
    pub fn with_separation_ticks(self, n: u64) -> Result<HordeConfig, ConfigError> {
        match u32::try_from(n) {
            Ok(t) if (1..=MAX_SEPARATION_TICKS).contains(&t) => Ok(HordeConfig {
                separation_ticks: t,
                ..self
            }),
            _ => Err(ConfigError::OutOfRange {
                key: "separationTicks".into(),
                expected: format!("1..={MAX_SEPARATION_TICKS}"),
                found: format!("{n}"),
            }),
        }
    }

    /// The same config with another seed.
    #[must_use]
    pub const fn with_seed(self, seed: u64) -> HordeConfig {
        HordeConfig { seed, ..self }
    }

    /// Grid columns and rows covering the field.
    pub(super) const fn grid_dims(&self) -> (u32, u32) {
        (
            self.field_width.div_ceil(self.grid_cell),
            self.field_height.div_ceil(self.grid_cell),
        )
    }

    /// The fixed step, `1 / tickHz` seconds.
    #[must_use]
    pub fn step(&self) -> StepLength {
        // tick_hz is validated to 1..=1000.
        StepLength::from_hz(u64::from(self.tick_hz)).unwrap_or(THIRTY_HZ)
    }

    /// The clock configuration: the step and `maxStepsPerFrame`.
    #[must_use]
    pub fn clock_config(&self) -> ClockConfig {
        let cap = core::num::NonZeroU32::new(self.max_steps_per_frame)
            .unwrap_or(tickwise::DEFAULT_MAX_STEPS_PER_FRAME);
        ClockConfig::new(self.step()).with_max_steps_per_frame(cap)
    }

    /// The resume rules' capped catch-up, with `maxCatchUpSteps` and
    /// `minCatchUpMs` from this config.
    #[must_use]
    pub const fn catch_up_policy(&self) -> CatchUpPolicy {
        CatchUpPolicy::Capped {
            max_steps: self.max_catch_up_steps,
            min_elapsed: Nanos::from_millis(self.min_catch_up_ms),
        }
    }

    /// Ticks until every enemy of the initial spawn can have reached the
    /// player at full speed: the spawn band's outer half-size, times 11/8
    /// (a corner is that much further in octagonal length), over
    /// `enemySpeed`, capped at [`MAX_SETTLE_TICKS`] (also for speed 0).
    /// Benchmarks warm up this long so that they time the steady state, a
    /// crowd around the player, not its approach.
    #[must_use]
    pub fn settle_ticks(&self) -> u64 {
        let outer = u64::from(
            super::spawn::SpawnBand::new(self.spawn_distance, self.spawn_spacing, self.enemies)
                .outer_px(),
        );
        match (outer * SUBPX as u64 * 11 / 8).checked_div(u64::from(self.enemy_speed)) {
            Some(t) => t.min(MAX_SETTLE_TICKS),
            None => MAX_SETTLE_TICKS,
        }
    }

    /// The RNG seed.
    #[must_use]
    pub const fn seed(&self) -> u64 {
        self.seed
    }
    /// Heroes, one per player (1..=[`super::MAX_HEROES`]).
    #[must_use]
    pub const fn players(&self) -> usize {
        self.players as usize
    }
    /// Ticks per second.
    #[must_use]
    pub const fn tick_hz(&self) -> u32 {
        self.tick_hz
    }
    /// The most steps one resume catches up.
    #[must_use]
    pub const fn max_catch_up_steps(&self) -> u64 {
        self.max_catch_up_steps
    }
    /// Ticks from one separation pass to the next (1: every tick).
    #[must_use]
    pub const fn separation_ticks(&self) -> u32 {
        self.separation_ticks
    }
    /// Enemy slots.
    #[must_use]
    pub const fn enemies(&self) -> u32 {
        self.enemies
    }
    /// Field width in pixels.
    #[must_use]
    pub const fn field_width_px(&self) -> u32 {
        self.field_width
    }
    /// Field height in pixels.
    #[must_use]
    pub const fn field_height_px(&self) -> u32 {
        self.field_height
    }
    /// Grid cell side in pixels.
    #[must_use]
    pub const fn grid_cell_px(&self) -> u32 {
        self.grid_cell
    }
    /// Player radius in pixels.
    #[must_use]
    pub const fn player_radius_px(&self) -> u32 {
        self.player_radius
    }
    /// Enemy radius in pixels.
    #[must_use]
    pub const fn enemy_radius_px(&self) -> u32 {
        self.enemy_radius
    }
    /// Auto-attack radius in pixels.
    #[must_use]
    pub const fn attack_radius_px(&self) -> u32 {
        self.attack_radius
    }
    /// The player's full hit points.
    #[must_use]
    pub const fn player_hp(&self) -> u32 {
        self.player_hp
    }
    /// An enemy's full hit points.
    #[must_use]
    pub const fn enemy_hp(&self) -> u32 {
        self.enemy_hp
    }

    /// A one-line summary for reports.
    #[must_use]
    pub fn summary(&self) -> String {
        format!(
            "{} enemies{}{} on {}x{} px, {} px cells, {} Hz, seed {}",
            self.enemies,
            match self.players {
                1 => String::new(),
                n => format!(", {n} heroes"),
            },
            match self.separation_ticks {
                1 => String::new(),
                n => format!(", separation every {n} ticks"),
            },
            self.field_width,
            self.field_height,
            self.grid_cell,
            self.tick_hz,
            self.seed
        )
    }

    /// A length in pixels as sub-pixels.
    pub(super) const fn subpx(px: u32) -> i64 {
        px as i64 * SUBPX as i64
    }
}

const THIRTY_HZ: StepLength = match StepLength::from_hz(30) {
    Ok(s) => s,
    Err(_) => unreachable!(),
};
