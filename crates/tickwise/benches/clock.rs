//! Cost of the accumulator itself: one frame that owes one step, and one that owes none.
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use tickwise::{Clock, ClockConfig, Nanos, StepLength};

fn clock(c: &mut Criterion) {
    let step = StepLength::from_hz(60).unwrap();
    let mut g = c.benchmark_group("clock");
    g.bench_function("advance_60hz_frame", |b| {
        let mut clock = Clock::new(ClockConfig::new(step));
        b.iter(|| {
            clock
                .advance(black_box(Nanos::from_nanos(16_666_667)))
                .steps
        });
    });
    g.bench_function("advance_idle_frame", |b| {
        let mut clock = Clock::new(ClockConfig::new(step));
        b.iter(|| clock.advance(black_box(Nanos::ZERO)).steps);
    });
    g.finish();
}

criterion_group!(benches, clock);
criterion_main!(benches);
