//! `tickwise verify`: re-simulate replays and report OK or the first divergence.
//!
//! Files are verified on all cores (rayon), with a progress bar on a
//! terminal. Exit codes: 0 every file verified, 1 some replay diverged (and
//! every file could be read), 2 some file could not be read or parsed.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use rayon::prelude::*;
use tickwise::{ReplayError, ReplayLimits, ReplayVerdict};
use tickwise_catalog::{Catalog, CatalogError};

use crate::{Failure, hints};

/// The extension of replay files picked up from directories.
pub const REPLAY_EXTENSION: &str = "twr";

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Replay files, and directories whose `*.twr` files are all verified.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Limits applied to every file.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Show the progress bar even when stderr is not a terminal.
    #[arg(long)]
    pub progress: bool,
    /// Print only failures and the summary.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The reader limits a server can tune.
#[derive(Debug, clap::Args)]
pub struct LimitArgs {
    /// Refuse replays declaring more ticks (bounds the work per file).
    #[arg(long, value_name = "N", default_value_t = ReplayLimits::DEFAULT.max_ticks)]
    pub max_ticks: u64,
    /// Refuse files larger than this many bytes (checked before reading).
    #[arg(long, value_name = "BYTES", default_value_t = ReplayLimits::DEFAULT.max_file_bytes)]
    pub max_file_bytes: u64,
    /// Refuse replays whose re-simulation would cost more: ticks × work units
    /// per tick (each sim states its own: 1 per island step, 1 + enemies per
    /// horde tick).
    #[arg(long, value_name = "UNITS", default_value_t = ReplayLimits::DEFAULT.max_work)]
    pub max_work: u64,
}

impl LimitArgs {
    /// The limits.
    #[must_use]
    pub const fn limits(&self) -> ReplayLimits {
        ReplayLimits {
            max_ticks: self.max_ticks,
            max_file_bytes: self.max_file_bytes,
            max_work: self.max_work,
            ..ReplayLimits::DEFAULT
        }
    }
}

/// Reads a replay file under `limits` (its size is checked before reading).
///
/// # Errors
///
/// [`ReplayError::FileTooLarge`] (with its flag hint) for an oversized
/// file; an I/O error for an unreadable one.
pub fn read_replay(path: &Path, limits: &ReplayLimits) -> anyhow::Result<Vec<u8>> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    if len > limits.max_file_bytes {
        return Err(hints::catalog(CatalogError::Replay(
            ReplayError::FileTooLarge {
                bytes: len,
                limit: limits.max_file_bytes,
            },
        )));
    }
    super::record::read_limited(path, limits.max_file_bytes)
}

/// One file's outcome.
#[derive(Debug)]
enum Outcome {
    Ok { ticks: u64, digest: String },
    Diverged { ticks: u64, why: String },
    Unreadable { why: String },
}

fn verify_file(path: &Path, limits: &ReplayLimits, catalog: &Catalog) -> Outcome {
    let bytes = match read_replay(path, limits) {
        Ok(b) => b,
        Err(e) => {
            return Outcome::Unreadable {
                why: format!("{e:#}"),
            };
        }
    };
    match catalog.verify(&bytes, limits) {
        Err(e) => Outcome::Unreadable {
            why: hints::catalog_message(&e),
        },
        Ok(report) => match report.verdict {
            ReplayVerdict::Match { digest } => Outcome::Ok {
                ticks: report.ticks_run,
                digest,
            },
            ReplayVerdict::Diverged(d) => Outcome::Diverged {
                ticks: report.ticks_run,
                why: d.to_string(),
            },
            ReplayVerdict::FieldNamesDiffer { recorded, sim } => Outcome::Diverged {
                ticks: 0,
                why: format!(
                    "the replay records fields [{}] but this build's sim has [{}]",
                    recorded.join(", "),
                    sim.join(", ")
                ),
            },
        },
    }
}

/// Expands directories into their `*.twr` files (sorted, not recursive).
fn expand(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = match std::fs::read_dir(p) {
                Ok(rd) => rd
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == REPLAY_EXTENSION))
                    .collect(),
                // Unreadable directory: keep the path so it is reported as unreadable.
                Err(_) => vec![p.clone()],
            };
            if found.is_empty() {
                eprintln!(
                    "tickwise verify: no *.{REPLAY_EXTENSION} files in {}",
                    p.display()
                );
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// Stderr as a terminal even when it is not one (`--progress` into a log or
/// a CI console that renders ANSI escapes); indicatif hides its bar otherwise.
#[derive(Debug)]
struct ForcedStderr;

impl ForcedStderr {
    fn put(s: &str) -> std::io::Result<()> {
        std::io::Write::write_all(&mut std::io::stderr().lock(), s.as_bytes())
    }

    /// An ANSI cursor movement (`A` up, `B` down, `C` right, `D` left).
    fn cursor(n: usize, direction: char) -> std::io::Result<()> {
        if n == 0 {
            Ok(())
        } else {
            Self::put(&format!("\x1b[{n}{direction}"))
        }
    }
}

impl TermLike for ForcedStderr {
    fn width(&self) -> u16 {
        80
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        Self::cursor(n, 'A')
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        Self::cursor(n, 'B')
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        Self::cursor(n, 'C')
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        Self::cursor(n, 'D')
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        Self::put(&format!("{s}\n"))
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        Self::put(s)
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Self::put("\r\x1b[2K")
    }
    fn flush(&self) -> std::io::Result<()> {
        std::io::Write::flush(&mut std::io::stderr())
    }
}

fn progress_bar(len: u64, forced: bool) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else if forced {
        ProgressDrawTarget::term_like(Box::new(ForcedStderr))
    } else {
        return ProgressBar::hidden();
    };
    let pb = ProgressBar::with_draw_target(Some(len), target);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} replays {per_sec} eta {eta}")
    {
        pb.set_style(style);
    }
    pb
}

/// Runs the command.
///
/// # Errors
///
/// Exit code 2 when the thread pool cannot be built.
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let limits = args.limits.limits();
    let files = expand(&args.paths);
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = args.jobs {
        pool = pool.num_threads(usize::from(n));
    }
    let pool = pool.build().context("cannot start worker threads")?;
    let pb = progress_bar(files.len() as u64, args.progress);
    let start = Instant::now();
    let outcomes: Vec<Outcome> = pool.install(|| {
        files
            .par_iter()
            .map(|f| {
                let o = verify_file(f, &limits, catalog);
                pb.inc(1);
                o
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let (mut ticks, mut diverged, mut unreadable) = (0u64, 0usize, 0usize);
    for (path, o) in files.iter().zip(&outcomes) {
        match o {
            Outcome::Ok { ticks: t, digest } => {
                ticks += t;
                if !args.quiet {
                    println!("OK        {} ({t} ticks, digest {digest})", path.display());
                }
            }
            Outcome::Diverged { ticks: t, why } => {
                ticks += t;
                diverged += 1;
                println!("DIVERGED  {}: {why}", path.display());
            }
            Outcome::Unreadable { why } => {
                unreadable += 1;
                println!("ERROR     {}: {why}", path.display());
            }
        }
    }
    #[allow(clippy::cast_precision_loss, reason = "a rate for display")]
    let rate = if secs > 0.0 { ticks as f64 / secs } else { 0.0 };
    println!(
        "verified {} files, {ticks} ticks in {secs:.3} s ({rate:.0} ticks/s), {} failed ({diverged} diverged, {unreadable} unreadable)",
        files.len(),
        diverged + unreadable
    );
    Ok(if unreadable > 0 {
        2
    } else {
        u8::from(diverged > 0)
    })
}
