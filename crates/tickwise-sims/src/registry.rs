//! Sim ids → config parsing, construction, input codecs and re-simulation.
//!
//! A replay names its sim by id and version; this registry is the one place
//! that maps an id to the Rust type that re-simulates it. Each registered
//! sim implements [`RegisteredSim`]: how to parse its config, build its
//! initial state, where its seed lives, and how to generate inputs
//! (`seed` pattern, `random:SEED`, or a JSON list).
//!
//! | id | version | input | config | seed |
//! |---|---|---|---|---|
//! | `island` | 1 | `i32` (kind 1) | `config/island_loop.json` keys | the config's `seed` |
//! | `horde` | 1 | [`TickInput`] (kind 2) | `config/horde.json` keys | the config's `seed` |
//!
//! A sim's version must be bumped whenever its step changes any result:
//! replays of the old version are then refused with
//! [`RegistryError::VersionMismatch`] instead of failing as forgeries.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde_json::Value;
use tickwise::{
    AXES, Buttons, Comparison, Pcg32, Recorder, Replay, ReplayError, ReplayHeader, ReplayInput,
    ReplayLimits, Sim, SyncTestReport, TickInput, VerifyReport, compare_lockstep, read_header,
};

use crate::config::ConfigError;
use crate::horde::{HordeConfig, HordeWorld, STICK_MAX, demo_input};
use crate::island::{IslandConfig, IslandWorld};

/// A registered sim's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimInfo {
    /// The id stored in replays.
    pub id: &'static str,
    /// The version stored in replays.
    pub version: u32,
    /// The default config (the repository's `config/` file, embedded).
    pub default_config: &'static [u8],
}

/// A sim the registry can record, verify, compare and sync-test.
pub trait RegisteredSim: Sim<Input: ReplayInput> + Clone {
    /// Its id, version and default config.
    const INFO: SimInfo;
    /// The parsed config.
    type Config;

    /// Parses and validates config bytes.
    ///
    /// # Errors
    ///
    /// The config's own error, naming the offending key.
    fn parse_config(bytes: &[u8]) -> Result<Self::Config, ConfigError>;

    /// The initial state.
    fn build(config: &Self::Config) -> Self;

    /// The seed the config states (stored in the replay header).
    fn seed(config: &Self::Config) -> u64;

    /// Work units one tick costs under `config`, for
    /// [`ReplayLimits::max_work`]: 1 per island step, 1 + enemies per horde tick.
    fn work_per_tick(config: &Self::Config) -> u64;

    /// The input of `tick` in the sim's standard scripted pattern.
    fn pattern_input(tick: u64) -> Self::Input;

    /// One random input.
    fn random_input(rng: &mut Pcg32) -> Self::Input;

    /// One input from a JSON value of an inputs file.
    ///
    /// # Errors
    ///
    /// A message saying what the value should be.
    fn json_input(value: &Value) -> Result<Self::Input, String>;
}

impl RegisteredSim for IslandWorld {
    const INFO: SimInfo = SimInfo {
        id: "island",
        version: 1,
        default_config: include_bytes!("../../../config/island_loop.json"),
    };
    type Config = IslandConfig;

    fn parse_config(bytes: &[u8]) -> Result<IslandConfig, ConfigError> {
        IslandConfig::from_json(bytes)
    }

    fn build(config: &IslandConfig) -> IslandWorld {
        IslandWorld::new(config)
    }

    fn seed(config: &IslandConfig) -> u64 {
        u64::from(config.seed)
    }

    fn work_per_tick(_config: &IslandConfig) -> u64 {
        1
    }

    /// The seeds' pattern: `tick % 40 < 20 ? 1 : -1`.
    fn pattern_input(tick: u64) -> i32 {
        crate::island::seed_input(tick)
    }

    /// `-1`, `0` or `1`: `next_u32() % 3 - 1`.
    fn random_input(rng: &mut Pcg32) -> i32 {
        i32::try_from(rng.next_u32() % 3).unwrap_or(0) - 1
    }

    fn json_input(value: &Value) -> Result<i32, String> {
        value
            .as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| "an integer in the i32 range".to_string())
    }
}

impl RegisteredSim for HordeWorld {
    const INFO: SimInfo = SimInfo {
        id: "horde",
        version: 2,
        default_config: include_bytes!("../../../config/horde.json"),
    };
    type Config = HordeConfig;

    fn parse_config(bytes: &[u8]) -> Result<HordeConfig, ConfigError> {
        HordeConfig::from_json(bytes)
    }

    fn build(config: &HordeConfig) -> HordeWorld {
        HordeWorld::new(config)
    }

    fn seed(config: &HordeConfig) -> u64 {
        config.seed()
    }

    fn work_per_tick(config: &HordeConfig) -> u64 {
        1 + u64::from(config.enemies())
    }

    /// The demo walk ([`demo_input`]): right, down, left, up, 90 ticks each.
    fn pattern_input(tick: u64) -> TickInput {
        demo_input(tick)
    }

    /// A random stick: each of axes 0 and 1 uniform in `-32767..=32767`
    /// (`next_u32() % 65535 - 32767`), no buttons.
    fn random_input(rng: &mut Pcg32) -> TickInput {
        let mut axis = || {
            let v = i32::try_from(rng.next_u32() % 65_535).unwrap_or(0) - STICK_MAX;
            i16::try_from(v).unwrap_or(0)
        };
        let (x, y) = (axis(), axis());
        let mut axes = [0i16; AXES];
        axes[0] = x;
        axes[1] = y;
        TickInput {
            axes,
            ..TickInput::default()
        }
    }

    /// An object with optional `held`, `pressed`, `released` (button bit
    /// sets as integers) and `axes` (up to 4 integers in the `i16` range).
    fn json_input(value: &Value) -> Result<TickInput, String> {
        const EXPECTED: &str = "an object with optional keys held, pressed, released (integers 0..2^64) and axes (up to 4 integers in -32768..=32767)";
        let obj = value.as_object().ok_or_else(|| EXPECTED.to_string())?;
        let mut input = TickInput::default();
        for (key, v) in obj {
            match key.as_str() {
                "held" | "pressed" | "released" => {
                    let bits = Buttons::from_bits(v.as_u64().ok_or_else(|| EXPECTED.to_string())?);
                    match key.as_str() {
                        "held" => input.held = bits,
                        "pressed" => input.pressed = bits,
                        _ => input.released = bits,
                    }
                }
                "axes" => {
                    let arr = v
                        .as_array()
                        .filter(|a| a.len() <= AXES)
                        .ok_or_else(|| EXPECTED.to_string())?;
                    for (slot, a) in input.axes.iter_mut().zip(arr) {
                        *slot = a
                            .as_i64()
                            .and_then(|x| i16::try_from(x).ok())
                            .ok_or_else(|| EXPECTED.to_string())?;
                    }
                }
                _ => return Err(EXPECTED.to_string()),
            }
        }
        Ok(input)
    }
}

/// The registered sims, one variant per id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimKind {
    /// `island`: the seeds' merge-island world.
    Island,
    /// `horde`: seed 004's survivors-style wave sim.
    Horde,
}

impl SimKind {
    /// Every registered sim.
    pub const ALL: &'static [SimKind] = &[SimKind::Island, SimKind::Horde];

    /// The sim registered under `id`.
    ///
    /// # Errors
    ///
    /// [`RegistryError::UnknownSim`].
    pub fn from_id(id: &str) -> Result<SimKind, RegistryError> {
        SimKind::ALL
            .iter()
            .copied()
            .find(|k| k.info().id == id)
            .ok_or_else(|| RegistryError::UnknownSim { id: id.into() })
    }

    /// Its id, version and default config.
    #[must_use]
    pub const fn info(self) -> SimInfo {
        match self {
            SimKind::Island => IslandWorld::INFO,
            SimKind::Horde => HordeWorld::INFO,
        }
    }
}

/// Runs `$body` with `$S` bound to the Rust type of `$kind`.
macro_rules! with_sim {
    ($kind:expr, $S:ident => $body:expr) => {
        match $kind {
            SimKind::Island => {
                type $S = IslandWorld;
                $body
            }
            SimKind::Horde => {
                type $S = HordeWorld;
                $body
            }
        }
    };
}

/// Why the registry could not do what was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// No sim is registered under this id.
    UnknownSim {
        /// The id asked for.
        id: String,
    },
    /// The replay was recorded by another version of the sim.
    VersionMismatch {
        /// The sim id.
        id: String,
        /// The version in the replay.
        found: u32,
        /// The version this build runs.
        supported: u32,
    },
    /// The replay file is malformed.
    Replay(ReplayError),
    /// The config (given, or embedded in a replay) fails validation.
    Config(ConfigError),
    /// The replay's header seed is not the seed its config states.
    SeedMismatch {
        /// The header's seed.
        stored: u64,
        /// The config's seed.
        config: u64,
    },
    /// An inputs file could not be used.
    Inputs {
        /// What is wrong.
        message: String,
    },
    /// Re-simulating would take more work than [`ReplayLimits::max_work`].
    TooMuchWork {
        /// Ticks the replay declares.
        ticks: u64,
        /// Work units per tick under its config.
        per_tick: u64,
        /// The limit.
        limit: u64,
    },
    /// Two replays of different sims cannot be compared.
    DifferentSims {
        /// The first replay's sim id.
        a: String,
        /// The second's.
        b: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::UnknownSim { id } => {
                let known: Vec<&str> = SimKind::ALL.iter().map(|k| k.info().id).collect();
                write!(f, "unknown sim id {id:?} (known: {})", known.join(", "))
            }
            RegistryError::VersionMismatch {
                id,
                found,
                supported,
            } => write!(
                f,
                "replay was recorded by {id} version {found}; this build runs version {supported}"
            ),
            RegistryError::Replay(e) => write!(f, "{e}"),
            RegistryError::Config(e) => write!(f, "embedded config is invalid: {e}"),
            RegistryError::SeedMismatch { stored, config } => write!(
                f,
                "replay header says seed {stored} but its config says {config}"
            ),
            RegistryError::Inputs { message } => write!(f, "inputs: {message}"),
            RegistryError::TooMuchWork {
                ticks,
                per_tick,
                limit,
            } => write!(
                f,
                "re-simulating {ticks} ticks at {per_tick} work units each exceeds the limit of {limit} (raise it with --max-work)"
            ),
            RegistryError::DifferentSims { a, b } => {
                write!(f, "cannot compare a {a} replay with a {b} replay")
            }
        }
    }
}

impl core::error::Error for RegistryError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            RegistryError::Replay(e) => Some(e),
            RegistryError::Config(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ReplayError> for RegistryError {
    fn from(e: ReplayError) -> Self {
        RegistryError::Replay(e)
    }
}

impl From<ConfigError> for RegistryError {
    fn from(e: ConfigError) -> Self {
        RegistryError::Config(e)
    }
}

/// Where a run's inputs come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputPlan {
    /// The sim's scripted pattern ([`RegisteredSim::pattern_input`]); for
    /// the island, the seeds' `tick % 40 < 20 ? 1 : -1`.
    Pattern,
    /// Random inputs from [`Pcg32`] seeded with this value (stream 0).
    Random(u64),
    /// A JSON array, one element per tick; ticks past its end get the
    /// default input.
    Json(Vec<u8>),
}

/// The largest inputs file accepted, in bytes.
pub const MAX_INPUTS_JSON_BYTES: usize = 64 * 1024 * 1024;

/// Per-tick inputs of a plan, as an endless iterator.
#[derive(Debug)]
enum PlanInputs<I> {
    Pattern(u64),
    Random(Pcg32),
    Listed(alloc::vec::IntoIter<I>),
}

impl<S: RegisteredSim> Iterator for Generated<S> {
    type Item = S::Input;
    fn next(&mut self) -> Option<S::Input> {
        Some(match &mut self.0 {
            PlanInputs::Pattern(t) => {
                let i = S::pattern_input(*t);
                *t += 1;
                i
            }
            PlanInputs::Random(rng) => S::random_input(rng),
            PlanInputs::Listed(it) => it.next().unwrap_or_default(),
        })
    }
}

/// The endless per-tick inputs of an [`InputPlan`] for sim `S`.
#[derive(Debug)]
pub struct Generated<S: RegisteredSim>(PlanInputs<S::Input>);

impl<S: RegisteredSim> Generated<S> {
    /// The inputs of `plan`.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Inputs`] for a JSON list that is too large, not an
    /// array, or has an element of the wrong form (named by index).
    pub fn new(plan: &InputPlan) -> Result<Generated<S>, RegistryError> {
        Ok(Generated(match plan {
            InputPlan::Pattern => PlanInputs::Pattern(0),
            InputPlan::Random(seed) => PlanInputs::Random(Pcg32::new(*seed, 0)),
            InputPlan::Json(bytes) => {
                PlanInputs::Listed(parse_json_inputs::<S>(bytes)?.into_iter())
            }
        }))
    }
}

fn parse_json_inputs<S: RegisteredSim>(bytes: &[u8]) -> Result<Vec<S::Input>, RegistryError> {
    let fail = |message: String| RegistryError::Inputs { message };
    if bytes.len() > MAX_INPUTS_JSON_BYTES {
        return Err(fail(alloc::format!(
            "{} bytes is more than the {MAX_INPUTS_JSON_BYTES} accepted",
            bytes.len()
        )));
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| fail(alloc::format!("not valid JSON: {e}")))?;
    let arr = value
        .as_array()
        .ok_or_else(|| fail("must be a JSON array, one element per tick".into()))?;
    arr.iter()
        .enumerate()
        .map(|(i, v)| {
            S::json_input(v).map_err(|expected| {
                fail(alloc::format!("element {i} must be {expected}, found {v}"))
            })
        })
        .collect()
}

/// A replay just recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct Recorded {
    /// The replay file.
    pub bytes: Vec<u8>,
    /// Ticks recorded.
    pub ticks: u64,
    /// Input runs in the file.
    pub runs: usize,
    /// The final text digest.
    pub digest: String,
}

fn record_as<S: RegisteredSim>(
    config: &[u8],
    plan: &InputPlan,
    ticks: u64,
    checkpoint_every: u64,
) -> Result<Recorded, RegistryError> {
    let cfg = S::parse_config(config)?;
    let header = ReplayHeader {
        sim_id: S::INFO.id.into(),
        sim_version: S::INFO.version,
        config: config.to_vec(),
        seed: S::seed(&cfg),
        ticks: 0,
        checkpoint_every,
        input_kind: 0,
    };
    let mut rec = Recorder::new(S::build(&cfg), header)?;
    let mut inputs = Generated::<S>::new(plan)?;
    for _ in 0..ticks {
        rec.step(inputs.next().unwrap_or_default());
    }
    let (_, replay) = rec.finish()?;
    Ok(Recorded {
        bytes: replay.to_bytes(),
        ticks,
        runs: replay.runs().len(),
        digest: replay.final_digest().into(),
    })
}

/// Runs sim `kind` from `config` for `ticks` ticks with the inputs of `plan`
/// and records a replay with a checkpoint every `checkpoint_every` ticks.
///
/// # Errors
///
/// [`RegistryError::Config`] for an invalid config, [`RegistryError::Inputs`]
/// for a bad inputs file, [`RegistryError::Replay`] for a zero interval.
pub fn record(
    kind: SimKind,
    config: &[u8],
    plan: &InputPlan,
    ticks: u64,
    checkpoint_every: u64,
) -> Result<Recorded, RegistryError> {
    with_sim!(kind, S => record_as::<S>(config, plan, ticks, checkpoint_every))
}

/// Reads a replay's header and finds its sim, checking the version.
///
/// # Errors
///
/// [`RegistryError::Replay`] for a malformed envelope or header,
/// [`RegistryError::UnknownSim`], [`RegistryError::VersionMismatch`].
pub fn identify(
    bytes: &[u8],
    limits: &ReplayLimits,
) -> Result<(SimKind, ReplayHeader), RegistryError> {
    let header = read_header(bytes, limits)?;
    let kind = SimKind::from_id(&header.sim_id)?;
    let info = kind.info();
    if header.sim_version != info.version {
        return Err(RegistryError::VersionMismatch {
            id: header.sim_id,
            found: header.sim_version,
            supported: info.version,
        });
    }
    Ok((kind, header))
}

/// A decoded replay with its sim's initial state, ready to re-simulate.
fn load<S: RegisteredSim>(
    bytes: &[u8],
    limits: &ReplayLimits,
) -> Result<(S, Replay<S::Input>), RegistryError> {
    let replay = Replay::<S::Input>::from_bytes(bytes, limits)?;
    let cfg = S::parse_config(&replay.header().config)?;
    let (ticks, per_tick) = (replay.header().ticks, S::work_per_tick(&cfg));
    if ticks.saturating_mul(per_tick) > limits.max_work {
        return Err(RegistryError::TooMuchWork {
            ticks,
            per_tick,
            limit: limits.max_work,
        });
    }
    let seed = S::seed(&cfg);
    if seed != replay.header().seed {
        return Err(RegistryError::SeedMismatch {
            stored: replay.header().seed,
            config: seed,
        });
    }
    Ok((S::build(&cfg), replay))
}

/// Reads a replay of any registered sim and re-simulates it.
///
/// # Errors
///
/// A [`RegistryError`] when the file cannot be verified at all (malformed,
/// unknown sim or version, invalid config, seed mismatch). A replay that
/// re-simulates differently is not an error: see [`VerifyReport::verdict`].
pub fn verify_bytes(bytes: &[u8], limits: &ReplayLimits) -> Result<VerifyReport, RegistryError> {
    let (kind, _) = identify(bytes, limits)?;
    with_sim!(kind, S => {
        let (sim, replay) = load::<S>(bytes, limits)?;
        Ok(tickwise::verify(sim, &replay))
    })
}

/// A comparison of two runs of one sim.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct RunComparison {
    /// The sim.
    pub kind: SimKind,
    /// Ticks of run A.
    pub ticks_a: u64,
    /// Ticks of run B.
    pub ticks_b: u64,
    /// The lockstep comparison over the common ticks.
    pub comparison: Comparison,
}

/// Re-simulates two replays in lockstep and reports the first tick whose
/// state checksums differ (over their common length).
///
/// # Errors
///
/// As [`verify_bytes`] for either file, and [`RegistryError::DifferentSims`].
pub fn compare_replays(
    a: &[u8],
    b: &[u8],
    limits: &ReplayLimits,
) -> Result<RunComparison, RegistryError> {
    let (kind, ha) = identify(a, limits)?;
    let (kind_b, hb) = identify(b, limits)?;
    if kind != kind_b {
        return Err(RegistryError::DifferentSims {
            a: ha.sim_id,
            b: hb.sim_id,
        });
    }
    with_sim!(kind, S => {
        let (mut sa, ra) = load::<S>(a, limits)?;
        let (mut sb, rb) = load::<S>(b, limits)?;
        let ticks = ra.ticks().min(rb.ticks());
        let comparison = compare_lockstep(&mut sa, &mut sb, ra.inputs().cloned(), rb.inputs().cloned(), ticks);
        Ok(RunComparison { kind, ticks_a: ra.ticks(), ticks_b: rb.ticks(), comparison })
    })
}

/// Re-simulates a replay (run A) in lockstep with a live run (run B) of the
/// same sim from `config` (the replay's own config when `None`) with the
/// inputs of `plan`, for the replay's tick count.
///
/// # Errors
///
/// As [`verify_bytes`] for the file, [`RegistryError::Config`] for the live
/// config, [`RegistryError::Inputs`] for the plan.
pub fn compare_live(
    replay: &[u8],
    limits: &ReplayLimits,
    config: Option<&[u8]>,
    plan: &InputPlan,
) -> Result<RunComparison, RegistryError> {
    let (kind, _) = identify(replay, limits)?;
    with_sim!(kind, S => {
        let (mut sa, ra) = load::<S>(replay, limits)?;
        let cfg = S::parse_config(config.unwrap_or(&ra.header().config))?;
        let mut sb = S::build(&cfg);
        let live = Generated::<S>::new(plan)?;
        let comparison = compare_lockstep(&mut sa, &mut sb, ra.inputs().cloned(), live, ra.ticks());
        Ok(RunComparison { kind, ticks_a: ra.ticks(), ticks_b: ra.ticks(), comparison })
    })
}

/// Runs the GGRS-style [`tickwise::sync_test`] on sim `kind`.
///
/// # Errors
///
/// [`RegistryError::Config`] or [`RegistryError::Inputs`].
pub fn sync_test(
    kind: SimKind,
    config: &[u8],
    plan: &InputPlan,
    ticks: u64,
    rollback: u64,
) -> Result<SyncTestReport, RegistryError> {
    with_sim!(kind, S => {
        let cfg = S::parse_config(config)?;
        let mut inputs = Generated::<S>::new(plan)?;
        Ok(tickwise::sync_test(S::build(&cfg), |_| inputs.next().unwrap_or_default(), ticks, rollback))
    })
}
