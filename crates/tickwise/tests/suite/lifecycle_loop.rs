//! The loop's lifecycle wiring: offline settlement, platform events, paused frames.

use tickwise::{
    AppState, CatchUpPolicy, ClockConfig, FixedLoop, FnInputs, Nanos, PlatformEvent, ResumeReport,
    Sim, StateVisitor, StepLength, Tick, Timestamp,
};

#[derive(Default)]
struct Count(u64);

impl Sim for Count {
    type Input = ();
    fn step(&mut self, _inputs: &[()]) {
        self.0 += 1;
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("n");
        v.value(self.0);
    }
}

type Loop = FixedLoop<Count, FnInputs<fn(Tick)>>;

fn capped_loop() -> Loop {
    let policy = CatchUpPolicy::Capped {
        max_steps: 300,
        min_elapsed: Nanos::from_millis(32),
    };
    let inputs: FnInputs<fn(Tick)> = FnInputs(|_| ());
    FixedLoop::new(
        Count::default(),
        inputs,
        ClockConfig::new(StepLength::from_millis(16).unwrap()),
        policy,
    )
}

#[test]
fn offline_settlement_receives_the_dropped_time_after_catch_up() {
    let mut lp = capped_loop();
    lp.pause(Timestamp::ZERO).unwrap();
    let mut settled: Vec<(Nanos, u64)> = Vec::new();
    let mut hook = |r: &ResumeReport| settled.push((r.dropped, r.catch_up_steps));
    let r = lp
        .resume_with(Timestamp::from_millis(3_600_000), &mut hook)
        .unwrap();
    // One hour away: 300 steps caught up (4.8 s), the other 3 595 200 ms go to settlement.
    assert_eq!(settled, vec![(Nanos::from_millis(3_595_200), 300)]);
    assert_eq!(r.dropped, Nanos::from_millis(3_595_200));
    assert_eq!(lp.sim().0, 300, "the catch-up ran before the hook");
    // A refused resume does not call the hook.
    let mut calls = 0;
    let mut count = |_: &ResumeReport| calls += 1;
    assert!(
        lp.resume_with(Timestamp::from_millis(3_700_000), &mut count)
            .is_err()
    );
    assert_eq!(calls, 0);
}

#[test]
fn platform_events_respect_a_players_pause() {
    let mut lp = capped_loop();
    // Hidden while running: background. Visible: resume with a report.
    assert!(
        lp.platform_event(PlatformEvent::Hidden, Timestamp::ZERO)
            .is_none()
    );
    assert_eq!(lp.state(), AppState::Background);
    assert!(
        lp.platform_event(PlatformEvent::Hidden, Timestamp::from_millis(5))
            .is_none(),
        "duplicate hidden"
    );
    let r = lp
        .platform_event(PlatformEvent::Visible, Timestamp::from_millis(5_000))
        .unwrap();
    assert_eq!(
        (r.from, r.wanted_steps, r.catch_up_steps),
        (AppState::Background, 312, 300)
    );
    assert!(
        lp.platform_event(PlatformEvent::Visible, Timestamp::from_millis(5_001))
            .is_none(),
        "duplicate visible"
    );
    // Paused by the player, then hidden and shown: still paused.
    lp.pause(Timestamp::from_millis(6_000)).unwrap();
    assert!(
        lp.platform_event(PlatformEvent::Hidden, Timestamp::from_millis(7_000))
            .is_none()
    );
    assert!(
        lp.platform_event(PlatformEvent::Visible, Timestamp::from_millis(8_000))
            .is_none()
    );
    assert_eq!(lp.state(), AppState::Paused);
}

#[test]
fn frames_while_away_run_nothing_and_time_is_accounted_at_resume() {
    let mut lp = capped_loop();
    lp.background(Timestamp::ZERO).unwrap();
    for _ in 0..10 {
        let r = lp.frame(Nanos::from_millis(16));
        assert!(!r.running);
        assert_eq!(r.steps, 0);
    }
    assert_eq!(lp.sim().0, 0);
    // The ten frames moved the host clock 160 ms; resuming there catches up 10 steps.
    let r = lp.resume(lp.host_time()).unwrap();
    assert_eq!((r.elapsed, r.catch_up_steps), (Nanos::from_millis(160), 10));
    assert_eq!(lp.sim().0, 10);
}

#[test]
fn timestamps_going_backwards_are_zero_length_frames() {
    let mut lp = capped_loop();
    let _ = lp.frame_at(Timestamp::from_millis(100));
    let before = lp.sim().0;
    let r = lp.frame_at(Timestamp::from_millis(50));
    assert_eq!(r.steps, 0);
    assert_eq!(lp.sim().0, before);
    assert_eq!(lp.backwards_frames(), 1);
    // Time resumes from the latest timestamp seen: 116 ms is one step later.
    assert_eq!(lp.frame_at(Timestamp::from_millis(116)).steps, 1);
}
