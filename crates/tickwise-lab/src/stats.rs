//! Percentiles and small summary statistics.
//!
//! Percentiles use the **nearest-rank** method, chosen because every reported
//! value is one that was actually observed (no interpolation between two
//! frames that never happened): the `p`-th percentile of `n` sorted values is
//! the value at 1-based rank `ceil(p * n / 100)`, and rank 1 for `p = 0`.
//! The rank is computed in integers, so there is no rounding question.

/// The nearest-rank `p`-th percentile (`p` in `0..=100`) of `sorted`, which
/// must be sorted ascending. `None` for an empty slice or `p > 100`.
#[must_use]
pub fn nearest_rank(sorted: &[u64], p: u32) -> Option<u64> {
    if sorted.is_empty() || p > 100 {
        return None;
    }
    let rank = nearest_rank_index(sorted.len() as u64, p)?;
    usize::try_from(rank)
        .ok()
        .and_then(|r| sorted.get(r))
        .copied()
}

/// The 0-based index of the nearest-rank `p`-th percentile among `n` values:
/// `max(ceil(p * n / 100), 1) - 1`. `None` when `n == 0` or `p > 100`.
#[must_use]
pub fn nearest_rank_index(n: u64, p: u32) -> Option<u64> {
    if n == 0 || p > 100 {
        return None;
    }
    let rank = (u128::from(p) * u128::from(n)).div_ceil(100).max(1);
    // rank <= n because p <= 100.
    u64::try_from(rank - 1).ok()
}

/// p50 / p95 / p99 / max of a set of durations in nanoseconds.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Percentiles {
    /// Median.
    pub p50: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest value.
    pub max: u64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `values` (sorted in place). `None` when empty.
    #[must_use]
    pub fn of(values: &mut [u64]) -> Option<Percentiles> {
        values.sort_unstable();
        Some(Percentiles {
            p50: nearest_rank(values, 50)?,
            p95: nearest_rank(values, 95)?,
            p99: nearest_rank(values, 99)?,
            max: *values.last()?,
        })
    }
}

/// Arithmetic mean; `0.0` for an empty slice.
#[must_use]
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Population standard deviation; `0.0` for fewer than two values.
#[must_use]
pub fn std_dev(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let m = mean(values);
    let var = values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / values.len() as f64;
    var.sqrt()
}
