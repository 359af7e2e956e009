//! The horde headless: its config with command-line overrides, then `T`
//! ticks with every tick timed (what `tickwise horde` prints).
//!
//! Why here: how the heroes are driven (each player walks the square
//! [`WALK_OFFSET_TICKS`] ticks ahead of the one before) and what a run is
//! allowed to cost are the measurement's rules, not the command line's; a
//! benchmark or a test gets the same run.

use std::fmt;

use tickwise::TickInput;
use tickwise_catalog::{CatalogError, CatalogSim as _, ConfigError, check_work};
/// The horde's config and world, the types a run is made of (re-exported
/// so that a front end needs no dependency of its own on the sims crate).
pub use tickwise_sims::horde::{HordeConfig, HordeWorld};
use tickwise_sims::horde::{MAX_HEROES, scripted_input};

use crate::budget::{MAX_TICKS, TickTimes, time_ticks};

/// Player `p` walks the scripted square this many ticks ahead of player
/// `p - 1`: one side of the square, so each hero starts on another side.
pub const WALK_OFFSET_TICKS: u64 = 90;

/// What drives the heroes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HordeDrive {
    /// The scripted walk ([`hero_walk`]).
    Scripted,
    /// No input: the heroes stand where they start.
    Still,
}

/// Player `player`'s scripted input at `tick`: the horde's square walk
/// ([`scripted_input`]), [`WALK_OFFSET_TICKS`] · `player` ticks ahead.
#[must_use]
pub fn hero_walk(player: usize, tick: u64) -> TickInput {
    let ahead = WALK_OFFSET_TICKS.saturating_mul(player as u64);
    scripted_input(tick.saturating_add(ahead))
}

/// Changes to a horde config, each checked by the config's own rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HordeOverrides {
    /// The enemy count.
    pub enemies: Option<u64>,
    /// The RNG seed.
    pub seed: Option<u64>,
    /// Heroes, one per player.
    pub players: Option<u64>,
    /// Ticks from one separation pass to the next (`separationTicks`).
    pub separation_ticks: Option<u64>,
}

/// Why a horde run was refused before it ran.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HordeRunError {
    /// The config itself.
    Config(ConfigError),
    /// The enemy count override.
    Enemies(ConfigError),
    /// The player count override.
    Players(ConfigError),
    /// The separation interval override (`separationTicks`).
    SeparationTicks(ConfigError),
    /// More ticks than [`MAX_TICKS`] (every tick's time is kept).
    TooManyTicks {
        /// Ticks asked for.
        ticks: u64,
        /// The most accepted.
        max: u64,
    },
    /// The run's work (ticks × the horde's cost per tick) is over the limit.
    Work(CatalogError),
}

impl fmt::Display for HordeRunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HordeRunError::Config(e) => write!(f, "the horde config: {e}"),
            HordeRunError::Enemies(e) => write!(f, "the enemy count: {e}"),
            HordeRunError::Players(e) => write!(f, "the player count: {e}"),
            HordeRunError::SeparationTicks(e) => write!(f, "the separation interval: {e}"),
            HordeRunError::TooManyTicks { ticks, max } => {
                write!(f, "{ticks} ticks is more than the {max} accepted")
            }
            HordeRunError::Work(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for HordeRunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HordeRunError::Config(e)
            | HordeRunError::Enemies(e)
            | HordeRunError::Players(e)
            | HordeRunError::SeparationTicks(e) => Some(e),
            HordeRunError::Work(e) => Some(e),
            HordeRunError::TooManyTicks { .. } => None,
        }
    }
}

/// The horde config from `bytes` (the built-in default for `None`) with
/// `overrides` applied: enemies, then seed, then players, then the
/// separation interval.
///
/// # Errors
///
/// [`HordeRunError::Config`], [`HordeRunError::Enemies`],
/// [`HordeRunError::Players`] or [`HordeRunError::SeparationTicks`], naming
/// the part refused.
pub fn horde_config(
    bytes: Option<&[u8]>,
    overrides: &HordeOverrides,
) -> Result<HordeConfig, HordeRunError> {
    let mut cfg = HordeConfig::from_json(bytes.unwrap_or(HordeWorld::DEFAULT_CONFIG))
        .map_err(HordeRunError::Config)?;
    if let Some(n) = overrides.enemies {
        cfg = cfg.with_enemies(n).map_err(HordeRunError::Enemies)?;
    }
    if let Some(seed) = overrides.seed {
        cfg = cfg.with_seed(seed);
    }
    if let Some(n) = overrides.players {
        cfg = cfg.with_players(n).map_err(HordeRunError::Players)?;
    }
    if let Some(n) = overrides.separation_ticks {
        cfg = cfg
            .with_separation_ticks(n)
            .map_err(HordeRunError::SeparationTicks)?;
    }
    Ok(cfg)
}

/// A finished headless run: the world after it and every tick's time.
#[derive(Clone, Debug)]
pub struct HordeRun {
    /// The world after the last tick.
    pub world: HordeWorld,
    /// Each tick's wall-clock time.
    pub times: TickTimes,
}

/// Checks a run of `ticks` ticks of `cfg` against [`MAX_TICKS`] and
/// `max_work` work units (the horde's calibrated cost per tick), before
/// anything runs.
///
/// # Errors
///
/// [`HordeRunError::TooManyTicks`] or [`HordeRunError::Work`].
pub fn check_horde_run(cfg: &HordeConfig, ticks: u64, max_work: u64) -> Result<(), HordeRunError> {
    if ticks > MAX_TICKS {
        return Err(HordeRunError::TooManyTicks {
            ticks,
            max: MAX_TICKS,
        });
    }
    check_work(ticks, HordeWorld::work_per_tick(cfg), max_work).map_err(HordeRunError::Work)?;
    Ok(())
}

/// Runs a fresh horde of `cfg` for `ticks` ticks driven by `drive`, timing
/// each tick, after [`check_horde_run`]. The horde's tick uses the rayon
/// pool it is called in (`pool.install`), with the same results at any size.
///
/// # Errors
///
/// As [`check_horde_run`]; nothing runs then.
pub fn run_headless(
    cfg: &HordeConfig,
    ticks: u64,
    drive: HordeDrive,
    max_work: u64,
) -> Result<HordeRun, HordeRunError> {
    check_horde_run(cfg, ticks, max_work)?;
    let mut world = HordeWorld::new(cfg);
    let times = match drive {
        HordeDrive::Scripted => {
            let mut t = 0;
            let mut inputs = [TickInput::default(); MAX_HEROES];
            time_ticks(ticks, || {
                for (p, input) in inputs.iter_mut().enumerate() {
                    *input = hero_walk(p, t);
                }
                world.step_players(&inputs);
                t += 1;
            })
        }
        HordeDrive::Still => time_ticks(ticks, || world.step_players(&[])),
    };
    Ok(HordeRun { world, times })
}

#[cfg(test)]
mod tests {
    use tickwise::Sim as _;
    use tickwise_catalog::DEFAULT_MAX_WORK;

    use super::*;

    #[test]
    fn each_hero_walks_one_side_ahead_of_the_one_before() {
        // The square: right for ticks 0..90, down for 90..180, left, up.
        for p in 0..MAX_HEROES {
            for t in [0, 1, 89, 90, 300, 1_000] {
                assert_eq!(hero_walk(p, t), scripted_input(t + 90 * p as u64));
            }
        }
        assert_eq!(hero_walk(1, 0), scripted_input(90));
        assert_ne!(hero_walk(1, 0), hero_walk(0, 0));
    }

    #[test]
    fn overrides_apply_and_are_refused_by_part() {
        let o = HordeOverrides {
            enemies: Some(20),
            seed: Some(7),
            players: Some(3),
            separation_ticks: Some(2),
        };
        let cfg = horde_config(None, &o).unwrap();
        assert_eq!(
            (
                cfg.enemies(),
                cfg.seed(),
                cfg.players(),
                cfg.separation_ticks()
            ),
            (20, 7, 3, 2)
        );
        for (o, want) in [
            (
                HordeOverrides {
                    enemies: Some(0),
                    ..HordeOverrides::default()
                },
                "Enemies",
            ),
            (
                HordeOverrides {
                    players: Some(5),
                    ..HordeOverrides::default()
                },
                "Players",
            ),
            (
                HordeOverrides {
                    separation_ticks: Some(65),
                    ..HordeOverrides::default()
                },
                "SeparationTicks",
            ),
        ] {
            let e = horde_config(None, &o).unwrap_err();
            assert!(format!("{e:?}").starts_with(want), "{e:?}");
        }
        assert!(matches!(
            horde_config(Some(b"{}"), &HordeOverrides::default()),
            Err(HordeRunError::Config(_))
        ));
    }

    #[test]
    fn a_run_times_every_tick_and_matches_stepping_by_hand() {
        let cfg = horde_config(
            None,
            &HordeOverrides {
                enemies: Some(20),
                players: Some(2),
                ..HordeOverrides::default()
            },
        )
        .unwrap();
        let run = run_headless(&cfg, 12, HordeDrive::Scripted, DEFAULT_MAX_WORK).unwrap();
        assert_eq!(run.world.tick(), 12);
        assert_eq!(run.times.len(), 12);
        // The same ticks stepped here, each hero on its own side of the walk.
        let mut w = HordeWorld::new(&cfg);
        for t in 0..12 {
            w.step_players(&[hero_walk(0, t), hero_walk(1, t)]);
        }
        assert_eq!(run.world.digest(), w.digest());
        let still = run_headless(&cfg, 3, HordeDrive::Still, DEFAULT_MAX_WORK).unwrap();
        assert_eq!(still.world.tick(), 3);
    }

    #[test]
    fn too_many_ticks_and_too_much_work_are_refused_before_running() {
        let cfg = horde_config(None, &HordeOverrides::default()).unwrap();
        assert_eq!(
            check_horde_run(&cfg, MAX_TICKS + 1, u64::MAX),
            Err(HordeRunError::TooManyTicks {
                ticks: MAX_TICKS + 1,
                max: MAX_TICKS
            })
        );
        // One tick costs more than 1 unit, so a 1-unit limit refuses it.
        assert!(matches!(
            run_headless(&cfg, 1, HordeDrive::Still, 1),
            Err(HordeRunError::Work(CatalogError::TooMuchWork {
                ticks: 1,
                limit: 1,
                ..
            }))
        ));
    }
}
