//! Tick-rate budgets: measure what one tick costs and pick a tick rate.
//!
//! The cost of one tick does not depend on the rate, so a lower rate buys
//! budget. For each candidate rate the table gives the budget per tick
//! (`10^9 / Hz` ns), the headroom factor (budget / cost) at the median and at
//! p99, and a [`RateVerdict`]:
//!
//! * `ok`: the p99 tick fits the budget the required number of times;
//! * `tight`: only the median tick does;
//! * `over`: not even the median does.
//!
//! The recommended rate is the highest `ok` candidate. A catch-up burst
//! (the most ticks one capped resume runs back to back) is timed as well and
//! compared with one 60 Hz display frame, because that burst is what a
//! player sees as a hitch after a long pause.
//!
//! The sim is reached only through a closure that runs one tick, so any sim
//! can be budgeted (the CLI passes a type-erased catalog runner). Timing is
//! one thread, [`Instant`] around every tick; percentiles are nearest-rank
//! from [`crate::stats`], so every reported cost is one that was observed.

use std::time::Instant;

use crate::stats::nearest_rank;

/// The most ticks one measurement may run (warm-up, timed or one burst).
pub const MAX_TICKS: u64 = 10_000_000;
/// One display frame at 60 Hz, in ns: what a catch-up burst is compared with.
pub const DISPLAY_FRAME_NS: u64 = 16_666_667;
/// The largest headroom factor accepted.
pub const MAX_HEADROOM: f64 = 1e6;
/// The largest assumed per-tick cost accepted, in ms (one hour).
pub const MAX_COST_MS: f64 = 3.6e6;
/// Nanoseconds per millisecond, for reporting.
const NS_PER_MS: f64 = 1_000_000.0;

/// Per-tick wall-clock durations, sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TickTimes {
    sorted: Vec<u64>,
}

impl TickTimes {
    /// From unsorted durations in ns.
    #[must_use]
    pub fn new(mut ns: Vec<u64>) -> TickTimes {
        ns.sort_unstable();
        TickTimes { sorted: ns }
    }

    /// The nearest-rank percentile `pct` (0..=100, larger values clamp to
    /// 100) by [`nearest_rank`]; 0 when there are no samples.
    #[must_use]
    pub fn percentile(&self, pct: u32) -> u64 {
        nearest_rank(&self.sorted, pct.min(100)).unwrap_or(0)
    }

    /// The samples, sorted.
    #[must_use]
    pub fn into_samples(self) -> Vec<u64> {
        self.sorted
    }

    /// The nearest-rank median.
    #[must_use]
    pub fn median(&self) -> u64 {
        self.percentile(50)
    }

    /// The nearest-rank 99th percentile.
    #[must_use]
    pub fn p99(&self) -> u64 {
        self.percentile(99)
    }

    /// The longest sample (0 when empty).
    #[must_use]
    pub fn max(&self) -> u64 {
        self.sorted.last().copied().unwrap_or(0)
    }

    /// The sum of all samples (saturating).
    #[must_use]
    pub fn total(&self) -> u64 {
        self.sorted.iter().fold(0u64, |a, &t| a.saturating_add(t))
    }

    /// The mean sample, rounded down (0 when empty).
    #[must_use]
    pub fn mean(&self) -> u64 {
        self.total() / (self.sorted.len() as u64).max(1)
    }

    /// How many samples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }
}

fn elapsed_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Calls `tick` `ticks` times, timing each call.
pub fn time_ticks(ticks: u64, mut tick: impl FnMut()) -> TickTimes {
    let mut ns = Vec::with_capacity(usize::try_from(ticks.min(MAX_TICKS)).unwrap_or(0));
    for _ in 0..ticks {
        let start = Instant::now();
        tick();
        ns.push(elapsed_ns(start));
    }
    TickTimes::new(ns)
}

/// The shortest a timed sample should last, in ns. Reading the clock costs
/// tens of ns, as much as a whole tick of a cheap sim: timed one by one, a
/// 40 ns tick would read as its clock overhead. So a tick cheaper than this
/// is timed in batches of back-to-back ticks that last at least this long
/// ([`batch_for`]), and each sample is the batch's time per tick.
pub const MIN_SAMPLE_NS: u64 = 20_000;

/// Samples a percentile should have at least: batches never grow past
/// `ticks / MIN_SAMPLES` ticks.
pub const MIN_SAMPLES: u64 = 100;

/// Timed ticks run back to back first to estimate the cost per tick.
pub const PROBE_TICKS: u64 = 16;

/// The batch size (ticks per sample) for ticks of about `estimate_ns`
/// each, out of `ticks` timed ticks: enough for a sample of
/// [`MIN_SAMPLE_NS`], at most `ticks / MIN_SAMPLES`, at least 1 (a tick of
/// 20 µs or more is timed one by one).
#[must_use]
pub fn batch_for(estimate_ns: u64, ticks: u64) -> u64 {
    MIN_SAMPLE_NS
        .div_ceil(estimate_ns.max(1))
        .min(ticks / MIN_SAMPLES)
        .max(1)
}

/// Calls `tick` `ticks` times in samples of `batch` back-to-back calls (the
/// last sample may be shorter); each sample is its time per tick, in ns
/// rounded to the nearest.
pub fn time_batched(ticks: u64, batch: u64, mut tick: impl FnMut()) -> TickTimes {
    let batch = batch.max(1);
    let samples = ticks.div_ceil(batch);
    let mut ns = Vec::with_capacity(usize::try_from(samples.min(MAX_TICKS)).unwrap_or(0));
    let mut left = ticks;
    while left > 0 {
        let n = left.min(batch);
        let total = time_burst(n, &mut tick);
        ns.push(total.saturating_add(n / 2) / n);
        left -= n;
    }
    TickTimes::new(ns)
}

/// Calls `tick` `ticks` times back to back; their total wall time in ns.
pub fn time_burst(ticks: u64, mut tick: impl FnMut()) -> u64 {
    let start = Instant::now();
    for _ in 0..ticks {
        tick();
    }
    elapsed_ns(start)
}

/// The budget verdict for one tick rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateVerdict {
    /// The p99 tick fits the budget the required number of times.
    Ok,
    /// Only the median tick does.
    Tight,
    /// Not even the median does.
    Over,
}

impl RateVerdict {
    /// The word printed in tables and JSON.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            RateVerdict::Ok => "ok",
            RateVerdict::Tight => "tight",
            RateVerdict::Over => "over",
        }
    }
}

/// One row of the rate table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateRow {
    /// Ticks per second.
    pub hz: u32,
    /// The budget of one tick in ns (`10^9 / hz`, rounded down).
    pub budget_ns: u64,
    /// Budget / median cost.
    pub headroom_median: f64,
    /// Budget / p99 cost.
    pub headroom_p99: f64,
    /// The verdict for the required headroom.
    pub verdict: RateVerdict,
}

impl RateRow {
    /// The budget in ms truncated to 0.1 ms, the way the horde's design
    /// notes print it (50.0 / 33.3 / 16.6 ms at 20 / 30 / 60 Hz).
    #[must_use]
    pub fn budget_ms_truncated(&self) -> f64 {
        (self.budget_ns / 100_000) as f64 / 10.0
    }
}

/// The table for a per-tick cost of `median_ns` / `p99_ns` and a required
/// headroom factor.
#[must_use]
pub fn rate_table(median_ns: u64, p99_ns: u64, hz: &[u32], required: f64) -> Vec<RateRow> {
    hz.iter()
        .map(|&hz| {
            let budget_ns = 1_000_000_000 / u64::from(hz.max(1));
            let factor = |cost: u64| budget_ns as f64 / cost.max(1) as f64;
            let (hm, hp) = (factor(median_ns), factor(p99_ns));
            let verdict = if hp >= required {
                RateVerdict::Ok
            } else if hm >= required {
                RateVerdict::Tight
            } else {
                RateVerdict::Over
            };
            RateRow {
                hz,
                budget_ns,
                headroom_median: hm,
                headroom_p99: hp,
                verdict,
            }
        })
        .collect()
}

/// The highest rate whose verdict is `ok`, if any.
#[must_use]
pub fn recommend(rows: &[RateRow]) -> Option<u32> {
    rows.iter()
        .filter(|r| r.verdict == RateVerdict::Ok)
        .map(|r| r.hz)
        .max()
}

/// The highest whole rate at which the p99 tick still has `required` headroom.
#[must_use]
pub fn max_rate(p99_ns: u64, required: f64) -> u64 {
    (1e9 / (required.max(1.0) * p99_ns.max(1) as f64)).floor() as u64
}

/// Which tick count of a [`BudgetPlan`] is out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickCount {
    /// Ticks run before timing.
    Warmup,
    /// Ticks timed one by one.
    Timed,
    /// Ticks in one catch-up burst.
    CatchUp,
}

impl TickCount {
    const fn describe(self) -> &'static str {
        match self {
            TickCount::Warmup => "warm-up ticks",
            TickCount::Timed => "timed ticks",
            TickCount::CatchUp => "catch-up burst ticks",
        }
    }
}

/// Why a budget cannot be computed.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum BudgetError {
    /// The required headroom is not a number from 1 to [`MAX_HEADROOM`].
    Headroom {
        /// The value given.
        value: f64,
    },
    /// An assumed cost is not a positive number of ms up to [`MAX_COST_MS`].
    Cost {
        /// The value given, in ms.
        ms: f64,
    },
    /// A tick count is above [`MAX_TICKS`].
    TooManyTicks {
        /// Which count.
        which: TickCount,
        /// The value given.
        ticks: u64,
        /// The limit.
        limit: u64,
    },
    /// Nothing would be timed: zero timed ticks and no assumed cost.
    NoTimedTicks,
}

impl std::fmt::Display for BudgetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BudgetError::Headroom { value } => write!(
                f,
                "the required headroom must be a number from 1 to {MAX_HEADROOM}, found {value}"
            ),
            BudgetError::Cost { ms } => write!(
                f,
                "an assumed tick cost must be a positive number of ms up to {MAX_COST_MS}, found {ms}"
            ),
            BudgetError::TooManyTicks {
                which,
                ticks,
                limit,
            } => write!(
                f,
                "{ticks} {} is more than the {limit} accepted",
                which.describe()
            ),
            BudgetError::NoTimedTicks => {
                f.write_str("at least one tick must be timed when no cost is assumed")
            }
        }
    }
}

impl std::error::Error for BudgetError {}

/// What to measure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetPlan {
    /// Ticks run before timing starts (to reach the sim's steady state).
    pub warmup: u64,
    /// Ticks timed one by one.
    pub ticks: u64,
    /// Ticks in one catch-up burst (0: no burst).
    pub catch_up: u64,
    /// Bursts timed; their median is reported.
    pub catch_up_runs: u64,
    /// Required headroom: budget / p99 cost must reach it for `ok`.
    pub headroom: f64,
}

impl BudgetPlan {
    /// Checks every number before anything runs.
    ///
    /// # Errors
    ///
    /// [`BudgetError::Headroom`], [`BudgetError::TooManyTicks`], and
    /// [`BudgetError::NoTimedTicks`] when `measuring` with zero timed ticks.
    pub fn check(&self, measuring: bool) -> Result<(), BudgetError> {
        if !(self.headroom.is_finite() && (1.0..=MAX_HEADROOM).contains(&self.headroom)) {
            return Err(BudgetError::Headroom {
                value: self.headroom,
            });
        }
        for (which, ticks) in [
            (TickCount::Timed, self.ticks),
            (TickCount::Warmup, self.warmup),
            (TickCount::CatchUp, self.catch_up),
        ] {
            if ticks > MAX_TICKS {
                return Err(BudgetError::TooManyTicks {
                    which,
                    ticks,
                    limit: MAX_TICKS,
                });
            }
        }
        if measuring && self.ticks == 0 {
            return Err(BudgetError::NoTimedTicks);
        }
        Ok(())
    }
}

/// What one tick costs, measured or assumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Median tick, ns.
    pub median_ns: u64,
    /// p99 tick, ns.
    pub p99_ns: u64,
    /// Mean tick, ns.
    pub mean_ns: u64,
    /// Longest tick, ns.
    pub max_ns: u64,
    /// Median catch-up burst, ns (`None` when no burst was timed).
    pub catch_up_ns: Option<u64>,
    /// Whether this was measured (`false`: assumed).
    pub measured: bool,
    /// Ticks per timed sample ([`batch_for`]; 1: timed one by one).
    pub batch: u64,
}

impl Cost {
    /// A cost taken as given instead of measured: `ms` per tick at the
    /// median and p99 alike, a burst costing `catch_up` such ticks.
    ///
    /// # Errors
    ///
    /// [`BudgetError::Cost`] unless `ms` is positive, finite and at most
    /// [`MAX_COST_MS`].
    pub fn assumed(ms: f64, catch_up: u64) -> Result<Cost, BudgetError> {
        if !(ms.is_finite() && ms > 0.0 && ms <= MAX_COST_MS) {
            return Err(BudgetError::Cost { ms });
        }
        let ns = (ms * NS_PER_MS).round() as u64;
        Ok(Cost {
            median_ns: ns,
            p99_ns: ns,
            mean_ns: ns,
            max_ns: ns,
            catch_up_ns: (catch_up > 0).then(|| ns.saturating_mul(catch_up)),
            measured: false,
            batch: 1,
        })
    }

    /// Measures `tick` (one tick of the sim per call) under `plan`:
    /// `warmup` untimed ticks, `ticks` timed one by one, then
    /// `catch_up_runs` bursts of `catch_up` ticks.
    ///
    /// # Errors
    ///
    /// As [`BudgetPlan::check`]; nothing runs then.
    pub fn measure(plan: &BudgetPlan, mut tick: impl FnMut()) -> Result<Cost, BudgetError> {
        plan.check(true)?;
        let _ = time_burst(plan.warmup, &mut tick);
        // The first ticks, back to back, estimate the cost per tick and so
        // the batch size (they are the one sample when no tick is left).
        let probe = plan.ticks.min(PROBE_TICKS);
        let probe_ns = time_burst(probe, &mut tick);
        let per_tick = probe_ns.saturating_add(probe / 2) / probe.max(1);
        let rest = plan.ticks - probe;
        let batch = batch_for(per_tick, rest);
        let mut times = time_batched(rest, batch, &mut tick).into_samples();
        if times.is_empty() {
            times.push(per_tick);
        }
        let times = TickTimes::new(times);
        let bursts: Vec<u64> = if plan.catch_up > 0 {
            (0..plan.catch_up_runs)
                .map(|_| time_burst(plan.catch_up, &mut tick))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Cost {
            median_ns: times.median(),
            p99_ns: times.p99(),
            mean_ns: times.mean(),
            max_ns: times.max(),
            catch_up_ns: (!bursts.is_empty()).then(|| TickTimes::new(bursts).median()),
            measured: true,
            batch,
        })
    }

    /// The catch-up burst in 60 Hz display frames.
    #[must_use]
    pub fn catch_up_frames(&self) -> Option<f64> {
        self.catch_up_ns.map(|c| c as f64 / DISPLAY_FRAME_NS as f64)
    }
}

/// A cost judged against candidate rates.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    /// The cost.
    pub cost: Cost,
    /// One row per candidate rate, in the order given.
    pub rows: Vec<RateRow>,
    /// The highest `ok` candidate.
    pub recommended: Option<u32>,
    /// The highest whole rate keeping the headroom at p99.
    pub max_hz: u64,
    /// The required headroom.
    pub headroom: f64,
}

impl Budget {
    /// Judges `cost` at each rate of `hz` for `headroom`.
    ///
    /// # Errors
    ///
    /// [`BudgetError::Headroom`] for a headroom outside 1..=[`MAX_HEADROOM`].
    pub fn judge(cost: Cost, hz: &[u32], headroom: f64) -> Result<Budget, BudgetError> {
        if !(headroom.is_finite() && (1.0..=MAX_HEADROOM).contains(&headroom)) {
            return Err(BudgetError::Headroom { value: headroom });
        }
        let rows = rate_table(cost.median_ns, cost.p99_ns, hz, headroom);
        Ok(Budget {
            recommended: recommend(&rows),
            max_hz: max_rate(cost.p99_ns, headroom),
            cost,
            rows,
            headroom,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_point_two_ms_gives_the_design_notes_table() {
        // The horde's design notes: 9.2 ms per tick; budgets 50 / 33.3 /
        // 16.6 ms; headroom 3.6x at 30 Hz and 1.8x at 60 Hz; 30 Hz chosen
        // for 3x headroom.
        let cost = Cost::assumed(9.2, 300).unwrap();
        assert_eq!(
            (cost.median_ns, cost.catch_up_ns),
            (9_200_000, Some(2_760_000_000))
        );
        let b = Budget::judge(cost, &[20, 30, 60], 3.0).unwrap();
        let budgets: Vec<f64> = b.rows.iter().map(RateRow::budget_ms_truncated).collect();
        assert_eq!(budgets, [50.0, 33.3, 16.6]);
        let rounded: Vec<String> = b
            .rows
            .iter()
            .map(|r| format!("{:.1}", r.headroom_median))
            .collect();
        assert_eq!(rounded, ["5.4", "3.6", "1.8"]);
        let verdicts: Vec<RateVerdict> = b.rows.iter().map(|r| r.verdict).collect();
        assert_eq!(
            verdicts,
            [RateVerdict::Ok, RateVerdict::Ok, RateVerdict::Over]
        );
        assert_eq!(b.recommended, Some(30));
        // 1 s / (3 * 9.2 ms) = 36.2 Hz.
        assert_eq!(b.max_hz, 36);
    }

    #[test]
    fn cheap_ticks_are_timed_in_batches_of_at_least_20_us() {
        // 40 ns a tick: 20 000 / 40 = 500 ticks a sample, if the timed
        // ticks allow 100 samples of that (50 000 ticks do).
        assert_eq!(batch_for(40, 50_000), 500);
        // 1 000 ticks allow at most 10 a sample.
        assert_eq!(batch_for(40, 1_000), 10);
        // 30 ns: ceil(20 000 / 30) = 667.
        assert_eq!(batch_for(30, 1_000_000), 667);
        // 20 µs and slower, or few ticks: one by one.
        assert_eq!(batch_for(20_000, 1_000_000), 1);
        assert_eq!(batch_for(9_200_000, 1_000), 1);
        assert_eq!(batch_for(40, 50), 1);
        assert_eq!(batch_for(0, 1_000), 10);
    }

    #[test]
    fn batched_timing_runs_every_tick_once_and_keeps_a_sample_per_batch() {
        let mut calls = 0u64;
        // 1 005 ticks in batches of 10: 100 full samples and one of 5.
        let t = time_batched(1_005, 10, || calls += 1);
        assert_eq!((calls, t.len()), (1_005, 101));
        let mut calls = 0u64;
        let plan = BudgetPlan {
            warmup: 7,
            ticks: 1_000,
            catch_up: 3,
            catch_up_runs: 2,
            headroom: 3.0,
        };
        let cost = Cost::measure(&plan, || calls += 1).unwrap();
        // Warm-up, the probe and the timed ticks, and the bursts: each once.
        assert_eq!(calls, 7 + 1_000 + 3 * 2);
        assert!((1..=(1_000 - PROBE_TICKS) / MIN_SAMPLES).contains(&cost.batch));
    }

    #[test]
    fn tight_when_only_the_median_fits() {
        // 30 Hz budget 33.3 ms: median 10 ms gives 3.3x, p99 12 ms only 2.8x.
        let rows = rate_table(10_000_000, 12_000_000, &[30], 3.0);
        assert_eq!(rows[0].verdict, RateVerdict::Tight);
        assert_eq!(recommend(&rows), None);
    }

    #[test]
    fn nearest_rank_percentiles_by_hand() {
        let t = TickTimes::new((1..=200).rev().collect());
        // 50 % of 200 is rank 100; 99 % is rank 198.
        assert_eq!((t.median(), t.p99(), t.max()), (100, 198, 200));
        let t = TickTimes::new(vec![7, 3, 5]);
        // ceil(1.5) = rank 2; ceil(2.97) = rank 3.
        assert_eq!((t.median(), t.p99(), t.mean()), (5, 7, 5));
        assert_eq!(TickTimes::new(vec![]).median(), 0);
        assert_eq!(t.percentile(0), 3);
        assert_eq!(t.percentile(500), 7);
    }

    #[test]
    fn bad_numbers_are_refused_before_anything_runs() {
        let ok = BudgetPlan {
            warmup: 0,
            ticks: 10,
            catch_up: 0,
            catch_up_runs: 1,
            headroom: 3.0,
        };
        let mut ran = 0u64;
        for (plan, e) in [
            (
                BudgetPlan {
                    headroom: 0.5,
                    ..ok
                },
                BudgetError::Headroom { value: 0.5 },
            ),
            (BudgetPlan { ticks: 0, ..ok }, BudgetError::NoTimedTicks),
            (
                BudgetPlan {
                    warmup: MAX_TICKS + 1,
                    ..ok
                },
                BudgetError::TooManyTicks {
                    which: TickCount::Warmup,
                    ticks: MAX_TICKS + 1,
                    limit: MAX_TICKS,
                },
            ),
        ] {
            assert_eq!(Cost::measure(&plan, || ran += 1), Err(e));
        }
        assert!(matches!(
            Cost::measure(
                &BudgetPlan {
                    headroom: f64::NAN,
                    ..ok
                },
                || ran += 1
            ),
            Err(BudgetError::Headroom { .. })
        ));
        assert_eq!(ran, 0);
        for ms in [0.0, -1.0, f64::INFINITY, f64::NAN, 3.6e6 + 1.0] {
            assert!(Cost::assumed(ms, 1).is_err(), "{ms}");
        }
    }

    #[test]
    fn measure_runs_exactly_the_planned_ticks() {
        let plan = BudgetPlan {
            warmup: 7,
            ticks: 20,
            catch_up: 5,
            catch_up_runs: 3,
            headroom: 3.0,
        };
        let mut ran = 0u64;
        let cost = Cost::measure(&plan, || ran += 1).unwrap();
        assert_eq!(ran, 7 + 20 + 5 * 3);
        assert!(cost.measured && cost.catch_up_ns.is_some());
        assert!(cost.median_ns <= cost.p99_ns && cost.p99_ns <= cost.max_ns);
    }
}
