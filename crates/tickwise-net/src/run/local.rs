//! The in-process driver: every player (and spectator) of a session in one
//! process over a [`SimNetwork`], one tick of network time per round, with
//! leaves and rejoins scripted by the settings.

use alloc::vec::Vec;

use tickwise::{Nanos, ReplayHeader, ReplayInput, Sim, Timestamp};

use crate::config::{FIRST_SPECTATOR_SLOT, MAX_PLAYERS};
use crate::game::Injected;
use crate::rejoin::{RejoinProgress, Rejoiner};
use crate::session::{Session, SessionEnd, SnapshotCodec};
use crate::spectator::Spectator;
use crate::transport::{NetworkConfig, SimNetwork};

use super::error::RunError;
use super::forensics::{bundle, finding, first_desync};
use super::inputs::PlayerInput;
use super::options::{MAX_REJOIN_SNAPSHOT, RunOptions};
use super::report::{LocalRun, PeerReport, SpectatorReport, departures, percentile, rejoins};

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
