//! `tickwise netplay`: every player of a rollback session in one process,
//! over the seeded network simulator, and the outputs it shares with
//! `peer` (the flags they share are `session_args`).
//!
//! The session logic is `tickwise_net` (through the catalog); this module
//! only parses flags, writes files and prints.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use serde_json::{Value, json};
use tickwise::Nanos;
use tickwise_catalog::Catalog;
use tickwise_net::{BundleFile, Drops, LocalRun, NetworkConfig, PeerReport};

use super::session_args::{SessionArgs, random_key};
use crate::{Failure, hints};

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session settings.
    #[command(flatten)]
    pub session: SessionArgs,
    /// Round-trip time in milliseconds (each direction gets half).
    #[arg(long, value_name = "R", default_value_t = 100)]
    pub rtt_ms: u64,
    /// Extra delay per datagram, uniform in 0..=J ms.
    #[arg(long, value_name = "J", default_value_t = 0)]
    pub jitter_ms: u64,
    /// Loss probability (0 to 1).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub loss: f64,
    /// Duplication probability (0 to 1).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub dup: f64,
    /// Reordering probability (0 to 1).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub reorder: f64,
    /// Link capacity per direction in bytes per second.
    #[arg(long, value_name = "B")]
    pub bandwidth: Option<u64>,
    /// Spectators joining halfway from the host's latest anchor.
    #[arg(long, value_name = "S", default_value_t = 0,
          value_parser = clap::value_parser!(u8).range(..=8))]
    pub spectators: u8,
    /// Player P leaves the match at its tick T (says goodbye and stops);
    /// the others go on. Repeatable, once per player.
    #[arg(long = "leave", value_name = "P@T", value_parser = parse_at)]
    pub leave: Vec<(u8, u64)>,
    /// Player P, who left (`--leave`), starts again as a new process for
    /// its slot when the match reaches tick T, loads the confirmed state
    /// from another player in chunks over the simulated network, and plays
    /// on. Repeatable, once per player; the sim needs a snapshot encoding.
    #[arg(long = "rejoin", value_name = "P@T", value_parser = parse_at)]
    pub rejoin: Vec<(u8, u64)>,
}

/// A `P@T` value: player slot and tick.
fn parse_at(s: &str) -> Result<(u8, u64), String> {
    let (p, t) = s
        .split_once('@')
        .ok_or_else(|| format!("{s:?} is not PLAYER@TICK (e.g. 2@2000)"))?;
    let p: u8 = p
        .parse()
        .map_err(|_| format!("{p:?} is not a player slot (0 to 3)"))?;
    let t: u64 = t.parse().map_err(|_| format!("{t:?} is not a tick"))?;
    Ok((p, t))
}

fn probability(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is not a probability from 0 to 1"))
    }
}

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a probability in 0..=1 times a million"
)]
fn ppm(p: f64) -> u32 {
    (p * 1_000_000.0).round() as u32
}

/// Runs the command. Exit 0 when every peer confirmed every tick with the
/// same checksum and no desync; 1 otherwise.
///
/// # Errors
///
/// Exit code 2 for an unknown sim, a bad config or settings, unwritable output.
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let s = &args.session;
    let sim = s.sim_id(catalog)?;
    let (config, plan) = s.config_and_plan(catalog, sim)?;
    let net = NetworkConfig {
        latency: Nanos::from_micros(args.rtt_ms.saturating_mul(500)),
        jitter: Nanos::from_millis(args.jitter_ms),
        loss_ppm: ppm(args.loss),
        dup_ppm: ppm(args.dup),
        reorder_ppm: ppm(args.reorder),
        bandwidth: args.bandwidth,
        seed: s.seed,
    };
    // All peers are in this process: a fresh key per run unless one is given.
    let key = match s.key()? {
        Some(k) => k,
        None => random_key()?,
    };
    let mut opts = s.options(key);
    for &(p, t) in &args.leave {
        let slot = opts
            .leave_at
            .get_mut(usize::from(p))
            .filter(|_| p < s.players)
            .ok_or_else(|| {
                Failure::usage(anyhow::anyhow!(
                    "--leave {p}@{t}: player {p} is not in a {}-player match (slots 0 to {})",
                    s.players,
                    s.players - 1
                ))
            })?;
        if slot.replace(t).is_some() {
            return Err(Failure::usage(anyhow::anyhow!(
                "--leave {p}@{t}: player {p} already leaves once (one --leave per player)"
            )));
        }
    }
    for &(p, t) in &args.rejoin {
        let left = opts
            .leave_at
            .get(usize::from(p))
            .copied()
            .flatten()
            .filter(|_| p < s.players);
        let Some(l) = left else {
            return Err(Failure::usage(anyhow::anyhow!(
                "--rejoin {p}@{t}: player {p} does not leave (give --leave {p}@TICK first)"
            )));
        };
        if t <= l {
            return Err(Failure::usage(anyhow::anyhow!(
                "--rejoin {p}@{t}: player {p} leaves at tick {l}; it can rejoin only later"
            )));
        }
        if opts.rejoin_at[usize::from(p)].replace(t).is_some() {
            return Err(Failure::usage(anyhow::anyhow!(
                "--rejoin {p}@{t}: player {p} already rejoins once (one --rejoin per player)"
            )));
        }
    }
    let origin = Instant::now();
    let mut clock = || u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let run = catalog
        .netplay_within(
            sim,
            Some(&config),
            &plan,
            &opts,
            net,
            args.spectators,
            &mut clock,
            &s.limits(),
        )
        .map_err(|e| hints::catalog(e).context("refusing to start the netplay run"))?;
    let written = write_outputs(s.out.as_deref(), &run.replay, &run.bundle)?;
    let ok = run.finished && run.checksums_agree && run.desync.is_none();
    if s.json {
        outln!("{}", report_json(sim, &run, &written));
    } else {
        print_report(sim, &run, &written, opts.round_limit())?;
    }
    Ok(u8::from(!ok))
}

/// Writes `DIR/session.twr` and, when there is one, the bundle into
/// `DIR/desync/`. Returns the paths written.
///
/// # Errors
///
/// Exit code 2 when a file cannot be written.
pub fn write_outputs(
    dir: Option<&Path>,
    replay: &[u8],
    bundle: &[BundleFile],
) -> Result<Vec<PathBuf>, Failure> {
    let Some(dir) = dir else {
        return Ok(Vec::new());
    };
    let mut written = Vec::new();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("session.twr");
    std::fs::write(&path, replay).with_context(|| format!("writing {}", path.display()))?;
    written.push(path);
    if !bundle.is_empty() {
        let d = dir.join("desync");
        std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        for f in bundle {
            let path = d.join(&f.name);
            std::fs::write(&path, &f.bytes)
                .with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

/// One peer as JSON.
#[must_use]
pub fn peer_json(p: &PeerReport) -> Value {
    let s = &p.stats;
    json!({
        "player": p.slot,
        "confirmedTick": p.confirmed_tick,
        "confirmedChecksum": format!("{:016x}", p.confirmed_checksum),
        "rollbacks": s.rollbacks,
        "maxRollback": s.max_rollback,
        "resimulatedTicks": s.resimulated,
        "mispredictions": s.mispredictions,
        "stalls": s.stalls,
        "syncWaits": s.sync_waits,
        "frameCostP50Ns": p.frame_p50_ns,
        "frameCostP99Ns": p.frame_p99_ns,
        "packetsSent": s.sent,
        "bytesSent": p.bytes_sent,
        "rejoinTicks": p.rejoin.map(|r| r.0),
        "rejoinSnapshotBytes": p.rejoin.map(|r| r.1),
        "packetsLost": p.lost,
        "packetsDuplicated": p.duplicated,
        "packetsReordered": p.reordered,
        "droppedMalformed": s.drops.undecodable(),
        "droppedUnauthenticated": s.drops.unauthenticated,
        "droppedStale": s.drops.stale,
        "droppedOther": other_drops(&s.drops),
        "checksCompared": s.checks_compared,
        "desyncs": s.desyncs,
        "firstDesync": p.desync.as_ref().map(|d| json!({
            "tick": d.tick, "peer": d.peer, "fields": d.fields,
        })),
        "ended": p.ended.map(|e| e.to_string()),
        "departed": p.departed.iter().map(|&(player, from)| json!({
            "player": player, "absentFrom": from,
        })).collect::<Vec<_>>(),
        "rejoined": p.rejoined.iter().map(|&(player, from, join)| json!({
            "player": player, "absentFrom": from, "joinedAt": join,
        })).collect::<Vec<_>>(),
    })
}

/// Drops that are neither undecodable, unauthenticated nor stale.
#[must_use]
pub const fn other_drops(d: &Drops) -> u64 {
    d.unknown_peer + d.wrong_session + d.far_future + d.departed
}

fn paths_json(written: &[PathBuf]) -> Vec<String> {
    written.iter().map(|p| p.display().to_string()).collect()
}

fn report_json(sim: &str, run: &LocalRun, written: &[PathBuf]) -> Value {
    json!({
        "sim": sim,
        "finished": run.finished,
        "checksumsAgree": run.checksums_agree,
        "peers": run.peers.iter().map(peer_json).collect::<Vec<_>>(),
        "spectators": run.spectators.iter().map(|s| json!({
            "slot": s.slot, "joinedAt": s.joined_at, "tick": s.tick,
            "checksum": format!("{:016x}", s.checksum),
            "error": s.error.as_ref().map(ToString::to_string),
        })).collect::<Vec<_>>(),
        "desync": run.desync.as_ref().map(|d| json!({
            "tick": d.tick, "players": [d.players.0, d.players.1], "fields": d.fields,
            "snapshotTick": d.snapshot.map(|s| s.0),
        })),
        "files": paths_json(written),
    })
}

fn print_report(
    sim: &str,
    run: &LocalRun,
    written: &[PathBuf],
    round_limit: u64,
) -> Result<(), crate::out::StdoutClosed> {
    outln!("netplay {sim}: {} players", run.peers.len());
    outln!(
        "{:>6} {:>9} {:>16} {:>9} {:>5} {:>8} {:>7} {:>7} {:>9} {:>9} {:>7} {:>6} {:>6} {:>6} {:>7}",
        "player",
        "confirmed",
        "checksum",
        "rollbacks",
        "max",
        "resim",
        "missed",
        "stalls",
        "p50 ns",
        "p99 ns",
        "sent",
        "lost",
        "bad",
        "unauth",
        "desyncs"
    );
    for p in &run.peers {
        let s = &p.stats;
        outln!(
            "{:>6} {:>9} {:016x} {:>9} {:>5} {:>8} {:>7} {:>7} {:>9} {:>9} {:>7} {:>6} {:>6} {:>6} {:>7}",
            p.slot,
            p.confirmed_tick,
            p.confirmed_checksum,
            s.rollbacks,
            s.max_rollback,
            s.resimulated,
            s.mispredictions,
            s.stalls,
            p.frame_p50_ns,
            p.frame_p99_ns,
            s.sent,
            p.lost,
            s.drops.undecodable(),
            s.drops.unauthenticated,
            s.desyncs
        );
    }
    for p in &run.peers {
        if let Some(e) = p.ended {
            outln!("player {}: {e}", p.slot);
        }
        for &(q, from) in &p.departed {
            outln!(
                "player {}: player {q} left; its input is the absent input from tick {from}",
                p.slot
            );
        }
        if let Some((ticks, bytes)) = p.rejoin {
            outln!(
                "player {}: rejoined after {ticks} ticks of network time ({bytes}-byte snapshot)",
                p.slot
            );
        }
        for &(q, from, join) in &p.rejoined {
            outln!(
                "player {}: player {q} was away for ticks {from}..{join} (absent input) and rejoined at {join}",
                p.slot
            );
        }
    }
    for s in &run.spectators {
        outln!(
            "spectator {}: joined at tick {}, reached {}, checksum {:016x}{}",
            s.slot,
            s.joined_at,
            s.tick,
            s.checksum,
            s.error
                .as_ref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        );
    }
    match &run.desync {
        Some(d) => outln!(
            "DESYNC at confirmed tick {} between players {} and {}; fields differ: {}",
            d.tick,
            d.players.0,
            d.players.1,
            d.fields.join(", ")
        ),
        None if run.finished && run.checksums_agree => {
            outln!("all players confirmed every tick with the same checksum; no desync");
        }
        None if !run.finished => outln!(
            "the session did not confirm every tick within {round_limit} rounds of \
             network time (a window plus input delay below the one-way latency in \
             ticks advances only that many ticks per latency; raise --window or \
             --input-delay)"
        ),
        None => outln!("the session did not finish with equal checksums"),
    }
    for p in written {
        outln!("wrote {}", p.display());
    }
    Ok(())
}
