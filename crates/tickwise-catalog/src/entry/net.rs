//! The netplay side of an entry: the work, memory and replay checks made
//! before a netplay run, a peer or a spectator starts, and the runs.

use super::{Entry, header_for, parse_config, player_stream};
use crate::error::CatalogError;
use crate::inputs::{InputPlan, PlanInputs};
use crate::limits::{
    check_recording, check_replay_size, check_snapshots, check_work, netplay_states_per_session,
};
use crate::peer_io::{NetLimits, PeerIo};
use crate::sim::CatalogSim;

impl<S: CatalogSim> Entry<S> {
    /// The checks of
    /// [`Catalog::netplay_within`](crate::Catalog::netplay_within) and
    /// [`Catalog::peer_within`](crate::Catalog::peer_within) for a process
    /// running `sessions` sessions and `spectators` spectators; returns the
    /// initial state, built once they pass.
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
