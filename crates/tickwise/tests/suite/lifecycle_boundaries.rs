//! The capped policy's boundaries, each on both sides, so that moving a
//! comparison by one (`>` to `>=`, `<` to `<=`) fails a test.
//!
//! The resume rules' capped policy (`docs/background.md`): 16 ms steps, at
//! most 300 catch-up steps, absences under 32 ms are jitter. Every expected number is worked out by hand in the
//! comments. `parity/README.md` ("Mutation check") lists which comparison to
//! flip and which of these tests then fail.

use tickwise::{CatchUpPolicy, Lifecycle, Nanos, StepLength, Timestamp};

fn capped_policy() -> (Lifecycle, StepLength) {
    let policy = CatchUpPolicy::Capped {
        max_steps: 300,
        min_elapsed: Nanos::from_millis(32),
    };
    (Lifecycle::new(policy), StepLength::from_millis(16).unwrap())
}

/// (wanted, catch-up, carried ms, dropped ms) of one pause of `away_ms`.
fn away(ms: u64) -> (u64, u64, u64, u64) {
    let (mut lc, step) = capped_policy();
    lc.pause(Timestamp::from_millis(1_000)).unwrap();
    let r = lc.resume(Timestamp::from_millis(1_000 + ms), step).unwrap();
    (
        r.wanted_steps,
        r.catch_up_steps,
        r.carried.as_millis(),
        r.dropped.as_millis(),
    )
}

#[test]
fn wanted_equal_to_the_cap_with_a_remainder_is_not_capped() {
    // 4810 ms = 300 steps (4800 ms) + 10 ms: wanted == cap, so all 300 run and
    // the 10 ms are carried, exactly as staying online would have done. A cap
    // test of `wanted >= max_steps` would drop the 10 ms instead.
    assert_eq!(away(4_810), (300, 300, 10, 0));
    // One ms short of a 301st step: still not capped, 15 ms carried.
    assert_eq!(away(4_815), (300, 300, 15, 0));
}

#[test]
fn one_step_over_the_cap_is_capped_and_drops_the_rest() {
    // 4816 ms = 301 steps: capped, 300 run, 16 ms dropped, nothing carried.
    assert_eq!(away(4_816), (301, 300, 0, 16));
    // 4830 ms = 301 steps + 14 ms: the remainder goes too (30 ms dropped).
    assert_eq!(away(4_830), (301, 300, 0, 30));
}

#[test]
fn wanted_equal_to_the_cap_exactly() {
    // 4800 ms: 300 steps, no remainder; capped or not, the same numbers.
    assert_eq!(away(4_800), (300, 300, 0, 0));
}

#[test]
fn min_elapsed_is_inclusive() {
    // 31 ms: under minCatchUpMs, jitter: wanted 1, nothing runs, all dropped.
    assert_eq!(away(31), (1, 0, 0, 31));
    // 32 ms exactly: caught up (2 steps). `elapsed <= min` would drop it.
    assert_eq!(away(32), (2, 2, 0, 0));
    // 33 ms: 2 steps and 1 ms carried.
    assert_eq!(away(33), (2, 2, 1, 0));
}

#[test]
fn a_cap_of_zero_steps_drops_everything_above_min_elapsed() {
    let policy = CatchUpPolicy::Capped {
        max_steps: 0,
        min_elapsed: Nanos::ZERO,
    };
    let step = StepLength::from_millis(16).unwrap();
    let mut lc = Lifecycle::new(policy);
    // 10 ms: wanted 0 == cap 0, not capped: the 10 ms are carried.
    lc.pause(Timestamp::from_millis(0)).unwrap();
    let r = lc.resume(Timestamp::from_millis(10), step).unwrap();
    assert_eq!(
        (r.wanted_steps, r.catch_up_steps, r.carried, r.dropped),
        (0, 0, Nanos::from_millis(10), Nanos::ZERO)
    );
    // 20 ms: wanted 1 > 0: capped, all 20 ms dropped.
    lc.pause(Timestamp::from_millis(10)).unwrap();
    let r = lc.resume(Timestamp::from_millis(30), step).unwrap();
    assert_eq!(
        (r.wanted_steps, r.catch_up_steps, r.carried, r.dropped),
        (1, 0, Nanos::ZERO, Nanos::from_millis(20))
    );
}
