//! The island's play session: its loop built from its two configs, in the
//! kernel's [`PlaySession`] (which runs any sim).

use alloc::vec::Vec;

use tickwise::{FixedLoop, PlaySession, TickInputs};

use super::{IslandConfig, IslandWorld, LifecycleConfig};
use tickwise_config::ConfigError;

/// The island world at tick 0 in its loop: the loop config's clock, the
/// lifecycle config's catch-up policy, `inputs[tick]` as each tick's input.
/// The session and the browser page both build their loop here.
///
/// # Errors
///
/// [`ConfigError::Inconsistent`] when the lifecycle's `stepMs` differs from the loop's.
pub fn island_loop(
    cfg: &IslandConfig,
    lc: &LifecycleConfig,
    inputs: Vec<i32>,
) -> Result<FixedLoop<IslandWorld, TickInputs<i32>>, ConfigError> {
    if lc.step_ms != cfg.step_ms {
        return Err(ConfigError::Inconsistent {
            key: "stepMs".into(),
            message: alloc::format!(
                "the lifecycle config says {} ms but the loop config says {} ms; they must be equal",
                lc.step_ms,
                cfg.step_ms
            ),
        });
    }
    Ok(FixedLoop::new(
        IslandWorld::new(cfg),
        TickInputs::new(inputs),
        cfg.clock_config(),
        lc.policy,
    ))
}

/// The island world in its loop, with lifecycle and scenes.
pub type IslandSession = PlaySession<IslandWorld, TickInputs<i32>>;

/// A fresh island session: [`island_loop`] in a [`PlaySession`].
///
/// # Errors
///
/// As [`island_loop`].
pub fn island_session(
    cfg: &IslandConfig,
    lc: &LifecycleConfig,
    inputs: Vec<i32>,
) -> Result<IslandSession, ConfigError> {
    Ok(PlaySession::from_loop(island_loop(cfg, lc, inputs)?))
}
