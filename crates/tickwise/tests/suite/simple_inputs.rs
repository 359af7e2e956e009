//! The loop's fast path for sources that ignore the tick window
//! (`InputSource::NEEDS_WINDOW = false`: `TickInputs`, `FnInputs`) runs the
//! same ticks with the same inputs as the windowed path, recording or not,
//! at any speed, with the before-last-step hook seeing the same state.
//!
//! The reference is the same source wrapped so that it declares
//! `NEEDS_WINDOW = true` (the general path, which computes every window);
//! the two loops must agree on every frame's report, every state and every
//! replay byte.

use core::num::NonZeroU32;

use proptest::prelude::*;
use tickwise::{
    CatchUpPolicy, ClockConfig, FixedLoop, InputSource, Nanos, ReplayHeader, Speed, StepLength,
    Tick, TickInputs, Timestamp,
};

use crate::sims::Walker;

/// `TickInputs` forced onto the windowed path (and asked tick by tick).
struct Windowed(TickInputs<i32>);

impl InputSource<i32> for Windowed {
    const NEEDS_WINDOW: bool = true;
    fn input(&mut self, tick: Tick, window_end: Timestamp) -> i32 {
        self.0.input(tick, window_end)
    }
}

fn clock() -> ClockConfig {
    ClockConfig::new(StepLength::from_millis(16).unwrap())
        .with_max_steps_per_frame(NonZeroU32::new(8).unwrap())
}

fn header() -> ReplayHeader {
    ReplayHeader {
        sim_id: "walker".into(),
        sim_version: 1,
        config: b"{}".to_vec(),
        seed: 0,
        ticks: 0,
        checkpoint_every: 7,
        input_kind: 0,
        players: 1,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn fast_path_matches_the_windowed_path(
        inputs in proptest::collection::vec(-2i32..=2, 0..200),
        frames in proptest::collection::vec(0u64..200, 1..60),
        advance in 0u64..50,
        record in any::<bool>(),
        speed in (1u32..=4, 1u32..=4),
    ) {
        let mut fast = FixedLoop::new(
            Walker::default(), TickInputs::new(inputs.clone()), clock(), CatchUpPolicy::Full);
        let mut slow = FixedLoop::new(
            Walker::default(), Windowed(TickInputs::new(inputs)), clock(), CatchUpPolicy::Full);
        let speed = Speed::new(speed.0, speed.1).unwrap();
        fast.set_speed(speed);
        slow.set_speed(speed);
        if record {
            fast.start_recording(header()).unwrap();
            slow.start_recording(header()).unwrap();
        }
        for (i, ms) in frames.iter().enumerate() {
            let (mut seen_fast, mut seen_slow) = (None, None);
            let a = fast.frame_with(Nanos::from_millis(*ms), |s| seen_fast = Some(s.clone()));
            let b = slow.frame_with(Nanos::from_millis(*ms), |s| seen_slow = Some(s.clone()));
            prop_assert_eq!(a, b, "frame {}", i);
            // The hook runs once, just before the last step, on both paths.
            prop_assert_eq!(&seen_fast, &seen_slow);
            if let Some(s) = &seen_fast {
                prop_assert_eq!(s.steps + 1, fast.sim().steps);
            }
            prop_assert_eq!(fast.sim(), slow.sim());
            prop_assert_eq!(fast.tick(), slow.tick());
            if i == frames.len() / 2 {
                prop_assert_eq!(fast.advance(advance), slow.advance(advance));
            }
        }
        if record {
            prop_assert_eq!(fast.replay().unwrap().to_bytes(), slow.replay().unwrap().to_bytes());
        }
    }
}

/// Ticks near the end of the `u64` range stay at the last one on the fast
/// path too (`Tick::next` saturates); the inputs past the stored ones are
/// the default.
#[test]
fn batches_past_the_stored_inputs_get_the_default() {
    let mut lp = FixedLoop::new(
        Walker::default(),
        TickInputs::new(vec![1, 1, 1]),
        clock(),
        CatchUpPolicy::Full,
    );
    assert_eq!(lp.advance(10), Tick(10));
    // Three steps of +1, then seven of 0: vel 3, pos 1 + 2 + 3 + 3 * 7 = 27.
    assert_eq!(
        lp.sim(),
        &Walker {
            steps: 10,
            vel: 3,
            pos: 27
        }
    );
}
