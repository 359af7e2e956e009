//! The [`Catalog`] value and its operations.
//!
//! A catalog is a list of type-erased entries, one per registered sim. Each
//! entry is a zero-sized `Entry<S>` behind `dyn ErasedSim`: the generic code
//! for `S` is monomorphised once, at registration, and every operation after
//! that looks the sim up by id at run time. So the set of sims is open (any
//! crate can add its own) without an enum or a macro listing them.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::marker::PhantomData;

use tickwise::{
    Comparison, Recorder, Replay, ReplayError, ReplayHeader, ReplayLimits, SyncTestReport,
    VerifyReport, compare_lockstep_with_events, read_header, read_header_unchecked,
};

use crate::error::CatalogError;
use crate::inputs::{InputPlan, PlanInputs, PlayerInputs};
use crate::limits::{
    RunLimits, check_recording, check_replay_size, check_snapshots, check_work,
    netplay_states_per_session,
};
use crate::play::Playable;
use crate::runner::{SimProfile, TickRunner};
use crate::sim::{CatalogSim, SimInfo};

/// The sims a tool can work with, looked up by the id a replay stores.
///
/// Build one with [`Catalog::builtin`] (the island and the horde) or
/// [`Catalog::empty`], then add sims with [`Catalog::with`].
///
/// Cloning is cheap (the entries are shared), so a long-running service can
/// keep its own copy.
#[derive(Clone)]
pub struct Catalog {
    sims: Vec<Arc<dyn ErasedSim>>,
}

impl core::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.ids()).finish()
    }
}

impl Default for Catalog {
    /// The built-in sims, as [`Catalog::builtin`].
    fn default() -> Catalog {
        Catalog::builtin()
    }
}

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

impl Catalog {
    /// A catalog with no sims.
    #[must_use]
    pub const fn empty() -> Catalog {
        Catalog { sims: Vec::new() }
    }

    /// The built-in sims: `island`, then `horde`.
    #[must_use]
    pub fn builtin() -> Catalog {
        Catalog::empty()
            .with::<tickwise_sims::island::IslandWorld>()
            .with::<tickwise_sims::horde::HordeWorld>()
    }

    /// This catalog with `S` added. A sim registered under an id that is
    /// already taken replaces the earlier one (in its place in the order),
    /// so a game can ship its own build of a built-in id.
    #[must_use]
    pub fn with<S: CatalogSim>(mut self) -> Catalog {
        let entry: Arc<dyn ErasedSim> = Arc::new(Entry::<S>(PhantomData));
        match self.sims.iter_mut().find(|e| e.info().id == S::ID) {
            Some(slot) => *slot = entry,
            None => self.sims.push(entry),
        }
        self
    }

    /// The registered ids, in registration order.
    pub fn ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.sims.iter().map(|e| e.info().id)
    }

    /// The registered sims, in registration order.
    pub fn sims(&self) -> impl Iterator<Item = SimInfo> + '_ {
        self.sims.iter().map(|e| e.info())
    }

    /// Sim `id` and the config to run it from: `config`, or the sim's
    /// default config when `None`.
    /// The config of sim `id` (its default when `None`) for `players`
    /// players: `config` itself when the sim built from it takes that many,
    /// else the sim's [`CatalogSim::config_for_players`].
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], [`CatalogError::Config`], and
    /// [`CatalogError::Players`] when the sim cannot take `players` players.
    pub fn config_for_players(
        &self,
        id: &str,
        config: Option<&[u8]>,
        players: usize,
    ) -> Result<Vec<u8>, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.config_for_players(config, players)
    }

    pub(crate) fn entry_with_config<'c>(
        &self,
        id: &str,
        config: Option<&'c [u8]>,
    ) -> Result<(&dyn ErasedSim, &'c [u8]), CatalogError> {
        let e = self.entry(id)?;
        Ok((e, config.unwrap_or(e.info().default_config)))
    }

    pub(crate) fn entry(&self, id: &str) -> Result<&dyn ErasedSim, CatalogError> {
        self.sims
            .iter()
            .find(|e| e.info().id == id)
            .map(|e| &**e)
            .ok_or_else(|| CatalogError::UnknownSim {
                id: id.into(),
                known: self.ids().collect(),
            })
    }

    /// The sim registered under `id`.
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], listing the known ids.
    pub fn get(&self, id: &str) -> Result<SimInfo, CatalogError> {
        self.entry(id).map(ErasedSim::info)
    }

    /// What the tools need to know about sim `id` under `config` (its
    /// default config when `None`).
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], [`CatalogError::Config`].
    pub fn profile(&self, id: &str, config: Option<&[u8]>) -> Result<SimProfile, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.profile(config)
    }

    /// Runs sim `id` from `config` (its default config when `None`) for
    /// `ticks` ticks with the inputs of `plan`, recording a replay with a
    /// checkpoint every `checkpoint_every` ticks: [`Catalog::record_within`]
    /// with [`ReplayLimits::DEFAULT`], so it records only what a default
    /// verifier accepts.
    ///
    /// # Errors
    ///
    /// As [`Catalog::record_within`].
    pub fn record(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
        ticks: u64,
        checkpoint_every: u64,
    ) -> Result<Recorded, CatalogError> {
        self.record_within(
            id,
            config,
            plan,
            ticks,
            checkpoint_every,
            &ReplayLimits::DEFAULT,
        )
    }

    /// [`Catalog::record`] refusing, before anything runs, a recording that
    /// a verifier with `limits` would refuse: more ticks than
    /// `max_ticks`, ticks × [`CatalogSim::work_per_tick`] over `max_work`, a
    /// config over `max_config_bytes`, or checkpoints alone over
    /// `max_file_bytes`. The finished file is read back under `limits`
    /// before it is returned, so whatever else a verifier checks (the exact
    /// size, the digest length, the field count) is refused here with the
    /// verifier's own message.
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], [`CatalogError::Config`],
    /// [`CatalogError::Inputs`] for a bad inputs file,
    /// [`CatalogError::TooMuchWork`], [`CatalogError::ReplayTooLarge`], and
    /// [`CatalogError::Replay`] for a zero checkpoint interval, an id the
    /// replay format cannot store, or a reader limit.
    pub fn record_within(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
        ticks: u64,
        checkpoint_every: u64,
        limits: &ReplayLimits,
    ) -> Result<Recorded, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.record(config, plan, ticks, checkpoint_every, limits)
    }

    /// Reads a replay's header and finds its sim, checking the version.
    ///
    /// # Errors
    ///
    /// [`CatalogError::Replay`] for a malformed envelope or header,
    /// [`CatalogError::UnknownSim`], [`CatalogError::VersionMismatch`].
    pub fn identify(
        &self,
        bytes: &[u8],
        limits: &ReplayLimits,
    ) -> Result<(SimInfo, ReplayHeader), CatalogError> {
        let (e, header) = self.identify_entry(bytes, limits)?;
        Ok((e.info(), header))
    }

    /// The entry for a header read without the integrity check, when it
    /// names a sim and version of the catalog.
    fn entry_for(&self, header: Result<ReplayHeader, ReplayError>) -> Option<&dyn ErasedSim> {
        let header = header.ok()?;
        let e = self.entry(&header.sim_id).ok()?;
        (header.sim_version == e.info().version).then_some(e)
    }

    fn identify_entry(
        &self,
        bytes: &[u8],
        limits: &ReplayLimits,
    ) -> Result<(&dyn ErasedSim, ReplayHeader), CatalogError> {
        let header = read_header(bytes, limits)?;
        let e = self.entry(&header.sim_id)?;
        let supported = e.info().version;
        if header.sim_version != supported {
            return Err(CatalogError::VersionMismatch {
                id: header.sim_id,
                found: header.sim_version,
                supported,
            });
        }
        Ok((e, header))
    }

    /// Reads a replay of any catalog sim and re-simulates it with
    /// [`tickwise::verify`].
    ///
    /// # Errors
    ///
    /// A [`CatalogError`] when the file cannot be verified at all (malformed,
    /// unknown sim or version, invalid config, seed mismatch, over the work
    /// limit). A replay that re-simulates differently is not an error: see
    /// [`VerifyReport::verdict`].
    pub fn verify(
        &self,
        bytes: &[u8],
        limits: &ReplayLimits,
    ) -> Result<VerifyReport, CatalogError> {
        let (e, _) = self.identify_entry(bytes, limits)?;
        e.verify(bytes, limits)
    }

    /// [`Catalog::verify`] for a buffer the catalog may keep: the replay is
    /// read with [`Replay::from_vec`], so verifying a file read into memory
    /// needs no second copy of its input runs (peak memory about the file's
    /// size, whatever the tick count).
    ///
    /// # Errors
    ///
    /// As [`Catalog::verify`].
    pub fn verify_vec(
        &self,
        bytes: Vec<u8>,
        limits: &ReplayLimits,
    ) -> Result<VerifyReport, CatalogError> {
        // The entry is chosen from the header without hashing the file;
        // `from_vec` then checks everything, the integrity checksum first.
        // When the unchecked header does not name a catalog sim, the checked
        // one gives the error, so errors come in the same order as
        // `verify`'s (a corrupt file reports its checksum first).
        let e = match self.entry_for(read_header_unchecked(&bytes, limits)) {
            Some(e) => e,
            None => self.identify_entry(&bytes, limits)?.0,
        };
        e.verify_vec(bytes, limits)
    }

    /// Re-simulates two replays of one sim in lockstep and reports the first
    /// tick whose state checksums differ, over their common length.
    ///
    /// # Errors
    ///
    /// As [`Catalog::verify`] for either file, and
    /// [`CatalogError::DifferentSims`].
    pub fn compare(
        &self,
        a: &[u8],
        b: &[u8],
        limits: &ReplayLimits,
    ) -> Result<RunComparison, CatalogError> {
        let (e, ha) = self.identify_entry(a, limits)?;
        let (_, hb) = self.identify_entry(b, limits)?;
        if ha.sim_id != hb.sim_id {
            return Err(CatalogError::DifferentSims {
                a: ha.sim_id,
                b: hb.sim_id,
            });
        }
        e.compare(a, b, limits)
    }

    /// Re-simulates a replay (run A) in lockstep with a live run (run B) of
    /// the same sim from `config` (the replay's own config when `None`) with
    /// the inputs of `plan`, for the replay's tick count.
    ///
    /// # Errors
    ///
    /// As [`Catalog::verify`] for the file, [`CatalogError::Config`] for the
    /// live config, [`CatalogError::Inputs`] for the plan.
    pub fn compare_live(
        &self,
        replay: &[u8],
        limits: &ReplayLimits,
        config: Option<&[u8]>,
        plan: &InputPlan,
    ) -> Result<RunComparison, CatalogError> {
        let (e, _) = self.identify_entry(replay, limits)?;
        e.compare_live(replay, limits, config, plan)
    }

    /// Runs the rollback check [`tickwise::sync_test`] on sim `id` from
    /// `config` (its default when `None`) with the inputs of `plan`, under
    /// [`RunLimits::DEFAULT`] ([`Catalog::sync_test_within`]).
    ///
    /// # Errors
    ///
    /// As [`Catalog::sync_test_within`].
    pub fn sync_test(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
        ticks: u64,
        rollback: u64,
    ) -> Result<SyncTestReport, CatalogError> {
        self.sync_test_within(id, config, plan, ticks, rollback, &RunLimits::DEFAULT)
    }

    /// [`Catalog::sync_test`] under `limits`, checked before anything runs:
    /// the test steps every tick `rollback + 1` times (a `rollback` of 0
    /// counts as 1), so ticks × (rollback + 1) × [`CatalogSim::work_per_tick`]
    /// must fit `max_work`, and it holds `rollback + 1` snapshots, so
    /// (rollback + 1) × [`CatalogSim::state_bytes`] must fit
    /// `max_snapshot_bytes`.
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], [`CatalogError::Config`],
    /// [`CatalogError::Inputs`], [`CatalogError::TooMuchWork`],
    /// [`CatalogError::TooMuchMemory`].
    pub fn sync_test_within(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
        ticks: u64,
        rollback: u64,
        limits: &RunLimits,
    ) -> Result<SyncTestReport, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.sync_test(config, plan, ticks, rollback, limits)
    }

    /// A type-erased runner of sim `id` from `config` (its default when
    /// `None`) fed by `plan`: what `budget` times, for any catalog sim.
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], [`CatalogError::Config`],
    /// [`CatalogError::Inputs`].
    pub fn runner(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
    ) -> Result<Box<dyn TickRunner>, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.runner(config, plan)
    }
}

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

/// A replay header for a live recording of `S` (for
/// `FixedLoop::start_recording`): parses `config`, and fills in the sim's id,
/// version and seed. `ticks` and `input_kind` are left for the recorder.
///
/// # Errors
///
/// [`CatalogError::Config`] when `S` refuses the config.
pub fn replay_header<S: CatalogSim>(
    config: &[u8],
    checkpoint_every: u64,
) -> Result<ReplayHeader, CatalogError> {
    let cfg = parse_config::<S>(config)?;
    Ok(header_for::<S>(config, &cfg, checkpoint_every))
}

fn header_for<S: CatalogSim>(
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

fn parse_config<S: CatalogSim>(bytes: &[u8]) -> Result<S::Config, CatalogError> {
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
struct Entry<S>(PhantomData<fn() -> S>);

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
        let mut tick_inputs = alloc::vec![S::Input::default(); inputs.players()];
        let header = header_for::<S>(config, &cfg, checkpoint_every);
        let mut rec = Recorder::new(sim, header)?;
        for _ in 0..ticks {
            inputs.fill(&mut tick_inputs);
            rec.step(&tick_inputs);
        }
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

impl<S: CatalogSim> Entry<S> {
    /// The checks of [`Catalog::netplay_within`] and [`Catalog::peer_within`]
    /// for a process running `sessions` sessions and `spectators`
    /// spectators; returns the initial state, built once they pass.
    fn check_net(
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

    fn netplay_impl(
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

    fn peer_impl(
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

/// One player's plan inputs as a netplay input stream.
fn player_stream<'a, S: CatalogSim>(
    mut p: PlayerInputs<S>,
) -> tickwise_net::PlayerInput<'a, S::Input> {
    Box::new(move |_| p.next_input())
}

fn profile_of<S: CatalogSim>(cfg: &S::Config) -> SimProfile {
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

/// The runner behind [`Catalog::runner`].
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
