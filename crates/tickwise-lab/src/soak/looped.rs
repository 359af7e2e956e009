//! The loop side: the sim wrapped to count its steps and forward its drop
//! events, each tick's input as a pure function of the seed, the frames fed
//! and what they did, and the exact check of host time.

use std::marker::PhantomData;
use std::sync::mpsc::SyncSender;

use tickwise::{
    AppState, FixedLoop, InputSource, Nanos, Pcg32, Sim, StateVisitor, Tick, Timestamp,
};

use super::straight::Msg;
use super::{SoakError, Soaked};

/// The loop side's sim: the real one, counting its steps and forwarding every
/// `on_time_dropped` call to the straight side.
pub(super) struct Tracked<S> {
    pub(super) inner: S,
    pub(super) steps: u64,
    pub(super) tx: SyncSender<Msg>,
}

impl<S: Sim> Sim for Tracked<S> {
    type Input = S::Input;

    fn players(&self) -> usize {
        self.inner.players()
    }

    fn step(&mut self, inputs: &[S::Input]) {
        self.inner.step(inputs);
        self.steps += 1;
    }

    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.inner.visit_state(v);
    }

    fn on_time_dropped(&mut self, dropped: Nanos) {
        self.inner.on_time_dropped(dropped);
        // A closed channel means the straight side already failed; the loop
        // side notices at its next checkpoint.
        let _ = self.tx.send(Msg::Dropped {
            tick: self.steps,
            ns: dropped,
        });
    }
}

/// Each tick's input from [`Soaked::input_for`].
pub(super) struct PerTick<S> {
    pub(super) seed: u64,
    pub(super) sim: PhantomData<fn() -> S>,
}

impl<S: Soaked> InputSource<S::Input> for PerTick<S> {
    fn input(&mut self, tick: Tick, _window_end: Timestamp) -> S::Input {
        S::input_for(self.seed, tick.get())
    }
}

/// What the loop side did.
#[derive(Default)]
pub(super) struct LoopStats {
    pub(super) frames: u64,
    pub(super) frame_steps: u64,
    pub(super) capped_frames: u64,
    pub(super) clamped_frames: u64,
    pub(super) pauses: u64,
    pub(super) backgrounds: u64,
    pub(super) catch_up_steps: u64,
    pub(super) drop_events: u64,
    pub(super) checkpoints: u64,
    /// Host time fed, summed independently of the loop's own clock.
    pub(super) host_ns: u128,
}

/// `host·den = tick·num + acc + drift + dropped + clamped·den`, exactly.
pub(super) fn check_time<S: Sim, I: InputSource<S::Input>>(
    lp: &FixedLoop<S, I>,
    stats: &LoopStats,
) -> Result<(), SoakError> {
    let step = lp.clock().config().step();
    let (num, den) = (i128::from(step.numerator()), i128::from(step.denominator()));
    let (acc, drift, dropped) = lp.clock().exact_parts();
    let dropped = i128::try_from(dropped).map_err(|_| SoakError::DroppedOverflow)?;
    let host = i128::from(lp.host_time().as_nanos());
    let clamped = i128::from(lp.clock().clamped_total().as_nanos());
    let lhs = host * den;
    let rhs = i128::from(lp.tick().get()) * num + acc + drift + dropped + clamped * den;
    if lhs != rhs {
        return Err(SoakError::TimeNotConserved {
            tick: lp.tick().get(),
            host_ns: host,
            den,
            host_scaled: lhs,
            accounted: rhs,
        });
    }
    if u128::from(lp.host_time().as_nanos()) != stats.host_ns {
        return Err(SoakError::HostClock {
            clock_ns: lp.host_time().as_nanos(),
            fed_ns: stats.host_ns,
        });
    }
    Ok(())
}

/// Feeds one frame and tallies its report.
pub(super) fn feed<S: Soaked>(
    lp: &mut FixedLoop<Tracked<S>, PerTick<S>>,
    st: &mut LoopStats,
    dt: Nanos,
) {
    let running = lp.state() == AppState::Running;
    let r = lp.frame(dt);
    st.host_ns += u128::from(dt.as_nanos());
    st.frames += u64::from(running);
    st.frame_steps += u64::from(r.steps);
    st.capped_frames += u64::from(r.capped);
    st.clamped_frames += u64::from(r.clamped > Nanos::ZERO);
    st.drop_events += u64::from(r.thrown_away() > Nanos::ZERO);
}

/// A random duration in `lo..=hi` ns.
#[inline]
pub(super) fn between(rng: &mut Pcg32, lo: u64, hi: u64) -> Nanos {
    Nanos::from_nanos(lo + rng.next_u64() % (hi - lo + 1))
}
