//! `tickwise horde`: run the horde headless for T ticks; print digest and timing.

//!
//! Flags and printing: the config's overrides, the heroes' walk and the
//! timed run are [`tickwise_lab::horde`]'s.

use std::path::{Path, PathBuf};

use tickwise::Sim as _;
use tickwise_catalog::DEFAULT_MAX_WORK;
use tickwise_lab::horde::{
    HordeConfig, HordeDrive, HordeOverrides, HordeRun, HordeRunError, check_horde_run,
    horde_config, run_headless,
};

use super::record::read_config;
use crate::{Failure, hints};

/// What drives the heroes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Drive {
    /// The horde's scripted input, its walk: right, down, left, up, 90
    /// ticks each; player `p` walks it `90·p` ticks ahead (each starts on
    /// another side). `--inputs scripted` of `record`, `netplay` and `peer`
    /// is the same walk without the offset: every player walks it in step.
    Scripted,
    /// No input: the heroes stand where they start.
    Still,
}

/// Arguments of `tickwise horde`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The horde config (default: `config/horde.json`, built in).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Enemy count (overrides the config's `enemies`).
    #[arg(long, value_name = "N")]
    pub enemies: Option<u64>,
    /// RNG seed (overrides the config's `seed`).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Heroes, one per player, 1 to 4 (overrides the config's `players`).
    #[arg(long, value_name = "N")]
    pub players: Option<u64>,
    /// Run separation (and build its grid) every N ticks, 1 to 64, with N
    /// times the push (overrides the config's `separationTicks`).
    #[arg(long, value_name = "N")]
    pub separation_ticks: Option<u64>,
    /// Ticks to run.
    #[arg(long, value_name = "T", default_value_t = 300)]
    pub ticks: u64,
    /// The players' inputs.
    #[arg(long, value_enum, default_value = "scripted")]
    pub inputs: Drive,
    /// The flag's old name (`--input walk|still`): refused, naming the new
    /// one, so a script written for it fails loudly instead of silently.
    #[arg(long, value_name = "OLD", hide = true)]
    pub input: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Refuse a run whose ticks × the horde's calibrated cost per tick is
    /// more work units than this (about 1 per ns; docs/limits.md).
    #[arg(long, value_name = "UNITS", default_value_t = DEFAULT_MAX_WORK)]
    pub max_work: u64,
    /// Worker threads for the tick (default: one per core). Any count gives
    /// the same digest: the work is split the same way whatever the pool.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// Loads a horde config (the built-in default when `path` is `None`) and
/// applies the overrides; a config error names the file, an override's the
/// flag.
///
/// # Errors
///
/// Unreadable file, invalid config, enemy or player count.
pub fn load_horde(path: Option<&Path>, overrides: &HordeOverrides) -> anyhow::Result<HordeConfig> {
    let bytes = read_config(path)?;
    horde_config(bytes.as_deref(), overrides).map_err(|e| match e {
        HordeRunError::Config(e) => anyhow::Error::new(e).context(path.map_or_else(
            || "built-in horde config".to_owned(),
            |p| p.display().to_string(),
        )),
        other => run_error(other),
    })
}

/// A refused run, with the flag that changes what was refused.
fn run_error(e: HordeRunError) -> anyhow::Error {
    match e {
        HordeRunError::Config(e) => anyhow::Error::new(e),
        HordeRunError::Enemies(e) => anyhow::Error::new(e).context("--enemies"),
        HordeRunError::Players(e) => anyhow::Error::new(e).context("--players"),
        HordeRunError::SeparationTicks(e) => anyhow::Error::new(e).context("--separation-ticks"),
        HordeRunError::TooManyTicks { ticks, max } => {
            anyhow::anyhow!("--ticks {ticks} is more than the {max} accepted")
        }
        HordeRunError::Work(e) => hints::catalog(e),
        other => anyhow::Error::new(other),
    }
}

/// Runs `tickwise horde`.
///
/// # Errors
///
/// Exit code 2 for an unreadable or invalid config, enemy count or tick count.
pub fn run(args: &Args) -> Result<u8, Failure> {
    if let Some(old) = &args.input {
        let new = if old == "walk" { "scripted" } else { old };
        return Err(Failure::usage(anyhow::anyhow!(
            "--input {old}: the flag is now `--inputs {new}` (scripted input has one name in every command)"
        )));
    }
    let overrides = HordeOverrides {
        enemies: args.enemies,
        seed: args.seed,
        players: args.players,
        separation_ticks: args.separation_ticks,
    };
    let cfg = load_horde(args.config.as_deref(), &overrides)?;
    let drive = match args.inputs {
        Drive::Scripted => HordeDrive::Scripted,
        Drive::Still => HordeDrive::Still,
    };
    // The tick count is checked before the thread pool starts.
    check_horde_run(&cfg, args.ticks, args.max_work).map_err(run_error)?;
    let pool = super::thread_pool(args.threads.map(usize::from))?;
    let HordeRun { world, times } = pool
        .install(|| run_headless(&cfg, args.ticks, drive, args.max_work))
        .map_err(run_error)?;
    let n = times.len().max(1) as u64;
    let us = |ns: u64| ns as f64 / 1000.0;
    if args.json {
        let v = serde_json::json!({
            "sim": "horde",
            "enemies": cfg.enemies(),
            "players": cfg.players(),
            "separationTicks": cfg.separation_ticks(),
            "seed": cfg.seed(),
            "ticks": world.tick(),
            "digest": world.digest(),
            "checksum": format!("{:016x}", world.checksum()),
            "alive": world.alive(),
            "kills": world.kills(),
            "waves": world.waves(),
            "playerHp": world.player_hp(),
            "playerDowns": world.player_downs(),
            "heroHp": world.heroes().iter().map(|h| h.hp).collect::<Vec<_>>(),
            "heroDowns": world.heroes().iter().map(|h| h.downs).collect::<Vec<_>>(),
            "wipes": world.wipes(),
            "lastPairs": world.last_pairs(),
            "totalNs": times.total(),
            "meanNs": times.total() / n,
            "medianNs": times.median(),
            "p99Ns": times.p99(),
            "maxNs": times.max(),
        });
        outln!("{v}");
    } else {
        outln!("horde: {}", cfg.summary());
        let inputs = match args.inputs {
            Drive::Scripted => "scripted",
            Drive::Still => "still",
        };
        outln!("ticks: {} (inputs: {inputs})", world.tick());
        outln!("digest: {}", world.digest());
        outln!(
            "alive {}, kills {}, waves {}, player hp {}, downs {}, overlapping pairs at the last separation {}",
            world.alive(),
            world.kills(),
            world.waves(),
            world.player_hp(),
            world.player_downs(),
            world.last_pairs()
        );
        outln!(
            "time: total {:.3} ms; per tick mean {:.1} us, median {:.1} us, p99 {:.1} us, max {:.1} us",
            times.total() as f64 / 1e6,
            us(times.total() / n),
            us(times.median()),
            us(times.p99()),
            us(times.max())
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use crate::cmd::budget::{assert_usage_error, run_tickwise};

    fn horde(extra: &[&str]) -> Result<u8, crate::Failure> {
        run_tickwise(&[&["horde"], extra].concat())
    }

    #[test]
    fn runs_and_refuses_bad_arguments_with_exit_code_2() {
        assert_eq!(
            horde(&["--enemies", "20", "--ticks", "5", "--json"]).unwrap(),
            0
        );
        assert_eq!(
            horde(&["--enemies", "20", "--ticks", "5", "--players", "4"]).unwrap(),
            0
        );
        assert_eq!(
            horde(&["--enemies", "20", "--ticks", "5", "--separation-ticks", "2"]).unwrap(),
            0
        );
        for (extra, needle) in [
            (&["--enemies", "0"][..], "enemies"),
            (&["--enemies", "5000000"][..], "enemies"),
            (&["--ticks", "10000001"][..], "--ticks"),
            (&["--players", "5"][..], "players"),
            (&["--players", "0"][..], "players"),
            (&["--separation-ticks", "0"][..], "separation-ticks"),
            (&["--separation-ticks", "65"][..], "separation-ticks"),
        ] {
            assert_usage_error(horde(extra), extra, needle);
        }
        // The old flag is refused with the new name (issue 19).
        assert_usage_error(
            horde(&["--input", "walk"]),
            &["--input", "walk"],
            "the flag is now `--inputs scripted`",
        );
        assert_usage_error(
            horde(&["--input", "still"]),
            &["--input", "still"],
            "the flag is now `--inputs still`",
        );
        assert_eq!(
            horde(&["--enemies", "5", "--ticks", "3", "--inputs", "still"]).unwrap(),
            0
        );
        let f = horde(&["--config", "/no/such.json"]).unwrap_err();
        assert!(
            format!("{:#}", f.error).contains("/no/such.json"),
            "{:#}",
            f.error
        );
    }
}
