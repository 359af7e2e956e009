//! `tickwise budget`: measure any catalog sim's per-tick cost and pick a
//! tick rate.
//!
//! The method, the rate table and the recommendation live in
//! [`tickwise_lab::budget`], the sim's defaults and the work check in
//! [`tickwise_lab::sim_budget`]; this command parses flags, builds the sim
//! through the catalog (so a game's own sim is budgeted the same way) and
//! prints. `--cost-ms 9.2` skips measuring and reproduces the horde design
//! notes' table (recommends 30 Hz).

use std::path::PathBuf;

use tickwise_catalog::{Catalog, DEFAULT_MAX_WORK, SimProfile};
use tickwise_lab::budget::{Budget, BudgetPlan, DISPLAY_FRAME_NS};
use tickwise_lab::sim_budget::{BudgetRequest, SimBudgetError, budget_sim, config_with_enemies};

use super::record::{choose_sim, parse_plan, read_config};
use crate::{Failure, hints};

/// Nanoseconds in a millisecond, as a float for reporting.
const NS_PER_MS: f64 = 1_000_000.0;
/// Nanoseconds in a microsecond, as a float for reporting.
const NS_PER_US: f64 = 1_000.0;

/// Arguments of `tickwise budget`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sim to measure: any sim of the catalog. Default: the catalog's
    /// only sim if it has one, else `horde`.
    #[arg(long, value_name = "ID")]
    pub sim: Option<String>,
    /// The sim's config file (default: its built-in default config).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Sets the config's `enemies` key (the horde's enemy count) before the
    /// sim parses it; refused for a config without that key.
    #[arg(long, value_name = "N")]
    pub enemies: Option<u64>,
    /// The inputs that drive the sim while it is timed
    /// (`scripted`, `random:SEED` or a JSON file).
    #[arg(
        long,
        value_name = "scripted|random:SEED|FILE",
        default_value = "scripted"
    )]
    pub inputs: String,
    /// Candidate tick rates, comma-separated.
    #[arg(long, value_name = "HZ,...", value_delimiter = ',', default_value = "20,30,60",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub hz: Vec<u32>,
    /// Required headroom factor: budget / p99 cost must reach it for `ok`.
    #[arg(long, value_name = "X", default_value_t = 3.0)]
    pub headroom: f64,
    /// Ticks run before timing starts (default: the sim's settle time under
    /// its config, e.g. until the initial horde can have reached the player).
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,
    /// Ticks timed one by one.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub ticks: u64,
    /// Ticks in one catch-up burst (default: the config's most catch-up
    /// steps per resume, e.g. the horde's `maxCatchUpSteps`; none if the sim
    /// has no such setting).
    #[arg(long = "catch-up", value_name = "N")]
    pub catch_up: Option<u64>,
    /// Catch-up bursts timed (their median is reported).
    #[arg(long = "catch-up-runs", value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u64).range(1..=100))]
    pub catch_up_runs: u64,
    /// Skip measuring and take this per-tick cost in ms for median and p99
    /// (9.2 reproduces the horde design notes' table).
    #[arg(long = "cost-ms", value_name = "MS")]
    pub cost_ms: Option<f64>,
    /// Worker threads for the sim's tick (default: one per core; the horde
    /// splits its tick over them, with the same results at any count).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Refuse a measurement whose ticks (warm-up, timed and catch-up
    /// bursts) × the sim's calibrated cost per tick is more work units than
    /// this (about 1 per ns; docs/limits.md).
    #[arg(long, value_name = "UNITS", default_value_t = DEFAULT_MAX_WORK)]
    pub max_work: u64,
}

/// Runs `tickwise budget`.
///
/// # Errors
///
/// Exit code 2 for an unknown sim, an unreadable or invalid config, a bad
/// enemy count, tick count, headroom or cost (nothing is measured then).
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let pool = super::thread_pool(args.threads.map(usize::from))?;
    pool.install(|| run_in_pool(args, catalog))
}

/// [`run`], inside the worker pool the sim's ticks use.
fn run_in_pool(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let info = choose_sim(catalog, args.sim.as_deref(), "horde")?;
    let mut config = read_config(args.config.as_deref())?;
    if let Some(n) = args.enemies {
        let base = config.as_deref().unwrap_or(info.default_config);
        config = Some(
            config_with_enemies(base, info.id, n).map_err(|e| anyhow::anyhow!("--enemies: {e}"))?,
        );
    }
    let plan = parse_plan(&args.inputs)?;
    let mut runner = catalog
        .runner(info.id, config.as_deref(), &plan)
        .map_err(hints::catalog)?;
    let request = BudgetRequest {
        warmup: args.warmup,
        ticks: args.ticks,
        catch_up: args.catch_up,
        catch_up_runs: args.catch_up_runs,
        headroom: args.headroom,
        hz: args.hz.clone(),
        assumed_cost_ms: args.cost_ms,
        max_work: args.max_work,
    };
    let done = budget_sim(runner.as_mut(), &request).map_err(|e| match e {
        SimBudgetError::Budget(e) => hints::budget(e),
        SimBudgetError::Work(e) => hints::catalog(e),
        other => anyhow::Error::new(other),
    })?;
    let report = Report {
        args,
        profile: &done.profile,
        plan: &done.plan,
        budget: &done.budget,
        digest: done.digest,
    };
    outln!(
        "{}",
        if args.json {
            report.json()
        } else {
            report.text()
        }
    );
    Ok(0)
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS
}

/// `ns` in µs with 3 significant digits (whole µs from 100 µs up): a
/// 40 ns tick reads `0.0400`, a 9.2 ms one `9200`, neither `0.0000`.
fn us(ns: u64) -> String {
    let v = ns as f64 / NS_PER_US;
    if ns == 0 {
        return "0".to_owned();
    }
    // Digits after the point for 3 significant ones: 2 - floor(log10 v).
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else if v >= 1.0 {
        2
    } else if v >= 0.1 {
        3
    } else if v >= 0.01 {
        4
    } else {
        5
    };
    format!("{v:.decimals$}")
}

/// Everything a report prints.
struct Report<'a> {
    args: &'a Args,
    profile: &'a SimProfile,
    plan: &'a BudgetPlan,
    budget: &'a Budget,
    digest: Option<String>,
}

impl Report<'_> {
    fn config_name(&self) -> String {
        match &self.args.config {
            Some(p) => p.display().to_string(),
            None => "built-in default".to_owned(),
        }
    }

    fn text(&self) -> String {
        use std::fmt::Write as _;
        let (args, p, b, c) = (self.args, self.plan, self.budget, &self.budget.cost);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "sim: {} version {} (config: {}{}), {} work units per tick",
            self.profile.sim.id,
            self.profile.sim.version,
            self.config_name(),
            args.enemies
                .map(|n| format!(", enemies {n}"))
                .unwrap_or_default(),
            self.profile.work_per_tick
        );
        let how = if c.measured {
            let timed = if c.batch > 1 {
                format!(
                    "timed in batches of {} back-to-back ticks (each sample a batch's time per tick)",
                    c.batch
                )
            } else {
                "timed one by one".to_owned()
            };
            format!(
                "{} ticks {timed} after {} warm-up ticks, one thread, inputs {}",
                p.ticks, p.warmup, args.inputs
            )
        } else {
            "assumed cost (--cost-ms), nothing measured".to_owned()
        };
        let _ = writeln!(s, "method: {how}");
        let _ = writeln!(
            s,
            "cost per tick: median {} µs, p99 {} µs, mean {} µs, max {} µs",
            us(c.median_ns),
            us(c.p99_ns),
            us(c.mean_ns),
            us(c.max_ns)
        );
        if c.measured {
            // 1 work unit is about 1 ns on the reference machine
            // (docs/limits.md): the mean is the calibration to compare.
            let _ = writeln!(
                s,
                "measured: {} work units per tick on this machine (the mean in ns; median {}; the sim declares {})",
                c.mean_ns, c.median_ns, self.profile.work_per_tick
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:>6}  {:>7}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  verdict",
            "rate", "ticks/s", "budget µs", "median µs", "p99 µs", "headroom", "at p99"
        );
        for r in &b.rows {
            let _ = writeln!(
                s,
                "{:>6}  {:>7}  {:>10}  {:>10}  {:>10}  {:>9.1}x  {:>9.1}x  {}",
                format!("{} Hz", r.hz),
                r.hz,
                us(r.budget_ns),
                us(c.median_ns),
                us(c.p99_ns),
                r.headroom_median,
                r.headroom_p99,
                r.verdict.as_str()
            );
        }
        let _ = writeln!(s);
        match b.recommended {
            Some(hz) => {
                let _ = writeln!(
                    s,
                    "recommended: {hz} Hz (the highest candidate whose p99 tick fits {}x into its budget)",
                    b.headroom
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "recommended: none of the candidates keeps {}x headroom at p99: make the tick cheaper or the world smaller",
                    b.headroom
                );
            }
        }
        let _ = writeln!(
            s,
            "highest rate with {}x headroom at p99: {} Hz",
            b.headroom, b.max_hz
        );
        if let (Some(ns), Some(frames)) = (c.catch_up_ns, c.catch_up_frames()) {
            let _ = writeln!(
                s,
                "catch-up: {} ticks at once (the most one resume catches up) cost {:.3} ms = {frames:.2} display frames of {:.1} ms",
                p.catch_up,
                ms(ns),
                ms(DISPLAY_FRAME_NS)
            );
        }
        if let Some(d) = &self.digest {
            let _ = write!(s, "final digest: {d}");
        }
        s.trim_end().to_owned()
    }

    fn json(&self) -> String {
        let (args, p, b, c) = (self.args, self.plan, self.budget, &self.budget.cost);
        let rates: Vec<serde_json::Value> = b
            .rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "hz": r.hz,
                    "ticksPerSecond": r.hz,
                    "budgetNs": r.budget_ns,
                    "budgetMs": ms(r.budget_ns),
                    "headroomMedian": r.headroom_median,
                    "headroomP99": r.headroom_p99,
                    "verdict": r.verdict.as_str(),
                })
            })
            .collect();
        serde_json::json!({
            "sim": self.profile.sim.id,
            "simVersion": self.profile.sim.version,
            "config": self.config_name(),
            "enemies": args.enemies,
            "workPerTick": self.profile.work_per_tick,
            "inputs": args.inputs,
            "measured": c.measured,
            "measuredWorkPerTick": c.measured.then_some(c.mean_ns),
            "warmupTicks": p.warmup,
            "ticks": p.ticks,
            "batch": c.batch,
            "medianNs": c.median_ns,
            "p99Ns": c.p99_ns,
            "meanNs": c.mean_ns,
            "maxNs": c.max_ns,
            "requiredHeadroom": b.headroom,
            "rates": rates,
            "recommendedHz": b.recommended,
            "maxHzAtHeadroom": b.max_hz,
            "catchUp": {
                "steps": p.catch_up,
                "runs": p.catch_up_runs,
                "ns": c.catch_up_ns,
                "displayFrames": c.catch_up_frames(),
            },
            "digest": self.digest,
        })
        .to_string()
    }
}

/// Runs `tickwise <args>` in this process with the built-in catalog, as
/// the binary would (the unit tests of the commands use it).
#[cfg(test)]
pub(crate) fn run_tickwise(args: &[&str]) -> Result<u8, Failure> {
    use clap::Parser as _;
    let argv = std::iter::once("tickwise").chain(args.iter().copied());
    crate::run(
        crate::Cli::try_parse_from(argv).unwrap(),
        &crate::ToolInfo::TICKWISE,
        &crate::Catalog::builtin(),
    )
}

/// Asserts that `result` is a usage error (exit code 2) whose message
/// contains `needle`; `what` names the case in the failure message.
#[cfg(test)]
pub(crate) fn assert_usage_error(result: Result<u8, Failure>, what: &[&str], needle: &str) {
    let f = result.expect_err(&format!("{what:?} should fail"));
    assert_eq!(f.code, 2, "{what:?}");
    let msg = format!("{:#}", f.error);
    assert!(msg.contains(needle), "{what:?}: {msg}");
}

#[cfg(test)]
mod cli_tests {
    use clap::Parser as _;

    use super::{assert_usage_error, run_tickwise, us};
    use crate::Cli;

    fn budget(extra: &[&str]) -> Result<u8, crate::Failure> {
        run_tickwise(&[&["budget"], extra].concat())
    }

    #[test]
    fn assumed_and_measured_runs_succeed() {
        assert_eq!(budget(&["--cost-ms", "9.2"]).unwrap(), 0);
        assert_eq!(
            budget(&["--cost-ms", "9.2", "--json", "--hz", "24,48"]).unwrap(),
            0
        );
        let small = [
            "--enemies",
            "30",
            "--warmup",
            "5",
            "--ticks",
            "20",
            "--catch-up",
            "10",
        ];
        assert_eq!(budget(&small).unwrap(), 0);
        // Any catalog sim can be budgeted: the island has no catch-up setting.
        let island = ["--sim", "island", "--warmup", "0", "--ticks", "50"];
        assert_eq!(budget(&island).unwrap(), 0);
    }

    #[test]
    fn the_table_shows_3_significant_digits_in_microseconds() {
        // By hand: 40 ns = 0.04 µs; 9.2 ms = 9200 µs; a 60 Hz budget is
        // 16 666 666 ns = 16666.666 µs, whole µs from 100 µs up.
        for (ns, text) in [
            (40, "0.0400"),
            (23, "0.0230"),
            (7, "0.00700"),
            (1_234, "1.23"),
            (45_678, "45.7"),
            (123_456, "123"),
            (9_200_000, "9200"),
            (16_666_666, "16667"),
            (0, "0"),
        ] {
            assert_eq!(us(ns), text, "{ns} ns");
        }
    }

    #[test]
    fn bad_numbers_are_usage_errors() {
        for (extra, needle) in [
            (&["--headroom", "0.5"][..], "--headroom"),
            (&["--headroom", "NaN"][..], "--headroom"),
            (&["--cost-ms=-1"][..], "--cost-ms"),
            (&["--cost-ms", "inf"][..], "--cost-ms"),
            (&["--ticks", "0"][..], "--ticks"),
            (&["--warmup", "99999999999"][..], "--warmup"),
            (&["--enemies", "0"][..], "enemies"),
            (&["--sim", "zombies"][..], "known: island, horde"),
            (&["--sim", "island", "--enemies", "5"][..], "enemies"),
        ] {
            assert_usage_error(budget(extra), extra, needle);
        }
        // Rates outside 1..=10000 never reach the command.
        assert!(Cli::try_parse_from(["tickwise", "budget", "--hz", "30,0"]).is_err());
    }
}
