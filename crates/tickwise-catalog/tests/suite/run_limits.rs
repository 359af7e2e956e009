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

/// Issue 17, item 8: a netplay run is checked like a sync test before
/// anything runs (work of every session in the process, their snapshot
/// states) and like a recording (its replay must be readable by the
/// verifier it is for). The expected figures are computed by hand from the
/// documented formulas, not read back from the code.
#[test]
fn netplay_refuses_work_memory_and_an_oversized_replay_before_running() {
    use tickwise_catalog::NetLimits;
    use tickwise_net::{NetworkConfig, RunOptions, SessionKey};
    let catalog = Catalog::builtin();
    let key = SessionKey::from_bytes([9; 16]);
    let net = NetworkConfig::PERFECT;
    let plan = InputPlan::Scripted;
    let run = |id: &str, cfg: Option<&[u8]>, opts: &RunOptions, limits: &NetLimits| {
        catalog.netplay_within(id, cfg, &plan, opts, net, 0, &mut || 0, limits)
    };
    // A two-hero horde of 10 enemies, 100 ticks: 2 sessions × 100 ticks of
    // the horde's work per tick (docs/limits.md: a fixed part plus a part
    // per enemy, 200 + 10 × 40 = 600 units under the shipped constants).
    let two = catalog
        .config_for_players("horde", Some(&horde_config(10)), 2)
        .unwrap();
    let per_tick = HordeWorld::work_per_tick(&HordeConfig::from_json(&two).unwrap());
    let opts = RunOptions::new(2, 100, key);
    let mut limits = NetLimits::DEFAULT;
    limits.run.max_work = 200 * per_tick;
    assert!(run("horde", Some(&two), &opts, &limits).is_ok());
    limits.run.max_work = 200 * per_tick - 1;
    assert_eq!(
        run("horde", Some(&two), &opts, &limits).unwrap_err(),
        CatalogError::TooMuchWork {
            ticks: 200,
            per_tick,
            limit: 200 * per_tick - 1
        }
    );
    // The island takes one player: a two-player match is refused.
    let island_max = NetLimits::DEFAULT;
    assert_eq!(
        run("island", None, &opts, &island_max).unwrap_err(),
        CatalogError::Players {
            sim: "island",
            takes: 1,
            asked: 2
        }
    );
    // A million enemies, window 32, 10 ticks: 2 × (32 + 2 + 4 + 1) = 78
    // states of the horde's state estimate.
    let cfg = horde_config(1_000_000);
    let each = HordeWorld::state_bytes(&HordeConfig::from_json(&cfg).unwrap());
    let mut opts = RunOptions::new(2, 10, key);
    opts.window = 32;
    let e = run("horde", Some(&cfg), &opts, &NetLimits::DEFAULT).unwrap_err();
    assert_eq!(
        e,
        CatalogError::TooMuchMemory {
            snapshots: 78,
            bytes_each: each,
            limit: 256 * 1024 * 1024
        }
    );
    assert!(
        !e.to_string().contains("--"),
        "a library error names no flag: {e}"
    );
    // The island's replay with a checkpoint every tick: 10⁷ checkpoints of
    // 8 + 4 × 8 fields = 40 bytes, over the 64 MiB a default verifier reads.
    let mut opts = RunOptions::new(2, 10_000_000, key);
    opts.checkpoint_every = 1;
    assert_eq!(
        run("island", None, &opts, &NetLimits::DEFAULT).unwrap_err(),
        CatalogError::ReplayTooLarge {
            checkpoints: 10_000_000,
            bytes_each: 40,
            limit: 64 * 1024 * 1024
        }
    );
}
