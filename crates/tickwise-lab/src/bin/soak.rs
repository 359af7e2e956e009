//! Soak: very long runs of the island and the horde through `FixedLoop`
//! with random frame schedules, checked against a straight run.
//!
//! ```text
//! cargo run --release -p tickwise-lab --bin soak -- [--island-ticks N] [--horde-ticks N]
//!     [--enemies N] [--seed N] [--island-check-every K] [--horde-check-every K]
//!     [--inject-divergence T]
//! ```
//!
//! `--inject-divergence T` is the soak's self-check: the straight run is
//! given another input at tick T (the loop side is not touched), so the two
//! worlds differ from tick T + 1 on, and the soak must report `DIVERGED` at
//! its first checkpoint past T and exit 1. `scripts/soak.sh --quick` runs it
//! for both sims after the real soak: a soak that cannot fail proves nothing.
//!
//! Defaults are the full sizes (10⁹ island ticks, 10⁸ ticks of a 300-enemy
//! horde); `scripts/soak.sh` runs them and CI runs a tiny version.
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
//! Exit status: 0 pass, 1 divergence or counter failure, 2 bad arguments.
//!
//! It lives in the lab crate, not with the sims, because it reads the wall
//! clock to report throughput (the sims crate bans clocks), and because the
//! CLI's release build already compiles everything it needs.

use std::marker::PhantomData;
use std::process::ExitCode;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::{Duration, Instant};

use tickwise::{
    AppState, CatchUpPolicy, ClockConfig, FieldHash, FixedLoop, InputSource, Nanos, Pcg32, Sim,
    StateVisitor, Tick, TickInput, Timestamp,
};
use tickwise_sims::horde::{HordeConfig, HordeWorld};
use tickwise_sims::island::{IslandConfig, IslandWorld};

const ISLAND_CONFIG: &[u8] = tickwise_sims::ISLAND_LOOP_JSON;
const HORDE_CONFIG: &[u8] = tickwise_sims::HORDE_JSON;

/// A sim the soak can drive: it names each tick's input.
trait Soaked: Sim<Input: Send> + Send + 'static {
    /// The input of `tick`, a pure function of `seed` and `tick`.
    fn input_for(seed: u64, tick: u64) -> Self::Input;
    /// Another input than `input`, one that surely changes the state (for
    /// `--inject-divergence`).
    fn perturbed(input: Self::Input) -> Self::Input;
}

/// SplitMix64's finaliser over seed and tick: a well-mixed 64-bit value per tick.
const fn mix(seed: u64, tick: u64) -> u64 {
    let mut z = seed ^ tick.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Soaked for IslandWorld {
    /// `-2..=2`: pushes both ways and holds still.
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

/// What the loop side tells the straight side, in the order it happened.
enum Msg {
    /// The loop called `on_time_dropped(ns)` after its sim had run `tick` steps.
    Dropped { tick: u64, ns: Nanos },
    /// The loop side's sim after `tick` steps.
    Check { tick: u64, fields: Vec<FieldHash> },
}

impl Msg {
    const fn tick(&self) -> u64 {
        match self {
            Msg::Dropped { tick, .. } | Msg::Check { tick, .. } => *tick,
        }
    }
}

/// The loop side's sim: the real one, counting its steps and forwarding every
/// `on_time_dropped` call to the straight side.
struct Tracked<S> {
    inner: S,
    steps: u64,
    tx: SyncSender<Msg>,
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
struct PerTick<S> {
    seed: u64,
    sim: PhantomData<fn() -> S>,
}

impl<S: Soaked> InputSource<S::Input> for PerTick<S> {
    fn input(&mut self, tick: Tick, _window_end: Timestamp) -> S::Input {
        S::input_for(self.seed, tick.get())
    }
}

/// One soak's parameters.
struct Plan {
    name: &'static str,
    ticks: u64,
    check_every: u64,
    seed: u64,
    /// The tick whose input the straight run gets perturbed (the self-check).
    inject_at: Option<u64>,
}

/// What the loop side did.
#[derive(Default)]
struct LoopStats {
    frames: u64,
    frame_steps: u64,
    capped_frames: u64,
    clamped_frames: u64,
    pauses: u64,
    backgrounds: u64,
    catch_up_steps: u64,
    drop_events: u64,
    checkpoints: u64,
    /// Host time fed, summed independently of the loop's own clock.
    host_ns: u128,
}

/// What the straight side did.
struct StraightStats {
    ticks: u64,
    checkpoints: u64,
    drops: u64,
    digest: String,
    busy: Duration,
}

fn straight<S: Soaked>(
    mut sim: S,
    seed: u64,
    inject_at: Option<u64>,
    rx: &Receiver<Msg>,
) -> Result<StraightStats, String> {
    let started = Instant::now();
    let (mut t, mut checkpoints, mut drops) = (0u64, 0u64, 0u64);
    for msg in rx {
        let target = msg.tick();
        if target < t {
            return Err(format!("message for tick {target} after tick {t}"));
        }
        while t < target {
            let input = S::input_for(seed, t);
            if inject_at == Some(t) {
                sim.step(&[S::perturbed(input)]);
            } else {
                sim.step(&[input]);
            }
            t += 1;
        }
        match msg {
            Msg::Dropped { ns, .. } => {
                sim.on_time_dropped(ns);
                drops += 1;
            }
            Msg::Check { fields, .. } => {
                let mine = sim.field_hashes();
                if mine != fields {
                    let differ: Vec<&str> = mine
                        .iter()
                        .zip(&fields)
                        .filter(|(a, b)| a != b)
                        .map(|(a, _)| a.name)
                        .collect();
                    return Err(format!(
                        "DIVERGED at tick {t}: fields {differ:?} differ between the loop and the straight run"
                    ));
                }
                checkpoints += 1;
            }
        }
    }
    Ok(StraightStats {
        ticks: t,
        checkpoints,
        drops,
        digest: sim.digest(),
        busy: started.elapsed(),
    })
}

/// `host·den = tick·num + acc + drift + dropped + clamped·den`, exactly.
fn check_time<S: Sim, I: InputSource<S::Input>>(
    lp: &FixedLoop<S, I>,
    stats: &LoopStats,
) -> Result<(), String> {
    let step = lp.clock().config().step();
    let (num, den) = (i128::from(step.numerator()), i128::from(step.denominator()));
    let (acc, drift, dropped) = lp.clock().exact_parts();
    let dropped = i128::try_from(dropped).map_err(|_| "dropped total beyond i128".to_string())?;
    let host = i128::from(lp.host_time().as_nanos());
    let clamped = i128::from(lp.clock().clamped_total().as_nanos());
    let lhs = host * den;
    let rhs = i128::from(lp.tick().get()) * num + acc + drift + dropped + clamped * den;
    if lhs != rhs {
        return Err(format!(
            "time not conserved at tick {}: host {host} ns × {den} = {lhs}, accounted {rhs}",
            lp.tick()
        ));
    }
    if u128::from(lp.host_time().as_nanos()) != stats.host_ns {
        return Err(format!(
            "host clock {} ns, but {} ns were fed (saturated?)",
            lp.host_time().as_nanos(),
            stats.host_ns
        ));
    }
    Ok(())
}

/// Feeds one frame and tallies its report.
fn feed<S: Soaked>(lp: &mut FixedLoop<Tracked<S>, PerTick<S>>, st: &mut LoopStats, dt: Nanos) {
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
fn between(rng: &mut Pcg32, lo: u64, hi: u64) -> Nanos {
    Nanos::from_nanos(lo + rng.next_u64() % (hi - lo + 1))
}

/// Runs one soak; returns the summary lines or the failure.
fn soak<S: Soaked>(
    plan: &Plan,
    make: impl Fn() -> S,
    clock: ClockConfig,
    first_frame: Nanos,
) -> Result<String, String> {
    let (tx, rx) = sync_channel::<Msg>(4096);
    let (seed, inject_at) = (plan.seed, plan.inject_at);
    let twin = make();
    let worker = std::thread::Builder::new()
        .name(format!("{}-straight", plan.name))
        .spawn(move || straight(twin, seed, inject_at, &rx))
        .map_err(|e| format!("cannot start the straight run's thread: {e}"))?;

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
    let mut next_check = plan.check_every;

    let started = Instant::now();
    // Optionally start the host clock far out (a frame the clamp cuts down),
    // so the run also covers host timestamps near the top of their range.
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
                left.map_err(|e| format!("leaving at tick {}: {e}", lp.tick()))?;
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
                    .map_err(|e| format!("resume at tick {}: {e}", lp.tick()))?;
                if r.dropped != Nanos::ZERO || r.catch_up_steps != r.wanted_steps {
                    return Err(format!("a Full resume dropped time: {r:?}"));
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
            next_check = (lp.tick().get() / plan.check_every + 1) * plan.check_every;
        }
    }
    check_time(&lp, &st)?;
    let end = lp.tick().get();
    let _ = tx.send(Msg::Check {
        tick: end,
        fields: lp.sim().inner.field_hashes(),
    });
    drop(tx);
    let ticks_loop_side = lp.sim().steps;
    let (clock_frames, clock_steps) = (lp.clock().frames(), lp.clock().steps());
    let digest_loop = lp.sim().inner.digest();
    // The loop holds the last sender (inside the wrapped sim): drop it so the
    // straight side sees the end of the stream.
    drop(lp);
    let s = worker
        .join()
        .map_err(|_| "the straight run's thread panicked".to_string())??;

    // Counters: nothing saturated or wrapped.
    let mut problems = Vec::new();
    if s.ticks != end || ticks_loop_side != end {
        problems.push(format!(
            "tick counts differ: loop {end}, wrapped sim {ticks_loop_side}, straight {}",
            s.ticks
        ));
    }
    if clock_frames != st.frames || clock_steps != st.frame_steps {
        problems.push(format!(
            "clock counted {clock_frames} frames and {clock_steps} steps, the soak fed {} and saw {}",
            st.frames, st.frame_steps
        ));
    }
    if st.frame_steps + st.catch_up_steps != end {
        problems.push(format!(
            "steps from frames ({}) + catch-up ({}) != ticks ({end})",
            st.frame_steps, st.catch_up_steps
        ));
    }
    if digest_loop != s.digest {
        problems.push(format!(
            "final digests differ: {digest_loop} vs {}",
            s.digest
        ));
    }
    if s.drops != st.drop_events {
        problems.push(format!(
            "{} frames threw time away but the straight run applied {} drops",
            st.drop_events, s.drops
        ));
    }
    if s.checkpoints != st.checkpoints + 1 {
        problems.push(format!(
            "{} checkpoints sent, {} compared",
            st.checkpoints + 1,
            s.checkpoints
        ));
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }

    let wall = started.elapsed();
    let per_sec = u128::from(end) * 1_000_000_000 / wall.as_nanos().max(1);
    Ok(format!(
        "{name}: PASS {end} ticks in {:.1?} ({per_sec} ticks/s, {} ns/tick; the straight run on its own thread took {:.1?})\n  \
         {} frames ({} steps, {} capped, {} clamped), {} pauses + {} backgrounds ({} catch-up steps), \
         {} drop events, {} checkpoints compared\n  \
         host clock {} ns ({} days), final digest {digest_loop}",
        wall,
        wall.as_nanos() / u128::from(end.max(1)),
        s.busy,
        st.frames,
        st.frame_steps,
        st.capped_frames,
        st.clamped_frames,
        st.pauses,
        st.backgrounds,
        st.catch_up_steps,
        s.drops,
        s.checkpoints,
        st.host_ns,
        st.host_ns / 86_400_000_000_000,
        name = plan.name,
    ))
}

fn arg_value(args: &[String], flag: &str, default: u64) -> Result<u64, String> {
    match args.iter().position(|a| a == flag) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.replace('_', "").parse().ok())
            .ok_or_else(|| format!("{flag} needs a non-negative integer")),
    }
}

fn run(args: &[String]) -> Result<Vec<String>, (u8, String)> {
    const FLAGS: [&str; 7] = [
        "--island-ticks",
        "--horde-ticks",
        "--enemies",
        "--seed",
        "--island-check-every",
        "--horde-check-every",
        "--inject-divergence",
    ];
    for (i, a) in args.iter().enumerate() {
        if i % 2 == 0 && !FLAGS.contains(&a.as_str()) {
            return Err((
                2,
                format!("unknown argument {a:?} (flags: {})", FLAGS.join(", ")),
            ));
        }
    }
    let usage = |e: String| (2u8, e);
    let island_ticks = arg_value(args, "--island-ticks", 1_000_000_000).map_err(usage)?;
    let horde_ticks = arg_value(args, "--horde-ticks", 100_000_000).map_err(usage)?;
    let enemies = arg_value(args, "--enemies", 300).map_err(usage)?;
    let seed = arg_value(args, "--seed", 13).map_err(usage)?;
    let island_every = arg_value(args, "--island-check-every", 1_000_000)
        .map_err(usage)?
        .max(1);
    let horde_every = arg_value(args, "--horde-check-every", 10_000)
        .map_err(usage)?
        .max(1);
    let inject_at = if args.iter().any(|a| a == "--inject-divergence") {
        Some(arg_value(args, "--inject-divergence", 0).map_err(usage)?)
    } else {
        None
    };

    let mut out = Vec::new();
    let fail = |e: String| (1u8, e);
    if island_ticks > 0 {
        let cfg = IslandConfig::from_json(ISLAND_CONFIG).map_err(|e| (2, e.to_string()))?;
        // The checked-in config has no frame clamp; add one so that hitches
        // exercise the clamp as well as the step cap.
        let clock = cfg.clock_config().with_max_frame(Nanos::from_millis(250));
        let plan = Plan {
            name: "island",
            ticks: island_ticks,
            check_every: island_every,
            seed,
            inject_at,
        };
        // A century-long first frame: the host clock starts near a sixth of
        // its range (u64 ns is 584 years), the clamp keeps 250 ms of it.
        let century = Nanos::from_secs(100 * 365 * 86_400);
        out.push(soak(&plan, || IslandWorld::new(&cfg), clock, century).map_err(fail)?);
    }
    if horde_ticks > 0 {
        let cfg = HordeConfig::from_json(HORDE_CONFIG)
            .and_then(|c| c.with_enemies(enemies))
            .map_err(|e| (2, e.to_string()))?;
        // 30 Hz is a rational step (33 333 333⅓ ns): exercises the exact
        // accounting; the jitter guard adds its borrowed drift to it.
        let clock = cfg
            .clock_config()
            .with_jitter_tolerance(Nanos::from_micros(500))
            .map_err(|e| (2, e.to_string()))?;
        let plan = Plan {
            name: "horde",
            ticks: horde_ticks,
            check_every: horde_every,
            seed,
            inject_at,
        };
        out.push(soak(&plan, || HordeWorld::new(&cfg), clock, Nanos::ZERO).map_err(fail)?);
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(lines) => {
            for l in lines {
                println!("{l}");
            }
            println!("soak: PASS");
            ExitCode::SUCCESS
        }
        Err((code, e)) => {
            eprintln!("soak: FAIL: {e}");
            ExitCode::from(code)
        }
    }
}
