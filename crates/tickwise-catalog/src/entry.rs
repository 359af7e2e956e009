//! The type-erased entry behind each registered sim.
//!
//! `Entry<S>` is zero-sized and implements `ErasedSim`, every operation
//! the catalog offers, for one `S`: the generic code for `S` is
//! monomorphised once, at registration, and the catalog looks an entry up
//! by id at run time.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::marker::PhantomData;

use tickwise::{
    Comparison, HeaderRead, Recorder, Replay, ReplayHeader, ReplayLimits, SyncTestReport,
    VerifyReport, compare_lockstep_with_events,
};

use crate::error::CatalogError;
use crate::inputs::{InputPlan, PlanInputs, PlayerInputs};
use crate::limits::{RunLimits, check_recording, check_replay_size, check_snapshots, check_work};
use crate::peer_io::{NetLimits, PeerIo, SpectateIo};
use crate::play::Playable;
use crate::runner::{SimProfile, TickRunner};
use crate::sim::{CatalogSim, SimInfo};

mod net;

/// A replay just recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct Recorded {
    /// The replay file.
    pub bytes: Vec<u8>,
    /// Ticks recorded.
    pub ticks: u64,
    /// Players recorded (one input stream each).
    pub players: usize,
    /// Input runs in the file (runs of identical inputs, merged).
    pub runs: usize,
    /// Bytes of the file's input blocks section (the inputs alone: the
    /// rest is header, checkpoints and final state).
    pub input_bytes: usize,
    /// The final text digest.
    pub digest: String,
}

/// A comparison of two runs of one sim.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct RunComparison {
    /// The sim.
    pub sim: SimInfo,
    /// Ticks of run A.
    pub ticks_a: u64,
    /// Ticks of run B.
    pub ticks_b: u64,
    /// The lockstep comparison over the common ticks.
    pub comparison: Comparison,
}

pub(crate) fn header_for<S: CatalogSim>(
    config: &[u8],
    cfg: &S::Config,
    checkpoint_every: u64,
) -> ReplayHeader {
    ReplayHeader {
        sim_id: S::ID.into(),
        sim_version: S::VERSION,
        config: config.to_vec(),
        seed: S::seed(cfg),
        ticks: 0,
        checkpoint_every,
        input_kind: 0,
        players: 0,
    }
}

pub(crate) fn parse_config<S: CatalogSim>(bytes: &[u8]) -> Result<S::Config, CatalogError> {
    S::parse_config(bytes).map_err(|e| CatalogError::Config {
        sim: S::ID,
        message: alloc::format!("{e}"),
    })
}

/// One registered sim with its type erased: every operation the catalog
/// offers, for one `S`.
pub(crate) trait ErasedSim: Send + Sync {
    fn info(&self) -> SimInfo;
    fn profile(&self, config: &[u8]) -> Result<SimProfile, CatalogError>;
    fn config_for_players(&self, config: &[u8], players: usize) -> Result<Vec<u8>, CatalogError>;
    fn record(
        &self,
        config: &[u8],
        plan: &InputPlan,
        ticks: u64,
        checkpoint_every: u64,
        limits: &ReplayLimits,
    ) -> Result<Recorded, CatalogError>;
    fn verify(&self, bytes: &[u8], limits: &ReplayLimits) -> Result<VerifyReport, CatalogError>;
    fn verify_vec(
        &self,
        bytes: Vec<u8>,
        limits: &ReplayLimits,
    ) -> Result<VerifyReport, CatalogError>;
    fn verify_read(
        &self,
        bytes: &[u8],
        read: HeaderRead,
        limits: &ReplayLimits,
    ) -> Result<VerifyReport, CatalogError>;
    fn compare(
        &self,
        a: &[u8],
        b: &[u8],
        limits: &ReplayLimits,
    ) -> Result<RunComparison, CatalogError>;
    fn compare_live(
        &self,
        replay: &[u8],
        limits: &ReplayLimits,
        config: Option<&[u8]>,
        plan: &InputPlan,
    ) -> Result<RunComparison, CatalogError>;
    fn sync_test(
        &self,
        config: &[u8],
        plan: &InputPlan,
        ticks: u64,
        rollback: u64,
        limits: &RunLimits,
    ) -> Result<SyncTestReport, CatalogError>;
    fn runner(&self, config: &[u8], plan: &InputPlan) -> Result<Box<dyn TickRunner>, CatalogError>;
    fn play(&self, config: &[u8], plan: &InputPlan) -> Result<Box<dyn Playable>, CatalogError>;
    #[allow(clippy::too_many_arguments, reason = "the public method's arguments")]
    fn netplay(
        &self,
        config: &[u8],
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        net: tickwise_net::NetworkConfig,
        spectators: u8,
        clock: &mut dyn FnMut() -> u64,
        limits: &NetLimits,
    ) -> Result<tickwise_net::LocalRun, CatalogError>;
    fn peer(
        &self,
        config: &[u8],
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        io: PeerIo<'_>,
        limits: &NetLimits,
    ) -> Result<tickwise_net::PeerRun, CatalogError>;
    fn spectate(
        &self,
        config: &[u8],
        opts: &tickwise_net::RunOptions,
        io: SpectateIo<'_>,
        limits: &NetLimits,
    ) -> Result<tickwise_net::SpectatorRun, CatalogError>;
}

/// The erased entry for `S`: zero-sized, `Send + Sync` whatever `S` is.
pub(crate) struct Entry<S>(pub(crate) PhantomData<fn() -> S>);

impl<S: CatalogSim> Entry<S> {
    /// A decoded replay with its sim's initial state, ready to re-simulate;
    /// the work limit and the seed are checked before anything runs.
    fn load(bytes: &[u8], limits: &ReplayLimits) -> Result<(S, Replay<S::Input>), CatalogError> {
        Self::prepare(Replay::<S::Input>::from_bytes(bytes, limits)?, limits)
    }

    /// The checks of [`Entry::load`] on a replay already read.
    fn prepare(
        replay: Replay<S::Input>,
        limits: &ReplayLimits,
    ) -> Result<(S, Replay<S::Input>), CatalogError> {
        let cfg = parse_config::<S>(&replay.header().config)?;
        check_work(
            replay.header().ticks,
            S::work_per_tick(&cfg),
            limits.max_work,
        )?;
        let seed = S::seed(&cfg);
        if seed != replay.header().seed {
            return Err(CatalogError::SeedMismatch {
                stored: replay.header().seed,
                config: seed,
            });
        }
        Ok((S::build(&cfg), replay))
    }
}

impl<S: CatalogSim> ErasedSim for Entry<S> {
    fn info(&self) -> SimInfo {
        SimInfo::of::<S>()
    }

    fn profile(&self, config: &[u8]) -> Result<SimProfile, CatalogError> {
        let cfg = parse_config::<S>(config)?;
        Ok(profile_of::<S>(&cfg))
    }

    fn config_for_players(&self, config: &[u8], players: usize) -> Result<Vec<u8>, CatalogError> {
        let takes = S::build(&parse_config::<S>(config)?).players();
        if takes == players {
            return Ok(config.to_vec());
        }
        let refused = CatalogError::Players {
            sim: S::ID,
            takes,
            asked: players,
        };
        if players == 0 || players > tickwise::MAX_PLAYERS {
            return Err(refused);
        }
        let Some(bytes) = S::config_for_players(config, players) else {
            return Err(refused);
        };
        let now = S::build(&parse_config::<S>(&bytes)?).players();
        if now == players {
            Ok(bytes)
        } else {
            Err(CatalogError::Players {
                sim: S::ID,
                takes: now,
                asked: players,
            })
        }
    }

    fn record(
        &self,
        config: &[u8],
        plan: &InputPlan,
        ticks: u64,
        checkpoint_every: u64,
        limits: &ReplayLimits,
    ) -> Result<Recorded, CatalogError> {
        check_recording(config.len(), ticks, limits)?;
        let cfg = parse_config::<S>(config)?;
        check_work(ticks, S::work_per_tick(&cfg), limits.max_work)?;
        let sim = S::build(&cfg);
        let fields = sim.field_hashes().len() as u64;
        check_replay_size(ticks, checkpoint_every, fields, limits)?;
        let mut inputs = PlanInputs::<S>::new(plan, sim.players())?;
        let header = header_for::<S>(config, &cfg, checkpoint_every);
        let mut rec = Recorder::new(sim, header)?;
        // Inlined into each of `drive`'s loops: a call a tick (and the step's
        // register saves) would cost as much as the island's step itself.
        inputs.drive(
            ticks,
            #[inline(always)]
            |tick_inputs| rec.step(tick_inputs),
        );
        let (_, replay) = rec.finish()?;
        let bytes = replay.to_bytes();
        // What a verifier with these limits would refuse, refused here with
        // its own message.
        Replay::<S::Input>::from_bytes(&bytes, limits)?;
        Ok(Recorded {
            bytes,
            ticks,
            players: replay.players(),
            // The count kept while encoding: no decoding of every run.
            runs: replay.run_count(),
            input_bytes: replay.input_bytes(),
            digest: replay.final_digest().into(),
        })
    }

    fn verify(&self, bytes: &[u8], limits: &ReplayLimits) -> Result<VerifyReport, CatalogError> {
        let (sim, replay) = Self::load(bytes, limits)?;
        Ok(tickwise::verify(sim, &replay))
    }

    fn verify_vec(
        &self,
        bytes: Vec<u8>,
        limits: &ReplayLimits,
    ) -> Result<VerifyReport, CatalogError> {
        let replay = Replay::<S::Input>::from_vec(bytes, limits)?;
        let (sim, replay) = Self::prepare(replay, limits)?;
        Ok(tickwise::verify(sim, &replay))
    }

    fn verify_read(
        &self,
        bytes: &[u8],
        read: HeaderRead,
        limits: &ReplayLimits,
    ) -> Result<VerifyReport, CatalogError> {
        let replay = Replay::<S::Input>::from_header_read(bytes, read, limits)?;
        let (sim, replay) = Self::prepare(replay, limits)?;
        Ok(tickwise::verify(sim, &replay))
    }

    fn compare(
        &self,
        a: &[u8],
        b: &[u8],
        limits: &ReplayLimits,
    ) -> Result<RunComparison, CatalogError> {
        let (mut sa, ra) = Self::load(a, limits)?;
        let (mut sb, rb) = Self::load(b, limits)?;
        // Host events (time the live loop dropped) are part of each run.
        let comparison = tickwise::compare_replays(&mut sa, &mut sb, &ra, &rb);
        Ok(RunComparison {
            sim: self.info(),
            ticks_a: ra.ticks(),
            ticks_b: rb.ticks(),
            comparison,
        })
    }

    fn compare_live(
        &self,
        replay: &[u8],
        limits: &ReplayLimits,
        config: Option<&[u8]>,
        plan: &InputPlan,
    ) -> Result<RunComparison, CatalogError> {
        let (mut sa, ra) = Self::load(replay, limits)?;
        let cfg = parse_config::<S>(config.unwrap_or(&ra.header().config))?;
        // The live run may have a costlier config than the replay's.
        check_work(ra.ticks(), S::work_per_tick(&cfg), limits.max_work)?;
        let mut sb = S::build(&cfg);
        let mut live = PlanInputs::<S>::new(plan, sb.players())?;
        let mut recorded = ra.tick_inputs();
        let comparison = compare_lockstep_with_events(
            &mut sa,
            &mut sb,
            // At most the replay's ticks are asked for: it never runs out.
            |_, out: &mut [S::Input]| {
                recorded.next_tick(out);
            },
            |_, out: &mut [S::Input]| live.fill(out),
            ra.host_events(),
            &[],
            ra.ticks(),
        );
        Ok(RunComparison {
            sim: self.info(),
            ticks_a: ra.ticks(),
            ticks_b: ra.ticks(),
            comparison,
        })
    }

    fn sync_test(
        &self,
        config: &[u8],
        plan: &InputPlan,
        ticks: u64,
        rollback: u64,
        limits: &RunLimits,
    ) -> Result<SyncTestReport, CatalogError> {
        let cfg = parse_config::<S>(config)?;
        // Every tick is stepped once, then again after each rollback.
        let passes = rollback.max(1).saturating_add(1);
        check_work(
            ticks.saturating_mul(passes),
            S::work_per_tick(&cfg),
            limits.max_work,
        )?;
        check_snapshots(passes, S::state_bytes(&cfg), limits.max_snapshot_bytes)?;
        let sim = S::build(&cfg);
        let mut inputs = PlanInputs::<S>::new(plan, sim.players())?;
        Ok(tickwise::sync_test(
            sim,
            |_, out: &mut [S::Input]| inputs.fill(out),
            ticks,
            rollback,
        ))
    }

    fn runner(&self, config: &[u8], plan: &InputPlan) -> Result<Box<dyn TickRunner>, CatalogError> {
        let cfg = parse_config::<S>(config)?;
        let sim = S::build(&cfg);
        let inputs = PlanInputs::<S>::new(plan, sim.players())?;
        Ok(Box::new(Runner::<S> {
            buf: alloc::vec![S::Input::default(); inputs.players()],
            sim,
            inputs,
            tick: 0,
            profile: profile_of::<S>(&cfg),
        }))
    }

    fn play(&self, config: &[u8], plan: &InputPlan) -> Result<Box<dyn Playable>, CatalogError> {
        crate::play::play::<S>(&parse_config::<S>(config)?, plan)
    }

    fn netplay(
        &self,
        config: &[u8],
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        net: tickwise_net::NetworkConfig,
        spectators: u8,
        clock: &mut dyn FnMut() -> u64,
        limits: &NetLimits,
    ) -> Result<tickwise_net::LocalRun, CatalogError> {
        Self::netplay_impl(config, plan, opts, net, spectators, clock, limits)
    }

    fn peer(
        &self,
        config: &[u8],
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        io: PeerIo<'_>,
        limits: &NetLimits,
    ) -> Result<tickwise_net::PeerRun, CatalogError> {
        Self::peer_impl(config, plan, opts, io, limits)
    }

    fn spectate(
        &self,
        config: &[u8],
        opts: &tickwise_net::RunOptions,
        io: SpectateIo<'_>,
        limits: &NetLimits,
    ) -> Result<tickwise_net::SpectatorRun, CatalogError> {
        let cfg = parse_config::<S>(config)?;
        check_work(opts.ticks, S::work_per_tick(&cfg), limits.run.max_work)?;
        check_snapshots(2, S::state_bytes(&cfg), limits.run.max_snapshot_bytes)?;
        let codec = S::snapshot_codec().ok_or(CatalogError::NoSnapshot { sim: S::ID })?;
        let sim = S::build(&cfg);
        if sim.players() != usize::from(opts.players) {
            return Err(CatalogError::Players {
                sim: S::ID,
                takes: sim.players(),
                asked: usize::from(opts.players),
            });
        }
        Ok(tickwise_net::run_spectator(
            &sim,
            S::clock_config(&cfg),
            opts,
            io.host,
            Some(&codec),
            io.epoch,
            io.transport,
            io.clock,
            io.deadline,
        )?)
    }
}

/// One player's plan inputs as a netplay input stream.
///
/// A function of the session tick it is asked for: tick `t` gets the
/// plan's input `t`, however many times it is asked (a session asks again
/// for the same tick while it stalls or waits, and those depend on the
/// network's timing). Ticks come in order; a later one skips the plan's
/// inputs in between (a rejoin starts at its join tick).
pub(crate) fn player_stream<'a, S: CatalogSim>(
    mut p: PlayerInputs<S>,
) -> tickwise_net::PlayerInput<'a, S::Input> {
    let mut next = 0u64;
    let mut last = S::Input::default();
    Box::new(move |t| {
        while next <= t {
            last = p.next_input();
            next += 1;
        }
        last.clone()
    })
}

pub(crate) fn profile_of<S: CatalogSim>(cfg: &S::Config) -> SimProfile {
    SimProfile {
        sim: SimInfo::of::<S>(),
        seed: S::seed(cfg),
        clock: S::clock_config(cfg),
        work_per_tick: S::work_per_tick(cfg),
        state_bytes: S::state_bytes(cfg),
        settle_ticks: S::settle_ticks(cfg),
        max_catch_up_steps: S::max_catch_up_steps(cfg),
    }
}

/// The runner behind [`Catalog::runner`](crate::Catalog::runner).
struct Runner<S: CatalogSim> {
    sim: S,
    inputs: PlanInputs<S>,
    buf: Vec<S::Input>,
    tick: u64,
    profile: SimProfile,
}

impl<S: CatalogSim> TickRunner for Runner<S> {
    fn step(&mut self) {
        self.inputs.fill(&mut self.buf);
        self.sim.step(&self.buf);
        self.tick = self.tick.saturating_add(1);
    }

    fn tick(&self) -> u64 {
        self.tick
    }

    fn checksum(&self) -> u64 {
        self.sim.checksum()
    }

    fn digest(&self) -> String {
        self.sim.digest()
    }

    fn profile(&self) -> &SimProfile {
        &self.profile
    }
}
