//! Time scale properties: exact tick counts at any speed, states per tick
//! independent of the speed, 1/1 identical to no speed at all, event
//! timestamps in the right tick at any speed, held keys released at hide time.
//!
//! Expected tick counts are computed here with integer maths straight from
//! the definition (`floor(R·P/Q / step)`), not from the loop.

use core::num::NonZeroU32;

use proptest::prelude::*;
use tickwise::{
    Button, CatchUpPolicy, ClockConfig, EventKind, FixedLoop, FnInputs, InputBuffer, InputEvent,
    Nanos, PlatformEvent, ReplayHeader, Speed, StepLength, Tick, Timestamp,
};

use crate::sims::{Recorder, Walker};

fn scripted(t: Tick) -> i32 {
    [1, 1, -1, 0, 2, -2, 0][(t.get() % 7) as usize]
}

type WalkLoop = FixedLoop<Walker, FnInputs<fn(Tick) -> i32>>;

fn walker(step: StepLength, cap: u32) -> WalkLoop {
    let inputs: FnInputs<fn(Tick) -> i32> = FnInputs(scripted);
    FixedLoop::new(
        Walker::default(),
        inputs,
        ClockConfig::new(step).with_max_steps_per_frame(NonZeroU32::new(cap).unwrap()),
        CatchUpPolicy::Full,
    )
}

fn speed() -> impl Strategy<Value = Speed> {
    (1u32..=1000, 1u32..=1000)
        .prop_filter("at most 16x", |(p, q)| *p <= 16 * q)
        .prop_map(|(p, q)| Speed::new(p, q).unwrap())
}

/// The fewest checkpoints `states_per_tick_do_not_depend_on_the_speed`
/// compares in a case (one checkpoint a tick: half a second at 60 Hz).
const MIN_COMPARED: u64 = 30;

proptest! {
    /// With nothing dropped, the ticks after host time R at speed P/Q are
    /// exactly floor(R·P/Q / step) for whole-nanosecond steps. For a step
    /// of num/den ns the clock sees whole nanoseconds of sim time (the
    /// speed's sub-nanosecond remainder waits for the next frame), so the
    /// count is floor(floor(R·P/Q) / step), which is the same whenever the
    /// step is a whole number of nanoseconds.
    #[test]
    fn tick_count_is_exact_at_any_speed(
        frames in proptest::collection::vec(0u64..50_000_000, 1..200),
        s in speed(),
        step_ns in 1_000_000u64..40_000_000,
        hz in 1u64..240,
    ) {
        let (p, q) = (u128::from(s.numerator()), u128::from(s.denominator()));
        // A cap no frame can reach: 50 ms at 16x over a 1 ms step is 800 steps.
        let mut whole = walker(StepLength::from_nanos_ratio(step_ns, 1).unwrap(), 10_000);
        let rational_step = StepLength::from_hz(hz).unwrap();
        let mut rational = walker(rational_step, 1_000_000);
        whole.set_speed(s);
        rational.set_speed(s);
        let mut r = 0u128;
        for f in &frames {
            let a = whole.frame(Nanos::from_nanos(*f));
            let b = rational.frame(Nanos::from_nanos(*f));
            prop_assert_eq!(a.thrown_away(), Nanos::ZERO);
            prop_assert_eq!(b.thrown_away(), Nanos::ZERO);
            r += u128::from(*f);
        }
        prop_assert_eq!(u128::from(whole.tick().get()), r * p / q / u128::from(step_ns));
        let (num, den) = (u128::from(rational_step.numerator()), u128::from(rational_step.denominator()));
        prop_assert_eq!(u128::from(rational.tick().get()), (r * p / q) * den / num);
    }

    /// The state at tick N depends on N and the inputs only: two loops at
    /// different speeds, fed different frames, record the same checkpoint
    /// at every tick both reached. After its drawn frames, each loop gets
    /// one-second frames until it has reached [`MIN_COMPARED`] ticks, so
    /// that every case compares at least that many checkpoints (a slow
    /// speed with a few short frames would otherwise reach none).
    #[test]
    fn states_per_tick_do_not_depend_on_the_speed(
        frames_a in proptest::collection::vec(0u64..40_000_000, 1..120),
        frames_b in proptest::collection::vec(0u64..40_000_000, 1..120),
        a in speed(),
        b in speed(),
        pause_at in 0usize..120,
    ) {
        let step = StepLength::from_hz(60).unwrap();
        let header = ReplayHeader {
            sim_id: "walker".into(), sim_version: 1, config: Vec::new(), seed: 0,
            ticks: 0, checkpoint_every: 1, input_kind: 0, players: 1,
        };
        let run = |speed: Speed, frames: &[u64]| {
            let mut lp = walker(step, 100_000);
            lp.set_speed(speed);
            lp.start_recording(header.clone()).unwrap();
            for (i, f) in frames.iter().enumerate() {
                if i == pause_at {
                    lp.pause(lp.host_time()).unwrap();
                    let _ = lp.resume(lp.host_time().saturating_add(Nanos::from_millis(700))).unwrap();
                }
                let _ = lp.frame(Nanos::from_nanos(*f));
            }
            // At the slowest speed (1/1000) a second of host time is 60
            // steps: the loop reaches MIN_COMPARED within 31 s.
            let mut top_ups = 0;
            while lp.tick().get() < MIN_COMPARED && top_ups < 1_000 {
                let _ = lp.frame(Nanos::from_secs(1));
                top_ups += 1;
            }
            lp.replay().unwrap()
        };
        let ra = run(a, &frames_a);
        let rb = run(b, &frames_b);
        let common = ra.checkpoint_count().min(rb.checkpoint_count());
        prop_assert!(
            common as u64 >= MIN_COMPARED,
            "only {} checkpoints compared", common
        );
        for j in 0..common {
            prop_assert_eq!(ra.checkpoint(j), rb.checkpoint(j));
        }
        prop_assert!(ra.inputs(0).zip(rb.inputs(0)).all(|(x, y)| x == y));
    }

    /// Speed 1/1 set (any number of times, as 1/1 or k/k) is bit-identical
    /// to never calling `set_speed`: every report, every input window, every state.
    #[test]
    fn speed_one_is_identical_to_no_speed(
        frames in proptest::collection::vec((0u64..60_000_000, 0u8..6), 1..150),
        k in 1u32..=1000,
    ) {
        let step = StepLength::from_hz(60).unwrap();
        let cfg = ClockConfig::new(step).with_max_frame(Nanos::from_millis(200));
        let policy = CatchUpPolicy::Capped { max_steps: 30, min_elapsed: Nanos::from_millis(32) };
        let mut plain = FixedLoop::new(Recorder::default(), InputBuffer::new(), cfg, policy);
        let mut one = FixedLoop::new(Recorder::default(), InputBuffer::new(), cfg, policy);
        let same = Speed::new(k, k).unwrap();
        prop_assert_eq!(same, Speed::NORMAL);
        let b = Button::new(1).unwrap();
        for (i, (f, what)) in frames.iter().enumerate() {
            one.set_speed(same);
            let at = plain.host_time().saturating_add(Nanos::from_nanos(f / 2));
            let kind = if i % 2 == 0 { EventKind::Down(b) } else { EventKind::Up(b) };
            for lp in [&mut plain, &mut one] {
                lp.inputs_mut().push(InputEvent { at, kind }).unwrap();
            }
            let (x, y) = match what {
                0 => (plain.pause(plain.host_time()).ok().map(|()| None), one.pause(one.host_time()).ok().map(|()| None)),
                1 => (
                    plain.platform_event(PlatformEvent::Hidden, plain.host_time()).map(Some),
                    one.platform_event(PlatformEvent::Hidden, one.host_time()).map(Some),
                ),
                2 => (
                    plain.resume(plain.host_time().saturating_add(Nanos::from_nanos(*f * 20))).ok().map(Some),
                    one.resume(one.host_time().saturating_add(Nanos::from_nanos(*f * 20))).ok().map(Some),
                ),
                _ => {
                    prop_assert_eq!(plain.frame(Nanos::from_nanos(*f)), one.frame(Nanos::from_nanos(*f)));
                    (None, None)
                }
            };
            prop_assert_eq!(x, y);
            prop_assert_eq!(plain.tick(), one.tick());
        }
        prop_assert_eq!(&plain.sim().0, &one.sim().0);
        prop_assert_eq!(plain.clock().exact_parts(), one.clock().exact_parts());
    }

    /// At a constant speed P/Q with nothing dropped, an event at host time t
    /// lands in tick floor(t·P / (Q·step)): tick k covers the host times
    /// [k·step·Q/P, (k+1)·step·Q/P).
    #[test]
    fn events_land_in_the_right_tick_at_any_speed(
        frames in proptest::collection::vec(1u64..30_000_000, 1..150),
        s in speed(),
        offsets in proptest::collection::vec(0u64..1_000_000_000, 1..40),
        hz in prop_oneof![Just(60u64), Just(50), Just(30), Just(144)],
    ) {
        let step = StepLength::from_hz(hz).unwrap();
        let cfg = ClockConfig::new(step).with_max_steps_per_frame(NonZeroU32::new(1_000_000).unwrap());
        let mut lp = FixedLoop::new(Recorder::default(), InputBuffer::new(), cfg, CatchUpPolicy::Full);
        lp.set_speed(s);
        let total: u64 = frames.iter().sum();
        let mut times: Vec<u64> = offsets.iter().map(|o| o % total.max(1)).collect();
        times.sort_unstable();
        times.dedup();
        // Each event is delivered before the first frame whose end is past it.
        let mut next = 0;
        let mut now = 0u64;
        for f in &frames {
            now += f;
            while next < times.len() && times[next] < now {
                let kind = EventKind::Axis { axis: 0, value: i16::try_from(next % 30_000).unwrap() + 1 };
                lp.inputs_mut().push(InputEvent { at: Timestamp::from_nanos(times[next]), kind }).unwrap();
                next += 1;
            }
            let r = lp.frame(Nanos::from_nanos(*f));
            prop_assert_eq!(r.thrown_away(), Nanos::ZERO);
        }
        prop_assert_eq!(lp.inputs().late_events(), 0);
        let (p, q) = (u128::from(s.numerator()), u128::from(s.denominator()));
        let (num, den) = (u128::from(step.numerator()), u128::from(step.denominator()));
        // Event i carries the axis value i + 1; a tick's axis is the value of
        // the last event at or before it, by the hand formula.
        let mut expected = vec![0i16; lp.sim().0.len()];
        for (i, t) in times.iter().enumerate() {
            let tick = usize::try_from(u128::from(*t) * p * den / (q * num)).unwrap();
            let value = i16::try_from(i % 30_000).unwrap() + 1;
            for e in expected.iter_mut().skip(tick) {
                *e = value;
            }
        }
        let got: Vec<i16> = lp.sim().0.iter().map(|t| t.axes[0]).collect();
        prop_assert_eq!(got, expected);
    }
}

#[test]
fn half_speed_by_hand() {
    // 16 ms steps at 1/2: a 10 ms frame is 5 ms of sim time. Ten such frames
    // make 50 ms of sim time: 3 steps, 2 ms in the accumulator.
    let mut lp = walker(StepLength::from_millis(16).unwrap(), 8);
    lp.set_speed(Speed::new(1, 2).unwrap());
    let mut steps = 0;
    for _ in 0..10 {
        let r = lp.frame(Nanos::from_millis(10));
        assert_eq!(r.sim_dt, Nanos::from_millis(5));
        steps += r.steps;
    }
    assert_eq!(
        (steps, lp.clock().accumulator()),
        (3, Nanos::from_millis(2))
    );
    // 1/3 of 10 ns: 3, 3, 4 ns (the remainder carried), 10 ns in all.
    let mut lp = walker(StepLength::from_millis(16).unwrap(), 8);
    lp.set_speed(Speed::new(1, 3).unwrap());
    let dts: Vec<u64> = (0..3)
        .map(|_| lp.frame(Nanos::from_nanos(10)).sim_dt.as_nanos())
        .collect();
    assert_eq!(dts, [3, 3, 4]);
    // Changing the speed drops the remainder; setting the same speed keeps it.
    let _ = lp.frame(Nanos::from_nanos(10)); // 3 ns, remainder 1
    lp.set_speed(Speed::new(2, 6).unwrap()); // the same speed, 1/3
    assert_eq!(lp.frame(Nanos::from_nanos(2)).sim_dt, Nanos::from_nanos(1)); // (2 + 1) / 3
    let _ = lp.frame(Nanos::from_nanos(10)); // 3 ns, remainder 1
    lp.set_speed(Speed::new(2, 3).unwrap());
    assert_eq!(lp.frame(Nanos::from_nanos(1)).sim_dt, Nanos::ZERO); // 2 / 3, remainder 2
    assert_eq!(lp.speed(), Speed::new(2, 3).unwrap());
}

#[test]
fn the_clamp_bounds_scaled_time_and_the_cap_reports_fast_forward_losses() {
    // 60 Hz, cap 8, clamp 250 ms of sim time.
    let step = StepLength::from_hz(60).unwrap();
    let inputs: FnInputs<fn(Tick) -> i32> = FnInputs(scripted);
    let cfg = ClockConfig::new(step).with_max_frame(Nanos::from_millis(250));
    let mut lp = FixedLoop::new(Walker::default(), inputs, cfg, CatchUpPolicy::Full);
    lp.set_speed(Speed::new(4, 1).unwrap());
    // 100 ms at 4x = 400 ms of sim time: 150 ms clamped; 250 ms = 15 steps,
    // capped at 8: the rest (250 - 8 x 16.67 = 116.67 ms) dropped by the cap.
    let r = lp.frame(Nanos::from_millis(100));
    assert_eq!(r.sim_dt, Nanos::from_millis(400));
    assert_eq!(r.clamped, Nanos::from_millis(150));
    assert_eq!((r.steps, r.capped), (8, true));
    assert_eq!(r.dropped, Nanos::from_nanos(116_666_666));
    // The same frame at 1x: no clamp, 6 steps, nothing dropped.
    lp.set_speed(Speed::NORMAL);
    let r = lp.frame(Nanos::from_millis(100));
    assert_eq!(
        (r.steps, r.clamped, r.dropped, r.capped),
        (6, Nanos::ZERO, Nanos::ZERO, false)
    );
    // Sized with step_cap_for, 4x runs a 50 ms frame without loss.
    let cap = Speed::new(4, 1)
        .unwrap()
        .step_cap_for(step, Nanos::from_millis(50));
    let cfg = ClockConfig::new(step)
        .with_max_steps_per_frame(NonZeroU32::new(u32::try_from(cap).unwrap()).unwrap());
    let mut lp = FixedLoop::new(Walker::default(), inputs, cfg, CatchUpPolicy::Full);
    lp.set_speed(Speed::new(4, 1).unwrap());
    for _ in 0..100 {
        assert!(!lp.frame(Nanos::from_millis(50)).capped);
    }
    assert_eq!(lp.tick().get(), 1_200); // 5 s of host time at 4x = 20 s = 1200 ticks
}

#[test]
fn a_scaled_resume_reports_host_and_sim_time() {
    let mut lp = walker(StepLength::from_millis(16).unwrap(), 8);
    let policy_lp = &mut lp;
    policy_lp.set_speed(Speed::new(3, 2).unwrap());
    policy_lp.pause(Timestamp::ZERO).unwrap();
    // 1 000 ms away at 1.5x: 1 500 ms of sim time = 93 steps + 12 ms (Full policy).
    let r = policy_lp.resume(Timestamp::from_millis(1_000)).unwrap();
    assert_eq!(
        (r.elapsed, r.sim_elapsed),
        (Nanos::from_millis(1_000), Nanos::from_millis(1_500))
    );
    assert_eq!(
        (r.wanted_steps, r.catch_up_steps, r.carried),
        (93, 93, Nanos::from_millis(12))
    );
    assert_eq!(lp.tick().get(), 93);
}

#[test]
fn a_held_key_does_not_drive_catch_up_ticks_after_a_hide() {
    let step = StepLength::from_millis(16).unwrap();
    let policy = CatchUpPolicy::Capped {
        max_steps: 300,
        min_elapsed: Nanos::from_millis(32),
    };
    let mut lp = FixedLoop::new(
        Recorder::default(),
        InputBuffer::new(),
        ClockConfig::new(step),
        policy,
    );
    let right = Button::new(2).unwrap();
    lp.inputs_mut()
        .push(InputEvent {
            at: Timestamp::from_millis(5),
            kind: EventKind::Down(right),
        })
        .unwrap();
    for _ in 0..10 {
        let _ = lp.frame(Nanos::from_millis(16));
    }
    assert!(lp.sim().0.iter().all(|t| t.is_held(right)));
    // Hidden at 170 ms (10 ms into tick 10's window), visible 5 s later: the
    // key-up never arrives (the player released it in another app).
    assert!(
        lp.platform_event(PlatformEvent::Hidden, Timestamp::from_millis(170))
            .is_none()
    );
    let r = lp
        .platform_event(PlatformEvent::Visible, Timestamp::from_millis(5_170))
        .unwrap();
    assert_eq!(r.catch_up_steps, 300);
    let log = &lp.sim().0;
    assert_eq!(log.len(), 310);
    // The first catch-up tick carries the release edge; none after it is held.
    assert!(log[10].was_released(right) && !log[10].is_held(right));
    assert!(
        log[11..]
            .iter()
            .all(|t| !t.is_held(right) && t.pressed.is_empty())
    );
    // A pause, by contrast, keeps the key held: the app still has focus.
    let mut lp = FixedLoop::new(
        Recorder::default(),
        InputBuffer::new(),
        ClockConfig::new(step),
        policy,
    );
    lp.inputs_mut()
        .push(InputEvent {
            at: Timestamp::from_millis(5),
            kind: EventKind::Down(right),
        })
        .unwrap();
    let _ = lp.frame(Nanos::from_millis(16));
    lp.pause(lp.host_time()).unwrap();
    let _ = lp
        .resume(lp.host_time().saturating_add(Nanos::from_millis(1_000)))
        .unwrap();
    assert!(lp.sim().0.iter().all(|t| t.is_held(right)));
}
