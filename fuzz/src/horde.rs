//! The horde targets: `horde_config` (its JSON config) and
//! `rejoin_snapshot` (the snapshot a rejoining player reads from a peer),
//! which share one run of extreme and scripted inputs.

use tickwise::{Sim, TickInput, read_snapshot, write_snapshot};
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};

/// The horde config (`config/horde.json`): an accepted config builds a world
/// (with few enemies, so one execution stays fast; every other key as given)
/// that steps deterministically with extreme and scripted inputs.
pub fn horde_config(data: &[u8]) {
    let cfg = match HordeConfig::from_json(data) {
        Ok(cfg) => cfg,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            return;
        }
    };
    assert!((1..=1000).contains(&cfg.tick_hz()), "tickHz out of range");
    assert!(
        cfg.grid_cell_px() >= 2 * cfg.enemy_radius_px(),
        "grid cell below two radii"
    );
    let _ = (
        cfg.clock_config(),
        cfg.catch_up_policy(),
        cfg.settle_ticks(),
        cfg.summary(),
    );
    let small = cfg
        .with_enemies(u64::from(cfg.enemies().min(24)))
        .unwrap_or_else(|e| panic!("with_enemies: {e}"));
    let run = || wild_run(HordeWorld::new(&small), 1);
    assert!(
        run() == run(),
        "same config, same inputs, different digests"
    );
}

/// Steps `w` 40 ticks, the first `players` players all on the scripted
/// input with an extreme stick every 7th tick, and returns its digest.
fn wild_run(mut w: HordeWorld, players: usize) -> String {
    let mut wild = TickInput::default();
    wild.axes[0] = i16::MIN;
    wild.axes[1] = i16::MAX;
    for t in 0..40 {
        let input = if t % 7 == 3 { wild } else { scripted_input(t) };
        w.step(&vec![input; players]);
    }
    w.digest()
}

/// The horde's rejoin snapshot (`tickwise::read_snapshot`, what a
/// rejoining player reads from the chunks a peer sent): any bytes are read
/// or refused with an error, never a panic. The first byte picks the player
/// count (1 to 4); the rest is the snapshot, read into a world of 24
/// enemies. A state that is read steps 40 ticks without a panic
/// (overflow checks on), deterministically, and writes back to bytes that
/// read into a fresh world with the same checksum.
pub fn rejoin_snapshot(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let cfg = HordeConfig::from_json(include_bytes!("../../config/horde.json"))
        .and_then(|c| c.with_enemies(24))
        .and_then(|c| c.with_players(u64::from(pick % 4) + 1))
        .unwrap_or_else(|e| panic!("config: {e}"));
    let mut read = HordeWorld::new(&cfg);
    if let Err(e) = read_snapshot(&mut read, bytes) {
        assert!(!e.to_string().is_empty(), "empty error message");
        return;
    }
    let mut again = HordeWorld::new(&cfg);
    read_snapshot(&mut again, &write_snapshot(&read))
        .unwrap_or_else(|e| panic!("a state that was read does not read back: {e}"));
    assert_eq!(
        read.checksum(),
        again.checksum(),
        "written back, another state"
    );
    assert!(
        wild_run(read, cfg.players()) == wild_run(again, cfg.players()),
        "same state, same inputs, different digests"
    );
}
