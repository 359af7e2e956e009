//! `tickwise loadtest`: uploads replays to a running `verifyd` on this
//! machine and prints verified replays/s, ticks/s and verdict latency.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rayon::prelude::*;
use tickwise::Nanos;
use tickwise_catalog::{Catalog, InputPlan};
use tickwise_service::loadtest::{LoadConfig, LoadReport};

use crate::bounded::{self, InputKind};
use crate::{Failure, hints};

/// The most replays one run uploads.
pub const MAX_REPLAYS: usize = 100_000;
/// The largest replay file read from `--replays`.
pub const MAX_REPLAY_FILE: u64 = 64 * 1024 * 1024;

/// Arguments of `tickwise loadtest`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["replays", "generate"]))]
pub struct Args {
    /// The service, on this machine: `http://127.0.0.1:PORT`.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8087")]
    pub url: String,
    /// Upload every `*.twr` in this folder once.
    #[arg(long, value_name = "DIR")]
    pub replays: Option<PathBuf>,
    /// `--io-threads`.
    #[command(flatten)]
    pub io: super::IoThreadsArg,
    /// Generate N replays (random inputs, distinct seeds) and upload them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub generate: Option<u64>,
    /// Sim of the generated replays (`mixed` alternates every catalog sim).
    #[arg(long, value_name = "ID", default_value = "mixed")]
    pub sim: String,
    /// Ticks per generated replay (default: 10 minutes at the sim's rate).
    #[arg(long, value_name = "T")]
    pub ticks: Option<u64>,
    /// Uploads in flight at once.
    #[arg(long, value_name = "C", default_value_t = 4)]
    pub concurrency: usize,
    /// Stop after this many seconds.
    #[arg(long, value_name = "S", default_value_t = 60)]
    pub seconds: u64,
    /// Uploads per second, spread evenly (default: as fast as it goes).
    #[arg(long, value_name = "R")]
    pub rate: Option<u32>,
    /// Send `Tickwise-Session-Ms` with this value (the wall-clock check).
    #[arg(long, value_name = "MS")]
    pub session_ms: Option<u64>,
    /// Replays per request: 1 uploads each on its own (`POST /v1/replays`),
    /// more sends them in batches (`POST /v1/batches`, verdicts with
    /// `?wait=`).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub batch: u16,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn read_dir(dir: &Path) -> anyhow::Result<Vec<bytes::Bytes>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "twr"))
        .collect();
    files.sort();
    anyhow::ensure!(!files.is_empty(), "no *.twr files in {}", dir.display());
    anyhow::ensure!(
        files.len() <= MAX_REPLAYS,
        "{} holds {} replays, more than the {MAX_REPLAYS} one run uploads",
        dir.display(),
        files.len()
    );
    files
        .iter()
        .map(|p| {
            // The CLI's one bounded reader: regular files only, stopped at
            // the limit while reading.
            let bytes = bounded::read_file(p, InputKind::Replay, MAX_REPLAY_FILE)?;
            Ok(bytes::Bytes::from(bytes))
        })
        .collect()
}

fn generate(args: &Args, n: u64, catalog: &Catalog) -> Result<Vec<bytes::Bytes>, Failure> {
    let sims: Vec<&'static str> = if args.sim == "mixed" {
        catalog.ids().collect()
    } else {
        vec![catalog.get(&args.sim).map_err(hints::catalog)?.id]
    };
    let mut jobs = Vec::new();
    for i in 0..n {
        let id = sims[usize::try_from(i).unwrap_or(0) % sims.len()];
        let profile = catalog.profile(id, None).map_err(hints::catalog)?;
        let ticks = args.ticks.unwrap_or_else(|| {
            // Ten minutes of sim time: 600 s / step, rounded down.
            let step = profile.clock.step();
            600_000_000_000u128
                .saturating_mul(u128::from(step.denominator()))
                .checked_div(u128::from(step.numerator()))
                .and_then(|t| u64::try_from(t).ok())
                .unwrap_or(36_000)
        });
        jobs.push((id, ticks, i));
    }
    jobs.par_iter()
        .map(|&(id, ticks, seed)| {
            catalog
                .record(id, None, &InputPlan::Random(seed + 1), ticks, 60)
                .map(|r| bytes::Bytes::from(r.bytes))
                .map_err(hints::catalog)
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(Failure::usage)
}

/// How the replays were had: generated (how many, in how long) or read.
#[derive(Clone, Copy, Debug)]
struct Prepared {
    /// Replays generated (0 when read from `--replays`).
    generated: usize,
    /// Seconds spent generating them, before the measured run.
    seconds: f64,
}

/// Prints the report. `cpu` is the load generator's own CPU time during the
/// run (every thread, 10 ms ticks; `None` where `/proc` is missing): on a
/// machine that also runs the service, what the clients took from it.
fn print(
    report: &LoadReport,
    prep: Prepared,
    cpu: Option<Nanos>,
    budget_s: u64,
    json: bool,
) -> Result<(), crate::out::StdoutClosed> {
    #[allow(clippy::cast_precision_loss, reason = "a figure to print")]
    let cpu_s = cpu.map(|c| c.as_nanos() as f64 / 1e9);
    if json {
        let v = serde_json::json!({
            "generated": prep.generated,
            "generateSeconds": prep.seconds,
            "uploaded": report.uploaded,
            "ok": report.verdicts[0],
            "diverged": report.verdicts[1],
            "refused": report.verdicts[2],
            "errors": report.errors,
            "throttled": report.throttled,
            "seconds": report.elapsed.as_secs_f64(),
            "replaysPerSec": report.replays_per_sec(),
            "ticksPerSec": report.ticks_per_sec(),
            "p50Ms": report.latency_ms(0.5),
            "p99Ms": report.latency_ms(0.99),
            "generatorCpuSeconds": cpu_s,
            "errorSamples": report.error_samples,
        });
        outln!("{v}");
        return Ok(());
    }
    outln!(
        "uploaded {} replays: {} ok, {} diverged, {} refused, {} errors, {} throttled (429)",
        report.uploaded,
        report.verdicts[0],
        report.verdicts[1],
        report.verdicts[2],
        report.errors,
        report.throttled
    );
    outln!(
        "{:.1} verified replays/s, {:.0} ticks/s over {:.2} s; verdict latency p50 {:.1} ms, p99 {:.1} ms",
        report.replays_per_sec(),
        report.ticks_per_sec(),
        report.elapsed.as_secs_f64(),
        report.latency_ms(0.5),
        report.latency_ms(0.99)
    );
    if let Some(s) = cpu_s {
        #[allow(clippy::cast_precision_loss, reason = "a figure to print")]
        let per = s * 1e6 / report.uploaded.max(1) as f64;
        outln!("load generator CPU during the run: {s:.3} s ({per:.1} us per uploaded replay)");
    }
    for e in &report.error_samples {
        outln!("error: {e}");
    }
    if report
        .error_samples
        .iter()
        .any(|e| e.contains("within the time budget"))
    {
        outln!(
            "hint: the {budget_s} s of --seconds ended before every verdict came back \
             (replay generation is not counted in them): raise --seconds, or send fewer or \
             shorter replays (--generate, --ticks)"
        );
    }
    Ok(())
}

/// Runs the load test.
///
/// # Errors
///
/// Exit code 2 for a URL off this machine or bad settings; exit code 1
/// when some upload got no verdict.
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    // Refuse a non-loopback URL before generating anything.
    tickwise_service::loadtest::loopback_base(&args.url).map_err(Failure::usage)?;
    // Generating replays can take seconds (ten minutes of play each by
    // default); it is done, timed and reported before the --seconds clock
    // of the measured run starts.
    let started = Instant::now();
    let replays = match (&args.replays, args.generate) {
        (Some(dir), _) => read_dir(dir).map_err(Failure::usage)?,
        (None, Some(n)) => {
            let replays = generate(args, n, catalog)?;
            if !args.json {
                let ticks: u64 = replays
                    .iter()
                    .filter_map(|r| {
                        tickwise::read_header_unchecked(r, &tickwise::ReplayLimits::DEFAULT)
                            .ok()
                            .map(|h| h.ticks)
                    })
                    .sum();
                outln!(
                    "generated {} replays ({ticks} ticks) in {:.2} s, before the {} s of the run",
                    replays.len(),
                    started.elapsed().as_secs_f64(),
                    args.seconds
                );
            }
            replays
        }
        (None, None) => {
            return Err(Failure::usage(anyhow::anyhow!(
                "give --replays DIR or --generate N"
            )));
        }
    };
    let prep = Prepared {
        generated: if args.replays.is_some() {
            0
        } else {
            replays.len()
        },
        seconds: if args.replays.is_some() {
            0.0
        } else {
            started.elapsed().as_secs_f64()
        },
    };
    let config = LoadConfig {
        url: args.url.clone(),
        concurrency: args.concurrency,
        duration: Duration::from_secs(args.seconds),
        rate: args.rate,
        session_ms: args.session_ms,
        batch: usize::from(args.batch),
    };
    let cpu_before = tickwise_lab::cpu::process_cpu_time();
    let report = tickwise_service::block_on_with(
        Some(args.io.get()),
        tickwise_service::loadtest::run(config, replays),
    )
    .context("loadtest")?
    .map_err(Failure::usage)?;
    let cpu = cpu_before
        .zip(tickwise_lab::cpu::process_cpu_time())
        .map(|(a, b)| b.saturating_sub(a));
    print(&report, prep, cpu, args.seconds, args.json)?;
    Ok(u8::from(report.errors > 0))
}
