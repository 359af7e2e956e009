//! Event-mode inputs are frame-rate independent: the same event stream fed
//! through 16 ms, 33 ms, 7 ms and irregular frames yields identical per-tick inputs.

use proptest::prelude::*;
use tickwise::{
    Button, CatchUpPolicy, ClockConfig, EventKind, FixedLoop, InputBuffer, InputEvent, Nanos,
    Pcg32, StepLength, TickInput, Timestamp,
};

use crate::sims::Recorder;

/// A deterministic stream of taps, holds, repeats and axis moves over `ms` milliseconds.
fn events(seed: u64, ms: u64) -> Vec<InputEvent> {
    let mut rng = Pcg32::new(seed, 7);
    let mut out = Vec::new();
    let mut t = 0u64;
    while t < ms * 1_000_000 {
        t += u64::from(rng.below(9_000_000)) + 1; // 1 ns .. 9 ms apart: often several per tick
        let kind = match rng.below(5) {
            0 | 1 => EventKind::Down(Button::new(rng.below(4) as u8).unwrap()),
            2 | 3 => EventKind::Up(Button::new(rng.below(4) as u8).unwrap()),
            _ => EventKind::Axis {
                axis: rng.below(2) as u8,
                value: rng.range_i32(-100, 100) as i16,
            },
        };
        out.push(InputEvent {
            at: Timestamp::from_nanos(t),
            kind,
        });
    }
    out
}

/// Feeds `frames` (durations) to a loop, delivering each event before the
/// first frame whose end is at or after its timestamp, as a host would.
fn run(evts: &[InputEvent], frames: &[Nanos]) -> (Vec<TickInput>, u64) {
    let step = StepLength::from_millis(16).unwrap();
    let cfg =
        ClockConfig::new(step).with_max_steps_per_frame(core::num::NonZeroU32::new(64).unwrap());
    let mut lp = FixedLoop::new(
        Recorder::default(),
        InputBuffer::new(),
        cfg,
        CatchUpPolicy::Full,
    );
    let mut next = 0;
    let mut now = 0u64;
    for dt in frames {
        now += dt.as_nanos();
        while next < evts.len() && evts[next].at.as_nanos() <= now {
            lp.inputs_mut().push(evts[next]).unwrap();
            next += 1;
        }
        let _ = lp.frame(*dt);
    }
    (lp.sim().0.clone(), lp.inputs().late_events())
}

fn uniform(ms: u64, total_ms: u64) -> Vec<Nanos> {
    (0..total_ms / ms).map(|_| Nanos::from_millis(ms)).collect()
}

#[test]
fn same_ticks_at_16_33_7_and_irregular_frames() {
    let total = 16 * 33 * 7 * 2; // 7392 ms: a whole number of every frame length
    let evts = events(1, total);
    let (reference, late) = run(&evts, &uniform(16, total));
    assert_eq!(reference.len() as u64, total / 16);
    assert_eq!(late, 0);
    // The stream really exercises edges: taps inside one tick and holds over several.
    assert!(
        reference
            .iter()
            .any(|t| t.pressed.bits() & t.released.bits() != 0)
    );
    assert!(reference.windows(2).any(|w| w[0].is_held(Button::new(0).unwrap()) && w[1].is_held(Button::new(0).unwrap())));
    for ms in [33, 7] {
        let (got, late) = run(&evts, &uniform(ms, total));
        assert_eq!(got, reference, "{ms} ms frames");
        assert_eq!(late, 0);
    }
    // The island rules' irregular cycle 3/7/13/29/48 ms, then the remainder.
    let mut irregular: Vec<Nanos> = [3u64, 7, 13, 29, 48]
        .iter()
        .cycle()
        .take(5 * 73)
        .map(|&m| Nanos::from_millis(m))
        .collect();
    irregular.push(Nanos::from_millis(total - 7300));
    let (got, _) = run(&evts, &irregular);
    assert_eq!(got, reference);
}

#[test]
fn two_presses_in_two_ticks_of_one_frame_stay_two() {
    let b = Button::new(3).unwrap();
    let evts = [
        InputEvent {
            at: Timestamp::from_millis(2),
            kind: EventKind::Down(b),
        },
        InputEvent {
            at: Timestamp::from_millis(4),
            kind: EventKind::Up(b),
        },
        InputEvent {
            at: Timestamp::from_millis(18),
            kind: EventKind::Down(b),
        },
        InputEvent {
            at: Timestamp::from_millis(20),
            kind: EventKind::Up(b),
        },
    ];
    // One 32 ms frame runs ticks 0 and 1.
    let (ticks, _) = run(&evts, &[Nanos::from_millis(32)]);
    assert_eq!(ticks.len(), 2);
    assert!(ticks.iter().all(|t| t.was_pressed(b) && t.was_released(b)));
}

proptest! {
    /// Any frame schedule (under the cap) gives the per-tick inputs of 1 ms frames.
    #[test]
    fn any_schedule_same_inputs(seed in 0u64..1000, frames in proptest::collection::vec(1u64..200, 1..60)) {
        let total: u64 = frames.iter().sum();
        let evts = events(seed, total);
        let sched: Vec<Nanos> = frames.iter().map(|&m| Nanos::from_millis(m)).collect();
        let (got, late) = run(&evts, &sched);
        let (want, _) = run(&evts, &uniform(1, total));
        prop_assert_eq!(got, want);
        prop_assert_eq!(late, 0);
    }
}

#[test]
fn pausing_between_frames_loses_no_time() {
    // A frame at 10 ms, then the platform hides the page at 40 ms (before the
    // next display frame): the 30 ms in between were spent running and must
    // run as steps (16 ms step: 40 ms = 2 steps + 8 ms carried), not vanish.
    let step = StepLength::from_millis(16).unwrap();
    let mut lp = FixedLoop::new(
        Recorder::default(),
        InputBuffer::new(),
        ClockConfig::new(step),
        CatchUpPolicy::Full,
    );
    let _ = lp.frame_at(Timestamp::from_millis(10));
    lp.background(Timestamp::from_millis(40)).unwrap();
    assert_eq!(lp.sim().0.len(), 2);
    assert_eq!(lp.clock().accumulator(), Nanos::from_millis(8));
    let r = lp.resume(Timestamp::from_millis(100)).unwrap();
    assert_eq!(
        (r.elapsed, r.catch_up_steps, r.carried),
        (Nanos::from_millis(60), 3, Nanos::from_millis(12))
    );
    // 8 ms + 12 ms carried = 20 ms: the next frame owes one more step; total
    // 2 + 3 + 1 = 6 steps = floor(100 / 16), as if the page had never been hidden.
    let _ = lp.frame_at(Timestamp::from_millis(100));
    assert_eq!(lp.sim().0.len(), 6);
}
