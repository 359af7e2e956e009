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
use tickwise::{Divergence, ReplayLimits, ReplayVerdict};
use tickwise_catalog::{Catalog, field_players};

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

/// One file's outcome.
#[derive(Debug)]
enum Outcome {
    Ok {
        ticks: u64,
        digest: String,
    },
    Diverged {
        ticks: u64,
        why: String,
        /// Where the state differs, when a checkpoint or the final state
        /// did (not for a field list that differs as a whole).
        at: Option<StateDifference>,
    },
    Unreadable {
        why: String,
    },
}

/// Where re-simulation first disagreed with the stored state.
#[derive(Debug)]
struct StateDifference {
    /// The stored checkpoint (1-based) that failed, or `None` for the final state.
    checkpoint: Option<usize>,
    /// The tick of the failed check.
    tick: u64,
    /// The last tick whose stored state matched.
    last_good_tick: u64,
    /// The fields that differ.
    fields: Vec<String>,
    /// The players whose own fields differ ([`field_players`]).
    players: Vec<usize>,
}

impl StateDifference {
    fn of(d: &Divergence, players: usize) -> StateDifference {
        StateDifference {
            checkpoint: d.checkpoint.map(|j| j + 1),
            tick: d.tick,
            last_good_tick: d.last_good_tick,
            fields: d.fields.clone(),
            players: field_players(&d.fields, players),
        }
    }

    /// The player named by field names: the one player whose own fields
    /// differ, if exactly one does.
    fn player(&self) -> Option<usize> {
        match self.players.as_slice() {
            [p] => Some(*p),
            _ => None,
        }
    }

    /// The text appended to the divergence: whose own fields differ.
    fn owners(&self) -> String {
        owners_text(&self.players)
    }
}

/// `"; player P's own fields differ"` (or the list of players) for the
/// players whose own fields differ, empty for none: what `verify` and
/// `compare` append to a state divergence.
pub(crate) fn owners_text(players: &[usize]) -> String {
    match players {
        [] => String::new(),
        [p] => format!("; player {p}'s own fields differ"),
        many => format!(
            "; own fields of players {} differ",
            many.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl Outcome {
    const fn status(&self) -> &'static str {
        match self {
            Outcome::Ok { .. } => "ok",
            Outcome::Diverged { .. } => "diverged",
            Outcome::Unreadable { .. } => "unreadable",
        }
    }
}

/// A sim id, version and player count, as a replay's header names them.
#[derive(Debug)]
struct SimName {
    id: String,
    version: u32,
    players: usize,
}

fn verify_item(
    item: &Item,
    limits: &ReplayLimits,
    catalog: &Catalog,
) -> (Outcome, Option<SimName>) {
    match &item.error {
        Some(why) => (Outcome::Unreadable { why: why.clone() }, None),
        None => verify_file(&item.path, limits, catalog),
    }
}

fn verify_file(
    path: &Path,
    limits: &ReplayLimits,
    catalog: &Catalog,
) -> (Outcome, Option<SimName>) {
    let bytes = match read_replay(path, limits) {
        Ok(b) => b,
        Err(e) => {
            let why = crate::hints::render(&e);
            return (Outcome::Unreadable { why }, None);
        }
    };
    // The label is read without the integrity check (verification checks
    // it, once): hashing a large file twice costs as much as a fast sim's steps.
    let sim = tickwise::read_header_unchecked(&bytes, limits)
        .ok()
        .map(|h| SimName {
            id: h.sim_id,
            version: h.sim_version,
            players: usize::from(h.players),
        });
    let players = sim.as_ref().map_or(1, |s| s.players);
    (verify_bytes(bytes, limits, catalog, players), sim)
}

/// Verifies a file read into memory, handing the buffer over so that the
/// input runs are not copied again (peak memory about the file's size).
fn verify_bytes(
    bytes: Vec<u8>,
    limits: &ReplayLimits,
    catalog: &Catalog,
    players: usize,
) -> Outcome {
    match catalog.verify_vec(bytes, limits) {
        Err(e) => Outcome::Unreadable {
            why: hints::catalog_message(&e),
        },
        Ok(report) => match report.verdict {
            ReplayVerdict::Match { digest } => Outcome::Ok {
                ticks: report.ticks_run,
                digest,
            },
            ReplayVerdict::Diverged(d) => {
                let at = StateDifference::of(&d, players);
                Outcome::Diverged {
                    ticks: report.ticks_run,
                    why: format!("{d}{}", at.owners()),
                    at: Some(at),
                }
            }
            ReplayVerdict::FieldNamesDiffer { recorded, sim } => Outcome::Diverged {
                ticks: 0,
                at: None,
                why: format!(
                    "the replay records fields [{}] but this build's sim has [{}]",
                    recorded.join(", "),
                    sim.join(", ")
                ),
            },
            ReplayVerdict::PlayersDiffer { recorded, sim } => Outcome::Unreadable {
                why: format!(
                    "the replay holds inputs of {recorded} players but its config builds a \
                     sim of {sim}"
                ),
            },
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
        // `metadata` follows symlinks: a symlink to a directory is a directory.
        if !std::fs::metadata(p).is_ok_and(|m| m.is_dir()) {
            out.push(Item {
                path: p.clone(),
                error: None,
            });
            continue;
        }
        let listing = match std::fs::read_dir(p) {
            Ok(rd) => rd,
            Err(e) => {
                out.push(Item {
                    path: p.clone(),
                    error: Some(format!("cannot list directory: {e}")),
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
                        found.push(Item { path, error: None });
                    }
                }
                Err(e) => found.push(Item {
                    path: p.clone(),
                    error: Some(format!("cannot list directory: {e}")),
                }),
            }
        }
        if found.is_empty() {
            found.push(Item {
                path: p.clone(),
                error: Some(format!(
                    "no replays found (no *.{REPLAY_EXTENSION} entries)"
                )),
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
    let outcomes: Vec<(Outcome, Option<SimName>)> = pool.install(|| {
        items
            .par_iter()
            .map(|f| {
                let o = verify_item(f, &limits, catalog);
                pb.inc(1);
                o
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let (mut ticks, mut diverged, mut unreadable) = (0u64, 0usize, 0usize);
    for (item, (o, sim)) in items.iter().zip(&outcomes) {
        let path = item.path.display();
        match o {
            Outcome::Ok { ticks: t, digest } => {
                ticks += t;
                if !args.quiet && !args.json {
                    println!("OK        {path} ({t} ticks, digest {digest})");
                }
            }
            Outcome::Diverged { ticks: t, why, .. } => {
                ticks += t;
                diverged += 1;
                if !args.json {
                    println!("DIVERGED  {path}: {why}");
                }
            }
            Outcome::Unreadable { why } => {
                unreadable += 1;
                if !args.json {
                    println!("ERROR     {path}: {why}");
                }
            }
        }
        if args.json {
            let (t, digest, error, at) = match o {
                Outcome::Ok { ticks, digest } => (Some(*ticks), Some(digest.as_str()), None, None),
                Outcome::Diverged { ticks, why, at } => {
                    (Some(*ticks), None, Some(why.as_str()), at.as_ref())
                }
                Outcome::Unreadable { why } => (None, None, Some(why.as_str()), None),
            };
            let divergence = at.map(|d| {
                serde_json::json!({
                    "checkpoint": d.checkpoint,
                    "tick": d.tick,
                    "lastGoodTick": d.last_good_tick,
                    "fields": d.fields,
                    "player": d.player(),
                    "fieldPlayers": d.players,
                })
            });
            let line = serde_json::json!({
                "type": "replay",
                "path": item.path.to_string_lossy(),
                "status": o.status(),
                "sim": sim.as_ref().map(|s| s.id.as_str()),
                "simVersion": sim.as_ref().map(|s| s.version),
                "players": sim.as_ref().map(|s| s.players),
                "ticks": t,
                "digest": digest,
                "error": error,
                "divergence": divergence,
            });
            println!("{line}");
        }
    }
    let code = if unreadable > 0 {
        2
    } else {
        u8::from(diverged > 0)
    };
    #[allow(clippy::cast_precision_loss, reason = "a rate for display")]
    let rate = if secs > 0.0 { ticks as f64 / secs } else { 0.0 };
    if args.json {
        let summary = serde_json::json!({
            "type": "summary",
            "replays": items.len(),
            "ok": items.len() - diverged - unreadable,
            "diverged": diverged,
            "unreadable": unreadable,
            "ticks": ticks,
            "seconds": secs,
            "ticksPerSecond": rate,
            "exitCode": code,
        });
        println!("{summary}");
    } else {
        println!(
            "verified {} files, {ticks} ticks in {secs:.3} s ({rate:.0} ticks/s), {} failed ({diverged} diverged, {unreadable} unreadable)",
            items.len(),
            diverged + unreadable
        );
    }
    Ok(code)
}
