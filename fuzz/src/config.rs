//! The JSON files the CLI reads for the island and for inputs: the
//! `island_loop_config`, `island_lifecycle_config` and `inputs_file`
//! targets. (The horde's config shares its run with the rejoin snapshot, in
//! the horde module.)

use tickwise::{CatchUpPolicy, FixedLoop, Nanos, Sim, StepLength, TickInputs, Timestamp};
use tickwise_sims::horde::HordeWorld;
use tickwise_sims::island::{IslandConfig, IslandWorld, LifecycleConfig, MAX_STEP_MS};

/// The island loop config (`config/island_loop.json`): an accepted config is
/// within its documented ranges, and the world and loop it configures run
/// (extreme inputs, 0 ms to huge frames, a capped frame) without panicking,
/// deterministically.
pub fn island_loop_config(data: &[u8]) {
    let cfg = match IslandConfig::from_json(data) {
        Ok(cfg) => cfg,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            return;
        }
    };
    assert!(
        (1..=MAX_STEP_MS).contains(&cfg.step_ms),
        "stepMs out of range"
    );
    assert!(cfg.friction_den >= 1 && (0..=cfg.friction_den).contains(&cfg.friction_num));
    assert!(cfg.max_steps_per_frame >= 1);
    let clock = cfg.clock_config();
    assert!(
        Ok(clock.step()) == StepLength::from_millis(cfg.step_ms),
        "step mismatch"
    );
    assert!(clock.max_steps_per_frame().get() == cfg.max_steps_per_frame);
    let run = || {
        let inputs = vec![1, -1, i32::MAX, i32::MIN, 0, 7];
        let mut lp = FixedLoop::new(
            IslandWorld::new(&cfg),
            TickInputs::new(inputs),
            clock,
            CatchUpPolicy::Full,
        );
        for ms in [0, 1, cfg.step_ms, cfg.step_ms * 3 + 1, 86_400_000] {
            let r = lp.frame(Nanos::from_millis(ms));
            assert!(r.steps <= cfg.max_steps_per_frame, "step cap exceeded");
        }
        lp.advance(64);
        lp.sim().digest()
    };
    assert!(
        run() == run(),
        "same config, same frames, different digests"
    );
}

/// The island lifecycle config (`config/island_lifecycle.json`): an accepted
/// config gives a policy whose resume conserves time exactly (elapsed =
/// caught-up steps + carried + dropped), never catches up more than it owes
/// or than its cap, and runs the steps it reports.
pub fn island_lifecycle_config(data: &[u8]) {
    let lc = match LifecycleConfig::from_json(data) {
        Ok(lc) => lc,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "empty error message");
            return;
        }
    };
    assert!(
        (1..=MAX_STEP_MS).contains(&lc.step_ms),
        "stepMs out of range"
    );
    let base = IslandConfig::from_json(include_bytes!("../../config/island_loop.json"))
        .unwrap_or_else(|e| panic!("checked-in island config: {e}"));
    let cfg = IslandConfig {
        step_ms: lc.step_ms,
        ..base
    };
    let step = Nanos::from_millis(lc.step_ms);
    for away_ms in [0, lc.step_ms - 1, 31, 32, 33, 5_000] {
        let mut lp = FixedLoop::new(
            IslandWorld::new(&cfg),
            TickInputs::new(vec![1, -1]),
            cfg.clock_config(),
            lc.policy,
        );
        lp.background(Timestamp::ZERO)
            .unwrap_or_else(|e| panic!("background: {e}"));
        let r = lp
            .resume(Timestamp::from_millis(away_ms))
            .unwrap_or_else(|e| panic!("resume: {e}"));
        assert!(r.elapsed == Nanos::from_millis(away_ms), "elapsed");
        assert!(r.wanted_steps == away_ms / lc.step_ms, "wanted steps");
        assert!(
            r.catch_up_steps <= r.wanted_steps,
            "caught up more than owed"
        );
        match lc.policy {
            CatchUpPolicy::Freeze => assert!(r.catch_up_steps == 0, "freeze ran steps"),
            CatchUpPolicy::Full => assert!(r.catch_up_steps == r.wanted_steps, "full skipped"),
            CatchUpPolicy::Capped { max_steps, .. } => {
                assert!(r.catch_up_steps <= max_steps, "cap exceeded");
            }
        }
        let ran = step.as_nanos() * r.catch_up_steps;
        let total = ran + r.carried.as_nanos() + r.dropped.as_nanos();
        assert!(total == r.elapsed.as_nanos(), "time not conserved: {r:?}");
        assert!(r.carried < step, "carried a whole step");
        assert!(
            lp.tick().get() == r.catch_up_steps,
            "reported steps not run"
        );
    }
}

/// The inputs-file reader (`record --inputs FILE`): a list of inputs or an
/// error, for both sims' input forms. Kept to three lines so it is easy to
/// point at the reader's new home.
pub fn inputs_file(data: &[u8]) {
    let _ = tickwise_catalog::parse_inputs::<IslandWorld>(data, 1);
    let _ = tickwise_catalog::parse_inputs::<HordeWorld>(data, 2);
}
