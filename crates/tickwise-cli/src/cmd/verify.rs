//! `tickwise verify`: re-simulate replays and report OK or the first divergence.
//!
//! Files are verified on all cores (rayon), with a progress bar on a
//! terminal. Exit codes: 0 every file verified, 1 some replay diverged (and
//! every file could be read), 2 some file was refused (unreadable, corrupt, another version, over a
//! limit, unknown sim: the verdict's reason).

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use rayon::prelude::*;
use tickwise::ReplayLimits;
use tickwise_catalog::{Catalog, Outcome, Refusal, Verdict};

use crate::bounded::InputKind;
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
    /// Print one JSON object per line: one per replay, then a summary
    /// (keys in docs/limits.md, "verify --json").
    #[arg(long)]
    pub json: bool,
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
    /// per tick, each sim's own calibrated cost (about 1 unit per ns of CPU
    /// on the reference machine; the default is about 60 s; docs/limits.md).
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

/// Reads a replay file under `limits` through the bounded reader: a
/// regular file (never a FIFO, device or directory), its size checked
/// before reading and at most `limits.max_file_bytes + 1` bytes read.
///
/// # Errors
///
/// Missing, unreadable, non-regular or oversized files, naming the path
/// (an oversized one with the `--max-file-bytes` hint).
pub fn read_replay(path: &Path, limits: &ReplayLimits) -> anyhow::Result<Vec<u8>> {
    crate::bounded::read_file(path, InputKind::Replay, limits.max_file_bytes).map_err(hints::read)
}

fn verify_item(item: &Item, limits: &ReplayLimits, catalog: &Catalog) -> Verdict {
    match &item.error {
        Some(why) => Verdict::refused(None, Refusal::Unreadable, why.clone()),
        None => match read_replay(&item.path, limits) {
            // The catalog's verdict, printed as it is: one header read, and
            // the buffer handed over so the input runs are not copied again.
            Ok(bytes) => catalog.judge(bytes, limits),
            Err(e) => Verdict::refused(None, Refusal::Unreadable, hints::render(&e)),
        },
    }
}

/// One path to verify, or a path that could not even be listed.
#[derive(Debug)]
struct Item {
    path: PathBuf,
    /// Why the path is unreadable before any file is opened (a directory
    /// that cannot be listed or holds no replays).
    error: Option<String>,
    /// The path named no replay at all: it does not exist, or it is a
    /// directory without `*.twr` entries. Reported, and not counted as a
    /// verified file in the summary.
    missing: bool,
}

/// Expands directories into every entry named `*.twr` (sorted, not
/// recursive), whatever its type: a dangling symlink, a symlink loop, a
/// FIFO or a directory with that name is kept, so the reader reports it as
/// unreadable instead of it being skipped silently. A directory that
/// cannot be listed, or holds no `*.twr` entry, is an unreadable item
/// itself ("no replays found").
fn expand(paths: &[PathBuf]) -> Vec<Item> {
    let mut out = Vec::new();
    for p in paths {
        // Not even a dangling symlink: nothing by that name.
        if std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
            out.push(Item {
                path: p.clone(),
                error: Some(format!(
                    "cannot read {}: no such file or directory",
                    p.display()
                )),
                missing: true,
            });
            continue;
        }
        // `metadata` follows symlinks: a symlink to a directory is a directory.
        if !std::fs::metadata(p).is_ok_and(|m| m.is_dir()) {
            out.push(Item {
                path: p.clone(),
                error: None,
                missing: false,
            });
            continue;
        }
        let listing = match std::fs::read_dir(p) {
            Ok(rd) => rd,
            Err(e) => {
                out.push(Item {
                    path: p.clone(),
                    error: Some(format!("cannot list directory: {e}")),
                    missing: false,
                });
                continue;
            }
        };
        let mut found = Vec::new();
        for entry in listing {
            match entry {
                Ok(entry) => {
                    let path = entry.path();
                    if path.extension().is_some_and(|x| x == REPLAY_EXTENSION) {
                        found.push(Item {
                            path,
                            error: None,
                            missing: false,
                        });
                    }
                }
                Err(e) => found.push(Item {
                    path: p.clone(),
                    error: Some(format!("cannot list directory: {e}")),
                    missing: false,
                }),
            }
        }
        if found.is_empty() {
            found.push(Item {
                path: p.clone(),
                error: Some(format!(
                    "no replays found (no *.{REPLAY_EXTENSION} entries)"
                )),
                missing: true,
            });
        }
        found.sort_by(|a, b| a.path.cmp(&b.path));
        out.extend(found);
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
    let items = expand(&args.paths);
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = args.jobs {
        pool = pool.num_threads(usize::from(n));
    }
    let pool = pool.build().context("cannot start worker threads")?;
    let pb = progress_bar(items.len() as u64, args.progress);
    let start = Instant::now();
    let verdicts: Vec<Verdict> = pool.install(|| {
        items
            .par_iter()
            .map(|f| {
                let v = verify_item(f, &limits, catalog);
                pb.inc(1);
                v
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let (mut ticks, mut diverged, mut refused) = (0u64, 0usize, 0usize);
    let missing: Vec<&Item> = items.iter().filter(|i| i.missing).collect();
    for (item, v) in items.iter().zip(&verdicts) {
        let path = item.path.display();
        ticks += v.ticks_run.unwrap_or(0);
        let message = v.message.as_deref().unwrap_or("");
        match &v.outcome {
            Outcome::Ok { digest } => {
                if !args.quiet && !args.json {
                    let t = v.ticks_run.unwrap_or(0);
                    outln!("OK        {path} ({t} ticks, digest {digest})");
                }
            }
            Outcome::Diverged(_) => {
                diverged += 1;
                if !args.json {
                    outln!("DIVERGED  {path}: {message}");
                }
            }
            Outcome::Refused { reason } => {
                refused += usize::from(!item.missing);
                if !args.json {
                    outln!("REFUSED   {path}: {reason}: {}", hints::verdict_message(v));
                }
            }
        }
        if args.json {
            let mut line = serde_json::json!({
                "type": "replay",
                "path": item.path.to_string_lossy(),
            });
            if let (Some(line), serde_json::Value::Object(verdict)) =
                (line.as_object_mut(), v.to_json())
            {
                line.extend(verdict);
            }
            outln!("{line}");
        }
    }
    let code = if refused > 0 || !missing.is_empty() {
        2
    } else {
        u8::from(diverged > 0)
    };
    #[allow(clippy::cast_precision_loss, reason = "a rate for display")]
    let rate = if secs > 0.0 { ticks as f64 / secs } else { 0.0 };
    if args.json {
        let summary = serde_json::json!({
            "type": "summary",
            "replays": items.len() - missing.len(),
            "ok": items.len() - missing.len() - diverged - refused,
            "missing": missing.len(),
            "diverged": diverged,
            "refused": refused,
            "ticks": ticks,
            "seconds": secs,
            "ticksPerSecond": rate,
            "exitCode": code,
        });
        outln!("{summary}");
    } else {
        let mut summary = format!(
            "verified {} files, {ticks} ticks in {secs:.3} s ({rate:.0} ticks/s), {} failed ({diverged} diverged, {refused} refused)",
            items.len() - missing.len(),
            diverged + refused
        );
        if !missing.is_empty() {
            let names: Vec<String> = missing
                .iter()
                .map(|i| i.path.display().to_string())
                .collect();
            summary.push_str(&format!(
                "; {} not found or without replays: {}",
                if missing.len() == 1 {
                    "1 path".to_owned()
                } else {
                    format!("{} paths", missing.len())
                },
                names.join(", ")
            ));
        }
        outln!("{summary}");
    }
    Ok(code)
}
