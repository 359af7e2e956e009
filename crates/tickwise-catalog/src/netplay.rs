//! Netplay through the catalog: a whole match in one process over the
//! network simulator ([`Catalog::netplay`]), one player of a real match
//! ([`Catalog::peer`]) and a spectator ([`Catalog::spectate_within`]), each
//! with its work, memory and replay checks made before anything runs
//! ([`NetLimits`]).

use tickwise::ReplayLimits;

use crate::catalog::{Catalog, header_for, parse_config};
use crate::entry::{Entry, player_stream};

use crate::error::CatalogError;
use crate::inputs::{InputPlan, PlanInputs};
use crate::limits::{
    RunLimits, check_recording, check_replay_size, check_snapshots, check_work,
    netplay_states_per_session,
};
use crate::sim::CatalogSim;

/// What a netplay peer needs besides the sim: its transport, the host
/// clock, how long to linger after the last tick and the overall deadline.
pub struct PeerIo<'a> {
    /// The datagram transport (UDP for real processes).
    pub transport: &'a mut dyn tickwise_net::Transport,
    /// The host clock.
    pub clock: &'a mut dyn tickwise_net::HostClock,
    /// This player's slot.
    pub local: u8,
    /// Time to keep talking after confirming the last tick.
    pub linger: tickwise::Nanos,
    /// Give up after this long.
    pub deadline: tickwise::Nanos,
    /// `Some(epoch)`: this process takes its slot back in a running match
    /// (a rejoin; `epoch` is random per process).
    pub rejoin: Option<u64>,
}

impl core::fmt::Debug for PeerIo<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PeerIo")
            .field("local", &self.local)
            .field("linger", &self.linger)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// What a spectator process needs besides the sim: its transport, the
/// host clock, the player it watches, its epoch and its deadline.
pub struct SpectateIo<'a> {
    /// The datagram transport (UDP for real processes), mapping `host`.
    pub transport: &'a mut dyn tickwise_net::Transport,
    /// The host clock.
    pub clock: &'a mut dyn tickwise_net::HostClock,
    /// The slot of the player that feeds this spectator.
    pub host: u8,
    /// A random number of this process.
    pub epoch: u64,
    /// Give up after this long.
    pub deadline: tickwise::Nanos,
}

impl core::fmt::Debug for SpectateIo<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SpectateIo")
            .field("host", &self.host)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// Watches a running match of sim `id` as a spectator over `io`
    /// ([`tickwise_net::run_spectator`]), under `limits`: the work of
    /// stepping `opts.ticks` ticks and the memory of two states (the
    /// state and the checkpoint being loaded).
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], [`CatalogError::Config`],
    /// [`CatalogError::TooMuchWork`], [`CatalogError::TooMuchMemory`],
    /// [`CatalogError::NoSnapshot`], [`CatalogError::Players`],
    /// [`CatalogError::Net`] for settings out of range.
    pub fn spectate_within(
        &self,
        id: &str,
        config: Option<&[u8]>,
        opts: &tickwise_net::RunOptions,
        io: SpectateIo<'_>,
        limits: &NetLimits,
    ) -> Result<tickwise_net::SpectatorRun, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.spectate(config, opts, io, limits)
    }

    /// Runs a netplay session of sim `id` (config: its default when `None`)
    /// with all players in this process over the network simulator
    /// ([`tickwise_net::run_local`]), one tick of network time per sim step;
    /// each player's inputs come from `plan` (an [`InputPlan::PerPlayer`]
    /// gives each its own; a random plan gives player `p` stream `p`).
    ///
    /// Under [`NetLimits::DEFAULT`] ([`Catalog::netplay_within`]).
    ///
    /// # Errors
    ///
    /// As [`Catalog::netplay_within`].
    #[allow(clippy::too_many_arguments, reason = "mirrors tickwise_net::run_local")]
    pub fn netplay(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        net: tickwise_net::NetworkConfig,
        spectators: u8,
        clock: &mut dyn FnMut() -> u64,
    ) -> Result<tickwise_net::LocalRun, CatalogError> {
        self.netplay_within(
            id,
            config,
            plan,
            opts,
            net,
            spectators,
            clock,
            &NetLimits::DEFAULT,
        )
    }

    /// [`Catalog::netplay`] under `limits`, checked before anything runs
    /// (the initial state is built only once the work and memory checks
    /// pass):
    ///
    /// * work: ticks × players × [`CatalogSim::work_per_tick`] within
    ///   `limits.run.max_work` (every player's session runs here);
    /// * memory: players × (window + 2 + [`tickwise_net::ANCHORS`] + 1) +
    ///   spectators states of [`CatalogSim::state_bytes`] within
    ///   `limits.run.max_snapshot_bytes`;
    /// * the recorded replay: what [`Catalog::record_within`] checks, so a
    ///   verifier with `limits.replay` reads it (ticks, config size, work,
    ///   and checkpoints within `max_file_bytes`).
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], [`CatalogError::Config`],
    /// [`CatalogError::TooMuchWork`], [`CatalogError::TooMuchMemory`],
    /// [`CatalogError::ReplayTooLarge`], [`CatalogError::Replay`] (ticks or
    /// config over the replay limits), [`CatalogError::Net`] for settings
    /// out of range.
    #[allow(
        clippy::too_many_arguments,
        reason = "netplay's arguments and the limits"
    )]
    pub fn netplay_within(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        net: tickwise_net::NetworkConfig,
        spectators: u8,
        clock: &mut dyn FnMut() -> u64,
        limits: &NetLimits,
    ) -> Result<tickwise_net::LocalRun, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.netplay(config, plan, opts, net, spectators, clock, limits)
    }

    /// Runs one player of a real session of sim `id` over `io`
    /// ([`tickwise_net::run_peer`]) under [`NetLimits::DEFAULT`]
    /// ([`Catalog::peer_within`]).
    ///
    /// # Errors
    ///
    /// As [`Catalog::peer_within`].
    pub fn peer(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        io: PeerIo<'_>,
    ) -> Result<tickwise_net::PeerRun, CatalogError> {
        self.peer_within(id, config, plan, opts, io, &NetLimits::DEFAULT)
    }

    /// [`Catalog::peer`] under `limits`: the checks of
    /// [`Catalog::netplay_within`] for the one session this process runs
    /// (work ticks × work per tick, memory window + 2 + anchors + 1 states)
    /// and its recorded replay.
    ///
    /// # Errors
    ///
    /// As [`Catalog::netplay_within`].
    pub fn peer_within(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        io: PeerIo<'_>,
        limits: &NetLimits,
    ) -> Result<tickwise_net::PeerRun, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.peer(config, plan, opts, io, limits)
    }
}

/// The limits of a netplay run ([`Catalog::netplay_within`],
/// [`Catalog::peer_within`]): the run's own work and snapshot memory, and
/// the limits of the verifier its recorded replay is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetLimits {
    /// Work and snapshot memory of the run.
    pub run: RunLimits,
    /// What a verifier of the recorded replay accepts.
    pub replay: ReplayLimits,
}

impl NetLimits {
    /// [`RunLimits::DEFAULT`] and [`ReplayLimits::DEFAULT`].
    pub const DEFAULT: NetLimits = NetLimits {
        run: RunLimits::DEFAULT,
        replay: ReplayLimits::DEFAULT,
    };
}

impl Default for NetLimits {
    fn default() -> NetLimits {
        NetLimits::DEFAULT
    }
}

impl<S: CatalogSim> Entry<S> {
    /// The checks of [`Catalog::netplay_within`] and [`Catalog::peer_within`]
    /// for a process running `sessions` sessions and `spectators`
    /// spectators; returns the initial state, built once they pass.
    pub(crate) fn check_net(
        config: &[u8],
        cfg: &S::Config,
        opts: &tickwise_net::RunOptions,
        sessions: u8,
        spectators: u8,
        limits: &NetLimits,
    ) -> Result<S, CatalogError> {
        check_recording(config.len(), opts.ticks, &limits.replay)?;
        let per_tick = S::work_per_tick(cfg);
        check_work(
            opts.ticks.saturating_mul(u64::from(sessions)),
            per_tick,
            limits.run.max_work,
        )?;
        // The recorded replay must verify under the same limits.
        check_work(opts.ticks, per_tick, limits.replay.max_work)?;
        let states = netplay_states_per_session(opts.window)
            .saturating_mul(u64::from(sessions))
            .saturating_add(u64::from(spectators));
        check_snapshots(states, S::state_bytes(cfg), limits.run.max_snapshot_bytes)?;
        let sim = S::build(cfg);
        let fields = sim.field_hashes().len() as u64;
        check_replay_size(opts.ticks, opts.checkpoint_every, fields, &limits.replay)?;
        if sim.players() != usize::from(opts.players) {
            return Err(CatalogError::Players {
                sim: S::ID,
                takes: sim.players(),
                asked: usize::from(opts.players),
            });
        }
        Ok(sim)
    }

    pub(crate) fn netplay_impl(
        config: &[u8],
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        net: tickwise_net::NetworkConfig,
        spectators: u8,
        clock: &mut dyn FnMut() -> u64,
        limits: &NetLimits,
    ) -> Result<tickwise_net::LocalRun, CatalogError> {
        let cfg = parse_config::<S>(config)?;
        let sim = Self::check_net(config, &cfg, opts, opts.players, spectators, limits)?;
        let header = header_for::<S>(config, &cfg, opts.checkpoint_every);
        let step = S::clock_config(&cfg).step().steps_to_nanos(1);
        let mut plan = PlanInputs::<S>::new(plan, sim.players())?;
        let inputs = (0..sim.players())
            .map(|p| player_stream::<S>(plan.take_player(p)))
            .collect();
        if opts.rejoin_at.iter().any(Option::is_some) {
            let codec = S::snapshot_codec().ok_or(CatalogError::NoSnapshot { sim: S::ID })?;
            return Ok(tickwise_net::run_local_rejoin(
                &sim, &header, inputs, opts, net, spectators, step, clock, &codec,
            )?);
        }
        Ok(tickwise_net::run_local(
            &sim, &header, inputs, opts, net, spectators, step, clock,
        )?)
    }

    pub(crate) fn peer_impl(
        config: &[u8],
        plan: &InputPlan,
        opts: &tickwise_net::RunOptions,
        io: PeerIo<'_>,
        limits: &NetLimits,
    ) -> Result<tickwise_net::PeerRun, CatalogError> {
        let cfg = parse_config::<S>(config)?;
        // Each spectator being admitted holds its checkpoint's bytes.
        let sim = Self::check_net(config, &cfg, opts, 1, opts.spectators, limits)?;
        let header = header_for::<S>(config, &cfg, opts.checkpoint_every);
        let mut plan = PlanInputs::<S>::new(plan, sim.players())?;
        let input = player_stream::<S>(plan.take_player(usize::from(io.local)));
        Ok(tickwise_net::run_peer(
            &sim,
            &header,
            input,
            S::clock_config(&cfg),
            opts,
            io.local,
            io.transport,
            io.clock,
            io.linger,
            io.deadline,
            tickwise_net::PeerRejoin {
                codec: S::snapshot_codec().as_ref(),
                epoch: io.rejoin,
            },
        )?)
    }
}
