//! The horde's `state_bytes` estimate against what a copy of its state
//! really allocates: a sync test's memory limit is only as good as this.
//!
//! The count is this thread's alone (`allocation-counter`), and the code
//! under test runs on it: a count of the whole process also took in
//! libtest's own first heap calls on a loaded machine (docs/testing.md).

use std::hint::black_box;

use allocation_counter::measure;
use tickwise::Sim as _;
use tickwise_catalog::CatalogSim;
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};

#[test]
fn the_horde_state_estimate_covers_a_real_copy_without_overstating_it() {
    // The counter counts: 16 u64 are 128 bytes.
    let one = measure(|| drop(black_box(Vec::<u64>::with_capacity(16))));
    assert_eq!((one.count_total, one.bytes_total), (1, 128));
    let base = HordeConfig::from_json(HordeWorld::DEFAULT_CONFIG).unwrap();
    for n in [1, 300, 10_000, 200_000] {
        let cfg = base.with_enemies(n).unwrap();
        let mut world = HordeWorld::new(&cfg);
        for t in 0..3 {
            world.step(&[scripted_input(t)]);
        }
        // black_box: a copy nobody reads may be optimised away.
        let heap = measure(|| drop(black_box(world.clone()))).bytes_total;
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
