//! The web loop driven by hand: frames, lifecycle events, speed and replays.

use super::*;
use core::num::NonZeroU32;
use tickwise::{CatchUpPolicy, ClockConfig, FnInputs, StateVisitor, Tick};

/// Adds the tick's input (tick + 1) to a sum; counts dropped time in ms.
#[derive(Clone, Debug, Default)]
struct Summer {
    sum: u64,
    dropped_ms: u64,
}

impl Sim for Summer {
    type Input = u64;
    fn step(&mut self, inputs: &[u64]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        self.sum += input;
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("sum");
        v.value(self.sum);
    }
    fn on_time_dropped(&mut self, dropped: Nanos) {
        self.dropped_ms += dropped.as_millis();
    }
}

impl Capture for Summer {
    type Snapshot = u64;
    fn capture_into(&self, out: &mut u64) {
        *out = self.sum;
    }
    fn capture(&self) -> u64 {
        self.sum
    }
}

type Inputs = FnInputs<fn(Tick) -> u64>;

fn input(t: Tick) -> u64 {
    t.get() + 1
}

/// 16 ms steps, at most 8 per frame, capped catch-up of 300 steps (not
/// below 32 ms away).
fn web() -> WebLoop<Summer, Inputs> {
    web_with(StepLength::from_millis(16).unwrap())
}

fn web_with(step: StepLength) -> WebLoop<Summer, Inputs> {
    let clock = ClockConfig::new(step).with_max_steps_per_frame(NonZeroU32::new(8).unwrap());
    let policy = CatchUpPolicy::Capped {
        max_steps: 300,
        min_elapsed: Nanos::from_millis(32),
    };
    WebLoop::new(FixedLoop::new(
        Summer::default(),
        FnInputs(input as fn(Tick) -> u64),
        clock,
        policy,
    ))
}

fn steps(w: &mut WebLoop<Summer, Inputs>, ms: f64) -> u32 {
    w.frame_at(ms).expect("a good timestamp").steps
}

#[test]
fn frames_follow_browser_time_from_the_first_reading() {
    let mut w = web();
    // The first frame anchors: browser 5000 ms is host 0, no steps.
    assert_eq!(steps(&mut w, 5000.0), 0);
    // 10 frames of 16.5 ms = 165 ms: 10 steps (160 ms), 5 ms left over.
    let total: u32 = (1..=10)
        .map(|k| steps(&mut w, 5000.0 + 16.5 * f64::from(k)))
        .sum();
    assert_eq!(total, 10);
    assert_eq!(w.tick(), 10);
    // Sum of inputs 1..=10 = 55.
    assert_eq!(w.sim().sum, 55);
    let s = w.state_json();
    assert_eq!(s["accumulator"], 5);
    assert_eq!(s["wallMs"], 165);
    assert_eq!(s["frames"], 11);
}

#[test]
fn backwards_timestamps_are_zero_length_frames_and_counted() {
    let mut w = web();
    steps(&mut w, 100.0);
    steps(&mut w, 200.0); // 100 ms: 6 steps, 4 ms left
    assert_eq!(w.tick(), 6);
    assert_eq!(steps(&mut w, 150.0), 0);
    assert_eq!(w.fixed_loop().backwards_frames(), 1);
    // The host clock did not go back: the next frame measures from 200 ms.
    assert_eq!(steps(&mut w, 212.0), 1); // 4 + 12 = 16
    assert_eq!(w.state_json()["backwardsFrames"], 1);
}

#[test]
fn nan_infinite_and_negative_times_are_ignored_and_counted() {
    let mut w = web();
    steps(&mut w, 0.0);
    steps(&mut w, 10.0);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 1e300] {
        assert!(w.frame_at(bad).is_err(), "{bad}");
        assert!(w.visibility(true, bad).is_err(), "{bad}");
        assert!(w.pause_at(bad).is_err(), "{bad}");
        assert!(w.resume_at(bad).is_err(), "{bad}");
    }
    let s = w.state_json();
    assert_eq!(s["rejectedTimes"], 20);
    assert_eq!(
        (s["frames"].as_u64(), s["wallMs"].as_u64()),
        (Some(2), Some(10))
    );
    assert_eq!(s["state"], "running");
    // The next good frame measures from the last good one: 10 -> 16 ms.
    assert_eq!(steps(&mut w, 16.0), 1);
}

#[test]
fn hide_and_show_catch_up_under_the_policy() {
    let mut w = web();
    steps(&mut w, 0.0);
    steps(&mut w, 64.0); // 4 steps
    // Hidden 36 ms after the last frame: that gap ran first (2 steps, 4 ms left).
    assert_eq!(
        w.visibility(true, 100.0),
        Ok(VisibilityOutcome::Backgrounded)
    );
    assert_eq!((w.tick(), w.state()), (6, AppState::Background));
    // Frames while hidden move the clock, run nothing.
    assert_eq!(steps(&mut w, 500.0), 0);
    // A duplicate hidden changes nothing.
    assert_eq!(w.visibility(true, 600.0), Ok(VisibilityOutcome::Ignored));
    // Visible 5 000 ms after hiding: 312 steps owed (4 992 ms), 300 run,
    // everything past them dropped (5 000 - 4 800 = 200 ms).
    let VisibilityOutcome::Resumed(r) = w.visibility(false, 5100.0).unwrap() else {
        panic!("expected a resume");
    };
    assert_eq!(
        r.summary.numbers().map(|(_, v)| v),
        [5000, 312, 300, 0, 200]
    );
    assert_eq!(w.tick(), 306);
    assert_eq!(r.digest, w.digest());
    assert_eq!(w.last_resume(), Some(&r));
    // Sum of inputs 1..=306.
    assert_eq!(w.sim().sum, 306 * 307 / 2);
    // Real-time frames carry on from the resume time.
    assert_eq!(steps(&mut w, 5100.0 + 4.0 + 16.0), 1);
}

#[test]
fn a_players_pause_survives_hide_and_show() {
    let mut w = web();
    steps(&mut w, 0.0);
    assert_eq!(w.pause_at(40.0), Ok(true)); // the 40 ms gap ran: 2 steps
    assert_eq!(w.tick(), 2);
    assert_eq!(w.pause_at(41.0), Ok(false), "already paused");
    assert_eq!(w.visibility(true, 100.0), Ok(VisibilityOutcome::Ignored));
    assert_eq!(w.visibility(false, 9000.0), Ok(VisibilityOutcome::Ignored));
    assert_eq!((w.state(), w.tick()), (AppState::Paused, 2));
    assert!(w.last_resume().is_none());
    // The player resumes 1 000 ms after pausing: 62 steps owed (992 ms),
    // all run (under the cap), 8 ms carried. Resumed at browser 1040.
    let r = w.resume_at(1040.0).unwrap().clone();
    assert_eq!(r.summary.numbers().map(|(_, v)| v), [1000, 62, 62, 8, 0]);
    assert_eq!(w.tick(), 64);
    // A second resume is refused: ok false, zeros.
    let r = w.resume_at(1041.0).unwrap();
    assert!(!r.summary.ok);
    assert_eq!(r.to_json()["catchUpSteps"], 0);
}

#[test]
fn resume_after_moves_time_synthetically_and_reanchors() {
    let mut w = web();
    steps(&mut w, 1000.0);
    assert!(w.pause_now());
    assert!(!w.background_now(), "paused, not running");
    let r = w.resume_after(5000.0).unwrap();
    assert_eq!(r.to_json()["wantedSteps"], 312);
    assert_eq!((w.tick(), w.wall_ms()), (300, 5000));
    // The browser clock re-anchored: the next frame is host 5000 ms, then
    // 16 ms later one step.
    assert_eq!(steps(&mut w, 1001.0), 0);
    assert_eq!(steps(&mut w, 1017.0), 1);
    // Refused while running: ok false, nothing moves.
    let r = w.resume_after(100.0).unwrap();
    assert!(!r.summary.ok);
    assert_eq!(w.wall_ms(), 5016);
}

#[test]
fn step_frames_default_to_one_step_even_at_60_hz() {
    // 60 Hz: a step of 16 666 666 2/3 ns. 1 000 default frames run exactly
    // 1 000 steps and move the clock by ceil(1000 * step) = 16 666 666 667 ns.
    let mut w = web_with(StepLength::from_hz(60).unwrap());
    assert_eq!(w.step_frames(1000.0, None), Ok(1000));
    assert_eq!(w.fixed_loop().host_time().as_nanos(), 16_666_666_667);
    // Explicit frames: 7 frames of 10 ms at 60 Hz = 70 ms (+ 2/3 ns left
    // over from above) -> 4 steps.
    assert_eq!(w.step_frames(7.0, Some(10.0)), Ok(4));
}

#[test]
fn bad_test_api_arguments_change_nothing() {
    let mut w = web();
    let e = w.step_frames(10.0, Some(16.5)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ms must be a whole number from 0 to 1000000000000, got 16.5"
    );
    assert!(w.step_frames(-1.0, None).is_err());
    assert!(w.step_frames(f64::NAN, None).is_err());
    assert!(w.advance(1e9).is_err());
    assert!(w.pause_now());
    assert!(w.resume_after(f64::INFINITY).is_err());
    assert_eq!((w.state(), w.tick(), w.wall_ms()), (AppState::Paused, 0, 0));
    // Ten resumes of 10^12 ms reach the limit of 10^13 ms exactly; the
    // eleventh would pass it and is refused with the limit in the message.
    for _ in 0..10 {
        assert!(w.resume_after(1e12).unwrap().summary.ok);
        assert!(w.pause_now());
    }
    let e = w.resume_after(1e12).unwrap_err();
    assert!(
        matches!(
            e,
            WebError::WallClockFull {
                now_ms: 10_000_000_000_000,
                adding_ms: 1_000_000_000_000
            }
        ),
        "{e}"
    );
    assert_eq!(w.state(), AppState::Paused);
    assert!(e.to_string().contains("limit of 10000000000000 ms"), "{e}");
}

#[test]
fn presenting_frames_keep_the_last_two_ticks() {
    let mut w = web();
    let mut p = Presenter::new(w.sim());
    let _ = w.frame_at_presenting(0.0, &mut p).unwrap();
    // 40 ms: two steps (sums 1, 3), 8 ms left.
    assert_eq!(w.frame_at_presenting(40.0, &mut p).unwrap().steps, 2);
    assert_eq!((*p.previous(), *p.current()), (1, 3));
    assert!(w.frame_at_presenting(f64::NAN, &mut p).is_err());
    assert_eq!(w.frames(), 2);
}

#[test]
fn set_speed_checks_the_js_numbers_and_scales_frames() {
    let mut w = web();
    for (p, q) in [
        (0.0, 1.0),
        (1.0, 0.0),
        (17.0, 1.0),
        (1001.0, 1000.0),
        (1.5, 1.0),
        (f64::NAN, 1.0),
        (1.0, f64::INFINITY),
        (-2.0, 1.0),
    ] {
        assert!(!w.set_speed(p, q), "{p}/{q} must be refused");
    }
    assert_eq!(w.speed(), Speed::NORMAL, "a refused speed changes nothing");
    // 2/4 is stored reduced; the state reports [1, 2].
    assert!(w.set_speed(2.0, 4.0));
    assert_eq!(w.state_json()["speed"], serde_json::json!([1, 2]));
    // Half speed: 64 ms of browser time is 32 ms of sim time, 2 steps of 16.
    steps(&mut w, 1000.0);
    assert_eq!(steps(&mut w, 1064.0), 2);
    // 16x (the kernel's limit, 1000/1000 * 16): 16 ms of browser time is
    // 256 ms of sim time, 16 steps, but the cap is 8 steps per frame.
    assert!(w.set_speed(16.0, 1.0));
    let r = w.frame_at(1080.0).unwrap();
    assert_eq!(r.steps, 8);
    assert!(r.capped);
    // 256 - 8 * 16 = 128 ms of sim time thrown away.
    assert_eq!(w.state_json()["capDroppedMs"], 128);
    // 4x: 12 ms of browser time is 48 ms of sim time, 3 steps.
    assert!(w.set_speed(4.0, 1.0));
    assert_eq!(steps(&mut w, 1092.0), 3);
}

#[test]
fn a_loop_that_does_not_record_says_so() {
    let mut w = web();
    assert!(!w.is_recording());
    assert_eq!(w.replay_bytes(), Err(ReplayError::NotRecording));
    assert_eq!(w.state_json()["recording"], false);
    w.stop_recording();
    assert!(w.replay_base64().is_err());
}

#[test]
fn step_lengths_in_whole_ns_need_no_rounding() {
    let step = StepLength::from_millis(16).unwrap();
    assert_eq!(steps_ceil(step, 3), 48_000_000);
    let third = StepLength::from_nanos_ratio(10, 3).unwrap();
    assert_eq!(
        (
            steps_ceil(third, 1),
            steps_ceil(third, 2),
            steps_ceil(third, 3)
        ),
        (4, 7, 10)
    );
}
