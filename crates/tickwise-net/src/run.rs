//! Whole sessions: all peers in one process over the network simulator
//! ([`run_local`]), or one peer of a real multi-process game ([`run_peer`]).
//! Both produce the replay of the confirmed inputs and, on a desync, a
//! forensic bundle.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use tickwise::{
    CatchUpPolicy, ClockConfig, FixedLoop, FnInputs, Nanos, Pcg32, ReplayHeader, ReplayInput, Sim,
    Tick, Timestamp,
};

use crate::auth::SessionKey;
use crate::config::{FIRST_SPECTATOR_SLOT, MAX_PLAYERS, SessionConfig, SessionConfigError};
use crate::game::{Injected, NetGame};
use crate::rejoin::{RejoinError, RejoinProgress, Rejoiner};
use crate::session::{Desync, Session, SessionEnd, SessionError, SessionStats, SnapshotCodec};
use crate::spectator::Spectator;
use crate::transport::{NetworkConfig, SimNetwork, Transport};

/// Why a run could not be carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// A session setting is out of range.
    Config(SessionConfigError),
    /// A session operation failed.
    Session(SessionError),
    /// The desync injection tick must be at least 1 (tick 0 is the initial state).
    InjectAtZero,
    /// A player could not rejoin.
    Rejoin(RejoinError),
    /// A rejoining peer got no snapshot before its deadline.
    RejoinTimeout,
    /// Not one input stream per player.
    Inputs {
        /// Streams given.
        given: usize,
        /// Players in the session.
        players: u8,
    },
}

impl core::fmt::Display for RunError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RunError::Config(e) => write!(f, "{e}"),
            RunError::Session(e) => write!(f, "{e}"),
            RunError::Rejoin(e) => write!(f, "{e}"),
            RunError::RejoinTimeout => f.write_str(
                "rejoin: no snapshot arrived before the deadline (is the match still running, with the same key?)",
            ),
            RunError::InjectAtZero => f.write_str(
                "desync injection tick must be at least 1 (tick 0 is the initial state)",
            ),
            RunError::Inputs { given, players } => write!(
                f,
                "{given} input streams for {players} players: every player needs exactly one"
            ),
        }
    }
}

impl core::error::Error for RunError {}

impl From<SessionConfigError> for RunError {
    fn from(e: SessionConfigError) -> RunError {
        RunError::Config(e)
    }
}

impl From<SessionError> for RunError {
    fn from(e: SessionError) -> RunError {
        RunError::Session(e)
    }
}

/// The settings shared by [`run_local`] and [`run_peer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Players, 2 to 4.
    pub players: u8,
    /// Ticks to simulate and confirm.
    pub ticks: u64,
    /// Local input delay of every peer.
    pub input_delay: u32,
    /// Prediction window (0: lockstep).
    pub window: u32,
    /// Checksums are exchanged every this many confirmed ticks.
    pub check_every: u64,
    /// Replay checkpoint interval.
    pub checkpoint_every: u64,
    /// The session key (every peer must be given the same one).
    pub key: SessionKey,
    /// Makes player 1's sim non-deterministic at this tick.
    pub inject_desync_at: Option<u64>,
    /// Silent-peer timeout in ticks.
    pub disconnect_after: u64,
    /// Rounds (ticks of network time) to run before giving up on confirming
    /// every tick; `None`: twice `ticks` plus 20 s at 60 Hz. A session whose
    /// window plus input delay is below the one-way latency in ticks advances
    /// only `window + input_delay` ticks per latency (it waits for remote
    /// inputs), so a slow network needs a larger limit to finish.
    pub max_rounds: Option<u64>,
    /// Per player slot, the tick at which that player leaves the match in
    /// [`run_local`] (it says goodbye and stops; the others go on).
    pub leave_at: [Option<u64>; MAX_PLAYERS as usize],
    /// Per player slot, the match tick (the slowest remaining player's) at
    /// which a player who left starts a new process for its slot and
    /// rejoins ([`run_local_rejoin`] only; it needs the sim's snapshot).
    pub rejoin_at: [Option<u64>; MAX_PLAYERS as usize],
    /// Spectator processes each player of [`run_peer`] admits over the
    /// wire (its cap, at most [`crate::MAX_SPECTATORS`]; 0: none).
    pub spectators: u8,
}

impl RunOptions {
    /// Defaults for a session with key `key`: delay 2, window 8, every
    /// tick checked, a checkpoint every 60 ticks, 5 s (300 ticks) of
    /// silence is a leave.
    #[must_use]
    pub const fn new(players: u8, ticks: u64, key: SessionKey) -> RunOptions {
        RunOptions {
            players,
            ticks,
            input_delay: 2,
            window: 8,
            check_every: 1,
            checkpoint_every: 60,
            key,
            inject_desync_at: None,
            disconnect_after: 300,
            max_rounds: None,
            leave_at: [None; MAX_PLAYERS as usize],
            rejoin_at: [None; MAX_PLAYERS as usize],
            spectators: 0,
        }
    }

    /// The round limit [`run_local`] applies: [`RunOptions::max_rounds`] or
    /// its default.
    #[must_use]
    pub const fn round_limit(&self) -> u64 {
        match self.max_rounds {
            Some(n) => n,
            None => self.ticks.saturating_mul(2).saturating_add(20 * 60),
        }
    }

    fn session(&self, local: u8, spectators: u8) -> SessionConfig {
        SessionConfig {
            players: self.players,
            local,
            input_delay: self.input_delay,
            window: self.window,
            check_every: self.check_every,
            key: self.key,
            disconnect_after: self.disconnect_after,
            stop_at: Some(self.ticks),
            spectators,
            anchor_every: 64,
        }
    }

    fn check(&self) -> Result<(), RunError> {
        if self.inject_desync_at == Some(0) {
            return Err(RunError::InjectAtZero);
        }
        self.session(0, 0).validate()?;
        Ok(())
    }
}

/// One peer's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerReport {
    /// The player slot.
    pub slot: u8,
    /// The newest confirmed tick.
    pub confirmed_tick: u64,
    /// The checksum of the newest confirmed state.
    pub confirmed_checksum: u64,
    /// Counters.
    pub stats: SessionStats,
    /// Bytes of this peer's datagrams, MACs included, without UDP/IP
    /// headers (0 over UDP: not counted).
    pub bytes_sent: u64,
    /// Datagrams the network lost from this peer (0 over UDP: unknown).
    pub lost: u64,
    /// Extra copies the network delivered of this peer's datagrams (0 over
    /// UDP: unknown).
    pub duplicated: u64,
    /// This peer's datagrams the network held back so later ones overtook
    /// them (0 over UDP: unknown).
    pub reordered: u64,
    /// Median cost of one tick of this peer (session and sim), ns.
    pub frame_p50_ns: u64,
    /// 99th percentile cost, ns.
    pub frame_p99_ns: u64,
    /// The first desync this peer saw.
    pub desync: Option<Desync>,
    /// Why it ended early, if it did.
    pub ended: Option<SessionEnd>,
    /// The players this peer saw leave, each with the agreed first tick of
    /// its absent input.
    pub departed: Vec<(u8, u64)>,
    /// The players this peer saw rejoin: slot, first absent tick, join tick.
    pub rejoined: Vec<(u8, u64, u64)>,
    /// When this peer rejoined ([`run_local_rejoin`], or [`run_peer`] with
    /// an epoch): the ticks (of network time; over UDP, of the sim's step
    /// on the host clock) from its first request to playing, and the
    /// snapshot's size.
    pub rejoin: Option<(u64, u64)>,
}

fn rejoins<S: Sim + Clone>(s: &Session<S>) -> Vec<(u8, u64, u64)>
where
    S::Input: ReplayInput,
{
    (0..s.config().players)
        .filter_map(|p| s.rejoined(p).map(|(a, b)| (p, a, b)))
        .collect()
}

fn departures<S: Sim + Clone>(s: &Session<S>) -> Vec<(u8, u64)>
where
    S::Input: ReplayInput,
{
    (0..s.config().players)
        .filter_map(|p| s.departed(p).map(|t| (p, t)))
        .collect()
}

/// A spectator's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpectatorReport {
    /// Its slot.
    pub slot: u8,
    /// The tick of the anchor it started from.
    pub joined_at: u64,
    /// Ticks it reached.
    pub tick: u64,
    /// Its state's checksum.
    pub checksum: u64,
    /// The host's verdict on it (`None`: fine).
    pub error: Option<SessionError>,
}

/// A desync, with everything found out about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The first checked confirmed tick whose checksums differ.
    pub tick: u64,
    /// The two players.
    pub players: (u8, u8),
    /// Their checksums.
    pub checksums: (u64, u64),
    /// The fields whose hashes differ.
    pub fields: Vec<&'static str>,
    /// The kept confirmed snapshot before the desync, its tick and checksum.
    pub snapshot: Option<(u64, u64)>,
}

/// A file of a forensic bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleFile {
    /// File name (no directories).
    pub name: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// The outcome of [`run_local`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct LocalRun {
    /// Per player.
    pub peers: Vec<PeerReport>,
    /// Per spectator.
    pub spectators: Vec<SpectatorReport>,
    /// Whether every peer confirmed every tick.
    pub finished: bool,
    /// Whether every peer's final confirmed checksum is the same.
    pub checksums_agree: bool,
    /// The replay of the confirmed inputs (player 0's recording).
    pub replay: Vec<u8>,
    /// The first desync.
    pub desync: Option<Finding>,
    /// The forensic bundle (empty without a desync): two replays and a report.
    pub bundle: Vec<BundleFile>,
    /// Network time simulated, ns.
    pub network_ns: u64,
}

fn percentile(sorted: &[u64], pct: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = (sorted.len() - 1) * pct / 100;
    sorted.get(i).copied().unwrap_or(0)
}

/// One player's inputs: called once per tick the player's loop runs, with
/// the session's current tick (in [`run_local`] and [`run_peer`] alike).
/// The same tick comes again while the session stalls or waits, which
/// depends on the network's timing, so a scripted stream must be a
/// function of the tick (as [`random_inputs`] is) for a match to send the
/// same inputs in every run; ticks never go back.
pub type PlayerInput<'a, I> = Box<dyn FnMut(u64) -> I + 'a>;

/// Player `slot`'s inputs drawn by `f` from a [`Pcg32`] seeded with `seed`
/// on stream `slot` (what `tickwise netplay --inputs random:SEED` gives):
/// tick `t` gets draw `t`, however often it is asked for.
#[must_use]
pub fn random_inputs<'a, I: Clone + 'a>(
    seed: u64,
    slot: u8,
    f: fn(&mut Pcg32) -> I,
) -> PlayerInput<'a, I> {
    let mut rng = Pcg32::new(seed, u64::from(slot));
    let mut next = 0u64;
    let mut last: Option<I> = None;
    Box::new(move |t| {
        loop {
            match &last {
                Some(input) if next > t => return input.clone(),
                _ => {
                    last = Some(f(&mut rng));
                    next += 1;
                }
            }
        }
    })
}

/// Runs all players of a session in one process over a [`SimNetwork`] with
/// `net`'s faults, one tick of network time (`step`) per round, until every
/// peer has confirmed `opts.ticks` ticks (or [`RunOptions::round_limit`]
/// rounds have passed: then [`LocalRun::finished`] is false). Spectators join halfway from the host's latest anchor.
/// `clock` reads a monotonic nanosecond counter for the frame-cost
/// percentiles (pass a constant to skip timing).
///
/// # Errors
///
/// A [`RunError`] for settings out of range.
#[allow(clippy::too_many_arguments, reason = "one call site per front end")]
pub fn run_local<S: Sim + Clone>(
    initial: &S,
    header: &ReplayHeader,
    inputs: Vec<PlayerInput<'_, S::Input>>,
    opts: &RunOptions,
    net: NetworkConfig,
    spectators: u8,
    step: Nanos,
    clock: &mut dyn FnMut() -> u64,
) -> Result<LocalRun, RunError>
where
    S::Input: ReplayInput,
{
    run_local_inner(
        initial, header, inputs, opts, net, spectators, step, clock, None,
    )
}

/// [`run_local`] for a sim with a snapshot encoding (`codec`, e.g.
/// [`SnapshotCodec::new`] for a [`tickwise::SnapshotBytes`] sim), so that
/// players can rejoin ([`RunOptions::rejoin_at`]): a player who left comes
/// back as a new [`Rejoiner`] for its slot, loads the donor's chunked
/// snapshot over the simulated network, and plays on.
///
/// # Errors
///
/// A [`RunError`] for settings out of range, or a rejoin that failed.
#[allow(clippy::too_many_arguments, reason = "one call site per front end")]
pub fn run_local_rejoin<S: Sim + Clone + 'static>(
    initial: &S,
    header: &ReplayHeader,
    inputs: Vec<PlayerInput<'_, S::Input>>,
    opts: &RunOptions,
    net: NetworkConfig,
    spectators: u8,
    step: Nanos,
    clock: &mut dyn FnMut() -> u64,
    codec: &SnapshotCodec<S>,
) -> Result<LocalRun, RunError>
where
    S::Input: ReplayInput,
{
    run_local_inner(
        initial,
        header,
        inputs,
        opts,
        net,
        spectators,
        step,
        clock,
        Some(SnapshotCodec::injected(codec)),
    )
}

/// The largest snapshot a rejoin in [`run_local_rejoin`] sends: 16 MiB.
pub const MAX_REJOIN_SNAPSHOT: usize = 16 << 20;

#[allow(
    clippy::too_many_arguments,
    clippy::too_many_lines,
    reason = "the run loop"
)]
fn run_local_inner<S: Sim + Clone>(
    initial: &S,
    header: &ReplayHeader,
    inputs: Vec<PlayerInput<'_, S::Input>>,
    opts: &RunOptions,
    net: NetworkConfig,
    spectators: u8,
    step: Nanos,
    clock: &mut dyn FnMut() -> u64,
    codec: Option<SnapshotCodec<Injected<S>>>,
) -> Result<LocalRun, RunError>
where
    S::Input: ReplayInput,
{
    opts.check()?;
    let mut network = SimNetwork::new(net);
    let mut sessions = Vec::new();
    let mut gens = inputs;
    if gens.len() != usize::from(opts.players) {
        return Err(RunError::Inputs {
            given: gens.len(),
            players: opts.players,
        });
    }
    for p in 0..opts.players {
        let fault = if p == 1 { opts.inject_desync_at } else { None };
        let sim = Injected::new(initial.clone(), 0, fault);
        let spec = if p == 0 { spectators } else { 0 };
        let mut s = Session::new(sim, opts.session(p, spec))?;
        let mut h = header.clone();
        h.checkpoint_every = opts.checkpoint_every;
        s.start_recording(h)?;
        if let Some(c) = &codec {
            s.enable_rejoin(c.clone(), MAX_REJOIN_SNAPSHOT);
        }
        sessions.push(s);
    }
    let mut rejoiners: Vec<Option<Rejoiner<Injected<S>>>> =
        (0..opts.players).map(|_| None).collect();
    let mut has_left = [false; MAX_PLAYERS as usize];
    let mut has_rejoined = [false; MAX_PLAYERS as usize];
    let mut rejoin_started = [0u64; MAX_PLAYERS as usize];
    let mut rejoin_cost: [Option<(u64, u64)>; MAX_PLAYERS as usize] = [None; MAX_PLAYERS as usize];
    let mut specs: Vec<(Spectator<Injected<S>>, u64)> = Vec::new();
    let mut costs: Vec<Vec<u64>> = (0..opts.players).map(|_| Vec::new()).collect();
    let limit = opts.round_limit();
    let join_round = opts.ticks / 2;
    let mut round = 0u64;
    let mut finished = false;
    while round < limit {
        round += 1;
        let now = Timestamp::from_nanos(step.as_nanos().saturating_mul(round));
        network.advance_to(now);
        let match_tick = sessions
            .iter()
            .filter(|s| s.ended().is_none())
            .map(Session::current_tick)
            .min()
            .unwrap_or(0);
        for (i, s) in sessions.iter_mut().enumerate() {
            #[allow(clippy::cast_possible_truncation, reason = "at most 4 players")]
            let slot = i as u8;
            if let Some(rj) = rejoiners[i].as_mut() {
                let t0 = clock();
                let progress = rj.tick(&mut network.port(slot)).map_err(RunError::Rejoin)?;
                costs[i].push(clock().saturating_sub(t0));
                if matches!(progress, RejoinProgress::Joined { .. })
                    && let Some(joined) = rj.take_session()
                {
                    rejoin_cost[i] = Some((round - rejoin_started[i], rj.snapshot_bytes()));
                    *s = joined;
                    rejoiners[i] = None;
                }
                continue;
            }
            if s.ended().is_some() {
                if let (Some(c), Some(t)) = (&codec, opts.rejoin_at[i])
                    && has_left[i]
                    && !has_rejoined[i]
                    && match_tick >= t
                {
                    let fault = if slot == 1 {
                        opts.inject_desync_at
                    } else {
                        None
                    };
                    let sim = Injected::new(initial.clone(), 0, fault);
                    let epoch = 0x7e70_0000_0000_0000 ^ (round << 8) ^ u64::from(slot);
                    rejoiners[i] = Some(Rejoiner::new(
                        sim,
                        opts.session(slot, 0),
                        c.clone(),
                        epoch,
                        MAX_REJOIN_SNAPSHOT,
                    )?);
                    has_rejoined[i] = true;
                    rejoin_started[i] = round;
                }
                continue;
            }
            if !has_left[i] && opts.leave_at[i].is_some_and(|t| s.current_tick() >= t) {
                s.leave(&mut network.port(slot));
                has_left[i] = true;
                continue;
            }
            let input = (gens[i])(s.current_tick());
            let t0 = clock();
            #[allow(clippy::cast_possible_truncation, reason = "at most 4 players")]
            let _ = s.tick(&input, &mut network.port(i as u8));
            costs[i].push(clock().saturating_sub(t0));
        }
        if round == join_round && spectators > 0 {
            for k in 0..spectators {
                let slot = FIRST_SPECTATOR_SLOT + k;
                let host = &mut sessions[0];
                let Some((tick, state)) = host.latest_anchor() else {
                    continue;
                };
                let spec = Spectator::new(state.clone(), tick, slot, opts.players, &opts.key);
                host.add_spectator(slot, tick)?;
                specs.push((spec, tick));
            }
        }
        for (k, (spec, _)) in specs.iter_mut().enumerate() {
            #[allow(clippy::cast_possible_truncation, reason = "at most 8 spectators")]
            let _ = spec.tick_once(&mut network.port(FIRST_SPECTATOR_SLOT + k as u8), 8);
        }
        let waiting = (0..sessions.len())
            .any(|i| rejoiners[i].is_some() || (opts.rejoin_at[i].is_some() && !has_rejoined[i]));
        let done = !waiting
            && sessions.iter().all(|s| s.is_finished() || left(s))
            && specs.iter().all(|(s, _)| s.tick() >= opts.ticks);
        if done {
            finished = true;
            break;
        }
        if sessions.iter().any(|s| s.ended().is_some() && !left(s)) {
            break;
        }
    }
    let peers: Vec<PeerReport> = sessions
        .iter()
        .zip(costs.iter_mut())
        .enumerate()
        .map(|(i, (s, c))| {
            c.sort_unstable();
            #[allow(clippy::cast_possible_truncation, reason = "at most 4 players")]
            let slot = i as u8;
            PeerReport {
                slot,
                confirmed_tick: s.confirmed_tick(),
                confirmed_checksum: s.confirmed_checksum().unwrap_or(0),
                stats: *s.stats(),
                bytes_sent: network.stats(slot).bytes,
                lost: network.stats(slot).lost,
                duplicated: network.stats(slot).duplicated,
                reordered: network.stats(slot).reordered,
                frame_p50_ns: percentile(c, 50),
                frame_p99_ns: percentile(c, 99),
                desync: s.desync().cloned(),
                ended: s.ended(),
                departed: departures(s),
                rejoined: rejoins(s),
                rejoin: rejoin_cost[i],
            }
        })
        .collect();
    let spectator_reports = specs
        .iter()
        .enumerate()
        .map(|(k, (s, joined))| {
            #[allow(clippy::cast_possible_truncation, reason = "at most 8 spectators")]
            let slot = FIRST_SPECTATOR_SLOT + k as u8;
            SpectatorReport {
                slot,
                joined_at: *joined,
                tick: s.tick(),
                checksum: s.sim().checksum(),
                error: sessions[0].spectator_status(slot).err(),
            }
        })
        .collect();
    let stayed: Vec<&PeerReport> = peers
        .iter()
        .filter(|p| !matches!(p.ended, Some(SessionEnd::Left { .. })))
        .collect();
    let checksums_agree = stayed.windows(2).all(|w| {
        (w[0].confirmed_tick, w[0].confirmed_checksum)
            == (w[1].confirmed_tick, w[1].confirmed_checksum)
    });
    // The replay of a player who stayed to the end (player 0's unless it left).
    let recorder = sessions.iter().find(|s| !left(s)).unwrap_or(&sessions[0]);
    let replay = recorder.replay()?.to_bytes();
    let (desync, bundle) = match first_desync(&sessions) {
        Some((a, b)) => {
            let finding = finding(&sessions, a, b);
            let bundle = bundle(
                &sessions[usize::from(a)],
                &sessions[usize::from(b)],
                &finding,
                header,
            )?;
            (Some(finding), bundle)
        }
        None => (None, Vec::new()),
    };
    Ok(LocalRun {
        peers,
        spectators: spectator_reports,
        finished,
        checksums_agree,
        replay,
        desync,
        bundle,
        network_ns: network.now().as_nanos(),
    })
}

fn left<S: Sim + Clone>(s: &Session<S>) -> bool
where
    S::Input: ReplayInput,
{
    matches!(s.ended(), Some(SessionEnd::Left { .. }))
}

fn first_desync<S: Sim + Clone>(sessions: &[Session<S>]) -> Option<(u8, u8)>
where
    S::Input: ReplayInput,
{
    let (i, d) = sessions
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.desync().map(|d| (i, d)))
        .min_by_key(|(i, d)| (d.tick, *i))?;
    #[allow(clippy::cast_possible_truncation, reason = "at most 4 players")]
    let a = i as u8;
    Some((a, d.peer))
}

fn finding<S: Sim + Clone>(sessions: &[Session<S>], a: u8, b: u8) -> Finding
where
    S::Input: ReplayInput,
{
    let sa = &sessions[usize::from(a)];
    let d = sa.desync().cloned().unwrap_or(Desync {
        tick: 0,
        peer: b,
        local: 0,
        remote: 0,
        fields: None,
    });
    // The peers' own field hashes (both are in this process); the names a
    // session learned over the wire are the same list.
    let fields = match (
        sa.field_hashes_at(d.tick),
        sessions
            .get(usize::from(b))
            .and_then(|s| s.field_hashes_at(d.tick)),
    ) {
        (Some(x), Some(y)) => x
            .iter()
            .zip(y.iter())
            .filter(|(p, q)| p.1 != q.1)
            .map(|(p, _)| p.0)
            .collect(),
        _ => d.fields.clone().unwrap_or_default(),
    };
    Finding {
        tick: d.tick,
        players: (a, b),
        checksums: (d.local, d.remote),
        fields,
        snapshot: sa.snapshot_before_desync().map(|(t, s)| (t, s.checksum())),
    }
}

fn bundle<S: Sim + Clone>(
    a: &Session<S>,
    b: &Session<S>,
    f: &Finding,
    header: &ReplayHeader,
) -> Result<Vec<BundleFile>, RunError>
where
    S::Input: ReplayInput,
{
    let (pa, pb) = f.players;
    let name_a = format!("peer{pa}.twr");
    let name_b = format!("peer{pb}.twr");
    let mut text = String::new();
    let _ = writeln!(text, "tickwise netplay desync report");
    let _ = writeln!(
        text,
        "sim: {} version {}",
        header.sim_id, header.sim_version
    );
    let _ = writeln!(
        text,
        "first divergent checked confirmed tick: {} (checks every {} tick(s), so the fault lies in the ticks since the previous check)",
        f.tick,
        a.config().check_every
    );
    let _ = writeln!(
        text,
        "checksums: player {pa} {:016x}, player {pb} {:016x}",
        f.checksums.0, f.checksums.1
    );
    let _ = writeln!(text, "fields that differ: {}", f.fields.join(", "));
    match f.snapshot {
        Some((t, c)) => {
            let _ = writeln!(
                text,
                "kept confirmed snapshot before the desync: tick {t}, checksum {c:016x}"
            );
        }
        None => {
            let _ = writeln!(text, "kept confirmed snapshot before the desync: none");
        }
    }
    let _ = writeln!(text, "per-field hashes at tick {}:", f.tick);
    if let (Some(x), Some(y)) = (a.field_hashes_at(f.tick), b.field_hashes_at(f.tick)) {
        for ((name, h1), (_, h2)) in x.iter().zip(y.iter()) {
            let mark = if h1 == h2 { "" } else { "   <- differs" };
            let _ = writeln!(text, "  {name:<20} {h1:016x} {h2:016x}{mark}");
        }
    }
    let _ = writeln!(text);
    let _ = writeln!(
        text,
        "{name_a} and {name_b}: each player's confirmed inputs (the same on both: they are confirmed) with that player's own checkpoints of its confirmed states."
    );
    let _ = writeln!(
        text,
        "  tickwise verify {name_a} {name_b}   re-simulates each with this build; the file whose recorded states it rejects came from the non-deterministic peer"
    );
    let _ = writeln!(
        text,
        "  tickwise compare {name_a} {name_b}  re-simulates both in lockstep: no divergence and no input difference means the peers agreed on every input and the desync is non-determinism, not a netcode fault"
    );
    Ok(alloc::vec![
        BundleFile {
            name: name_a,
            bytes: a.replay()?.to_bytes(),
        },
        BundleFile {
            name: name_b,
            bytes: b.replay()?.to_bytes(),
        },
        BundleFile {
            name: "report.txt".into(),
            bytes: text.into_bytes(),
        },
    ])
}

/// How [`run_peer`] takes part in rejoins: the sim's snapshot encoding (a
/// peer with one serves players who rejoin), and, for a process taking a
/// slot back in a running match, its epoch (a random number per process).
pub struct PeerRejoin<'a, S> {
    /// The sim's snapshot encoding, if it has one.
    pub codec: Option<&'a SnapshotCodec<S>>,
    /// `Some`: this process rejoins a running match.
    pub epoch: Option<u64>,
}

impl<S> core::fmt::Debug for PeerRejoin<'_, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PeerRejoin")
            .field("codec", &self.codec.is_some())
            .field("epoch", &self.epoch)
            .finish()
    }
}

/// A host's clock, for [`run_peer`]: the only place real time enters.
pub trait HostClock {
    /// Monotonic host time.
    fn now(&mut self) -> Timestamp;
    /// Waits about `d`.
    fn sleep(&mut self, d: Nanos);
}

/// The outcome of [`run_peer`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct PeerRun {
    /// This peer.
    pub report: PeerReport,
    /// Whether it confirmed every tick.
    pub finished: bool,
    /// The replay of the confirmed inputs with this peer's own checkpoints.
    pub replay: Vec<u8>,
    /// Ticks the game loop ran (the session's time base).
    pub loop_ticks: u64,
}

/// Runs one player of a real session: the session is driven by a
/// [`FixedLoop`] at the sim's own step (`clock_config`), fed by `host`'s
/// clock, until every tick is confirmed and `linger` has passed (so the
/// other peers can confirm too), the session ends, or `deadline` passes.
///
/// # Errors
///
/// A [`RunError`] for settings out of range.
#[allow(clippy::too_many_arguments, reason = "one call site per front end")]
pub fn run_peer<S: Sim + Clone + 'static>(
    initial: &S,
    header: &ReplayHeader,
    input: PlayerInput<'_, S::Input>,
    clock_config: ClockConfig,
    opts: &RunOptions,
    local: u8,
    transport: &mut dyn Transport,
    host: &mut dyn HostClock,
    linger: Nanos,
    deadline: Nanos,
    rejoin: PeerRejoin<'_, S>,
) -> Result<PeerRun, RunError>
where
    S::Input: ReplayInput,
{
    opts.check()?;
    let mut cfg = opts.session(local, opts.spectators);
    cfg.validate()?;
    cfg.stop_at = Some(opts.ticks);
    let fault = if local == 1 {
        opts.inject_desync_at
    } else {
        None
    };
    let sim = Injected::new(initial.clone(), 0, fault);
    let codec = rejoin.codec.map(SnapshotCodec::injected);
    let start = host.now();
    let mut rejoined = None;
    let mut session = match (rejoin.epoch, &codec) {
        (Some(epoch), Some(c)) => {
            // A new process for a slot of a running match: load the
            // confirmed state from the donor first, at the sim's step.
            let step = clock_config.step().steps_to_nanos(1).as_nanos().max(1);
            let mut rj = Rejoiner::new(sim, cfg, c.clone(), epoch, MAX_REJOIN_SNAPSHOT)?;
            let mut next = start.as_nanos();
            let mut ticks = 0u64;
            loop {
                let now = host.now().as_nanos();
                if now >= next {
                    next = next.saturating_add(step);
                    ticks += 1;
                    if let RejoinProgress::Joined { .. } =
                        rj.tick(transport).map_err(RunError::Rejoin)?
                        && let Some(s) = rj.take_session()
                    {
                        rejoined = Some((ticks, rj.snapshot_bytes()));
                        break s;
                    }
                }
                if now.saturating_sub(start.as_nanos()) >= deadline.as_nanos() {
                    return Err(RunError::RejoinTimeout);
                }
                host.sleep(Nanos::from_millis(1));
            }
        }
        (Some(_), None) => return Err(RunError::Rejoin(RejoinError::NoSnapshotEncoding)),
        (None, _) => {
            let mut session = Session::new(sim, cfg)?;
            let mut h = header.clone();
            h.checkpoint_every = opts.checkpoint_every;
            session.start_recording(h)?;
            session
        }
    };
    if let Some(c) = &codec {
        session.enable_rejoin(c.clone(), MAX_REJOIN_SNAPSHOT);
    }
    let mut game = NetGame::new(session, transport);
    // Inputs by session tick, not by the loop's (see NetGame::session_tick_cell).
    let at = game.session_tick_cell();
    let mut gen_input = input;
    let inputs = FnInputs(move |_: Tick| gen_input(at.get()));
    let mut lp = FixedLoop::new(game, inputs, clock_config, CatchUpPolicy::Full);
    let mut costs = Vec::new();
    let mut finished_at: Option<Timestamp> = None;
    loop {
        let now = host.now();
        let t0 = lp.tick().get();
        let before = host.now();
        let _ = lp.frame_at(now);
        let ran = lp.tick().get() - t0;
        let spent = host.now().checked_since(before).unwrap_or(Nanos::ZERO);
        if let Some(per_tick) = spent.as_nanos().checked_div(ran) {
            costs.push(per_tick);
        }
        let s = lp.sim().session();
        if s.ended().is_some() {
            break;
        }
        if s.is_finished() {
            let f = *finished_at.get_or_insert(now);
            if now.checked_since(f).unwrap_or(Nanos::ZERO) >= linger {
                break;
            }
        }
        if now.checked_since(start).unwrap_or(Nanos::ZERO) >= deadline {
            break;
        }
        host.sleep(Nanos::from_millis(1));
    }
    let loop_ticks = lp.tick().get();
    let s = lp.sim().session();
    costs.sort_unstable();
    let report = PeerReport {
        slot: local,
        confirmed_tick: s.confirmed_tick(),
        confirmed_checksum: s.confirmed_checksum().unwrap_or(0),
        stats: *s.stats(),
        bytes_sent: 0,
        lost: 0,
        duplicated: 0,
        reordered: 0,
        frame_p50_ns: percentile(&costs, 50),
        frame_p99_ns: percentile(&costs, 99),
        desync: s.desync().cloned(),
        ended: s.ended(),
        departed: departures(s),
        rejoined: rejoins(s),
        rejoin: rejoined,
    };
    Ok(PeerRun {
        finished: s.is_finished(),
        // A rejoined peer does not record (its session starts mid-match).
        replay: match s.replay() {
            Ok(r) => r.to_bytes(),
            Err(SessionError::NotRecording) => Vec::new(),
            Err(e) => return Err(e.into()),
        },
        report,
        loop_ticks,
    })
}
