//! Running the matrix: every strategy on every machine, measured.
//!
//! One *cell* runs one [`Strategy`] on one simulated [`Profile`] for the
//! lab's length of real time. Each frame the loop reads the machine's clock,
//! runs its updates, and draws the runner; the machine then charges the
//! frame's work and starts the next frame at a vsync. The cell records what
//! the loop experiment measures (real time, sim time, updates, alpha, frame-time
//! percentiles) plus steps per frame, thrown-away time, on-screen error and
//! the world's state at a probe sim time.
//!
//! Work is bounded: a run stops at its length in real time, every update
//! costs simulated real time, and a hard cap on frames and updates per cell
//! ends any run that would still exceed them (reported as `truncated`).

use tickwise::{NANOS_PER_SEC, Nanos};

use crate::machine::{Machine, Profile};
use crate::stats::{Percentiles, mean, nearest_rank, std_dev};
use crate::strategy::{LoopUnderTest, Strategy};
use crate::world::{ProbeReading, RUNNER_SPEED_PX_PER_S};

mod settings;

pub use settings::{LabError, LabSettings, MAX_SECONDS, MAX_TICK_HZ, MIN_RUN_STEPS, min_seconds};

/// The pass condition's tolerance on sim seconds per real second: 1 %.
pub const RATE_TOLERANCE: f64 = 0.01;
/// Spiral: the longest frame of a run's second half exceeds this many times
/// the longest of its first half.
pub const SPIRAL_GROWTH: f64 = 1.5;
/// On-screen error statistics skip frames that start before this (100 ms).
pub const ERROR_WARMUP_NS: u64 = 100_000_000;
/// One frame as the lab saw it (kept for the charts).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The true frame start (a vsync), ns since the run began.
    pub true_ns: u64,
    /// What the loop's clock read, ns since the run began.
    pub seen_ns: u64,
    /// The measured frame time (`None` for the first frame).
    pub dt_ns: Option<u64>,
    /// Sim time after the frame, in seconds.
    pub sim_s: f64,
    /// Updates run this frame.
    pub steps: u64,
    /// The runner's drawn position minus its ideal position at the true
    /// frame start, in pixels.
    pub error_px: f64,
    /// Interpolation factor after the frame (accumulators only).
    pub alpha: Option<f64>,
}

/// The distribution of alpha over a run's frames.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AlphaStats {
    /// 10th percentile (nearest rank).
    pub p10: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Frames per tenth: `[0, 0.1)`, `[0.1, 0.2)`, ... `[0.9, 1)`.
    pub histogram: [u64; 10],
}

/// One strategy on one machine.
#[must_use]
#[derive(Clone, Debug)]
pub struct Cell {
    /// The strategy.
    pub strategy: Strategy,
    /// The machine.
    pub profile: Profile,
    /// Frames run.
    pub frames: u64,
    /// Real time from the first to the last frame start, in seconds (the
    /// loop's clock reading).
    pub real_s: f64,
    /// Sim time reached, in seconds.
    pub sim_s: f64,
    /// Updates run.
    pub updates: u64,
    /// Sim seconds per real second.
    pub sim_per_real: f64,
    /// Time the clock threw away (frame clamp plus step cap), in seconds.
    pub thrown_away_s: f64,
    /// Measured frame-time percentiles in ns (nearest rank), `None` for one frame.
    pub frame_time: Option<Percentiles>,
    /// Share of frames (after the first) that ran 0, 1 and 2+ updates.
    pub steps_share: [f64; 3],
    /// Alpha distribution, for accumulator designs.
    pub alpha: Option<AlphaStats>,
    /// Mean of (ideal - drawn) runner position, in pixels: how far behind the
    /// ideal continuous motion the picture is.
    pub lag_px: f64,
    /// Standard deviation of the frame-to-frame change of the drawn error, in
    /// pixels: the visible stutter (a constant lag does not count).
    pub judder_px: f64,
    /// Root-mean-square of the drawn error, in pixels.
    pub error_rms_px: f64,
    /// The world at the probe sim time, if reached.
    pub probe: Option<ProbeReading>,
    /// Longest frame time in the first half of the run, ns.
    pub first_half_max_ns: u64,
    /// Longest frame time in the second half of the run, ns.
    pub second_half_max_ns: u64,
    /// Whether frame times kept growing (see [`SPIRAL_GROWTH`]).
    pub spiral: bool,
    /// Whether the run hit the lab's hard cap on frames or updates.
    pub truncated: bool,
    /// Every frame, for the charts.
    pub samples: Vec<Sample>,
}

/// Runs one strategy on one machine.
pub fn run_cell(strategy: Strategy, profile: Profile, settings: &LabSettings) -> Cell {
    let step = settings.step();
    let mut machine = Machine::new(profile, step, settings.seed());
    let mut lut = LoopUnderTest::new(strategy, step, settings.probe_ns());
    let end = settings.run_ns();
    let mut samples: Vec<Sample> = Vec::new();
    let mut thrown = 0u128;
    let mut prev_seen: Option<u64> = None;
    let mut truncated = false;
    loop {
        let start = machine.frame_start();
        let dt = prev_seen.map(|p| start.seen_ns.saturating_sub(p));
        let out = lut.frame(Nanos::from_nanos(dt.unwrap_or(0)));
        thrown += u128::from(out.thrown_away.as_nanos());
        let ideal_px = RUNNER_SPEED_PX_PER_S as f64 * start.true_ns as f64 / NANOS_PER_SEC as f64;
        samples.push(Sample {
            true_ns: start.true_ns,
            seen_ns: start.seen_ns,
            dt_ns: dt,
            sim_s: lut.world().sim_seconds(),
            steps: out.steps,
            error_px: out.drawn_px - ideal_px,
            alpha: out.alpha,
        });
        if start.seen_ns >= end {
            break;
        }
        if samples.len() as u64 >= settings.max_frames() || lut.updates() >= settings.max_updates()
        {
            truncated = true;
            break;
        }
        let work = machine.frame_work(out.steps, lut.sleep_after(step));
        machine.finish_frame(work);
        prev_seen = Some(start.seen_ns);
    }
    summarize(strategy, profile, &lut, samples, thrown, truncated)
}

fn summarize(
    strategy: Strategy,
    profile: Profile,
    lut: &LoopUnderTest,
    samples: Vec<Sample>,
    thrown_ns: u128,
    truncated: bool,
) -> Cell {
    let real_ns = samples.last().map_or(0, |s| s.seen_ns);
    let real_s = real_ns as f64 / NANOS_PER_SEC as f64;
    let sim_s = lut.world().sim_seconds();
    let mut dts: Vec<u64> = samples.iter().filter_map(|s| s.dt_ns).collect();
    let frame_time = Percentiles::of(&mut dts);

    let later = samples.get(1..).unwrap_or(&[]);
    let mut shares = [0u64; 3];
    for s in later {
        shares[usize::try_from(s.steps.min(2)).unwrap_or(2)] += 1;
    }
    let n = later.len().max(1) as f64;
    let steps_share = shares.map(|c| c as f64 / n);

    let alphas: Vec<f64> = later.iter().filter_map(|s| s.alpha).collect();
    let alpha = alpha_stats(&alphas);

    // On-screen error after a warm-up: before the first ticks an
    // interpolating loop has no previous state to blend from.
    let errors: Vec<f64> = samples
        .iter()
        .filter(|s| s.true_ns >= ERROR_WARMUP_NS)
        .map(|s| s.error_px)
        .collect();
    let deltas: Vec<f64> = errors.windows(2).map(|w| w[1] - w[0]).collect();
    let lag_px = -mean(&errors);
    let judder_px = std_dev(&deltas);
    let error_rms_px = mean(&errors.iter().map(|e| e * e).collect::<Vec<_>>()).sqrt();

    let half = real_ns / 2;
    let (mut first_half_max_ns, mut second_half_max_ns) = (0u64, 0u64);
    for s in &samples {
        if let Some(dt) = s.dt_ns {
            let slot = if s.seen_ns < half {
                &mut first_half_max_ns
            } else {
                &mut second_half_max_ns
            };
            *slot = (*slot).max(dt);
        }
    }
    let spiral = second_half_max_ns as f64 > SPIRAL_GROWTH * first_half_max_ns as f64;

    Cell {
        strategy,
        profile,
        frames: samples.len() as u64,
        real_s,
        sim_s,
        updates: lut.updates(),
        sim_per_real: if real_s > 0.0 { sim_s / real_s } else { 0.0 },
        thrown_away_s: thrown_ns as f64 / NANOS_PER_SEC as f64,
        frame_time,
        steps_share,
        alpha,
        lag_px,
        judder_px,
        error_rms_px,
        probe: lut.world().probe(),
        first_half_max_ns,
        second_half_max_ns,
        spiral,
        truncated,
        samples,
    }
}

fn alpha_stats(alphas: &[f64]) -> Option<AlphaStats> {
    if alphas.is_empty() {
        return None;
    }
    let mut ppm: Vec<u64> = alphas
        .iter()
        .map(|a| (a.clamp(0.0, 1.0) * 1e6).round() as u64)
        .collect();
    ppm.sort_unstable();
    let at = |p| nearest_rank(&ppm, p).map_or(0.0, |v| v as f64 / 1e6);
    let mut histogram = [0u64; 10];
    for a in alphas {
        let bin = ((a.clamp(0.0, 1.0) * 10.0).floor() as usize).min(9);
        histogram[bin] += 1;
    }
    Some(AlphaStats {
        p10: at(10),
        p50: at(50),
        p90: at(90),
        histogram,
    })
}

/// The verdict on one strategy across all machines.
#[derive(Clone, Debug, PartialEq)]
pub enum StrategyVerdict {
    /// Sim speed is 1.0 on every normal machine and the world is the same.
    Pass,
    /// Why not.
    Fail(Vec<String>),
}

impl StrategyVerdict {
    /// Whether the strategy passed.
    #[must_use]
    pub const fn passed(&self) -> bool {
        matches!(self, StrategyVerdict::Pass)
    }
}

/// One strategy across all machines, and its verdict.
#[must_use]
#[derive(Clone, Debug)]
pub struct StrategySummary {
    /// The strategy.
    pub strategy: Strategy,
    /// Sim seconds per real second on each normal (non-fault) machine.
    pub rates: Vec<(Profile, f64)>,
    /// Largest minus smallest of `rates`.
    pub rate_spread: f64,
    /// Every normal machine ran at `1.0 ± RATE_TOLERANCE` sim s per real s.
    pub rate_ok: bool,
    /// Every normal machine reached the probe with a bit-identical world.
    pub world_same: bool,
    /// Time thrown away on the stalls machine, in seconds.
    pub stalls_thrown_s: Option<f64>,
    /// Sim seconds per real second on the stalls machine.
    pub stalls_rate: Option<f64>,
    /// The longest frame on the overloaded machine, in ns.
    pub overload_max_frame_ns: Option<u64>,
    /// Whether the overloaded machine spiralled.
    pub overload_spiral: Option<bool>,
    /// The verdict.
    pub verdict: StrategyVerdict,
}

fn summarize_strategy(strategy: Strategy, cells: &[Cell]) -> StrategySummary {
    let mine: Vec<&Cell> = cells.iter().filter(|c| c.strategy == strategy).collect();
    let normal: Vec<&Cell> = mine
        .iter()
        .copied()
        .filter(|c| !c.profile.is_fault())
        .collect();
    let rates: Vec<(Profile, f64)> = normal.iter().map(|c| (c.profile, c.sim_per_real)).collect();
    let (lo, hi) = rates
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
            (lo.min(r.1), hi.max(r.1))
        });
    let rate_spread = if rates.is_empty() { 0.0 } else { hi - lo };
    let rate_ok = !rates.is_empty() && rates.iter().all(|(_, r)| (r - 1.0).abs() <= RATE_TOLERANCE);
    let first = normal.first().and_then(|c| c.probe);
    let world_same = first.is_some()
        && normal
            .iter()
            .all(|c| c.probe.map(|p| p.checksum) == first.map(|p| p.checksum));
    let find = |p: Profile| mine.iter().find(|c| c.profile == p);
    let stalls = find(Profile::Stalls);
    let over = find(Profile::Overloaded);

    let mut reasons = Vec::new();
    if !rate_ok {
        if rate_spread > RATE_TOLERANCE {
            reasons.push(format!(
                "sim speed depends on the machine ({lo:.3}..{hi:.3} sim s per real s)"
            ));
        } else {
            reasons.push(format!("sim runs at {lo:.3}x real time, not 1.0"));
        }
    }
    if !world_same {
        reasons.push("same sim time, different world on each machine".to_owned());
    }
    StrategySummary {
        strategy,
        rates,
        rate_spread,
        rate_ok,
        world_same,
        stalls_thrown_s: stalls.map(|c| c.thrown_away_s),
        stalls_rate: stalls.map(|c| c.sim_per_real),
        overload_max_frame_ns: over.and_then(|c| c.frame_time.map(|f| f.max)),
        overload_spiral: over.map(|c| c.spiral),
        verdict: if reasons.is_empty() {
            StrategyVerdict::Pass
        } else {
            StrategyVerdict::Fail(reasons)
        },
    }
}

/// The whole lab: every cell and every strategy's verdict.
#[must_use]
#[derive(Clone, Debug)]
pub struct LabReport {
    /// What was run.
    pub settings: LabSettings,
    /// One cell per strategy and machine, strategy-major.
    pub cells: Vec<Cell>,
    /// One summary per strategy.
    pub summaries: Vec<StrategySummary>,
}

/// Runs every strategy on every machine.
pub fn run_lab(settings: &LabSettings) -> LabReport {
    let strategies = Strategy::all();
    let mut cells = Vec::new();
    for &s in &strategies {
        for p in Profile::ALL {
            cells.push(run_cell(s, p, settings));
        }
    }
    let summaries = strategies
        .iter()
        .map(|&s| summarize_strategy(s, &cells))
        .collect();
    LabReport {
        settings: *settings,
        cells,
        summaries,
    }
}

impl LabReport {
    /// The cell for a strategy and machine.
    #[must_use]
    pub fn cell(&self, strategy: Strategy, profile: Profile) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.strategy == strategy && c.profile == profile)
    }

    /// The summary of a strategy.
    #[must_use]
    pub fn summary(&self, strategy: Strategy) -> Option<&StrategySummary> {
        self.summaries.iter().find(|s| s.strategy == strategy)
    }

    /// The lab's thesis, checked: every accumulator design passes, every
    /// naive design fails, the unguarded accumulators spiral on the
    /// overloaded machine and the guarded ones do not. Returns what did not
    /// hold (empty when all did).
    #[must_use]
    pub fn unmet_expectations(&self) -> Vec<String> {
        let mut unmet = Vec::new();
        for s in &self.summaries {
            let name = s.strategy.label();
            let accumulator = s.strategy.design.is_accumulator();
            if accumulator != s.verdict.passed() {
                unmet.push(format!(
                    "{name}: expected {}, got {}",
                    if accumulator { "PASS" } else { "FAIL" },
                    if s.verdict.passed() { "PASS" } else { "FAIL" }
                ));
            }
            if accumulator && s.overload_spiral != Some(!s.strategy.guards) {
                unmet.push(format!(
                    "{name}: expected the overloaded machine to {}",
                    if s.strategy.guards {
                        "stay bounded"
                    } else {
                        "spiral"
                    }
                ));
            }
        }
        if self.cells.iter().any(|c| c.truncated) {
            unmet.push("a run hit the lab's hard cap on frames or updates".to_owned());
        }
        unmet
    }

    /// Number of strategies that passed.
    #[must_use]
    pub fn passed(&self) -> usize {
        self.summaries.iter().filter(|s| s.verdict.passed()).count()
    }
}
