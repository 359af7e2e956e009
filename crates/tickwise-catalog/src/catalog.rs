//! The [`Catalog`] value: registering sims, and recording, verifying,
//! comparing and sync-testing replays of any of them. Netplay is in
//! `netplay`, the type-erased entries in `entry`.
//!
//! A catalog is a list of type-erased entries, one per registered sim. Each
//! entry is a zero-sized `Entry<S>` behind `dyn ErasedSim`: the generic code
//! for `S` is monomorphised once, at registration, and every operation after
//! that looks the sim up by id at run time. So the set of sims is open (any
//! crate can add its own) without an enum or a macro listing them.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::marker::PhantomData;

use tickwise::{
    ReplayError, ReplayHeader, ReplayLimits, SyncTestReport, VerifyReport, read_header,
    read_header_unchecked,
};

use crate::entry::{Entry, ErasedSim, Recorded, RunComparison, header_for, parse_config};
use crate::error::CatalogError;
use crate::inputs::InputPlan;
use crate::limits::RunLimits;
use crate::play::Playable;
use crate::runner::{SimProfile, TickRunner};
use crate::sim::{CatalogSim, SimInfo};

/// The sims a tool can work with, looked up by the id a replay stores.
///
/// Build one with [`Catalog::empty`] and add sims with [`Catalog::with`];
/// with the `builtin` feature, `Catalog::builtin()` starts from the island
/// and the horde.
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
    /// A catalog with no sims, as [`Catalog::empty`] (the same with or
    /// without the `builtin` feature).
    fn default() -> Catalog {
        Catalog::empty()
    }
}

impl Catalog {
    /// A catalog with no sims.
    #[must_use]
    pub const fn empty() -> Catalog {
        Catalog { sims: Vec::new() }
    }

    /// The built-in sims: `island`, then `horde` (feature `builtin`).
    #[cfg(feature = "builtin")]
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
        self.entry_of(&header.ok()?).ok()
    }

    /// The entry that runs replays with `header`: its sim, at the version
    /// this catalog has.
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], or [`CatalogError::VersionMismatch`]
    /// for a replay of another version of a known sim.
    pub(crate) fn entry_of(&self, header: &ReplayHeader) -> Result<&dyn ErasedSim, CatalogError> {
        let e = self.entry(&header.sim_id)?;
        let supported = e.info().version;
        if header.sim_version != supported {
            return Err(CatalogError::VersionMismatch {
                id: header.sim_id.clone(),
                found: header.sim_version,
                supported,
            });
        }
        Ok(e)
    }

    fn identify_entry(
        &self,
        bytes: &[u8],
        limits: &ReplayLimits,
    ) -> Result<(&dyn ErasedSim, ReplayHeader), CatalogError> {
        let header = read_header(bytes, limits)?;
        let e = self.entry_of(&header)?;
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
    /// read with [`Replay::from_vec`](tickwise::Replay::from_vec), so verifying a file read into memory
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

impl Catalog {
    /// A live play session of sim `id` from `config` (its default when
    /// `None`) fed by `plan`, on the sim's clock, with the catch-up policy of
    /// its [`CatalogSim::max_catch_up_steps`] (every step when it has none):
    /// what `script` drives for any catalog sim.
    ///
    /// # Errors
    ///
    /// [`CatalogError::UnknownSim`], [`CatalogError::Config`],
    /// [`CatalogError::Inputs`].
    pub fn play(
        &self,
        id: &str,
        config: Option<&[u8]>,
        plan: &InputPlan,
    ) -> Result<Box<dyn Playable>, CatalogError> {
        let (e, config) = self.entry_with_config(id, config)?;
        e.play(config, plan)
    }
}
