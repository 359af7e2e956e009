//! `tickwise horde`: run the horde headless for T ticks; print digest and timing.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use tickwise::{Sim, TickInput};
use tickwise_catalog::{CatalogSim as _, DEFAULT_MAX_WORK, check_work};
use tickwise_lab::budget::{MAX_TICKS, time_ticks};
use tickwise_sims::horde::{HordeConfig, HordeWorld, MAX_HEROES, scripted_input};

use super::record::read_config;
use crate::{Failure, hints};

/// What drives the heroes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Drive {
    /// The horde's scripted input, its walk: right, down, left, up, 90
    /// ticks each; player `p` walks it `90·p` ticks ahead (each starts on
    /// another side). The same input as every command's `--inputs scripted`.
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
/// applies `--enemies`.
///
/// # Errors
///
/// Unreadable file, invalid config or enemy count, naming the file.
pub fn load_horde(path: Option<&Path>, enemies: Option<u64>) -> anyhow::Result<HordeConfig> {
    let name = path.map_or_else(
        || "built-in horde config".to_owned(),
        |p| p.display().to_string(),
    );
    let bytes = read_config(path)?;
    let cfg = HordeConfig::from_json(bytes.as_deref().unwrap_or(HordeWorld::DEFAULT_CONFIG))
        .with_context(|| name.clone())?;
    match enemies {
        Some(n) => cfg.with_enemies(n).context("--enemies"),
        None => Ok(cfg),
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
    if args.ticks > MAX_TICKS {
        return Err(Failure::usage(anyhow::anyhow!(
            "--ticks {} is more than the {MAX_TICKS} accepted",
            args.ticks
        )));
    }
    let ticks = args.ticks;
    let mut cfg = load_horde(args.config.as_deref(), args.enemies)?;
    if let Some(seed) = args.seed {
        cfg = cfg.with_seed(seed);
    }
    if let Some(n) = args.players {
        cfg = cfg.with_players(n).context("--players")?;
    }
    check_work(ticks, HordeWorld::work_per_tick(&cfg), args.max_work).map_err(hints::catalog)?;
    let pool = super::thread_pool(args.threads.map(usize::from))?;
    let mut world = HordeWorld::new(&cfg);
    let times = pool.install(|| match args.inputs {
        Drive::Scripted => {
            let mut t = 0;
            let mut inputs = [TickInput::default(); MAX_HEROES];
            time_ticks(ticks, || {
                for (p, input) in (0u64..).zip(inputs.iter_mut()) {
                    *input = scripted_input(t + 90 * p);
                }
                world.step_players(&inputs);
                t += 1;
            })
        }
        Drive::Still => time_ticks(ticks, || world.step_players(&[])),
    });
    let n = times.len().max(1) as u64;
    let us = |ns: u64| ns as f64 / 1000.0;
    if args.json {
        let v = serde_json::json!({
            "sim": "horde",
            "enemies": cfg.enemies(),
            "players": cfg.players(),
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
        println!("{v}");
    } else {
        println!("horde: {}", cfg.summary());
        let inputs = match args.inputs {
            Drive::Scripted => "scripted",
            Drive::Still => "still",
        };
        println!("ticks: {} (inputs: {inputs})", world.tick());
        println!("digest: {}", world.digest());
        println!(
            "alive {}, kills {}, waves {}, player hp {}, downs {}, overlapping pairs last tick {}",
            world.alive(),
            world.kills(),
            world.waves(),
            world.player_hp(),
            world.player_downs(),
            world.last_pairs()
        );
        println!(
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
    use clap::Parser as _;

    use crate::cmd::budget::assert_usage_error;
    use crate::{Cli, run};

    fn horde(extra: &[&str]) -> Result<u8, crate::Failure> {
        let mut args = vec!["tickwise", "horde"];
        args.extend_from_slice(extra);
        run(
            Cli::try_parse_from(args).unwrap(),
            &crate::ToolInfo::TICKWISE,
            &crate::Catalog::builtin(),
        )
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
        for (extra, needle) in [
            (&["--enemies", "0"][..], "enemies"),
            (&["--enemies", "5000000"][..], "enemies"),
            (&["--ticks", "10000001"][..], "--ticks"),
            (&["--players", "5"][..], "players"),
            (&["--players", "0"][..], "players"),
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
