//! The horde's `state_bytes` estimate against what a copy of its state
//! really allocates: a sync test's memory limit is only as good as this.
//!
//! One test in this binary, so no other test thread allocates meanwhile.

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tickwise::Sim as _;
use tickwise_catalog::CatalogSim;
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn the_horde_state_estimate_covers_a_real_copy_without_overstating_it() {
    let base = HordeConfig::from_json(HordeWorld::DEFAULT_CONFIG).unwrap();
    for n in [1, 300, 10_000, 200_000] {
        let cfg = base.with_enemies(n).unwrap();
        let mut world = HordeWorld::new(&cfg);
        for t in 0..3 {
            world.step(&[scripted_input(t)]);
        }
        let region = Region::new(GLOBAL);
        let copy = world.clone();
        let heap = region.change().bytes_allocated as u64;
        drop(copy);
        let real = heap + core::mem::size_of::<HordeWorld>() as u64;
        let estimate = HordeWorld::state_bytes(&cfg);
        assert!(
            estimate >= real,
            "{n} enemies: estimate {estimate} < real {real}"
        );
        // Within a quarter (plus the fixed table allowance) above the truth.
        assert!(
            estimate <= real + real / 4 + 16 * 1024,
            "{n} enemies: estimate {estimate} far above real {real}"
        );
    }
}
