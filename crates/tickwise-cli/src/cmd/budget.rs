//! `tickwise budget`: measure the horde's per-tick cost and pick a tick rate.
//!
//! Seed 004's decision, measured instead of assumed: the cost of one tick does
//! not depend on the rate, so a lower rate buys budget. For each candidate
//! rate the table shows the budget per tick (`1000 / Hz` ms), the measured
//! median and p99 cost, the headroom factor (budget / cost) and a verdict:
//!
//! * `ok`: the p99 tick fits the budget `--headroom` times (default 3×);
//! * `tight`: only the median does;
//! * `over`: not even the median does.
//!
//! The recommended rate is the highest candidate that is `ok`. The catch-up
//! line times `maxCatchUpSteps` ticks run back to back, as a resume after a
//! long pause does under seed 002's capped policy, against one 60 Hz display
//! frame.
//!
//! Method: one thread, `Instant` around every step, after a warm-up that lets
//! the horde close in on the player (the expensive, steady state; by default
//! `HordeConfig::settle_ticks`). Medians and
//! p99 are nearest-rank. The numbers are this machine's; the seed's 9.2 ms
//! can be replayed with `--cost-ms 9.2` to check the table arithmetic.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use tickwise::Sim;
use tickwise_sims::horde::{HordeConfig, HordeWorld, demo_input};

use crate::Failure;

/// The most ticks one measurement may run (warm-up, timed or catch-up).
pub const MAX_TICKS: u64 = 10_000_000;
/// Nanoseconds in a millisecond, as a float for reporting.
const NS_PER_MS: f64 = 1_000_000.0;
/// One display frame at 60 Hz, in ns: what a catch-up must not blow through.
pub const DISPLAY_FRAME_NS: u64 = 16_666_667;

/// Sims the budget tool can measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SimName {
    /// Seed 004's horde (`config/horde.json`).
    Horde,
}

/// Arguments of `tickwise budget`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The sim to measure.
    #[arg(long, value_enum, default_value = "horde")]
    pub sim: SimName,
    /// The horde config.
    #[arg(long, value_name = "FILE", default_value = "config/horde.json")]
    pub config: PathBuf,
    /// Enemy count (overrides the config's `enemies`).
    #[arg(long, value_name = "N")]
    pub enemies: Option<u64>,
    /// Candidate tick rates, comma-separated.
    #[arg(long, value_name = "HZ,...", value_delimiter = ',', default_value = "20,30,60",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub hz: Vec<u32>,
    /// Required headroom factor: budget / p99 cost must reach it for `ok`.
    #[arg(long, value_name = "X", default_value_t = 3.0)]
    pub headroom: f64,
    /// Ticks run before timing starts (default: the config's settle time,
    /// until the initial horde can have reached the player).
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,
    /// Ticks timed one by one.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub ticks: u64,
    /// Ticks in one catch-up burst (default: the config's `maxCatchUpSteps`).
    #[arg(long = "catch-up", value_name = "N")]
    pub catch_up: Option<u64>,
    /// Catch-up bursts timed (their median is reported).
    #[arg(long = "catch-up-runs", value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u64).range(1..=100))]
    pub catch_up_runs: u64,
    /// Skip measuring and take this per-tick cost in ms for median and p99
    /// (seed 004's 9.2 reproduces its table).
    #[arg(long = "cost-ms", value_name = "MS")]
    pub cost_ms: Option<f64>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Per-tick wall-clock durations, sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TickTimes {
    sorted: Vec<u64>,
}

impl TickTimes {
    /// From unsorted durations in ns.
    #[must_use]
    pub fn new(mut ns: Vec<u64>) -> TickTimes {
        ns.sort_unstable();
        TickTimes { sorted: ns }
    }

    /// The nearest-rank percentile `pct` (0..=100): the smallest sample with at
    /// least `pct` % of the samples at or below it. 0 when empty.
    #[must_use]
    pub fn percentile(&self, pct: u64) -> u64 {
        let n = self.sorted.len() as u64;
        if n == 0 {
            return 0;
        }
        let rank = (pct.min(100) * n).div_ceil(100).max(1);
        self.sorted[usize::try_from(rank - 1).unwrap_or(0)]
    }

    /// The nearest-rank median.
    #[must_use]
    pub fn median(&self) -> u64 {
        self.percentile(50)
    }

    /// The nearest-rank 99th percentile.
    #[must_use]
    pub fn p99(&self) -> u64 {
        self.percentile(99)
    }

    /// The longest sample.
    #[must_use]
    pub fn max(&self) -> u64 {
        self.sorted.last().copied().unwrap_or(0)
    }

    /// The sum of all samples.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.sorted.iter().sum()
    }

    /// How many samples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }
}

/// Steps `sim` `ticks` times from tick `first` with `input(tick)`, timing each step.
pub fn time_ticks<S: Sim>(
    sim: &mut S,
    first: u64,
    ticks: u64,
    input: impl Fn(u64) -> S::Input,
) -> TickTimes {
    let mut ns = Vec::with_capacity(usize::try_from(ticks).unwrap_or(0));
    for t in first..first + ticks {
        let inp = input(t);
        let start = Instant::now();
        sim.step(&inp);
        ns.push(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    TickTimes::new(ns)
}

/// Runs `ticks` steps back to back and returns their total wall time in ns.
pub fn time_burst<S: Sim>(
    sim: &mut S,
    first: u64,
    ticks: u64,
    input: impl Fn(u64) -> S::Input,
) -> u64 {
    let start = Instant::now();
    for t in first..first + ticks {
        sim.step(&input(t));
    }
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Seed 004's verdict for one rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The p99 tick fits the budget the required number of times.
    Ok,
    /// Only the median tick does.
    Tight,
    /// Not even the median does.
    Over,
}

impl Verdict {
    /// The word printed in the table.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Tight => "tight",
            Verdict::Over => "over",
        }
    }
}

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateRow {
    /// Ticks per second.
    pub hz: u32,
    /// The budget of one tick in ns (`10^9 / hz`, exact to the ns below).
    pub budget_ns: u64,
    /// Budget / median cost.
    pub headroom_median: f64,
    /// Budget / p99 cost.
    pub headroom_p99: f64,
    /// The verdict for the required headroom.
    pub verdict: Verdict,
}

impl RateRow {
    /// The budget in ms truncated to 0.1 ms, as seed 004 prints it
    /// (50 / 33.3 / 16.6 ms at 20 / 30 / 60 Hz).
    #[must_use]
    pub fn budget_ms_seed(&self) -> f64 {
        (self.budget_ns / 100_000) as f64 / 10.0
    }
}

/// The table for a per-tick cost of `median_ns` / `p99_ns` and a required headroom.
#[must_use]
pub fn rate_table(median_ns: u64, p99_ns: u64, hz: &[u32], required: f64) -> Vec<RateRow> {
    hz.iter()
        .map(|&hz| {
            let budget_ns = 1_000_000_000 / u64::from(hz.max(1));
            let factor = |cost: u64| budget_ns as f64 / cost.max(1) as f64;
            let (hm, hp) = (factor(median_ns), factor(p99_ns));
            let verdict = if hp >= required {
                Verdict::Ok
            } else if hm >= required {
                Verdict::Tight
            } else {
                Verdict::Over
            };
            RateRow {
                hz,
                budget_ns,
                headroom_median: hm,
                headroom_p99: hp,
                verdict,
            }
        })
        .collect()
}

/// The highest rate whose verdict is `ok`, if any.
#[must_use]
pub fn recommend(rows: &[RateRow]) -> Option<u32> {
    rows.iter()
        .filter(|r| r.verdict == Verdict::Ok)
        .map(|r| r.hz)
        .max()
}

/// The highest whole rate at which the p99 tick still has `required` headroom.
#[must_use]
pub fn max_rate(p99_ns: u64, required: f64) -> u64 {
    (1e9 / (required * p99_ns.max(1) as f64)).floor() as u64
}

/// Loads a horde config and applies `--enemies`.
///
/// # Errors
///
/// Unreadable file, invalid config or enemy count, naming the file.
pub fn load_horde(path: &Path, enemies: Option<u64>) -> anyhow::Result<HordeConfig> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let cfg = HordeConfig::from_json(&bytes).with_context(|| format!("{}", path.display()))?;
    match enemies {
        Some(n) => cfg.with_enemies(n).context("--enemies"),
        None => Ok(cfg),
    }
}

/// Checks a tick count argument against [`MAX_TICKS`].
///
/// # Errors
///
/// A usage error naming the flag.
pub fn check_ticks(flag: &str, n: u64) -> Result<u64, Failure> {
    if n > MAX_TICKS {
        return Err(Failure::usage(anyhow::anyhow!(
            "{flag} {n} is more than the {MAX_TICKS} accepted"
        )));
    }
    Ok(n)
}

/// What was measured (or assumed with `--cost-ms`).
#[derive(Clone, Debug, PartialEq)]
struct Measured {
    median_ns: u64,
    p99_ns: u64,
    mean_ns: u64,
    max_ns: u64,
    catch_up_ns: Option<u64>,
    digest: Option<String>,
    pairs: Option<u64>,
}

fn measure(cfg: &HordeConfig, args: &Args, warmup: u64, catch_up: u64) -> Measured {
    let mut world = HordeWorld::new(cfg);
    let _ = time_burst(&mut world, 0, warmup, demo_input);
    let mut t = warmup;
    let times = time_ticks(&mut world, t, args.ticks, demo_input);
    t += args.ticks;
    let mut bursts = Vec::new();
    if catch_up > 0 {
        for _ in 0..args.catch_up_runs {
            bursts.push(time_burst(&mut world, t, catch_up, demo_input));
            t += catch_up;
        }
    }
    let n = times.len().max(1) as u64;
    Measured {
        median_ns: times.median(),
        p99_ns: times.p99(),
        mean_ns: times.total() / n,
        max_ns: times.max(),
        catch_up_ns: (!bursts.is_empty()).then(|| TickTimes::new(bursts).median()),
        digest: Some(world.digest()),
        pairs: Some(world.last_pairs()),
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS
}

/// Runs `tickwise budget`.
///
/// # Errors
///
/// Exit code 2 for an unreadable or invalid config, a bad enemy count, tick
/// count, headroom or cost (nothing is measured then).
pub fn run(args: &Args) -> Result<u8, Failure> {
    let SimName::Horde = args.sim;
    if !(args.headroom.is_finite() && args.headroom >= 1.0 && args.headroom <= 1e6) {
        return Err(Failure::usage(anyhow::anyhow!(
            "--headroom must be a number from 1 to 1000000, found {}",
            args.headroom
        )));
    }
    check_ticks("--ticks", args.ticks)?;
    if args.ticks == 0 && args.cost_ms.is_none() {
        return Err(Failure::usage(anyhow::anyhow!(
            "--ticks must be at least 1"
        )));
    }
    let cfg = load_horde(&args.config, args.enemies)?;
    let warmup = check_ticks("--warmup", args.warmup.unwrap_or(cfg.settle_ticks()))?;
    let catch_up = check_ticks(
        "--catch-up",
        args.catch_up.unwrap_or(cfg.max_catch_up_steps()),
    )?;
    let m = match args.cost_ms {
        Some(c) => {
            if !(c.is_finite() && c > 0.0 && c <= 3.6e6) {
                return Err(Failure::usage(anyhow::anyhow!(
                    "--cost-ms must be a positive number of ms up to an hour, found {c}"
                )));
            }
            let ns = (c * NS_PER_MS).round() as u64;
            Measured {
                median_ns: ns,
                p99_ns: ns,
                mean_ns: ns,
                max_ns: ns,
                catch_up_ns: Some(ns.saturating_mul(catch_up)),
                digest: None,
                pairs: None,
            }
        }
        None => measure(&cfg, args, warmup, catch_up),
    };
    let rows = rate_table(m.median_ns, m.p99_ns, &args.hz, args.headroom);
    let rec = recommend(&rows);
    let run = Run {
        cfg: &cfg,
        args,
        warmup,
        catch_up,
        m: &m,
    };
    let text = if args.json {
        run.json(&rows, rec)
    } else {
        run.text(&rows, rec)
    };
    println!("{text}");
    Ok(0)
}

/// Everything a report prints besides the table.
struct Run<'a> {
    cfg: &'a HordeConfig,
    args: &'a Args,
    warmup: u64,
    catch_up: u64,
    m: &'a Measured,
}

impl Run<'_> {
    fn text(&self, rows: &[RateRow], rec: Option<u32>) -> String {
        use std::fmt::Write as _;
        let (cfg, args, warmup, catch_up, m) =
            (self.cfg, self.args, self.warmup, self.catch_up, self.m);
        let mut s = String::new();
        let how = if args.cost_ms.is_some() {
            "assumed cost (--cost-ms), nothing measured".to_owned()
        } else {
            format!(
                "{} ticks timed one by one after {} warm-up ticks, one thread",
                args.ticks, warmup
            )
        };
        let _ = writeln!(s, "horde: {}", cfg.summary());
        let _ = writeln!(s, "method: {how}");
        let _ = writeln!(
            s,
            "cost per tick: median {:.4} ms, p99 {:.4} ms, mean {:.4} ms, max {:.4} ms",
            ms(m.median_ns),
            ms(m.p99_ns),
            ms(m.mean_ns),
            ms(m.max_ns)
        );
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:>6}  {:>7}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  verdict",
            "rate", "ticks/s", "budget ms", "median ms", "p99 ms", "headroom", "at p99"
        );
        for r in rows {
            let _ = writeln!(
                s,
                "{:>6}  {:>7}  {:>10.1}  {:>10.4}  {:>10.4}  {:>9.1}x  {:>9.1}x  {}",
                format!("{} Hz", r.hz),
                r.hz,
                r.budget_ms_seed(),
                ms(m.median_ns),
                ms(m.p99_ns),
                r.headroom_median,
                r.headroom_p99,
                r.verdict.as_str()
            );
        }
        let _ = writeln!(s);
        match rec {
            Some(hz) => {
                let _ = writeln!(
                    s,
                    "recommended: {hz} Hz (the highest candidate whose p99 tick fits {}x into its budget)",
                    args.headroom
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "recommended: none of the candidates keeps {}x headroom at p99: make the tick cheaper or the horde smaller",
                    args.headroom
                );
            }
        }
        let _ = writeln!(
            s,
            "highest rate with {}x headroom at p99: {} Hz",
            args.headroom,
            max_rate(m.p99_ns, args.headroom)
        );
        if let Some(c) = m.catch_up_ns {
            let _ = writeln!(
                s,
                "catch-up: {catch_up} ticks at once (maxCatchUpSteps) cost {:.3} ms = {:.2} display frames of 16.7 ms",
                ms(c),
                c as f64 / DISPLAY_FRAME_NS as f64
            );
        }
        if let (Some(d), Some(p)) = (&m.digest, m.pairs) {
            let _ = write!(s, "final digest: {d} (overlapping pairs last tick: {p})");
        }
        s.trim_end().to_owned()
    }

    fn json(&self, rows: &[RateRow], rec: Option<u32>) -> String {
        let (cfg, args, warmup, catch_up, m) =
            (self.cfg, self.args, self.warmup, self.catch_up, self.m);
        let rates: Vec<serde_json::Value> = rows
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
            "sim": "horde",
            "enemies": cfg.enemies(),
            "config": args.config.display().to_string(),
            "measured": args.cost_ms.is_none(),
            "warmupTicks": warmup,
            "ticks": args.ticks,
            "medianNs": m.median_ns,
            "p99Ns": m.p99_ns,
            "meanNs": m.mean_ns,
            "maxNs": m.max_ns,
            "requiredHeadroom": args.headroom,
            "rates": rates,
            "recommendedHz": rec,
            "maxHzAtHeadroom": max_rate(m.p99_ns, args.headroom),
            "catchUp": {
                "steps": catch_up,
                "runs": args.catch_up_runs,
                "ns": m.catch_up_ns,
                "displayFrames": m.catch_up_ns.map(|c| c as f64 / DISPLAY_FRAME_NS as f64),
            },
            "digest": m.digest,
            "lastPairs": m.pairs,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_004_table_from_its_own_cost() {
        // Seed 004: 9.2 ms per tick; budgets 50 / 33.3 / 16.6 ms; headroom
        // 3.6x at 30 Hz and 1.8x at 60 Hz; 30 Hz chosen for 3x headroom.
        let cost = 9_200_000;
        let rows = rate_table(cost, cost, &[20, 30, 60], 3.0);
        let budgets: Vec<f64> = rows.iter().map(RateRow::budget_ms_seed).collect();
        assert_eq!(budgets, [50.0, 33.3, 16.6]);
        let rounded: Vec<String> = rows
            .iter()
            .map(|r| format!("{:.1}", r.headroom_median))
            .collect();
        assert_eq!(rounded, ["5.4", "3.6", "1.8"]);
        let verdicts: Vec<Verdict> = rows.iter().map(|r| r.verdict).collect();
        assert_eq!(verdicts, [Verdict::Ok, Verdict::Ok, Verdict::Over]);
        assert_eq!(recommend(&rows), Some(30));
        // 1 s / (3 * 9.2 ms) = 36.2 Hz.
        assert_eq!(max_rate(cost, 3.0), 36);
    }

    #[test]
    fn tight_when_only_the_median_fits() {
        // 30 Hz budget 33.3 ms: median 10 ms gives 3.3x, p99 12 ms only 2.8x.
        let rows = rate_table(10_000_000, 12_000_000, &[30], 3.0);
        assert_eq!(rows[0].verdict, Verdict::Tight);
        assert_eq!(recommend(&rows), None);
    }

    #[test]
    fn nearest_rank_percentiles_by_hand() {
        let t = TickTimes::new((1..=200).rev().collect());
        // 50 % of 200 is rank 100; 99 % is rank 198.
        assert_eq!((t.median(), t.p99(), t.max()), (100, 198, 200));
        let t = TickTimes::new(vec![7, 3, 5]);
        // ceil(1.5) = rank 2; ceil(2.97) = rank 3.
        assert_eq!((t.median(), t.p99()), (5, 7));
        assert_eq!(TickTimes::new(vec![]).median(), 0);
        assert_eq!(t.percentile(0), 3);
    }
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

    use super::assert_usage_error;
    use crate::{Cli, run};

    fn budget(extra: &[&str]) -> Result<u8, crate::Failure> {
        let cfg = format!("{}/../../config/horde.json", env!("CARGO_MANIFEST_DIR"));
        let mut args = vec!["tickwise", "budget", "--config", &cfg];
        args.extend_from_slice(extra);
        run(Cli::try_parse_from(args).unwrap())
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
        ] {
            assert_usage_error(budget(extra), extra, needle);
        }
        // Rates outside 1..=10000 never reach the command.
        assert!(Cli::try_parse_from(["tickwise", "budget", "--hz", "30,0"]).is_err());
    }
}
