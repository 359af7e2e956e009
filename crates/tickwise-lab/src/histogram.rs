//! A bounded-memory frame-time histogram for the real-clock runner.
//!
//! An uncapped loop runs millions of frames a second; keeping every frame
//! time to sort would cost hundreds of megabytes. This histogram keeps counts
//! in log-linear buckets instead (440 KiB whatever the frame count): values
//! below 2048 ns have a bucket each, larger values share a bucket with values
//! that differ by less than 1/1024 (0.1 %) of them, 16 µs at 16.7 ms.
//! Percentiles are nearest-rank over the buckets and report the bucket's upper
//! edge, clamped to the exact maximum, so a reported percentile is never below
//! the true one and at most 0.1 % above it. The simulated lab sorts its frame
//! times exactly instead ([`crate::stats`]).

use crate::stats::{Percentiles, nearest_rank_index};

/// Bits of mantissa kept per power of two.
const SUB_BITS: u32 = 10;
/// Buckets per power of two (and the exact range `0..SUB`).
const SUB: u64 = 1 << SUB_BITS;
/// Number of buckets: the exact range plus 54 octaves (2^10 ..= 2^63) of `SUB` each.
const BUCKETS: usize = (SUB as usize) * (64 - SUB_BITS as usize + 1);

/// Counts of frame times in log-linear buckets, plus the exact count, sum, min
/// and max.
#[derive(Clone, Debug)]
pub struct FrameTimeHistogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for FrameTimeHistogram {
    fn default() -> Self {
        FrameTimeHistogram::new()
    }
}

/// The bucket of `v`.
fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return usize::try_from(v).unwrap_or(0);
    }
    let exp = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = exp - SUB_BITS;
    let mantissa = v >> shift; // in SUB..2*SUB
    let octave = u64::from(shift) + 1;
    usize::try_from(octave * SUB + (mantissa - SUB)).unwrap_or(BUCKETS - 1)
}

/// The largest value that falls in bucket `b`.
fn bucket_upper(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let octave = b / SUB; // >= 1
    let mantissa = SUB + b % SUB;
    let shift = octave - 1;
    // (mantissa + 1) << shift can reach 2^64 for the very last bucket.
    let upper = (u128::from(mantissa) + 1) << shift;
    u64::try_from(upper - 1).unwrap_or(u64::MAX)
}

impl FrameTimeHistogram {
    /// An empty histogram.
    #[must_use]
    pub fn new() -> FrameTimeHistogram {
        FrameTimeHistogram {
            counts: vec![0; BUCKETS],
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Records one frame time in nanoseconds.
    pub fn record(&mut self, ns: u64) {
        if let Some(c) = self.counts.get_mut(bucket_of(ns)) {
            *c = c.saturating_add(1);
        }
        self.count = self.count.saturating_add(1);
        self.sum = self.sum.saturating_add(u128::from(ns));
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Frames recorded.
    #[must_use]
    pub const fn count(&self) -> u64 {
        self.count
    }

    /// Exact smallest value, `None` when empty.
    #[must_use]
    pub const fn min(&self) -> Option<u64> {
        if self.count == 0 {
            None
        } else {
            Some(self.min)
        }
    }

    /// Exact largest value, `None` when empty.
    #[must_use]
    pub const fn max(&self) -> Option<u64> {
        if self.count == 0 {
            None
        } else {
            Some(self.max)
        }
    }

    /// Exact mean in nanoseconds, `None` when empty.
    #[must_use]
    pub fn mean(&self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        Some(self.sum as f64 / self.count as f64)
    }

    /// The nearest-rank `p`-th percentile (`p` in `0..=100`), as the upper
    /// edge of its bucket clamped to `[min, max]`. `None` when empty or `p > 100`.
    #[must_use]
    pub fn percentile(&self, p: u32) -> Option<u64> {
        let index = nearest_rank_index(self.count, p)?;
        let mut seen = 0u64;
        for (b, &c) in self.counts.iter().enumerate() {
            seen = seen.saturating_add(c);
            if seen > index {
                return Some(bucket_upper(b).clamp(self.min, self.max));
            }
        }
        self.max()
    }

    /// p50 / p95 / p99 / max, `None` when empty.
    #[must_use]
    pub fn percentiles(&self) -> Option<Percentiles> {
        Some(Percentiles {
            p50: self.percentile(50)?,
            p95: self.percentile(95)?,
            p99: self.percentile(99)?,
            max: self.max()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_edges_by_hand() {
        // Exact below 2048: a bucket per value.
        assert_eq!((bucket_of(0), bucket_of(1023)), (0, 1023));
        assert_eq!((bucket_of(1024), bucket_upper(1024)), (1024, 1024));
        assert_eq!(bucket_of(2047), 2047);
        // 2048 = 1024 << 1: octave 2, the bucket covers 2048..=2049.
        assert_eq!(bucket_of(2048), 2048);
        assert_eq!(bucket_of(2049), 2048);
        assert_eq!(bucket_upper(2048), 2049);
        // The top value lands in the last bucket.
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_upper(BUCKETS - 1), u64::MAX);
    }
}
