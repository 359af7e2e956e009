//! Budgeting any catalog sim: its own defaults fill in what the request
//! leaves open, the work limit is checked before anything runs, then the
//! cost is measured (or taken as given) and judged ([`crate::budget`]).
//!
//! Why here: which defaults a sim lends a budget (its settle time as the
//! warm-up, its catch-up cap as the burst), what counts as the run's work
//! and when a digest is worth reporting are the measurement's rules; the
//! command line only gathers the numbers and prints the result.

use std::fmt;

use tickwise_catalog::{CatalogError, SimProfile, TickRunner, check_work};

use crate::budget::{Budget, BudgetError, BudgetPlan, Cost};

/// What a budget asks for; `None` takes the sim's own value.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetRequest {
    /// Untimed ticks first (default: the sim's settle ticks under its config).
    pub warmup: Option<u64>,
    /// Ticks timed.
    pub ticks: u64,
    /// Ticks in one catch-up burst (default: the config's most catch-up
    /// steps per resume; no burst if the sim has none).
    pub catch_up: Option<u64>,
    /// Bursts timed.
    pub catch_up_runs: u64,
    /// Required headroom factor at p99.
    pub headroom: f64,
    /// Candidate tick rates.
    pub hz: Vec<u32>,
    /// A per-tick cost in ms taken as given: nothing is measured.
    pub assumed_cost_ms: Option<f64>,
    /// The most work units the measurement may run (ticks × the sim's
    /// calibrated cost per tick).
    pub max_work: u64,
}

impl BudgetRequest {
    /// The plan for a sim described by `profile`: the request's numbers,
    /// the sim's defaults where the request has none.
    #[must_use]
    pub fn plan(&self, profile: &SimProfile) -> BudgetPlan {
        BudgetPlan {
            warmup: self.warmup.unwrap_or(profile.settle_ticks),
            ticks: self.ticks,
            catch_up: self.catch_up.or(profile.max_catch_up_steps).unwrap_or(0),
            catch_up_runs: self.catch_up_runs,
            headroom: self.headroom,
        }
    }
}

/// Every tick `plan` runs when measuring: warm-up, timed, and each burst
/// (saturating).
#[must_use]
pub fn ticks_run(plan: &BudgetPlan) -> u64 {
    plan.warmup
        .saturating_add(plan.ticks)
        .saturating_add(plan.catch_up.saturating_mul(plan.catch_up_runs))
}

/// A finished budget of one sim.
#[derive(Clone, Debug, PartialEq)]
pub struct SimBudget {
    /// The sim and what its config says.
    pub profile: SimProfile,
    /// What was run.
    pub plan: BudgetPlan,
    /// The cost and the rate table.
    pub budget: Budget,
    /// The sim's digest after the measurement (`None` when the cost was
    /// assumed: nothing ran).
    pub digest: Option<String>,
}

/// Why a sim's budget was refused before anything ran.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SimBudgetError {
    /// A number of the request or the plan is out of range.
    Budget(BudgetError),
    /// The measurement's work is over the limit.
    Work(CatalogError),
}

impl fmt::Display for SimBudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimBudgetError::Budget(e) => write!(f, "{e}"),
            SimBudgetError::Work(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SimBudgetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimBudgetError::Budget(e) => Some(e),
            SimBudgetError::Work(e) => Some(e),
        }
    }
}

/// Budgets the sim `runner` steps, under `request`.
///
/// # Errors
///
/// [`SimBudgetError::Budget`] for a number out of range,
/// [`SimBudgetError::Work`] when measuring would run more than
/// `request.max_work` work units; nothing runs then.
pub fn budget_sim(
    runner: &mut dyn TickRunner,
    request: &BudgetRequest,
) -> Result<SimBudget, SimBudgetError> {
    let profile = *runner.profile();
    let plan = request.plan(&profile);
    let measuring = request.assumed_cost_ms.is_none();
    plan.check(measuring).map_err(SimBudgetError::Budget)?;
    if measuring {
        check_work(ticks_run(&plan), profile.work_per_tick, request.max_work)
            .map_err(SimBudgetError::Work)?;
    }
    let cost = match request.assumed_cost_ms {
        Some(ms) => Cost::assumed(ms, plan.catch_up),
        None => Cost::measure(&plan, || runner.step()),
    }
    .map_err(SimBudgetError::Budget)?;
    let budget =
        Budget::judge(cost, &request.hz, request.headroom).map_err(SimBudgetError::Budget)?;
    let digest = cost.measured.then(|| runner.digest());
    Ok(SimBudget {
        profile,
        plan,
        budget,
        digest,
    })
}

/// Why a config's `enemies` key could not be set.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnemiesKeyError {
    /// The config is not JSON.
    NotJson {
        /// The sim whose config it is.
        sim: String,
        /// The parser's message.
        message: String,
    },
    /// The config has no top-level `enemies` key to set.
    NoKey {
        /// The sim whose config it is.
        sim: String,
    },
}

impl fmt::Display for EnemiesKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnemiesKeyError::NotJson { sim, message } => {
                write!(f, "the {sim} config is not JSON: {message}")
            }
            EnemiesKeyError::NoKey { sim } => write!(f, "the {sim} config has no `enemies` key"),
        }
    }
}

impl std::error::Error for EnemiesKeyError {}

/// `config` (of sim `sim`) with its top-level `enemies` key set to `n`;
/// the sim's own parser checks the value afterwards. A key the config does
/// not have is refused rather than added: a sim without enemies has
/// nothing to scale.
///
/// # Errors
///
/// [`EnemiesKeyError::NotJson`] or [`EnemiesKeyError::NoKey`].
pub fn config_with_enemies(config: &[u8], sim: &str, n: u64) -> Result<Vec<u8>, EnemiesKeyError> {
    let mut value: serde_json::Value =
        serde_json::from_slice(config).map_err(|e| EnemiesKeyError::NotJson {
            sim: sim.to_owned(),
            message: e.to_string(),
        })?;
    let slot = value
        .as_object_mut()
        .and_then(|obj| obj.get_mut("enemies"))
        .ok_or_else(|| EnemiesKeyError::NoKey {
            sim: sim.to_owned(),
        })?;
    *slot = n.into();
    Ok(value.to_string().into_bytes())
}

#[cfg(test)]
mod tests {
    use tickwise_catalog::{Catalog, InputPlan};

    use super::*;

    fn request() -> BudgetRequest {
        BudgetRequest {
            warmup: None,
            ticks: 20,
            catch_up: None,
            catch_up_runs: 3,
            headroom: 3.0,
            hz: vec![20, 30, 60],
            assumed_cost_ms: None,
            max_work: u64::MAX,
        }
    }

    #[test]
    fn the_sims_defaults_fill_the_plan() {
        let catalog = Catalog::builtin();
        let cfg = config_with_enemies(tickwise_sims::HORDE_JSON, "horde", 30).unwrap();
        let runner = catalog
            .runner("horde", Some(&cfg), &InputPlan::Scripted)
            .unwrap();
        let p = *runner.profile();
        // The horde names both: its settle time and its catch-up cap
        // (config/horde.json's maxCatchUpSteps).
        let plan = request().plan(&p);
        assert_eq!(plan.warmup, p.settle_ticks);
        assert_eq!(plan.catch_up, 300);
        assert_eq!(Some(plan.catch_up), p.max_catch_up_steps);
        // 10 warm-up + 20 timed + 3 bursts of 4: 42 ticks.
        let given = BudgetRequest {
            warmup: Some(10),
            catch_up: Some(4),
            ..request()
        };
        assert_eq!(ticks_run(&given.plan(&p)), 42);
        // The island has no catch-up setting: no burst.
        let island = catalog
            .runner("island", None, &InputPlan::Scripted)
            .unwrap();
        assert_eq!(request().plan(island.profile()).catch_up, 0);
    }

    #[test]
    fn work_is_checked_before_anything_runs() {
        let catalog = Catalog::builtin();
        let mut runner = catalog
            .runner("island", None, &InputPlan::Scripted)
            .unwrap();
        let tight = BudgetRequest {
            warmup: Some(0),
            max_work: 1,
            ..request()
        };
        let e = budget_sim(runner.as_mut(), &tight).unwrap_err();
        assert!(
            matches!(
                e,
                SimBudgetError::Work(CatalogError::TooMuchWork { ticks: 20, .. })
            ),
            "{e}"
        );
        assert_eq!(runner.tick(), 0);
        // An assumed cost runs nothing, so the work limit does not apply.
        let assumed = BudgetRequest {
            assumed_cost_ms: Some(9.2),
            ..tight
        };
        let b = budget_sim(runner.as_mut(), &assumed).unwrap();
        assert_eq!(runner.tick(), 0);
        assert_eq!(b.digest, None);
        // The horde design notes' table: 9.2 ms at 3x headroom recommends 30 Hz
        // (33.3 ms / 9.2 ms = 3.6x; 16.7 / 9.2 = 1.8x).
        assert_eq!(b.budget.recommended, Some(30));
    }

    #[test]
    fn a_measured_budget_runs_the_plan_and_reports_the_digest() {
        let catalog = Catalog::builtin();
        let mut runner = catalog
            .runner("island", None, &InputPlan::Scripted)
            .unwrap();
        let r = BudgetRequest {
            warmup: Some(5),
            ..request()
        };
        let b = budget_sim(runner.as_mut(), &r).unwrap();
        assert_eq!(runner.tick(), 25);
        assert_eq!(b.digest, Some(runner.digest()));
        assert!(b.budget.cost.measured);
        let bad = BudgetRequest {
            headroom: f64::NAN,
            ..request()
        };
        assert!(matches!(
            budget_sim(runner.as_mut(), &bad),
            Err(SimBudgetError::Budget(BudgetError::Headroom { .. }))
        ));
    }

    #[test]
    fn enemies_is_set_only_where_the_config_has_it() {
        let cfg = config_with_enemies(br#"{"enemies": 300, "seed": 1}"#, "horde", 30).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&cfg).unwrap();
        assert_eq!(v["enemies"], 30);
        assert_eq!(v["seed"], 1);
        assert_eq!(
            config_with_enemies(br#"{"seed": 1}"#, "island", 5),
            Err(EnemiesKeyError::NoKey {
                sim: "island".into()
            })
        );
        let e = config_with_enemies(b"{", "horde", 5).unwrap_err();
        assert!(
            e.to_string().starts_with("the horde config is not JSON: "),
            "{e}"
        );
    }
}
