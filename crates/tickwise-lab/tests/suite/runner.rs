//! The real-clock runner, driven by a fake clock: no test here reads the
//! wall clock or depends on how fast the machine is.

use core::num::NonZeroU32;

use tickwise::{
    AppState, CatchUpPolicy, ClockConfig, FixedLoop, Nanos, StepLength, TickInputs, Timestamp,
};
use tickwise_lab::cpu::{parse_schedstat, parse_stat_ticks};
use tickwise_lab::runner::{
    FrameCap, Host, Hosted, RunReport, RunnerConfig, RunnerError, RunnerEvent, run, run_lab_world,
};
use tickwise_lab::world::LabWorld;

/// A fake machine: every clock read costs `per_call` ns of busy time, a
/// sleep takes the asked time plus `oversleep` and costs no CPU.
#[derive(Debug)]
struct FakeHost {
    now: u64,
    per_call: u64,
    oversleep: u64,
    busy: u64,
    sleeps: u64,
}

impl FakeHost {
    fn new(per_call: u64, oversleep: u64) -> FakeHost {
        FakeHost {
            now: 1_000_000, // an arbitrary origin: the runner works relative to its start
            per_call,
            oversleep,
            busy: 0,
            sleeps: 0,
        }
    }
}

impl Host for FakeHost {
    fn now(&mut self) -> Timestamp {
        self.now += self.per_call;
        self.busy += self.per_call;
        Timestamp::from_nanos(self.now)
    }
    fn sleep(&mut self, d: Nanos) {
        self.now += d.as_nanos() + self.oversleep;
        self.sleeps += 1;
    }
    fn cpu_time(&mut self) -> Option<Nanos> {
        Some(Nanos::from_nanos(self.busy))
    }
}

fn hosted(hz: u64, policy: CatchUpPolicy) -> Hosted<LabWorld, TickInputs<()>> {
    let step = StepLength::from_hz(hz).unwrap();
    Hosted::new(FixedLoop::new(
        LabWorld::new(step, u64::MAX),
        TickInputs::new(Vec::new()),
        ClockConfig::new(step),
        policy,
    ))
}

fn capped(fps: u32) -> FrameCap {
    FrameCap::Fps {
        fps: NonZeroU32::new(fps).unwrap(),
        spin: Nanos::from_micros(500),
    }
}

fn assert_ticks_ok(r: &RunReport) {
    assert!(
        r.ticks_ok(),
        "ticks {} expected {}",
        r.ticks,
        r.expected_ticks
    );
}

fn run_fake(host: &mut FakeHost, hz: u64, cfg: &RunnerConfig) -> (RunReport, u64) {
    let mut h = hosted(hz, CatchUpPolicy::Full);
    let mut renders = 0u64;
    let r = run(host, &mut h, cfg, |_, _| renders += 1);
    (r, renders)
}

#[test]
fn capped_run_paces_frames_and_counts_ticks() {
    // 30 Hz ticks, 60 fps cap, 1 s, sleeps overshoot by 200 us (inside the
    // 500 us spin window) and each clock read costs 1 us.
    let mut host = FakeHost::new(1_000, 200_000);
    let cfg = RunnerConfig::new(Nanos::from_secs(1), capped(60)).unwrap();
    let (r, renders) = run_fake(&mut host, 30, &cfg);
    assert_eq!(renders, r.frames);
    // Frame k targets floor(k * 1e9 / 60); the run ends at the first frame at
    // or after 1 s: frames 0..=60.
    assert_eq!(r.frames, 61);
    let p = r.frame_times.percentiles().unwrap();
    // Every interval is the 16.667 ms period to within the 1 us clock step.
    assert!(p.p50.abs_diff(16_666_667) <= 2_000, "{p:?}");
    assert!(p.max.abs_diff(16_666_667) <= 2_000, "{p:?}");
    assert_ticks_ok(&r);
    assert_eq!(r.ticks, 30);
    assert!(!r.truncated);
    // Mostly asleep: CPU is the spin window plus clock reads, under 10 %.
    assert!(r.cpu_share().unwrap() < 0.1, "{:?}", r.cpu_share());
}

#[test]
fn uncapped_run_is_a_busy_loop() {
    let mut host = FakeHost::new(10_000, 0);
    let cfg = RunnerConfig::new(Nanos::from_millis(500), FrameCap::Uncapped).unwrap();
    let (r, _) = run_fake(&mut host, 60, &cfg);
    // One clock read per frame at 10 us each: about 50 000 frames.
    assert!(r.frames >= 49_000, "{}", r.frames);
    assert_eq!(host.sleeps, 0);
    assert!(r.cpu_share().unwrap() > 0.99, "{:?}", r.cpu_share());
    assert!(r.ticks_ok());
    assert_eq!(r.ticks, 30);
    assert_eq!(r.frame_times.percentiles().unwrap().p50, 10_000);
}

#[test]
fn capped_uses_less_cpu_than_uncapped_for_the_same_ticks() {
    let cfg_c = RunnerConfig::new(Nanos::from_secs(1), capped(60)).unwrap();
    let cfg_u = RunnerConfig::new(Nanos::from_secs(1), FrameCap::Uncapped).unwrap();
    let (c, _) = run_fake(&mut FakeHost::new(1_000, 50_000), 60, &cfg_c);
    let (u, _) = run_fake(&mut FakeHost::new(1_000, 50_000), 60, &cfg_u);
    assert_eq!(c.ticks, u.ticks);
    assert!(u.cpu.unwrap().as_nanos() > 10 * c.cpu.unwrap().as_nanos());
}

#[test]
fn late_frames_resynchronise_instead_of_bursting() {
    // Sleeps overshoot by 40 ms (a coarse timer): frames arrive late, and the
    // runner skips the missed targets rather than drawing several at once.
    let mut host = FakeHost::new(1_000, 40_000_000);
    let cfg = RunnerConfig::new(Nanos::from_secs(1), capped(60)).unwrap();
    let (r, _) = run_fake(&mut host, 60, &cfg);
    let p = r.frame_times.percentiles().unwrap();
    assert!(p.p50 > 40_000_000, "{p:?}");
    assert!(r.frame_times.min().unwrap() > 16_000_000, "no bursts");
    assert!(r.ticks_ok());
}

#[test]
fn pause_keeps_drawing_and_resume_accounts_the_time() {
    let mut host = FakeHost::new(1_000, 0);
    let cfg = RunnerConfig::new(Nanos::from_secs(1), capped(60))
        .unwrap()
        .with_event(Nanos::from_millis(300), RunnerEvent::Pause)
        .with_event(Nanos::from_millis(500), RunnerEvent::Resume);
    let (r, _) = run_fake(&mut host, 60, &cfg);
    assert_eq!(r.frames, 61, "paused frames are still drawn");
    assert_eq!(r.resumes.len(), 1);
    let resume = r.resumes[0];
    assert_eq!(resume.from, AppState::Paused);
    // About 200 ms away: 12 steps of 16.67 ms, caught up in full.
    assert!(resume.elapsed.as_nanos().abs_diff(200_000_000) < 17_000_000);
    assert_eq!(resume.catch_up_steps, resume.wanted_steps);
    assert_ticks_ok(&r);
    assert_eq!(r.ticks, 60);
}

#[test]
fn hidden_window_draws_nothing_and_catches_up_on_return() {
    let mut host = FakeHost::new(1_000, 0);
    let cfg = RunnerConfig::new(Nanos::from_secs(1), capped(60))
        .unwrap()
        .with_event(Nanos::from_millis(200), RunnerEvent::Hidden)
        .with_event(Nanos::from_millis(700), RunnerEvent::Visible);
    let (r, _) = run_fake(&mut host, 60, &cfg);
    // 0.5 s of 1 s hidden: about half the frames.
    assert!((28..=34).contains(&r.frames), "{}", r.frames);
    assert!(
        r.hidden.as_nanos().abs_diff(500_000_000) < 20_000_000,
        "{:?}",
        r.hidden
    );
    assert_eq!(r.resumes.len(), 1);
    assert_eq!(r.resumes[0].from, AppState::Background);
    // The hidden spell is not a frame time.
    assert!(r.frame_times.max().unwrap() < 20_000_000);
    assert_ticks_ok(&r);
    assert_eq!(r.ticks, 60);
}

#[test]
fn refused_events_are_counted_not_fatal() {
    let mut host = FakeHost::new(1_000, 0);
    let cfg = RunnerConfig::new(Nanos::from_millis(200), capped(60))
        .unwrap()
        .with_event(Nanos::from_millis(50), RunnerEvent::Resume)
        .with_event(Nanos::from_millis(60), RunnerEvent::Visible);
    let (r, _) = run_fake(&mut host, 60, &cfg);
    assert_eq!(r.refused_events, 2);
    assert!(r.ticks_ok());
}

#[test]
fn a_stuck_clock_cannot_hang_the_runner() {
    // A clock that never advances: the frame limit stops the run.
    let mut host = FakeHost::new(0, 0);
    let cfg = RunnerConfig::new(Nanos::from_secs(1), FrameCap::Uncapped)
        .unwrap()
        .with_max_frames(1_000);
    let (r, _) = run_fake(&mut host, 60, &cfg);
    assert!(r.truncated);
    assert_eq!(r.frames, 1_000);
}

#[test]
fn runner_config_is_validated() {
    assert_eq!(
        RunnerConfig::new(Nanos::ZERO, FrameCap::Uncapped),
        Err(RunnerError::Duration(Nanos::ZERO))
    );
    assert!(RunnerConfig::new(Nanos::from_secs(3_601), FrameCap::Uncapped).is_err());
    let spin = FrameCap::Fps {
        fps: NonZeroU32::new(60).unwrap(),
        spin: Nanos::from_secs(1),
    };
    assert_eq!(
        RunnerConfig::new(Nanos::from_secs(1), spin),
        Err(RunnerError::Spin(Nanos::from_secs(1)))
    );
}

#[test]
fn hosted_mode_is_one_call_per_platform_frame() {
    // requestAnimationFrame-style timestamps: 144 Hz frames over 60 Hz ticks.
    let mut h = hosted(60, CatchUpPolicy::Full);
    let mut steps = 0;
    for k in 1..=144u64 {
        steps += h
            .frame(Timestamp::from_nanos(k * 1_000_000_000 / 144))
            .steps;
    }
    assert_eq!(steps, 60);
    // A timestamp going backwards is a zero-length frame, counted.
    let r = h.frame(Timestamp::from_millis(500));
    assert_eq!(r.steps, 0);
    assert_eq!(h.backwards_frames(), 1);
    // Interpolation snapshots follow the loop: the runner is 60 ticks * 10 px.
    assert_eq!(*h.presenter().current(), 600_000_000);
}

#[test]
fn proc_parsers_on_known_lines() {
    assert_eq!(
        parse_schedstat("123456789 1000 5\n"),
        Some(Nanos::from_nanos(123_456_789))
    );
    assert_eq!(parse_schedstat(""), None);
    assert_eq!(parse_schedstat("x 1 2"), None);
    // Field 2 may contain spaces and parentheses; utime and stime are fields
    // 14 and 15: 250 and 37 here.
    let stat = "42 (a) b) c) R 1 42 42 0 -1 4194304 10 0 0 0 250 37 0 0 20 0 1 0 5 0 0";
    assert_eq!(parse_stat_ticks(stat), Some(287));
    assert_eq!(parse_stat_ticks("42 (short) R 1 2"), None);
    assert_eq!(parse_stat_ticks("no parenthesis"), None);
}

#[test]
fn the_lab_world_run_keeps_time_and_drops_a_jitter_pause() {
    // What `tickwise run` measures, on the fake clock: 1 s at 60 Hz, capped
    // to 60 fps, is 60 ticks.
    let step = StepLength::from_hz(60).unwrap();
    let mut host = FakeHost::new(1_000, 0);
    let cfg = RunnerConfig::new(Nanos::from_secs(1), capped(60)).unwrap();
    let r = run_lab_world(&mut host, step, &cfg);
    assert_ticks_ok(&r);
    assert_eq!(r.ticks, 60);
    // A pause of about one frame is under the resume rules' 32 ms: all of
    // it is dropped as jitter (the `full` policy would catch it up).
    let mut host = FakeHost::new(1_000, 0);
    let cfg = RunnerConfig::new(Nanos::from_secs(1), capped(60))
        .unwrap()
        .with_event(Nanos::from_millis(300), RunnerEvent::Pause)
        .with_event(Nanos::from_millis(310), RunnerEvent::Resume);
    let r = run_lab_world(&mut host, step, &cfg);
    assert_eq!(r.resumes.len(), 1);
    let resume = r.resumes[0];
    assert!(resume.elapsed > Nanos::ZERO, "{resume:?}");
    assert!(resume.elapsed < Nanos::from_millis(32), "{resume:?}");
    assert_eq!(resume.catch_up_steps, 0, "{resume:?}");
    assert_eq!(resume.dropped, resume.sim_elapsed, "{resume:?}");
}
