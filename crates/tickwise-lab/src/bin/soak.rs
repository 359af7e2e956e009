//! Soak: very long runs of the island and the horde through `FixedLoop`
//! with random frame schedules, checked against a straight run.
//!
//! ```text
//! cargo run --release -p tickwise-lab --bin soak -- [--island-ticks N] [--horde-ticks N]
//!     [--enemies N] [--seed N] [--island-check-every K] [--horde-check-every K]
//!     [--inject-divergence T]
//! ```
//!
//! `--inject-divergence T` is the soak's self-check: the straight run is
//! given another input at tick T (the loop side is not touched), so the two
//! worlds differ from tick T + 1 on, and the soak must report `DIVERGED` at
//! its first checkpoint past T and exit 1. `scripts/soak.sh --quick` runs it
//! for both sims after the real soak: a soak that cannot fail proves nothing.
//!
//! Defaults are the full sizes (10⁹ island ticks, 10⁸ ticks of a 300-enemy
//! horde); `scripts/soak.sh` runs them and CI runs a tiny version.
//!
//! What a soak checks, and why the comparison is exact: [`tickwise_lab::soak`].
//! This binary only parses flags, builds the two sims' configs and prints.
//! Exit status: 0 pass, 1 divergence or counter failure, 2 bad arguments.

use std::process::ExitCode;

use tickwise::Nanos;
use tickwise_lab::soak::{SoakPlan, soak};
use tickwise_sims::horde::{HordeConfig, HordeWorld};
use tickwise_sims::island::{IslandConfig, IslandWorld};

const ISLAND_CONFIG: &[u8] = tickwise_sims::ISLAND_LOOP_JSON;
const HORDE_CONFIG: &[u8] = tickwise_sims::HORDE_JSON;

fn arg_value(args: &[String], flag: &str, default: u64) -> Result<u64, String> {
    match args.iter().position(|a| a == flag) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.replace('_', "").parse().ok())
            .ok_or_else(|| format!("{flag} needs a non-negative integer")),
    }
}

fn run(args: &[String]) -> Result<Vec<String>, (u8, String)> {
    const FLAGS: [&str; 7] = [
        "--island-ticks",
        "--horde-ticks",
        "--enemies",
        "--seed",
        "--island-check-every",
        "--horde-check-every",
        "--inject-divergence",
    ];
    for (i, a) in args.iter().enumerate() {
        if i % 2 == 0 && !FLAGS.contains(&a.as_str()) {
            return Err((
                2,
                format!("unknown argument {a:?} (flags: {})", FLAGS.join(", ")),
            ));
        }
    }
    let usage = |e: String| (2u8, e);
    let island_ticks = arg_value(args, "--island-ticks", 1_000_000_000).map_err(usage)?;
    let horde_ticks = arg_value(args, "--horde-ticks", 100_000_000).map_err(usage)?;
    let enemies = arg_value(args, "--enemies", 300).map_err(usage)?;
    let seed = arg_value(args, "--seed", 13).map_err(usage)?;
    // 0 is taken as 1: `SoakPlan::check_every` is at least 1.
    let island_every = arg_value(args, "--island-check-every", 1_000_000).map_err(usage)?;
    let horde_every = arg_value(args, "--horde-check-every", 10_000).map_err(usage)?;
    let inject_at = if args.iter().any(|a| a == "--inject-divergence") {
        Some(arg_value(args, "--inject-divergence", 0).map_err(usage)?)
    } else {
        None
    };

    let mut out = Vec::new();
    let fail = |e: tickwise_lab::soak::SoakError| (1u8, e.to_string());
    if island_ticks > 0 {
        let cfg = IslandConfig::from_json(ISLAND_CONFIG).map_err(|e| (2, e.to_string()))?;
        // The checked-in config has no frame clamp; add one so that hitches
        // exercise the clamp as well as the step cap.
        let clock = cfg.clock_config().with_max_frame(Nanos::from_millis(250));
        let plan = SoakPlan {
            name: "island",
            ticks: island_ticks,
            check_every: island_every,
            seed,
            inject_at,
        };
        // A century-long first frame: the host clock starts near a sixth of
        // its range (u64 ns is 584 years), the clamp keeps 250 ms of it.
        let century = Nanos::from_secs(100 * 365 * 86_400);
        out.push(
            soak(&plan, || IslandWorld::new(&cfg), clock, century)
                .map_err(fail)?
                .to_string(),
        );
    }
    if horde_ticks > 0 {
        let cfg = HordeConfig::from_json(HORDE_CONFIG)
            .and_then(|c| c.with_enemies(enemies))
            .map_err(|e| (2, e.to_string()))?;
        // 30 Hz is a rational step (33 333 333⅓ ns): exercises the exact
        // accounting; the jitter guard adds its borrowed drift to it.
        let clock = cfg
            .clock_config()
            .with_jitter_tolerance(Nanos::from_micros(500))
            .map_err(|e| (2, e.to_string()))?;
        let plan = SoakPlan {
            name: "horde",
            ticks: horde_ticks,
            check_every: horde_every,
            seed,
            inject_at,
        };
        out.push(
            soak(&plan, || HordeWorld::new(&cfg), clock, Nanos::ZERO)
                .map_err(fail)?
                .to_string(),
        );
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(lines) => {
            for l in lines {
                println!("{l}");
            }
            println!("soak: PASS");
            ExitCode::SUCCESS
        }
        Err((code, e)) => {
            eprintln!("soak: FAIL: {e}");
            ExitCode::from(code)
        }
    }
}
