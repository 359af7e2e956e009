//! `tickwise run`: the kernel loop on this machine's real clock.
//!
//! Runs the lab world ([`run_lab_world`]: its guards, the resume rules'
//! catch-up, an interpolating render callback) at a fixed tick rate, capped to a frame rate (sleep, then a short spin) and/or
//! uncapped (a busy loop), and reports frame-time percentiles, ticks against
//! the count the elapsed time is worth, and the CPU time each way used.
use core::num::NonZeroU32;

use anyhow::{Context as _, anyhow};
use serde_json::json;
use tickwise::{Nanos, StepLength};
use tickwise_lab::cpu;
use tickwise_lab::runner::{
    FrameCap, RunReport, RunnerConfig, RunnerEvent, SystemHost, run_lab_world,
};

use crate::Failure;

/// Which runs to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// The capped run, then the uncapped one.
    Both,
    /// Only the capped run.
    Capped,
    /// Only the uncapped run.
    Uncapped,
}

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Tick rate in Hz (1..=1000).
    #[arg(long, default_value_t = 60)]
    pub hz: u32,
    /// Frame cap of the capped run, in frames per second (1..=1000).
    #[arg(long, default_value_t = 60)]
    pub fps: u32,
    /// Seconds per run (0.001..=3600).
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Which runs: both (capped, then uncapped), capped, or uncapped.
    #[arg(long, value_enum, default_value_t = Mode::Both)]
    pub mode: Mode,
    /// The capped loop sleeps until this many microseconds before each
    /// frame's target time, then spins (0..1000000).
    #[arg(long, default_value_t = 1_000)]
    pub spin_us: u64,
    /// Pause (as a player would) this many seconds into each run (needs
    /// `--pause-for`: a pause has a start and a length, and neither is guessed).
    #[arg(long, requires = "pause_for")]
    pub pause_at: Option<f64>,
    /// How long the pause lasts, in seconds (needs `--pause-at`).
    #[arg(long, requires = "pause_at")]
    pub pause_for: Option<f64>,
    /// Hide the window (background) this many seconds into each run (needs
    /// `--hide-for`).
    #[arg(long, requires = "hide_for")]
    pub hide_at: Option<f64>,
    /// How long the window stays hidden, in seconds (needs `--hide-at`).
    #[arg(long, requires = "hide_at")]
    pub hide_for: Option<f64>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

fn seconds_arg(name: &str, s: f64) -> Result<Nanos, Failure> {
    match Nanos::try_from_millis_f64(s * 1_000.0) {
        Ok(ns) if ns <= Nanos::from_secs(3_600) => Ok(ns),
        _ => Err(Failure::usage(anyhow!(
            "--{name} must be between 0 and 3600 seconds, got {s}"
        ))),
    }
}

fn config(args: &Args, cap: FrameCap) -> Result<RunnerConfig, Failure> {
    let mut cfg =
        RunnerConfig::new(seconds_arg("seconds", args.seconds)?, cap).map_err(Failure::usage)?;
    let spells = [
        (
            "pause",
            args.pause_at,
            args.pause_for,
            RunnerEvent::Pause,
            RunnerEvent::Resume,
        ),
        (
            "hide",
            args.hide_at,
            args.hide_for,
            RunnerEvent::Hidden,
            RunnerEvent::Visible,
        ),
    ];
    for (name, at, len, begin, end) in spells {
        if let (Some(at), Some(len)) = (at, len) {
            let at = seconds_arg(&format!("{name}-at"), at)?;
            let len = seconds_arg(&format!("{name}-for"), len)?;
            cfg = cfg
                .with_event(at, begin)
                .with_event(at.saturating_add(len), end);
        }
    }
    Ok(cfg)
}

fn us(ns: u64) -> String {
    let v = ns as f64 / 1_000.0;
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn rate(fps: f64) -> String {
    if fps >= 1e6 {
        format!("{:.2}M", fps / 1e6)
    } else if fps >= 1e4 {
        format!("{:.1}k", fps / 1e3)
    } else {
        format!("{fps:.1}")
    }
}

fn label(cap: FrameCap) -> String {
    match cap {
        FrameCap::Uncapped => "uncapped".to_owned(),
        FrameCap::Fps { fps, .. } => format!("capped {fps} fps"),
    }
}

fn run_json(cap: FrameCap, r: &RunReport) -> serde_json::Value {
    json!({
        "mode": label(cap),
        "frames": r.frames,
        "fps": r.fps(),
        "elapsed_ns": r.elapsed.as_nanos(),
        "hidden_ns": r.hidden.as_nanos(),
        "frame_time_ns": r.frame_times.percentiles().map(|p| json!({
            "p50": p.p50, "p95": p.p95, "p99": p.p99, "max": p.max,
        })),
        "ticks": r.ticks,
        "expected_ticks": r.expected_ticks,
        "tick_error": i64::try_from(r.tick_error()).unwrap_or(i64::MAX),
        "ticks_ok": r.ticks_ok(),
        "thrown_away_ns": r.thrown_away.as_nanos(),
        "resumes": r.resumes.iter().map(|x| json!({
            "from": x.from.as_str(),
            "elapsed_ns": x.elapsed.as_nanos(),
            "wanted_steps": x.wanted_steps,
            "catch_up_steps": x.catch_up_steps,
            "carried_ns": x.carried.as_nanos(),
            "dropped_ns": x.dropped.as_nanos(),
        })).collect::<Vec<_>>(),
        "refused_events": r.refused_events,
        "cpu_ns": r.cpu.map(Nanos::as_nanos),
        "cpu_share": r.cpu_share(),
        "truncated": r.truncated,
    })
}

/// Runs the command. Exit code 0 when every run's ticks match the expected
/// count to within one, 1 otherwise, 2 for bad arguments.
///
/// # Errors
///
/// A usage [`Failure`] for out-of-range arguments.
pub fn run(args: &Args, tool: &crate::ToolInfo) -> Result<u8, Failure> {
    if !(1..=1_000).contains(&args.hz) {
        return Err(Failure::usage(anyhow!(
            "--hz must be 1..=1000, got {}",
            args.hz
        )));
    }
    let step = StepLength::from_hz(u64::from(args.hz)).map_err(Failure::usage)?;
    let fps = NonZeroU32::new(args.fps)
        .filter(|f| f.get() <= 1_000)
        .ok_or_else(|| Failure::usage(anyhow!("--fps must be 1..=1000, got {}", args.fps)))?;
    let spin = Nanos::from_micros(args.spin_us);
    let caps: Vec<FrameCap> = match args.mode {
        Mode::Both => vec![FrameCap::Fps { fps, spin }, FrameCap::Uncapped],
        Mode::Capped => vec![FrameCap::Fps { fps, spin }],
        Mode::Uncapped => vec![FrameCap::Uncapped],
    };
    let configs = caps
        .iter()
        .map(|&c| config(args, c))
        .collect::<Result<Vec<_>, _>>()?;
    let source = cpu::cpu_time().map(|(_, s)| s);
    if !args.json {
        outln!(
            "{} run: {} Hz ticks, {} s per run on this machine's clock; CPU time from {}",
            tool.name,
            args.hz,
            args.seconds,
            source.map_or_else(
                || "nowhere (needs Linux /proc; reported as n/a)".to_owned(),
                |s| s.to_string()
            )
        );
        outln!(
            "(running {} ...)",
            caps.iter()
                .map(|&c| label(c))
                .collect::<Vec<_>>()
                .join(", then ")
        );
    }
    let reports: Vec<(FrameCap, RunReport)> = caps
        .iter()
        .zip(&configs)
        .map(|(&c, cfg)| (c, run_lab_world(&mut SystemHost::new(), step, cfg)))
        .collect();

    if args.json {
        let v = json!({
            "hz": args.hz,
            "seconds": args.seconds,
            "cpu_source": source.map(|s| s.to_string()),
            "runs": reports.iter().map(|(c, r)| run_json(*c, r)).collect::<Vec<_>>(),
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).context("serializing")?
        );
    } else {
        print_table(&reports)?;
    }
    let ok = reports.iter().all(|(_, r)| r.ticks_ok() && !r.truncated);
    Ok(if ok { 0 } else { 1 })
}

fn print_table(reports: &[(FrameCap, RunReport)]) -> Result<(), crate::out::StdoutClosed> {
    outln!(
        "\n{:<16} {:>9} {:>9} {:>30} {:>7} {:>8} {:>5} {:>9} {:>7} {:>6}",
        "mode",
        "frames",
        "fps",
        "frame us p50/p95/p99/max",
        "ticks",
        "expected",
        "diff",
        "thrown ms",
        "CPU s",
        "CPU %"
    );
    for (cap, r) in reports {
        let ft = r.frame_times.percentiles().map_or_else(
            || "-".to_owned(),
            |p| format!("{}/{}/{}/{}", us(p.p50), us(p.p95), us(p.p99), us(p.max)),
        );
        outln!(
            "{:<16} {:>9} {:>9} {:>30} {:>7} {:>8} {:>+5} {:>9.1} {:>7} {:>6}",
            label(*cap),
            r.frames,
            rate(r.fps()),
            ft,
            r.ticks,
            r.expected_ticks,
            r.tick_error(),
            r.thrown_away.as_nanos() as f64 / 1e6,
            r.cpu.map_or_else(
                || "n/a".to_owned(),
                |c| format!("{:.3}", c.as_nanos() as f64 / 1e9)
            ),
            r.cpu_share()
                .map_or_else(|| "n/a".to_owned(), |s| format!("{:.1}", s * 100.0)),
        );
        for x in &r.resumes {
            outln!(
                "  resume from {}: away {:.1} ms, wanted {} steps, caught up {}, carried {:.3} ms, dropped {:.1} ms",
                x.from,
                x.elapsed.as_nanos() as f64 / 1e6,
                x.wanted_steps,
                x.catch_up_steps,
                x.carried.as_nanos() as f64 / 1e6,
                x.dropped.as_nanos() as f64 / 1e6
            );
        }
        if r.truncated {
            outln!("  stopped at the frame limit before the run's length");
        }
    }
    outln!();
    if reports.iter().all(|(_, r)| r.ticks_ok()) {
        outln!(
            "Ticks match the expected count (elapsed time minus thrown-away time, in whole steps) to within one tick in every run."
        );
    } else {
        outln!("TICK MISMATCH: a run's ticks differ from the expected count by more than one.");
    }
    let cpu = |uncapped: bool| {
        reports
            .iter()
            .find(|(c, _)| (*c == FrameCap::Uncapped) == uncapped)
            .and_then(|(_, r)| r.cpu)
    };
    if let (Some(capped), Some(uncapped)) = (cpu(false), cpu(true)) {
        let ratio = uncapped.as_nanos() as f64 / (capped.as_nanos().max(1)) as f64;
        outln!(
            "Power: the uncapped busy loop used {ratio:.1}x the CPU time of the capped loop for the same simulation."
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use crate::Cli;

    #[test]
    fn a_pause_or_hide_needs_both_its_start_and_its_length() {
        for args in [
            &["--pause-at", "0.5"][..],
            &["--pause-for", "0.5"][..],
            &["--hide-at", "0.5"][..],
            &["--hide-for", "0.5"][..],
        ] {
            let mut argv = vec!["tickwise", "run"];
            argv.extend_from_slice(args);
            let e = Cli::try_parse_from(&argv).expect_err(&format!("{args:?} should be refused"));
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::MissingRequiredArgument,
                "{args:?}"
            );
        }
        let both = [
            "tickwise",
            "run",
            "--pause-at",
            "0.5",
            "--pause-for",
            "0.25",
        ];
        assert!(Cli::try_parse_from(both).is_ok());
    }
}
