//! The rollback workload of `crates/tickwise-net/benches/netplay.rs`
//! (`horde10000_save_restore_resim8`) without criterion, for profiling and
//! for comparing builds: a world of N enemies (default 10,000) stepped 200
//! ticks with the scripted input, then R rounds (default 200) of "save,
//! restore tick 200, re-simulate ticks 200..208". Prints the median round
//! in microseconds (and the fastest, which a loaded machine disturbs
//! least) and the final digest. Under callgrind, collect
//! `--toggle-collect='*resim8*'` for the rounds alone.
//!
//! `cargo run --release -p tickwise-lab --example horde_resim [N] [R] [S]`
//! (S: the config's `separationTicks`, default as shipped: every tick)
//! (in this crate, not the sims: a wall clock and a float to print, which
//! the sim crates ban outright)
use std::hint::black_box;
use std::time::Instant;

use tickwise::Sim;
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};

/// Save the current state, restore the one at tick 200, re-simulate 8 ticks.
#[inline(never)]
fn resim8(world: &mut HordeWorld, slot: &mut HordeWorld, base: &HordeWorld) {
    slot.clone_from(world);
    world.clone_from(base);
    for t in 200..208 {
        world.step(&[scripted_input(t)]);
    }
    black_box(&*world);
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>().ok());
    let n = args.next().flatten().unwrap_or(10_000);
    let rounds = args.next().flatten().unwrap_or(200);
    let shipped = HordeConfig::from_json(include_bytes!("../../../config/horde.json"));
    let separation = args.next().flatten().unwrap_or_else(|| {
        shipped
            .as_ref()
            .map_or(1, |c| u64::from(c.separation_ticks()))
    });
    let cfg = shipped
        .and_then(|c| c.with_enemies(n))
        .and_then(|c| c.with_separation_ticks(separation))
        .expect("config");
    let mut world = HordeWorld::new(&cfg);
    for t in 0..200 {
        world.step(&[scripted_input(t)]);
    }
    let base = world.clone();
    let mut slot = world.clone();
    let mut times = Vec::new();
    for _ in 0..rounds {
        let t0 = Instant::now();
        resim8(&mut world, &mut slot, &base);
        times.push(t0.elapsed().as_nanos());
    }
    times.sort_unstable();
    let median = times.get(times.len() / 2).copied().unwrap_or(0);
    let best = times.first().copied().unwrap_or(0);
    println!(
        "{n} enemies, separationTicks {separation}: restore + 8 ticks, median of {rounds}: {:.1} us (fastest {:.1} us); digest {}",
        median as f64 / 1000.0,
        best as f64 / 1000.0,
        world.digest()
    );
}
