//! Work and memory limits of the catalog's operations that run a sim:
//! checked before anything runs, stating the estimate and the limit.

use tickwise::ReplayLimits;
use tickwise_catalog::{Catalog, CatalogError, CatalogSim, InputPlan, RunLimits};
use tickwise_sims::horde::{HordeConfig, HordeWorld};

fn horde_config(enemies: u64) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(HordeWorld::DEFAULT_CONFIG).unwrap();
    v["enemies"] = enemies.into();
    v.to_string().into_bytes()
}

#[test]
fn sync_test_refuses_work_and_snapshot_memory_over_the_limits() {
    let catalog = Catalog::builtin();
    let plan = InputPlan::Scripted;
    // Island: 100 ticks, rollback 4: 500 steps of 40 units = 20 000 units.
    let at = |max_work| RunLimits {
        max_work,
        ..RunLimits::DEFAULT
    };
    assert!(
        catalog
            .sync_test_within("island", None, &plan, 100, 4, &at(20_000))
            .is_ok()
    );
    assert_eq!(
        catalog
            .sync_test_within("island", None, &plan, 100, 4, &at(19_999))
            .unwrap_err(),
        CatalogError::TooMuchWork {
            ticks: 500,
            per_tick: 40,
            limit: 19_999
        }
    );
    // A million enemies, two ticks, rollback 8: nine snapshots of the state.
    let cfg = horde_config(1_000_000);
    let each = HordeWorld::state_bytes(&HordeConfig::from_json(&cfg).unwrap());
    let e = catalog
        .sync_test("horde", Some(&cfg), &plan, 2, 8)
        .unwrap_err();
    assert_eq!(
        e,
        CatalogError::TooMuchMemory {
            snapshots: 9,
            bytes_each: each,
            limit: 256 * 1024 * 1024
        }
    );
    assert!(
        e.to_string()
            .ends_with("exceed the snapshot memory limit of 268435456 bytes"),
        "{e}"
    );
}

#[test]
fn record_refuses_before_running_what_a_verifier_would_refuse() {
    let catalog = Catalog::builtin();
    let plan = InputPlan::Scripted;
    // 2 000 000 checkpoints of 8 + 4 × 8 bytes (the island has 8 fields):
    // 80 MB, over a default verifier's 64 MiB.
    assert_eq!(
        catalog
            .record("island", None, &plan, 2_000_000, 1)
            .unwrap_err(),
        CatalogError::ReplayTooLarge {
            checkpoints: 2_000_000,
            bytes_each: 40,
            limit: 64 * 1024 * 1024
        }
    );
    let tight = ReplayLimits {
        max_work: 999,
        ..ReplayLimits::DEFAULT
    };
    assert!(matches!(
        catalog.record_within("island", None, &plan, 25, 60, &tight),
        Err(CatalogError::TooMuchWork {
            ticks: 25,
            per_tick: 40,
            limit: 999
        })
    ));
    // What is recorded within the limits verifies within them.
    let ok = ReplayLimits {
        max_work: 1000,
        ..ReplayLimits::DEFAULT
    };
    let rec = catalog
        .record_within("island", None, &plan, 25, 5, &ok)
        .unwrap();
    assert!(catalog.verify(&rec.bytes, &ok).unwrap().is_match());
}

#[test]
fn a_live_comparison_counts_the_live_configs_cost() {
    let catalog = Catalog::builtin();
    let rec = catalog
        .record(
            "horde",
            Some(&horde_config(10)),
            &InputPlan::Scripted,
            1000,
            60,
        )
        .unwrap();
    // The replay's own world is cheap; a live run of a million enemies for
    // its 1000 ticks is 1000 × 139 652 340 units, over the 6·10¹⁰ default.
    let e = catalog
        .compare_live(
            &rec.bytes,
            &ReplayLimits::DEFAULT,
            Some(&horde_config(1_000_000)),
            &InputPlan::Scripted,
        )
        .unwrap_err();
    assert_eq!(
        e,
        CatalogError::TooMuchWork {
            ticks: 1000,
            per_tick: 139_652_340,
            limit: 60_000_000_000
        }
    );
    assert!(
        e.to_string().contains("(139652340000 units, about 139.6 s"),
        "{e}"
    );
}
