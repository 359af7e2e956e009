//! Soak: very long runs of a sim through [`FixedLoop`] with random frame
//! schedules, checked against a straight run of the same sim
//! (`cargo run --release -p tickwise-lab --bin soak`, `scripts/soak.sh`).
//!
//! [`soak`] runs one [`SoakPlan`] and returns a [`SoakReport`], or the
//! first [`SoakError`]: a divergence names the tick and the fields that
//! differ. With [`SoakPlan::inject_at`] the straight run gets another input
//! at that tick, so a working soak must report
//! [`SoakError::Diverged`] past it: a soak that cannot fail proves nothing.
//!
//! **Why the comparison is exact.** The loop side feeds a `FixedLoop` random
//! frames (zero-length, shorter than a step, about one step, several steps,
//! huge ones that hit the frame clamp and the step cap and so throw time
//! away) and pauses and backgrounds whose resume catches up fully. The
//! straight side calls `Sim::step` in a plain loop. Two things make the two
//! runs the same world tick for tick, whatever the schedule:
//!
//! 1. Every tick's input is a pure function of the seed and the tick number,
//!    so it does not matter which frame (or catch-up) ran a tick.
//! 2. Time thrown away reaches the sim through `Sim::on_time_dropped` (the
//!    island keeps the total in its state). The loop side's sim is wrapped so
//!    that every such call is forwarded, with the number of steps the sim had
//!    run at that moment, to the straight side, which applies it at the same
//!    tick. Pauses and backgrounds use the `Full` catch-up policy, so a resume
//!    drops nothing: every nanosecond is a step, the carried remainder, or
//!    a frame's clamp or cap.
//!
//! The straight side runs on a second thread, fed through a bounded channel:
//! the drop events and, every K ticks (at the first frame end past each
//! multiple of K), the loop side's per-field hashes, which it compares with
//! its own. At each of those checkpoints the loop side also checks that host
//! time is conserved exactly, in the clock's own units (1/den ns):
//!
//! ```text
//! host_time·den = tick·num + accumulator + jitter drift + dropped + clamped·den
//! ```
//!
//! and at the end that no counter saturated or wrapped (ticks, frames,
//! clock steps, the host clock against the soak's own 128-bit sum).
//!
//! It lives in the lab crate, not with the sims, because it reads the wall
//! clock to report throughput (the sims crate bans clocks).

use core::fmt;
use std::marker::PhantomData;
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use tickwise::{CatchUpPolicy, ClockConfig, FixedLoop, Nanos, Pcg32, Sim, TickInput};
use tickwise_sims::horde::HordeWorld;
use tickwise_sims::island::IslandWorld;

mod error;
mod looped;
mod straight;

pub use error::{CounterFault, SoakError};

use looped::{LoopStats, PerTick, Tracked, between, check_time, feed};
use straight::{Msg, straight};

/// A sim the soak can drive: it names each tick's input.
pub trait Soaked: Sim<Input: Send> + Send + 'static {
    /// The input of `tick`, a pure function of `seed` and `tick`.
    fn input_for(seed: u64, tick: u64) -> Self::Input;
    /// Another input than `input`, one that surely changes the state (for
    /// [`SoakPlan::inject_at`]).
    fn perturbed(input: Self::Input) -> Self::Input;
}

/// SplitMix64's finaliser over seed and tick: a well-mixed 64-bit value per tick.
#[inline]
const fn mix(seed: u64, tick: u64) -> u64 {
    let mut z = seed ^ tick.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Soaked for IslandWorld {
    /// `-2..=2`: pushes both ways and holds still.
    #[inline]
    fn input_for(seed: u64, tick: u64) -> i32 {
        i32::try_from(mix(seed, tick) % 5).unwrap_or(0) - 2
    }

    /// A push of 2¹⁴ more: the velocity (and then the position) changes by
    /// far more than friction can round away.
    fn perturbed(input: i32) -> i32 {
        input ^ 0x4000
    }
}

impl Soaked for HordeWorld {
    /// A stick in any direction seven ticks in eight (the full `i16` range,
    /// `-32768` included), otherwise the first four buttons, which steer only
    /// when the stick is centred.
    #[inline]
    fn input_for(seed: u64, tick: u64) -> TickInput {
        let h = mix(seed, tick);
        let mut input = TickInput::default();
        if h & 7 == 0 {
            let bits = (h >> 8) & 0xF;
            input.held = tickwise::Buttons::from_bits(bits);
        } else {
            let [_, _, x0, x1, y0, y1, _, _] = h.to_le_bytes();
            input.axes[0] = i16::from_le_bytes([x0, x1]);
            input.axes[1] = i16::from_le_bytes([y0, y1]);
        }
        input
    }

    /// The stick pushed another way (or, from centred, off-centre): the
    /// player moves elsewhere.
    fn perturbed(mut input: TickInput) -> TickInput {
        input.axes[0] ^= 0x4000;
        input
    }
}

/// One soak: which sim (its name, for the report), how long, how often the
/// two runs are compared, and the seed of the inputs and of the frame
/// schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoakPlan {
    /// The sim's name in the report (`island`, `horde`).
    pub name: &'static str,
    /// Ticks to run.
    pub ticks: u64,
    /// Compare the two runs at the first frame end past every multiple of
    /// this many ticks (at least 1), and at the end.
    pub check_every: u64,
    /// Seeds every tick's input and the frame schedule.
    pub seed: u64,
    /// The tick whose input the straight run gets perturbed
    /// ([`Soaked::perturbed`]): the self-check, which must end in
    /// [`SoakError::Diverged`].
    pub inject_at: Option<u64>,
}

/// What a passing soak did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoakReport {
    /// [`SoakPlan::name`].
    pub name: &'static str,
    /// Ticks run (both sides).
    pub ticks: u64,
    /// Wall time of the whole soak.
    pub wall: Duration,
    /// Wall time the straight run's thread took.
    pub straight_wall: Duration,
    /// Frames fed while running.
    pub frames: u64,
    /// Steps those frames ran.
    pub frame_steps: u64,
    /// Frames that hit the step cap.
    pub capped_frames: u64,
    /// Frames the frame clamp cut.
    pub clamped_frames: u64,
    /// Player pauses.
    pub pauses: u64,
    /// Backgrounds.
    pub backgrounds: u64,
    /// Steps run by resumes.
    pub catch_up_steps: u64,
    /// Calls to `Sim::on_time_dropped` the straight run applied.
    pub drops: u64,
    /// Checkpoints compared.
    pub checkpoints: u64,
    /// Host time fed, in ns.
    pub host_ns: u128,
    /// The final digest (the same on both sides).
    pub digest: String,
}

impl fmt::Display for SoakReport {
    /// Three lines: throughput, what the frames did, the host clock and
    /// the final digest.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per_sec = u128::from(self.ticks) * 1_000_000_000 / self.wall.as_nanos().max(1);
        write!(
            f,
            "{name}: PASS {end} ticks in {:.1?} ({per_sec} ticks/s, {} ns/tick; the straight run on its own thread took {:.1?})\n  \
             {} frames ({} steps, {} capped, {} clamped), {} pauses + {} backgrounds ({} catch-up steps), \
             {} drop events, {} checkpoints compared\n  \
             host clock {} ns ({} days), final digest {}",
            self.wall,
            self.wall.as_nanos() / u128::from(self.ticks.max(1)),
            self.straight_wall,
            self.frames,
            self.frame_steps,
            self.capped_frames,
            self.clamped_frames,
            self.pauses,
            self.backgrounds,
            self.catch_up_steps,
            self.drops,
            self.checkpoints,
            self.host_ns,
            self.host_ns / 86_400_000_000_000,
            self.digest,
            name = self.name,
            end = self.ticks,
        )
    }
}

/// Runs one soak of the sim `make` builds (called twice: the loop side's
/// sim and the straight run's), with the loop on `clock` and the `Full`
/// catch-up policy; a `first_frame` above zero starts the host clock that
/// far out (the frame clamp cuts it down), so the run also covers host
/// timestamps near the top of their range.
///
/// # Errors
///
/// The first [`SoakError`]: a divergence at a checkpoint, time not
/// conserved, a refused lifecycle call, a resume that dropped time, or
/// counters that disagree at the end.
pub fn soak<S: Soaked>(
    plan: &SoakPlan,
    make: impl Fn() -> S,
    clock: ClockConfig,
    first_frame: Nanos,
) -> Result<SoakReport, SoakError> {
    let (tx, rx) = sync_channel::<Msg>(4096);
    let (seed, inject_at) = (plan.seed, plan.inject_at);
    let check_every = plan.check_every.max(1);
    let twin = make();
    let worker = std::thread::Builder::new()
        .name(format!("{}-straight", plan.name))
        .spawn(move || straight(twin, seed, inject_at, &rx))
        .map_err(SoakError::Spawn)?;

    let sim = Tracked {
        inner: make(),
        steps: 0,
        tx: tx.clone(),
    };
    let inputs = PerTick::<S> {
        seed,
        sim: PhantomData,
    };
    let mut lp = FixedLoop::new(sim, inputs, clock, CatchUpPolicy::Full);
    let step = clock.step();
    let step_ns = step.numerator() / step.denominator();
    let cap = u64::from(clock.max_steps_per_frame().get());
    let mut rng = Pcg32::new(seed, 0x50AC);
    let mut st = LoopStats::default();
    let mut next_check = check_every;

    let started = Instant::now();
    if first_frame > Nanos::ZERO {
        feed(&mut lp, &mut st, first_frame);
    }
    let max_frame = clock.max_frame().unwrap_or(Nanos::from_secs(60));
    while lp.tick().get() < plan.ticks {
        let roll = rng.next_u32() % 1000;
        match roll {
            // A zero-length frame (two callbacks in one vsync, a stalled timer).
            0..100 => feed(&mut lp, &mut st, Nanos::ZERO),
            // Shorter than a step: usually no step, the remainder accumulates.
            100..400 => feed(&mut lp, &mut st, between(&mut rng, 1, step_ns)),
            // About one step, give or take 2 ms of jitter.
            400..750 => {
                let j = 2_000_000.min(step_ns - 1);
                feed(
                    &mut lp,
                    &mut st,
                    between(&mut rng, step_ns - j, step_ns + j),
                );
            }
            // Several steps, up to the cap.
            750..940 => {
                let k = 2 + rng.next_u64() % cap.max(1);
                feed(
                    &mut lp,
                    &mut st,
                    between(&mut rng, (k - 1) * step_ns, k * step_ns),
                );
            }
            // A hitch: past the clamp and the cap, so time is thrown away.
            940..975 => {
                let hi = max_frame
                    .as_nanos()
                    .saturating_mul(4)
                    .max(cap * step_ns * 4);
                feed(
                    &mut lp,
                    &mut st,
                    between(&mut rng, cap * step_ns + step_ns, hi),
                );
            }
            // Pause (or background), a few frames while away, resume later;
            // the Full policy catches every step up.
            _ => {
                let background = roll >= 995;
                let now = lp.host_time();
                let left = if background {
                    lp.background(now)
                } else {
                    lp.pause(now)
                };
                left.map_err(|error| SoakError::Lifecycle {
                    action: "leaving",
                    tick: lp.tick().get(),
                    error,
                })?;
                st.pauses += u64::from(!background);
                st.backgrounds += u64::from(background);
                for _ in 0..rng.next_u32() % 4 {
                    feed(&mut lp, &mut st, between(&mut rng, 0, 100_000_000));
                }
                let away_max = if background {
                    5_000_000_000
                } else {
                    1_000_000_000
                };
                let away = between(&mut rng, 0, away_max);
                st.host_ns += u128::from(away.as_nanos());
                let r = lp
                    .resume(lp.host_time().saturating_add(away))
                    .map_err(|error| SoakError::Lifecycle {
                        action: "resume",
                        tick: lp.tick().get(),
                        error,
                    })?;
                if r.dropped != Nanos::ZERO || r.catch_up_steps != r.wanted_steps {
                    return Err(SoakError::ResumeDropped(r));
                }
                st.catch_up_steps += r.catch_up_steps;
            }
        }
        if lp.tick().get() >= next_check {
            check_time(&lp, &st)?;
            let msg = Msg::Check {
                tick: lp.tick().get(),
                fields: lp.sim().inner.field_hashes(),
            };
            if tx.send(msg).is_err() {
                break; // the straight side stopped: its error is reported below
            }
            st.checkpoints += 1;
            next_check = (lp.tick().get() / check_every + 1) * check_every;
        }
    }
    check_time(&lp, &st)?;
    let end = lp.tick().get();
    let _ = tx.send(Msg::Check {
        tick: end,
        fields: lp.sim().inner.field_hashes(),
    });
    drop(tx);
    let wrapped = lp.sim().steps;
    let (clock_frames, clock_steps) = (lp.clock().frames(), lp.clock().steps());
    let digest = lp.sim().inner.digest();
    // The loop holds the last sender (inside the wrapped sim): drop it so the
    // straight side sees the end of the stream.
    drop(lp);
    let s = worker.join().map_err(|_| SoakError::StraightPanicked)??;

    // Counters: nothing saturated or wrapped.
    let mut faults = Vec::new();
    if s.ticks != end || wrapped != end {
        faults.push(CounterFault::Ticks {
            looped: end,
            wrapped,
            straight: s.ticks,
        });
    }
    if clock_frames != st.frames || clock_steps != st.frame_steps {
        faults.push(CounterFault::Clock {
            frames: clock_frames,
            steps: clock_steps,
            fed: st.frames,
            seen: st.frame_steps,
        });
    }
    if st.frame_steps + st.catch_up_steps != end {
        faults.push(CounterFault::Steps {
            frames: st.frame_steps,
            catch_up: st.catch_up_steps,
            ticks: end,
        });
    }
    if digest != s.digest {
        faults.push(CounterFault::Digests {
            looped: digest.clone(),
            straight: s.digest.clone(),
        });
    }
    if s.drops != st.drop_events {
        faults.push(CounterFault::Drops {
            events: st.drop_events,
            applied: s.drops,
        });
    }
    if s.checkpoints != st.checkpoints + 1 {
        faults.push(CounterFault::Checkpoints {
            sent: st.checkpoints + 1,
            compared: s.checkpoints,
        });
    }
    if !faults.is_empty() {
        return Err(SoakError::Counters(faults));
    }
    Ok(SoakReport {
        name: plan.name,
        ticks: end,
        wall: started.elapsed(),
        straight_wall: s.busy,
        frames: st.frames,
        frame_steps: st.frame_steps,
        capped_frames: st.capped_frames,
        clamped_frames: st.clamped_frames,
        pauses: st.pauses,
        backgrounds: st.backgrounds,
        catch_up_steps: st.catch_up_steps,
        drops: s.drops,
        checkpoints: s.checkpoints,
        host_ns: st.host_ns,
        digest,
    })
}

#[cfg(test)]
mod tests {
    use tickwise_sims::island::IslandConfig;

    use super::*;

    fn island_soak(
        ticks: u64,
        check_every: u64,
        inject_at: Option<u64>,
    ) -> Result<SoakReport, SoakError> {
        let cfg = IslandConfig::from_json(tickwise_sims::ISLAND_LOOP_JSON).expect("shipped config");
        let clock = cfg.clock_config().with_max_frame(Nanos::from_millis(250));
        let plan = SoakPlan {
            name: "island",
            ticks,
            check_every,
            seed: 7,
            inject_at,
        };
        soak(&plan, || IslandWorld::new(&cfg), clock, Nanos::ZERO)
    }

    /// A short soak passes, compares at least one checkpoint per
    /// `check_every` ticks (and the end), and its counters add up: every
    /// tick ran in a frame or a catch-up.
    #[test]
    fn a_short_island_soak_passes() {
        let r = island_soak(20_000, 1_000, None).expect("a soak of the shipped island passes");
        assert!(r.ticks >= 20_000, "{r}");
        assert!(r.checkpoints > 20, "{r}");
        assert_eq!(r.frame_steps + r.catch_up_steps, r.ticks, "{r}");
        assert!(r.pauses + r.backgrounds > 0, "the schedule pauses: {r}");
        assert!(r.to_string().starts_with("island: PASS "), "{r}");
    }

    /// The self-check: the straight run's input changed at tick 1234 makes
    /// the worlds differ from tick 1235 on, so the first checkpoint past
    /// 1300 (the first multiple of 100 the loop reaches after it, give or
    /// take one frame or one resume's catch-up) reports the divergence.
    #[test]
    fn an_injected_divergence_is_caught_at_the_next_checkpoint() {
        match island_soak(3_000, 100, Some(1_234)) {
            Err(SoakError::Diverged { tick, fields }) => {
                assert!((1_300..1_600).contains(&tick), "diverged at {tick}");
                assert!(!fields.is_empty());
                let e = SoakError::Diverged { tick, fields };
                assert!(
                    e.to_string()
                        .starts_with(&format!("DIVERGED at tick {tick}: fields "))
                );
            }
            other => panic!("expected a divergence, got {other:?}"),
        }
    }
}
