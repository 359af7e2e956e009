//! The duel example's targets: `duel_snapshot`, its rejoin snapshot
//! (`examples/duel/src/persist.rs`), what a rejoining player reads from the
//! chunks a peer sent; and `duel_config`, its config reader
//! (`DuelConfig::parse`, `examples/duel/src/config.rs`).
//!
//! This module stands alone (it uses nothing else of the fuzz library): the
//! CLI's regression test cannot link the duel (the duel depends on the CLI),
//! so `fuzz/src/lib.rs` declares it only under the fuzz crate's `duel`
//! feature, and the duel crate's own `tests/fuzz_regressions.rs` includes
//! this file with `#[path]` and runs the target's seeds and kept findings.

use tickwise::{Sim, SnapshotError, TickInput, read_snapshot, write_snapshot};
use tickwise_example_duel::{DEFAULT_CONFIG, DOWN, Duel, DuelConfig, SMASH, UP, scripted_inputs};

/// The smallest field `DuelConfig::parse` accepts with every other value at
/// its limit: paddles one unit short of half the height, the inset and the
/// top speed at a quarter of the width, the serve angle at the top speed,
/// the largest paddle speed and smash boost, the shortest serve wait. A
/// state's ranges are tightest here, and one tick of travel crosses the
/// most of the field.
pub const EDGE_CONFIG: &[u8] = br#"{"seed": 18446744073709551615, "stepMs": 1,
  "maxStepsPerFrame": 1, "width": 64, "height": 32, "paddleInset": 16,
  "paddleHalf": 15, "paddleSpeed": 1000, "ballSpeed": 16, "maxBallSpeed": 16,
  "maxServeVy": 16, "smashBoost": 1000, "serveDelay": 1, "winScore": 99}"#;

/// The configs a `duel_snapshot` input's first byte picks from (even: the
/// duel's shipped config, odd: [`EDGE_CONFIG`]).
pub const CONFIGS: [&[u8]; 2] = [DEFAULT_CONFIG, EDGE_CONFIG];

/// Ticks a state that was read is stepped.
pub const TICKS: u64 = 300;

/// The config byte `pick` selects.
///
/// # Panics
///
/// If a config in [`CONFIGS`] does not parse (a bug in this file).
#[must_use]
pub fn config(pick: u8) -> DuelConfig {
    let bytes = CONFIGS[usize::from(pick) % CONFIGS.len()];
    DuelConfig::parse(bytes).unwrap_or_else(|e| panic!("duel fuzz config: {e}"))
}

/// A `duel_snapshot` input read: `None` for an empty input, else the
/// reader's answer for the snapshot after the config byte.
#[must_use]
pub fn read_input(data: &[u8]) -> Option<Result<Duel, SnapshotError>> {
    let (&pick, bytes) = data.split_first()?;
    let mut duel = Duel::new(&config(pick));
    Some(read_snapshot(&mut duel, bytes).map(|()| duel))
}

/// Both players' inputs at tick `t` of [`TICKS`]: the scripted bots, but
/// every 7th tick each stick at full deflection (opposite ways, swapping
/// every other time), both direction buttons held on one side, and smash
/// pressed and released on both.
fn wild_inputs(t: u64) -> [TickInput; 2] {
    if t % 7 != 3 {
        return scripted_inputs(t);
    }
    let (a, b) = if t % 14 == 3 {
        (i16::MIN, i16::MAX)
    } else {
        (i16::MAX, i16::MIN)
    };
    let mut left = TickInput::default();
    left.axes[0] = a;
    left.pressed = left.pressed.with(SMASH);
    left.released = left.released.with(SMASH);
    let mut right = left;
    right.axes[0] = b;
    right.held = right.held.with(UP).with(DOWN);
    [left, right]
}

/// Steps `duel` [`TICKS`] ticks of [`wild_inputs`]; after every tick its
/// state, written, reads back into a fresh duel of `cfg` with the same
/// checksum (the step keeps a state inside what the reader accepts, so a
/// peer never sends a state a rejoiner refuses). Returns its digest.
fn wild_run(mut duel: Duel, cfg: &DuelConfig) -> String {
    for t in 0..TICKS {
        duel.step(&wild_inputs(t));
        let mut back = Duel::new(cfg);
        if let Err(e) = read_snapshot(&mut back, &write_snapshot(&duel)) {
            panic!(
                "tick {t} of the run reached a state the reader refuses ({e}): {}",
                duel.digest()
            );
        }
        assert!(
            back.checksum() == duel.checksum(),
            "tick {t}: read back, another state"
        );
    }
    duel.digest()
}

/// The duel's rejoin snapshot (`tickwise::read_snapshot` into a
/// [`Duel`]): any bytes are read or refused with an error that has a
/// message, never a panic. The first byte picks the config ([`CONFIGS`]);
/// the rest is the snapshot. A state that is read writes back to bytes
/// that read into a fresh duel with the same checksum, and steps
/// [`TICKS`] ticks of scripted and extreme inputs for both players without
/// a panic (overflow checks on), deterministically (the copy read back
/// ends with the same digest), every state on the way readable again.
///
/// # Panics
///
/// On a finding.
pub fn duel_snapshot(data: &[u8]) {
    let Some(read) = read_input(data) else {
        return;
    };
    let read = match read {
        Ok(duel) => duel,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            return;
        }
    };
    let cfg = config(data[0]);
    let mut again = Duel::new(&cfg);
    read_snapshot(&mut again, &write_snapshot(&read))
        .unwrap_or_else(|e| panic!("a state that was read does not read back: {e}"));
    assert!(
        read.checksum() == again.checksum(),
        "written back, another state"
    );
    assert!(
        wild_run(read, &cfg) == wild_run(again, &cfg),
        "same state, same inputs, different digests"
    );
}

/// The duel's config reader (`DuelConfig::parse`): any bytes are read or
/// refused with an error that has a message, never a panic. A config that
/// is read builds a duel that steps [`TICKS`] ticks of scripted and extreme
/// inputs for both players without a panic (overflow checks on),
/// deterministically (two duels end with the same digest), every state on
/// the way readable again by the rejoin snapshot reader under that config:
/// the config's cross-key rules keep play inside the ranges the reader
/// accepts.
///
/// # Panics
///
/// On a finding.
pub fn duel_config(data: &[u8]) {
    let cfg = match DuelConfig::parse(data) {
        Ok(cfg) => cfg,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            return;
        }
    };
    assert!(
        wild_run(Duel::new(&cfg), &cfg) == wild_run(Duel::new(&cfg), &cfg),
        "same config, same inputs, different digests"
    );
}
