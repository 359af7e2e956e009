//! Netplay through the catalog: a whole match in one process over the
//! network simulator ([`Catalog::netplay`]), one player of a real match
//! ([`Catalog::peer`]) and a spectator ([`Catalog::spectate_within`]), each
//! with its work, memory and replay checks made before anything runs
//! ([`NetLimits`]).

use crate::catalog::Catalog;
use crate::peer_io::{NetLimits, PeerIo, SpectateIo};

use crate::error::CatalogError;
use crate::inputs::InputPlan;

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
    /// * work: ticks × players × [`CatalogSim::work_per_tick`](crate::CatalogSim::work_per_tick) within
    ///   `limits.run.max_work` (every player's session runs here);
    /// * memory: players × (window + 2 + [`tickwise_net::ANCHORS`] + 1) +
    ///   spectators states of [`CatalogSim::state_bytes`](crate::CatalogSim::state_bytes) within
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
