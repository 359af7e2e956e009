//! The island's own script session: built from its loop and lifecycle
//! configs (not the catalog's one config) and fed an inputs file of
//! integers, so a script reproduces the resume rules' timelines exactly.
//! Every other sim plays through [`Catalog::play`](tickwise_catalog::Catalog::play).

use std::fmt;

use tickwise_catalog::{ConfigError, InputsError, parse_inputs};
use tickwise_sims::island::{
    IslandConfig, IslandSession, IslandWorld, LifecycleConfig, island_session, scripted_inputs,
};

/// The number of scripted inputs used when no inputs file is given.
pub const DEFAULT_INPUT_TICKS: usize = 100_000;
/// The default loop config (`config/island_loop.json`, built in so a script
/// runs from any directory).
pub const DEFAULT_LOOP_CONFIG: &[u8] = tickwise_sims::ISLAND_LOOP_JSON;
/// The default lifecycle config (`config/island_lifecycle.json`, built in).
pub const DEFAULT_LIFECYCLE_CONFIG: &[u8] = tickwise_sims::ISLAND_LIFECYCLE_JSON;

/// What an island script session is built from: each part's bytes, or
/// `None` for its default ([`DEFAULT_LOOP_CONFIG`],
/// [`DEFAULT_LIFECYCLE_CONFIG`], the island's scripted input for
/// [`DEFAULT_INPUT_TICKS`] ticks).
#[derive(Clone, Copy, Debug, Default)]
pub struct IslandParts<'a> {
    /// The loop config (JSON).
    pub loop_config: Option<&'a [u8]>,
    /// The lifecycle config (JSON).
    pub lifecycle: Option<&'a [u8]>,
    /// An inputs file: a JSON array of integers, one per tick.
    pub inputs: Option<&'a [u8]>,
}

/// Which part of an island session was refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IslandSetupError {
    /// The inputs file.
    Inputs(InputsError),
    /// The loop config.
    LoopConfig(ConfigError),
    /// The lifecycle config.
    Lifecycle(ConfigError),
    /// The two configs, each valid, disagree (their `stepMs`).
    Inconsistent(ConfigError),
}

impl fmt::Display for IslandSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IslandSetupError::Inputs(e) => write!(f, "the island's inputs: {e}"),
            IslandSetupError::LoopConfig(e) => write!(f, "the island's loop config: {e}"),
            IslandSetupError::Lifecycle(e) => write!(f, "the island's lifecycle config: {e}"),
            IslandSetupError::Inconsistent(e) => {
                write!(f, "the island's loop and lifecycle configs: {e}")
            }
        }
    }
}

impl std::error::Error for IslandSetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IslandSetupError::Inputs(e) => Some(e),
            IslandSetupError::LoopConfig(e)
            | IslandSetupError::Lifecycle(e)
            | IslandSetupError::Inconsistent(e) => Some(e),
        }
    }
}

/// A fresh island session from `parts`.
///
/// # Errors
///
/// The first part refused, in the order inputs, loop config, lifecycle
/// config, then the two configs' agreement.
pub fn island_script_session(parts: &IslandParts<'_>) -> Result<IslandSession, IslandSetupError> {
    let inputs = match parts.inputs {
        Some(bytes) => parse_inputs::<IslandWorld>(bytes, 1)
            .map_err(IslandSetupError::Inputs)?
            .pop()
            .unwrap_or_default(),
        None => scripted_inputs(DEFAULT_INPUT_TICKS),
    };
    let cfg = IslandConfig::from_json(parts.loop_config.unwrap_or(DEFAULT_LOOP_CONFIG))
        .map_err(IslandSetupError::LoopConfig)?;
    let lc = LifecycleConfig::from_json(parts.lifecycle.unwrap_or(DEFAULT_LIFECYCLE_CONFIG))
        .map_err(IslandSetupError::Lifecycle)?;
    island_session(&cfg, &lc, inputs).map_err(IslandSetupError::Inconsistent)
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn inputs_file_errors_name_the_index() {
        let parse = |b: &[u8]| parse_inputs::<IslandWorld>(b, 1).map(|mut v| v.remove(0));
        assert_eq!(parse(b"[1, -1, 0]").unwrap(), vec![1, -1, 0]);
        let e = parse(b"[1, 2.5]").unwrap_err().to_string();
        assert!(e.contains("inputs[1]"), "{e}");
        assert!(parse(b"{}").is_err());
        assert!(parse(b"[3000000000]").is_err());
    }

    #[test]
    fn defaults_run_the_resume_rules_first_100_frames() {
        // The README's golden digest after 100 frames of 16 ms on the
        // default configs and the scripted input.
        let mut s = island_script_session(&IslandParts::default()).unwrap();
        assert_eq!(s.frames(100, 16).unwrap(), 100);
        assert_eq!(s.digest(), "100|-131|5050|18|100|323|3492529440|0");
    }

    #[test]
    fn each_part_is_refused_by_name() {
        let bad = IslandParts {
            inputs: Some(b"[1, 2.5]"),
            ..IslandParts::default()
        };
        assert!(matches!(
            island_script_session(&bad),
            Err(IslandSetupError::Inputs(_))
        ));
        let bad = IslandParts {
            loop_config: Some(b"{}"),
            ..IslandParts::default()
        };
        assert!(matches!(
            island_script_session(&bad),
            Err(IslandSetupError::LoopConfig(_))
        ));
        let bad = IslandParts {
            lifecycle: Some(b"[]"),
            ..IslandParts::default()
        };
        assert!(matches!(
            island_script_session(&bad),
            Err(IslandSetupError::Lifecycle(_))
        ));
        // A 17 ms lifecycle against the 16 ms loop: each valid, together not.
        let lc = String::from_utf8(DEFAULT_LIFECYCLE_CONFIG.to_vec())
            .unwrap()
            .replace("\"stepMs\": 16", "\"stepMs\": 17");
        assert!(
            lc.contains("17"),
            "the default lifecycle config names stepMs 16"
        );
        let bad = IslandParts {
            lifecycle: Some(lc.as_bytes()),
            ..IslandParts::default()
        };
        let e = island_script_session(&bad).unwrap_err();
        assert!(matches!(e, IslandSetupError::Inconsistent(_)), "{e}");
    }
}
