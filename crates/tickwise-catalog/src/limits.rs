//! Work and memory limits for every operation that runs a sim.
//!
//! **Work units are calibrated**: one unit is about one nanosecond of CPU on
//! the reference machine (a 2.3 GHz Xeon core, the one the figures in
//! `docs/limits.md` were measured on), and each sim's
//! [`CatalogSim::work_per_tick`](crate::CatalogSim::work_per_tick) states
//! its measured cost per tick in those units. So one limit means about the
//! same time for every sim: [`DEFAULT_MAX_WORK`] is about a minute whether
//! the replay is a cheap island or a huge horde. (An uncalibrated unit, such
//! as "one per entity", lets a small file that declares a big world buy far
//! more time than the limit suggests.)
//!
//! Memory that grows with a run's parameters is bounded the same way: a
//! sync test keeps `rollback + 1` snapshots of the state, each about
//! [`CatalogSim::state_bytes`](crate::CatalogSim::state_bytes).
//!
//! Every check happens before anything runs, and a refusal states the
//! estimate and the limit ([`CatalogError::TooMuchWork`],
//! [`CatalogError::TooMuchMemory`]).

use tickwise::{ReplayError, ReplayLimits};

use crate::error::CatalogError;

/// The default work limit: 6·10¹⁰ units, about 60 s of CPU on the
/// reference machine (the kernel's [`ReplayLimits::DEFAULT`] `max_work`).
///
/// Why a minute: it is far above any ordinary job (verifying ten million
/// island ticks takes well under a second, a 300-enemy horde session of
/// an hour at 30 Hz about two seconds) and still a bound a server can
/// afford per request; a verification service lowers it per replay.
pub const DEFAULT_MAX_WORK: u64 = ReplayLimits::DEFAULT.max_work;

/// The default limit on snapshot memory (a sync test's ring of
/// `rollback + 1` states): 256 MiB.
pub const DEFAULT_MAX_SNAPSHOT_BYTES: u64 = 256 * 1024 * 1024;

pub use crate::units::UNITS_PER_SECOND;

/// The limits of a run that is not read from a replay (a sync test, a
/// timing run, a headless run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLimits {
    /// Most work units the run may take (see the module docs).
    pub max_work: u64,
    /// Most bytes of state snapshots the run may hold at once.
    pub max_snapshot_bytes: u64,
}

impl RunLimits {
    /// [`DEFAULT_MAX_WORK`] and [`DEFAULT_MAX_SNAPSHOT_BYTES`].
    pub const DEFAULT: RunLimits = RunLimits {
        max_work: DEFAULT_MAX_WORK,
        max_snapshot_bytes: DEFAULT_MAX_SNAPSHOT_BYTES,
    };
}

impl Default for RunLimits {
    fn default() -> RunLimits {
        RunLimits::DEFAULT
    }
}

/// Checks that `ticks` ticks at `per_tick` work units each fit in `limit`,
/// and returns the total (`ticks × per_tick`).
///
/// # Errors
///
/// [`CatalogError::TooMuchWork`] with the estimate and the limit.
pub fn check_work(ticks: u64, per_tick: u64, limit: u64) -> Result<u64, CatalogError> {
    let total = ticks.saturating_mul(per_tick);
    if total > limit {
        return Err(CatalogError::TooMuchWork {
            ticks,
            per_tick,
            limit,
        });
    }
    Ok(total)
}

/// Checks that `snapshots` states of `bytes_each` bytes fit in `limit`, and
/// returns the total.
///
/// # Errors
///
/// [`CatalogError::TooMuchMemory`] with the estimate and the limit.
pub fn check_snapshots(snapshots: u64, bytes_each: u64, limit: u64) -> Result<u64, CatalogError> {
    let total = snapshots.saturating_mul(bytes_each);
    if total > limit {
        return Err(CatalogError::TooMuchMemory {
            snapshots,
            bytes_each,
            limit,
        });
    }
    Ok(total)
}

/// What a recording of `ticks` ticks from a config of `config_len` bytes
/// must satisfy before anything runs for a verifier with `limits` to read
/// it: at most `max_ticks` ticks, a config within `max_config_bytes`.
///
/// # Errors
///
/// [`ReplayError::TooManyTicks`], [`ReplayError::LengthOutOfRange`].
pub(crate) fn check_recording(
    config_len: usize,
    ticks: u64,
    limits: &ReplayLimits,
) -> Result<(), CatalogError> {
    if ticks > limits.max_ticks {
        return Err(ReplayError::TooManyTicks {
            declared: ticks,
            limit: limits.max_ticks,
        }
        .into());
    }
    if config_len > limits.max_config_bytes {
        return Err(ReplayError::LengthOutOfRange {
            what: "config",
            declared: config_len as u64,
            min: 0,
            max: limits.max_config_bytes as u64,
        }
        .into());
    }
    Ok(())
}

/// Checks that the checkpoints alone of a recording of `ticks` ticks with
/// one every `checkpoint_every` ticks, of a sim with `fields` state fields,
/// fit in a verifier's file size limit (a checkpoint is a u64 checksum and
/// a u32 hash per field).
///
/// # Errors
///
/// [`CatalogError::ReplayTooLarge`] with the estimate and the limit.
pub(crate) fn check_replay_size(
    ticks: u64,
    checkpoint_every: u64,
    fields: u64,
    limits: &ReplayLimits,
) -> Result<(), CatalogError> {
    let checkpoints = ticks / checkpoint_every.max(1);
    let bytes_each = 8u64.saturating_add(fields.saturating_mul(4));
    if checkpoints.saturating_mul(bytes_each) > limits.max_file_bytes {
        return Err(CatalogError::ReplayTooLarge {
            checkpoints,
            bytes_each,
            limit: limits.max_file_bytes,
        });
    }
    Ok(())
}

/// The states a netplay process holds for each session it runs: the
/// rollback ring (`window + 2`), the forensic anchors, the live state.
#[must_use]
pub const fn netplay_states_per_session(window: u32) -> u64 {
    window as u64 + 2 + tickwise_net::ANCHORS as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_and_refusals() {
        assert_eq!(check_work(10, 7, 70), Ok(70));
        assert_eq!(
            check_work(10, 7, 69),
            Err(CatalogError::TooMuchWork {
                ticks: 10,
                per_tick: 7,
                limit: 69
            })
        );
        // Saturates instead of wrapping around to a small number.
        assert!(check_work(u64::MAX, 2, u64::MAX - 1).is_err());
        assert_eq!(check_snapshots(9, 100, 900), Ok(900));
        assert!(check_snapshots(9, 100, 899).is_err());
    }
}
