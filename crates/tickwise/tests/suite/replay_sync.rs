//! The GGRS-style sync test catches non-deterministic sims.

use std::sync::atomic::{AtomicU64, Ordering};

use tickwise::{Sim, StateVisitor, sync_test};

use crate::sims::{Walker, pattern};

#[test]
fn a_deterministic_sim_passes_and_the_work_is_as_stated() {
    let r = sync_test(
        Walker::default(),
        |t, out: &mut [i32]| out[0] = pattern(t),
        500,
        8,
    );
    assert_eq!(r.mismatch, None);
    assert_eq!(r.ticks, 500);
    // Every tick from tick 8 on rolls back 8 ticks: (500 - 8 + 1) * 8 steps.
    assert_eq!(r.resimulated_steps, 493 * 8);
    let mut plain = Walker::default();
    for t in 0..500 {
        plain.step(core::slice::from_ref(&pattern(t)));
    }
    assert_eq!(
        r.checksum,
        plain.checksum(),
        "rollbacks must not change the result"
    );
}

/// Reads a global counter: a state that no snapshot captures.
static CALLS: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Debug, Default)]
struct Leaky {
    inner: Walker,
    noise: u64,
}

impl Sim for Leaky {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        self.inner.step(core::slice::from_ref(input));
        self.noise = self
            .noise
            .wrapping_add(CALLS.fetch_add(1, Ordering::Relaxed));
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.inner.visit_state(v);
        v.field("noise");
        v.value(self.noise);
    }
}

#[test]
fn a_sim_reading_a_global_counter_is_caught_at_the_first_rollback() {
    let r = sync_test(
        Leaky::default(),
        |t, out: &mut [i32]| out[0] = pattern(t),
        1000,
        4,
    );
    let m = r.mismatch.expect("the global counter must be caught");
    // After tick 4 the test rolls back to tick 0 and re-simulates: the first
    // re-simulated tick, 1, already differs, and only in `noise`.
    assert_eq!((m.rolled_back_from, m.tick), (4, 1));
    assert_eq!(m.fields, ["noise"]);
    assert_ne!(m.expected, m.found);
    assert_eq!(r.ticks, 4);
}

/// Deterministic except that its `Clone` (the snapshot) forgets a field.
#[derive(Debug, Default)]
struct BadSnapshot {
    inner: Walker,
    best: i64,
}

impl Clone for BadSnapshot {
    fn clone(&self) -> Self {
        BadSnapshot {
            inner: self.inner.clone(),
            best: 0,
        }
    }
}

impl Sim for BadSnapshot {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        self.inner.step(core::slice::from_ref(input));
        self.best = self.best.max(self.inner.pos);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.inner.visit_state(v);
        v.field("best");
        v.value_i64(self.best);
    }
}

#[test]
fn a_snapshot_that_misses_state_is_caught() {
    let r = sync_test(
        BadSnapshot::default(),
        |t, out: &mut [i32]| out[0] = pattern(t),
        100,
        2,
    );
    let m = r.mismatch.expect("the forgotten field must be caught");
    // The snapshot of tick 1 (best > 0 already) restores with best = 0.
    assert_eq!((m.rolled_back_from, m.tick), (3, 1));
    assert_eq!(m.fields, ["best"]);
}
