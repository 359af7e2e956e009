//! `tickwise peer`: one player of a real session, over UDP (`--bind`,
//! `--remote`, `--player`, `--session-key`) or through a room of
//! `tickwise serve` (`--room ws://HOST:PORT/v1/rooms/CODE`: the room hands
//! out the seat, the sim, its config, the match settings and the session
//! key, and relays the datagrams; docs/rooms.md); or a spectator of a UDP
//! session (`--spectate`).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::json;
use tickwise::{Nanos, Timestamp};
use tickwise_catalog::{Catalog, PeerIo, SpectateIo};
use tickwise_net::{
    FIRST_SPECTATOR_SLOT, HostClock, MAX_SPECTATORS, PeerRun, SessionKey, UdpTransport,
};
use tickwise_rooms::{RelayClient, Role};

use super::netplay::{peer_json, write_outputs};
use super::session_args::{KEY_HOWTO, SessionArgs};
use crate::{Failure, hints};

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session settings (the same on every peer).
    #[command(flatten)]
    pub session: SessionArgs,
    /// Play through a room of `tickwise serve` (its datagrams go through
    /// the room's relay): the room gives the seat, the sim, its config, the
    /// players, `--ticks`, `--check-every`, `--disconnect-after` and the
    /// session key, so those are not given here. A seat whose player
    /// dropped is taken back with a rejoin.
    #[arg(long, value_name = "ws://HOST:PORT/v1/rooms/CODE",
          conflicts_with_all = ["bind", "remote", "session_key", "sim", "config", "players",
                                "ticks", "check_every", "disconnect_after", "rejoin"])]
    pub room: Option<String>,
    /// Local address to bind.
    #[arg(long, value_name = "ADDR", required_unless_present = "room")]
    pub bind: Option<SocketAddr>,
    /// The other players' addresses, in slot order (skipping this one);
    /// with `--spectate`, the address of the player watched.
    #[arg(long, value_name = "ADDR", required_unless_present = "room")]
    pub remote: Vec<SocketAddr>,
    /// This player's slot (with `--room`: the seat wanted; the lowest free
    /// one when not given).
    #[arg(long, value_name = "K", required_unless_present_any = ["room", "spectate"])]
    pub player: Option<u8>,
    /// Watch a running match as a spectator: ask the player at `--remote`
    /// (slot `--watch`) for its latest anchor (a saved confirmed state) and the
    /// confirmed inputs since, and follow the match to its last tick. Needs
    /// the players' key and settings; a spectator never sends an input.
    #[arg(long, conflicts_with_all = ["player", "rejoin", "room"])]
    pub spectate: bool,
    /// With `--spectate`: the slot of the player at `--remote`.
    #[arg(long, value_name = "K", default_value_t = 0, requires = "spectate")]
    pub watch: u8,
    /// Spectator processes this player admits at a time (0: none).
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u8).range(..=i64::from(MAX_SPECTATORS)))]
    pub spectators: u8,
    /// Give up after this many seconds.
    #[arg(long, value_name = "S", default_value_t = 120)]
    pub timeout_s: u64,
    /// Take this slot back in a running match (after this player's process
    /// was killed, or left): load the confirmed state from another player
    /// and play on. Needs the same `--player`, key and settings; the sim
    /// needs a snapshot encoding. A rejoined peer writes no replay.
    #[arg(long)]
    pub rejoin: bool,
}

struct RealClock(Instant);

impl HostClock for RealClock {
    fn now(&mut self) -> Timestamp {
        Timestamp::from_nanos(u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
    fn sleep(&mut self, d: Nanos) {
        std::thread::sleep(Duration::from_nanos(d.as_nanos()));
    }
}

/// Runs the command. Exit 0 when this peer confirmed every tick and saw no
/// desync; 1 otherwise.
///
/// # Errors
///
/// Exit code 2 for bad settings, an unknown sim, a socket error.
pub fn run(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    if let Some(url) = &args.room {
        return run_room(args, url, catalog);
    }
    let s = &args.session;
    let Some(player) = args.player.filter(|_| !args.spectate) else {
        return spectate(args, catalog);
    };
    let Some(bind) = args.bind else {
        return Err(Failure::usage(anyhow::anyhow!(
            "a peer needs --player and --bind (or --room)"
        )));
    };
    if player >= s.players || player >= FIRST_SPECTATOR_SLOT {
        return Err(Failure::usage(anyhow::anyhow!(
            "--player {player} is not a slot of a {}-player session (0..{})",
            s.players,
            s.players
        )));
    }
    if args.remote.len() + 1 != usize::from(s.players) {
        return Err(Failure::usage(anyhow::anyhow!(
            "a {}-player session needs {} --remote addresses, got {}",
            s.players,
            s.players - 1,
            args.remote.len()
        )));
    }
    let Some(key) = s.key()? else {
        return Err(Failure::usage(anyhow::anyhow!(
            "a peer needs the session's key (every datagram is authenticated with it): {KEY_HOWTO}"
        )));
    };
    let slots = (0..s.players).filter(|&p| p != player);
    let peers = slots.zip(args.remote.iter().copied()).collect();
    let sim = s.sim_id(catalog)?;
    let (config, plan) = s.config_and_plan(catalog, sim)?;
    let mut transport =
        UdpTransport::bind(bind, peers).with_context(|| format!("binding {bind}"))?;
    let mut clock = RealClock(Instant::now());
    let io = PeerIo {
        transport: &mut transport,
        clock: &mut clock,
        local: player,
        linger: Nanos::from_millis(1_500),
        deadline: Nanos::from_secs(args.timeout_s),
        rejoin: if args.rejoin { Some(epoch()?) } else { None },
    };
    let mut opts = s.options(key);
    opts.spectators = args.spectators;
    let run = catalog
        .peer_within(sim, Some(&config), &plan, &opts, io, &s.limits())
        .map_err(|e| hints::catalog(e).context("refusing to start the peer"))?;
    report(args, &run, None)
}

/// A random epoch (one per process) for a rejoin or a spectator.
fn epoch() -> Result<u64, Failure> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b)
        .map_err(|e| anyhow::anyhow!("cannot read the OS's random source for an epoch: {e}"))?;
    Ok(u64::from_le_bytes(b))
}

/// How long `--room` waits for the room server's `welcome`.
const JOIN_TIMEOUT: Duration = Duration::from_secs(10);

/// `peer --room URL`: takes a seat, waits for the start (or rejoins a
/// started match), then plays with the relay as its transport.
fn run_room(args: &Args, url: &str, catalog: &Catalog) -> Result<u8, Failure> {
    let s = &args.session;
    let mut client = RelayClient::join(url, Role::Player, args.player, JOIN_TIMEOUT)
        .map_err(|e| Failure::usage(anyhow::Error::new(e).context("joining the room")))?;
    let w = client.welcome().clone();
    let spec = &w.spec;
    let info = catalog.get(&spec.sim).map_err(hints::catalog)?;
    if info.version != spec.version {
        return Err(Failure::usage(anyhow::anyhow!(
            "the room is for {} version {}, this build has version {}",
            spec.sim,
            spec.version,
            info.version
        )));
    }
    let key = SessionKey::from_hex(&w.session_key)
        .map_err(|e| anyhow::anyhow!("the room's session key: {e}"))?;
    eprintln!(
        "room: seat {} of {} players, {} v{}, {} ticks{}",
        w.slot,
        spec.players,
        spec.sim,
        spec.version,
        spec.ticks,
        if w.started {
            "; the match is running: rejoining it"
        } else {
            "; waiting for every player to be ready"
        }
    );
    client
        .wait_start(Duration::from_secs(args.timeout_s))
        .map_err(|e| anyhow::Error::new(e).context("waiting for the match to start"))?;
    let mut opts = s.options(key);
    opts.players = spec.players;
    opts.ticks = spec.ticks;
    opts.check_every = spec.check_every;
    opts.disconnect_after = spec.disconnect_after;
    let plan = s.plan(spec.players)?;
    let mut clock = RealClock(Instant::now());
    let rejoin = if w.started { Some(epoch()?) } else { None };
    let io = PeerIo {
        transport: &mut client,
        clock: &mut clock,
        local: w.slot,
        linger: Nanos::from_millis(1_500),
        deadline: Nanos::from_secs(args.timeout_s),
        rejoin,
    };
    let run = catalog
        .peer_within(
            info.id,
            Some(spec.config.as_bytes()),
            &plan,
            &opts,
            io,
            &s.limits(),
        )
        .map_err(|e| hints::catalog(e).context("refusing to start the peer"))?;
    let c = client.counters();
    let relay = json!({
        "slot": w.slot,
        "sim": spec.sim,
        "rejoined": w.started,
        "relaySent": c.sent,
        "relayBytesSent": c.bytes_sent,
        "relayReceived": c.received,
        "relayBytesReceived": c.bytes_received,
        "relaySendFailures": c.send_failures,
        "closed": client.closed(),
    });
    client.leave();
    report(args, &run, Some(relay))
}

/// Prints the peer's report (and writes its replay); exit 0 when it
/// confirmed every tick and saw no desync.
fn report(args: &Args, run: &PeerRun, room: Option<serde_json::Value>) -> Result<u8, Failure> {
    let s = &args.session;
    // A rejoined peer has no replay of the match (the others have it).
    let written = if run.replay.is_empty() {
        Vec::new()
    } else {
        write_outputs(s.out.as_deref(), &run.replay, &[])?
    };
    let ok = run.finished && run.report.desync.is_none();
    if s.json {
        let mut v = peer_json(&run.report);
        v["finished"] = json!(run.finished);
        v["loopTicks"] = json!(run.loop_ticks);
        v["files"] = json!(
            written
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
        );
        if let Some(room) = room {
            v["room"] = room;
        }
        outln!("{v}");
    } else {
        let r = &run.report;
        outln!(
            "peer {}: confirmed {} ticks, checksum {:016x}, {} rollbacks (max {}), {} stalls, {} desyncs, dropped {} unauthenticated and {} other datagrams{}",
            r.slot,
            r.confirmed_tick,
            r.confirmed_checksum,
            r.stats.rollbacks,
            r.stats.max_rollback,
            r.stats.stalls,
            r.stats.desyncs,
            r.stats.drops.unauthenticated,
            r.stats.drops.total() - r.stats.drops.unauthenticated,
            r.desync
                .as_ref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        );
        for p in &written {
            outln!("wrote {}", p.display());
        }
    }
    Ok(u8::from(!ok))
}

/// `peer --spectate`: exit 0 when the spectator stepped every tick of the
/// match; 1 when it was refused, dropped, the player went silent, or the
/// deadline passed (the reason on stderr).
fn spectate(args: &Args, catalog: &Catalog) -> Result<u8, Failure> {
    let s = &args.session;
    if args.watch >= s.players {
        return Err(Failure::usage(anyhow::anyhow!(
            "--watch {} is not a slot of a {}-player session (0..{})",
            args.watch,
            s.players,
            s.players
        )));
    }
    if s.out.is_some() {
        return Err(Failure::usage(anyhow::anyhow!(
            "a spectator writes no replay (--out): the players' replays hold the match"
        )));
    }
    let [remote] = args.remote[..] else {
        return Err(Failure::usage(anyhow::anyhow!(
            "a spectator watches one player: give one --remote address (the player in slot --watch), got {}",
            args.remote.len()
        )));
    };
    let Some(key) = s.key()? else {
        return Err(Failure::usage(anyhow::anyhow!(
            "a spectator needs the session's key (every datagram is authenticated with it): {KEY_HOWTO}"
        )));
    };
    let sim = s.sim_id(catalog)?;
    let (config, _) = s.config_and_plan(catalog, sim)?;
    let Some(bind) = args.bind else {
        return Err(Failure::usage(anyhow::anyhow!(
            "a spectator needs --bind (its own address)"
        )));
    };
    let mut transport = UdpTransport::bind(bind, vec![(args.watch, remote)])
        .with_context(|| format!("binding {bind}"))?;
    let mut clock = RealClock(Instant::now());
    let io = SpectateIo {
        transport: &mut transport,
        clock: &mut clock,
        host: args.watch,
        epoch: epoch()?,
        deadline: Nanos::from_secs(args.timeout_s),
    };
    let run = catalog
        .spectate_within(sim, Some(&config), &s.options(key), io, &s.limits())
        .map_err(|e| hints::catalog(e).context("refusing to start the spectator"))?;
    let r = &run.report;
    if s.json {
        let mut v = peer_json(r);
        v["spectator"] = json!(true);
        v["watching"] = json!(args.watch);
        v["finished"] = json!(run.finished);
        v["joinedAt"] = json!(run.joined_at);
        v["snapshotBytes"] = json!(run.snapshot_bytes);
        v["loadTicks"] = json!(run.load_ticks);
        v["loopTicks"] = json!(r.stats.local_ticks);
        v["error"] = json!(run.error.as_ref().map(ToString::to_string));
        outln!("{v}");
    } else {
        outln!(
            "spectator {}: confirmed {} ticks, checksum {:016x}, joined at tick {} (snapshot of {} bytes, watching in {} ticks), dropped {} unauthenticated and {} other datagrams",
            if r.slot >= FIRST_SPECTATOR_SLOT + MAX_SPECTATORS {
                "(never admitted)".to_owned()
            } else {
                format!("in slot {}", r.slot)
            },
            r.confirmed_tick,
            r.confirmed_checksum,
            run.joined_at.map_or_else(|| "-".into(), |t| t.to_string()),
            run.snapshot_bytes,
            run.load_ticks.map_or_else(|| "-".into(), |t| t.to_string()),
            r.stats.drops.unauthenticated,
            r.stats.drops.total() - r.stats.drops.unauthenticated,
        );
    }
    if let Some(e) = &run.error {
        eprintln!("tickwise peer --spectate: {e}");
    } else if !run.finished {
        eprintln!(
            "tickwise peer --spectate: gave up after {} s at tick {} of {}",
            args.timeout_s, r.confirmed_tick, s.ticks
        );
    }
    Ok(u8::from(!run.finished))
}
