//! The driver of one player process: its session runs in a [`FixedLoop`]
//! on the host's clock over a real [`Transport`], after loading the
//! match's state from a donor when the process takes a slot back.

use alloc::vec::Vec;

use tickwise::{
    CatchUpPolicy, ClockConfig, FixedLoop, FnInputs, Nanos, ReplayHeader, ReplayInput, Sim, Tick,
    Timestamp,
};

use crate::game::{Injected, NetGame};
use crate::rejoin::{RejoinError, RejoinProgress, Rejoiner};
use crate::session::{Session, SessionError, SnapshotCodec};
use crate::transport::Transport;

use super::error::RunError;
use super::inputs::PlayerInput;
use super::options::{MAX_REJOIN_SNAPSHOT, RunOptions};
use super::report::{PeerReport, PeerRun, departures, percentile, rejoins};

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
