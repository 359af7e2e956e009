//! `tickwise lab`: the loop experiment (docs/background.md), with pictures.
//!
//! Runs every loop strategy on every simulated machine (a deterministic,
//! seeded clock, so it takes well under a second), prints the table and the
//! verdicts, and writes a report folder of SVG charts, `table.txt`,
//! `lab.json` and `index.md`. See docs/lab.md.
use std::path::PathBuf;

use anyhow::Context as _;
use tickwise_lab::{LabSettings, json, report, run_lab, table};

use crate::Failure;

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Seconds of simulated real time per strategy and machine (1..=120, and
    /// at least 100 steps at `--hz`: 2 s at 60 Hz, 4 s at 30 Hz; every frame
    /// is kept for the charts).
    #[arg(long, default_value_t = 10)]
    pub seconds: u32,
    /// Seed of the jittery machine's timestamp noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Tick rate of the fixed-step designs in Hz (1..=1000).
    #[arg(long, default_value_t = 60)]
    pub hz: u32,
    /// Report folder: SVG charts, table.txt, lab.json, index.md.
    #[arg(long, default_value = "out/lab")]
    pub out: PathBuf,
    /// Do not write the report folder.
    #[arg(long)]
    pub no_report: bool,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Runs the lab. Exit code 0 when the lab's thesis holds (every accumulator
/// design passes, every naive design fails, guards bound the spiral), 1 when
/// it does not (a regression in the clock), 2 for bad arguments or I/O errors.
///
/// # Errors
///
/// A usage [`Failure`] for out-of-range settings or an unwritable report folder.
pub fn run(args: &Args, tool: &crate::ToolInfo) -> Result<u8, Failure> {
    let settings = LabSettings::new(args.seconds, args.seed, args.hz).map_err(|e| match e {
        tickwise_lab::LabError::TooShort { min_seconds, .. } => {
            Failure::usage(anyhow::anyhow!("{e} (run it with --seconds {min_seconds})"))
        }
        _ => Failure::usage(e),
    })?;
    let lab = run_lab(&settings);
    let written = if args.no_report {
        None
    } else {
        Some(report::write_report(&lab, &args.out).context("writing the lab report")?)
    };
    if args.json {
        let text = serde_json::to_string_pretty(&json::to_json(&lab))
            .context("serializing the lab report")?;
        outln!("{text}");
        if let Some(w) = &written {
            eprintln!(
                "report: {} ({} files)",
                args.out.join("index.md").display(),
                w.len()
            );
        }
    } else {
        out!("{}", table::render(&lab));
        if let Some(w) = &written {
            outln!(
                "\nCharts and report: {} ({} files: sim time vs real time per machine, frame times, death spiral, jitter guard, interpolation)",
                args.out.join("index.md").display(),
                w.len()
            );
        }
    }
    let unmet = lab.unmet_expectations();
    if unmet.is_empty() {
        Ok(0)
    } else {
        eprintln!(
            "{} lab: unexpected results: {}",
            tool.name,
            unmet.join("; ")
        );
        Ok(1)
    }
}
