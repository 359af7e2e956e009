//! A GGRS-style sync test: run, snapshot, roll back, re-simulate, compare.
//!
//! Rollback netcode restores an old state and re-simulates with corrected
//! inputs; it only works if a restored state re-simulated with the same
//! inputs gives the same states again. The sync test checks exactly that,
//! every tick, without a network: any state the snapshot misses (a global,
//! a cache, a clock read) shows up as a checksum mismatch.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;

use crate::digest::{FieldHash, differing_fields};
use crate::sim::Sim;

/// A re-simulated tick whose checksum differs from the first pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncMismatch {
    /// The tick (steps run) whose states differ.
    pub tick: u64,
    /// The tick the test had reached when it rolled back.
    pub rolled_back_from: u64,
    /// The checksum of the first pass.
    pub expected: u64,
    /// The checksum after restore and re-simulation.
    pub found: u64,
    /// The fields that differ.
    pub fields: Vec<&'static str>,
}

impl fmt::Display for SyncMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "desync at tick {} after rolling back from tick {}: checksum {:016x} on the first pass, {:016x} re-simulated; fields differ: {}",
            self.tick,
            self.rolled_back_from,
            self.expected,
            self.found,
            self.fields.join(", ")
        )
    }
}

/// What [`sync_test`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct SyncTestReport {
    /// Ticks advanced.
    pub ticks: u64,
    /// Steps run again after rollbacks.
    pub resimulated_steps: u64,
    /// The final state's checksum.
    pub checksum: u64,
    /// The first mismatch (the test stops there).
    pub mismatch: Option<SyncMismatch>,
}

/// Runs `ticks` ticks of `sim`, `inputs(tick, out)` writing every player's
/// input of each tick into `out` (one entry per player). After each tick `t`
/// (once `rollback` ticks exist), restores the snapshot of tick
/// `t - rollback` (a clone), re-simulates `rollback` ticks with the same
/// inputs, and compares each re-simulated checksum with the one of the first
/// pass, then continues from the re-simulated state, as a rollback session
/// does. The restored snapshot itself is checked first, which catches a
/// `Clone` that misses state.
///
/// Work: `ticks * (rollback + 1)` steps and `ticks` clones; `rollback` of 0
/// is treated as 1.
pub fn sync_test<S: Sim + Clone>(
    mut sim: S,
    mut inputs: impl FnMut(u64, &mut [S::Input]),
    ticks: u64,
    rollback: u64,
) -> SyncTestReport {
    let players = sim.players().max(1);
    let r = usize::try_from(rollback.max(1)).unwrap_or(usize::MAX);
    // states[k] is the first pass at tick (now - len + 1 + k): a snapshot,
    // and the checksum and field hashes of the live state (not of the
    // snapshot, which may be the thing that is broken).
    let mut states: VecDeque<(S, u64, Vec<FieldHash>)> = VecDeque::new();
    let mut window: VecDeque<Vec<S::Input>> = VecDeque::new();
    states.push_back((sim.clone(), sim.checksum(), sim.field_hashes()));
    let mut resimulated_steps = 0u64;
    let mismatch =
        |tick: u64, now: u64, first: &(S, u64, Vec<FieldHash>), again: &S| SyncMismatch {
            tick,
            rolled_back_from: now,
            expected: first.1,
            found: again.checksum(),
            fields: differing_fields(&first.2, &again.field_hashes()),
        };
    for t in 0..ticks {
        let mut input = alloc::vec![S::Input::default(); players];
        inputs(t, &mut input);
        sim.step(&input);
        let now = t + 1;
        window.push_back(input);
        let c = sim.checksum();
        states.push_back((sim.clone(), c, sim.field_hashes()));
        if window.len() > r {
            window.pop_front();
            states.pop_front();
        }
        if window.len() < r {
            continue;
        }
        let base = now - r as u64;
        let mut again = states[0].0.clone();
        if again.checksum() != states[0].1 {
            return SyncTestReport {
                ticks: now,
                resimulated_steps,
                checksum: c,
                mismatch: Some(mismatch(base, now, &states[0], &again)),
            };
        }
        for (k, input) in window.iter().enumerate() {
            again.step(input);
            resimulated_steps += 1;
            let first = &states[k + 1];
            if again.checksum() != first.1 {
                return SyncTestReport {
                    ticks: now,
                    resimulated_steps,
                    checksum: c,
                    mismatch: Some(mismatch(base + k as u64 + 1, now, first, &again)),
                };
            }
        }
        sim = again;
    }
    SyncTestReport {
        ticks,
        resimulated_steps,
        checksum: sim.checksum(),
        mismatch: None,
    }
}
