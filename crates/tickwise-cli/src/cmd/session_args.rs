//! The flags a rollback session takes, shared by `netplay` (every player in
//! one process) and `peer` (one player over UDP): the sim, its config and
//! players, each player's inputs, the session key, and the limits of what a
//! peer accepts.

use std::path::PathBuf;

use tickwise::ReplayLimits;
use tickwise_catalog::{
    Catalog, DEFAULT_MAX_SNAPSHOT_BYTES, DEFAULT_MAX_WORK, InputPlan, NetLimits, RunLimits,
};
use tickwise_net::{MAX_INPUT_DELAY, MAX_WINDOW, RunOptions, SessionKey};

use super::record::{choose_sim, parse_plan, read_config};
use crate::{Failure, hints};

/// Flags shared by `netplay` and `peer`.
#[derive(Debug, clap::Args)]
pub struct SessionArgs {
    /// The sim id: any sim of the catalog that takes more than one player
    /// (default: a one-sim catalog's only sim, else `horde`).
    #[arg(long, value_name = "ID")]
    pub sim: Option<String>,
    /// The sim's config file (default: its built-in config).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Players (2 to 4); the sim's config is set to this many players when
    /// the sim allows it (e.g. the horde's `players` key).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=4))]
    pub players: u8,
    /// Each player's inputs, given once per player in slot order:
    /// `scripted`, `random:SEED` or an inputs FILE (one array, that
    /// player's). Players without one draw `random:1` (player p from stream p).
    #[arg(long = "inputs", value_name = "SPEC")]
    pub inputs: Vec<String>,
    /// Ticks every player simulates and confirms.
    #[arg(long, value_name = "N", default_value_t = 3_600,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub ticks: u64,
    /// Local input delay in ticks.
    #[arg(long, value_name = "D", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(..=i64::from(MAX_INPUT_DELAY)))]
    pub input_delay: u32,
    /// Prediction window in ticks (0: lockstep).
    #[arg(long, value_name = "W", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(..=i64::from(MAX_WINDOW)))]
    pub window: u32,
    /// Exchange the checksum of every K-th confirmed tick.
    #[arg(long, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub check_every: u64,
    /// Checkpoint interval of the written replays.
    #[arg(long, value_name = "K", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: u64,
    /// Seed of the network simulator's faults (loss, duplication,
    /// reordering, jitter); players' inputs come from `--inputs`.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Make player 1's sim non-deterministic at tick T (T ≥ 1), to see the
    /// desync caught.
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(1..))]
    pub inject_desync_at: Option<u64>,
    /// A peer silent for this many ticks has left: the others agree on its
    /// last tick and go on with its absent input (docs/netplay.md, "Leaving").
    #[arg(long, value_name = "TICKS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub disconnect_after: u64,
    /// Write the replay of the confirmed inputs (and, on a desync, the
    /// forensic bundle in `DIR/desync/`) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// One JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// The session key, the same on every peer: 32 hex digits (128 bits),
    /// or `random` to make one (printed on stderr for the other peers).
    /// `netplay` makes a fresh random key per run when this is not given.
    #[arg(long, value_name = "HEX|random", value_parser = parse_key)]
    pub session_key: Option<KeyArg>,
    /// Refuse a run whose sessions would cost more work units than this:
    /// ticks × sessions in this process × the sim's work per tick
    /// (calibrated: about 1 unit per ns; docs/limits.md).
    #[arg(long, value_name = "UNITS", default_value_t = DEFAULT_MAX_WORK)]
    pub max_work: u64,
    /// Refuse a run whose state snapshots would take more bytes than this:
    /// sessions × (window + 7) + spectators states, estimated from the
    /// sim's config.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_SNAPSHOT_BYTES)]
    pub max_memory: u64,
    /// Refuse a run whose recorded replay (`session.twr`) would be larger
    /// than this: the file size limit of the `verify` it is for.
    #[arg(long, value_name = "BYTES", default_value_t = ReplayLimits::DEFAULT.max_file_bytes)]
    pub max_file_bytes: u64,
}

/// A `--session-key` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyArg {
    /// The key given in hex.
    Hex(SessionKey),
    /// Make a random key.
    Random,
}

/// How to make a key, for the messages that ask for one.
pub const KEY_HOWTO: &str = "give every peer the same --session-key: start the first \
     with `--session-key random` (it prints the key it made) or make one with \
     `openssl rand -hex 16`";

fn parse_key(s: &str) -> Result<KeyArg, String> {
    if s == "random" {
        return Ok(KeyArg::Random);
    }
    SessionKey::from_hex(s)
        .map(KeyArg::Hex)
        .map_err(|e| format!("{e}; {KEY_HOWTO}"))
}

/// A key from the OS's random source.
///
/// # Errors
///
/// The OS refused (no random source).
pub fn random_key() -> anyhow::Result<SessionKey> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        anyhow::anyhow!("cannot read the OS's random source for a session key: {e}")
    })?;
    Ok(SessionKey::from_bytes(bytes))
}

impl SessionArgs {
    /// The session key: the one given, or a random one (printed on stderr
    /// when `--session-key random` asked for it, for the other peers).
    /// `None` when no key was given.
    ///
    /// # Errors
    ///
    /// The OS's random source failed.
    pub fn key(&self) -> anyhow::Result<Option<SessionKey>> {
        match self.session_key {
            None => Ok(None),
            Some(KeyArg::Hex(k)) => Ok(Some(k)),
            Some(KeyArg::Random) => {
                let k = random_key()?;
                eprintln!(
                    "session key: {} (start the other peers with --session-key {})",
                    k.to_hex(),
                    k.to_hex()
                );
                Ok(Some(k))
            }
        }
    }

    /// The limits of `--max-work`, `--max-memory` and `--max-file-bytes`.
    #[must_use]
    pub const fn limits(&self) -> NetLimits {
        NetLimits {
            run: RunLimits {
                max_work: self.max_work,
                max_snapshot_bytes: self.max_memory,
            },
            replay: ReplayLimits {
                max_file_bytes: self.max_file_bytes,
                max_work: self.max_work,
                ..ReplayLimits::DEFAULT
            },
        }
    }

    /// The run options, with session key `key`.
    #[must_use]
    pub fn options(&self, key: SessionKey) -> RunOptions {
        let mut o = RunOptions::new(self.players, self.ticks, key);
        o.input_delay = self.input_delay;
        o.window = self.window;
        o.check_every = self.check_every;
        o.checkpoint_every = self.checkpoint_every;
        o.inject_desync_at = self.inject_desync_at;
        o.disconnect_after = self.disconnect_after;
        o
    }

    /// The sim: `--sim`, or a one-sim catalog's only sim, or `horde`.
    ///
    /// # Errors
    ///
    /// An unknown sim id.
    pub fn sim_id(&self, catalog: &Catalog) -> Result<&'static str, Failure> {
        Ok(choose_sim(catalog, self.sim.as_deref(), "horde")?.id)
    }

    /// The sim's config for `--players` players (its own or `--config`),
    /// and the players' input plan.
    ///
    /// # Errors
    ///
    /// An unreadable config or inputs file, or a sim that cannot take that
    /// many players.
    pub fn config_and_plan(
        &self,
        catalog: &Catalog,
        sim: &str,
    ) -> Result<(Vec<u8>, InputPlan), Failure> {
        if self.inputs.len() > usize::from(self.players) {
            return Err(Failure::usage(anyhow::anyhow!(
                "{} --inputs given for {} players: give one per player, in slot order",
                self.inputs.len(),
                self.players
            )));
        }
        let config = read_config(self.config.as_deref())?;
        let config = catalog
            .config_for_players(sim, config.as_deref(), usize::from(self.players))
            .map_err(hints::catalog)?;
        Ok((config, self.plan(self.players)?))
    }

    /// The players' input plan for `players` players: `--inputs` in slot
    /// order, `random:1` for the players without one.
    ///
    /// # Errors
    ///
    /// More `--inputs` than players, or an unreadable inputs file.
    pub fn plan(&self, players: u8) -> Result<InputPlan, Failure> {
        if self.inputs.len() > usize::from(players) {
            return Err(Failure::usage(anyhow::anyhow!(
                "{} --inputs given for {} players: give one per player, in slot order",
                self.inputs.len(),
                players
            )));
        }
        let mut plans = Vec::with_capacity(usize::from(players));
        for spec in &self.inputs {
            plans.push(parse_plan(spec)?);
        }
        while plans.len() < usize::from(players) {
            plans.push(InputPlan::Random(1));
        }
        Ok(InputPlan::PerPlayer(plans))
    }
}
