//! Percentiles on inputs computed by hand, and the histogram against the
//! exact method.

use proptest::prelude::*;
use tickwise_lab::histogram::FrameTimeHistogram;
use tickwise_lab::stats::{Percentiles, mean, nearest_rank, std_dev};

#[test]
fn nearest_rank_five_values_by_hand() {
    // n = 5: rank = ceil(p * 5 / 100).
    let v = [15, 20, 35, 40, 50];
    assert_eq!(nearest_rank(&v, 0), Some(15)); // rank 0 -> 1
    assert_eq!(nearest_rank(&v, 5), Some(15)); // ceil(0.25) = 1
    assert_eq!(nearest_rank(&v, 30), Some(20)); // ceil(1.5) = 2
    assert_eq!(nearest_rank(&v, 40), Some(20)); // 2.0 -> 2
    assert_eq!(nearest_rank(&v, 50), Some(35)); // ceil(2.5) = 3
    assert_eq!(nearest_rank(&v, 95), Some(50)); // ceil(4.75) = 5
    assert_eq!(nearest_rank(&v, 100), Some(50));
}

#[test]
fn nearest_rank_ten_values_by_hand() {
    let v = [3, 6, 7, 8, 8, 10, 13, 15, 16, 20];
    assert_eq!(nearest_rank(&v, 25), Some(7)); // ceil(2.5) = 3
    assert_eq!(nearest_rank(&v, 50), Some(8)); // 5
    assert_eq!(nearest_rank(&v, 75), Some(15)); // ceil(7.5) = 8
    assert_eq!(nearest_rank(&v, 99), Some(20)); // ceil(9.9) = 10
}

#[test]
fn percentiles_of_frame_times_by_hand() {
    // 100 frames: 90 of 16 ms, 6 of 20 ms, 3 of 33 ms, 1 of 250 ms, shuffled.
    // Sorted ranks: 1..=90 are 16, 91..=96 are 20, 97..=99 are 33, 100 is 250.
    // p50 -> rank 50 = 16; p95 -> rank 95 = 20; p99 -> rank 99 = 33.
    let mut v: Vec<u64> = Vec::new();
    for i in 0..100u64 {
        v.push(match i % 100 {
            7 => 250,
            11 | 42 | 77 => 33,
            3 | 19 | 28 | 55 | 61 | 90 => 20,
            _ => 16,
        });
    }
    let p = Percentiles::of(&mut v).unwrap();
    assert_eq!((p.p50, p.p95, p.p99, p.max), (16, 20, 33, 250));
}

#[test]
fn one_to_a_hundred() {
    let mut v: Vec<u64> = (1..=100).rev().collect();
    let p = Percentiles::of(&mut v).unwrap();
    assert_eq!((p.p50, p.p95, p.p99, p.max), (50, 95, 99, 100));
}

#[test]
fn empty_and_out_of_range() {
    assert_eq!(nearest_rank(&[], 50), None);
    assert_eq!(nearest_rank(&[1, 2], 101), None);
    assert!(Percentiles::of(&mut []).is_none());
    assert!(FrameTimeHistogram::new().percentiles().is_none());
}

#[test]
fn mean_and_std_dev_by_hand() {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population sd 2.
    let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
    assert!((mean(&v) - 5.0).abs() < 1e-12);
    assert!((std_dev(&v) - 2.0).abs() < 1e-12);
    assert!(std_dev(&[3.0]).abs() < 1e-12);
}

#[test]
fn histogram_is_exact_below_2048_ns() {
    let mut h = FrameTimeHistogram::new();
    for v in 1..=100u64 {
        h.record(v);
    }
    let p = h.percentiles().unwrap();
    assert_eq!((p.p50, p.p95, p.p99, p.max), (50, 95, 99, 100));
    assert_eq!((h.min(), h.count()), (Some(1), 100));
    assert!((h.mean().unwrap() - 50.5).abs() < 1e-9);
}

#[test]
fn histogram_of_identical_frames_reports_them_exactly() {
    // The bucket's upper edge is clamped to the exact max.
    let mut h = FrameTimeHistogram::new();
    for _ in 0..1_000 {
        h.record(16_666_667);
    }
    assert_eq!(h.percentile(50), Some(16_666_667));
    assert_eq!(h.percentile(99), Some(16_666_667));
}

proptest! {
    /// The histogram's percentile is never below the exact nearest-rank
    /// value and at most 1/1024 above it.
    #[test]
    fn histogram_within_bucket_of_exact(
        values in proptest::collection::vec(0u64..5_000_000_000, 1..400),
        p in 0u32..=100,
    ) {
        let mut h = FrameTimeHistogram::new();
        for v in &values {
            h.record(*v);
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let exact = nearest_rank(&sorted, p).unwrap();
        let got = h.percentile(p).unwrap();
        prop_assert!(got >= exact, "got {got} < exact {exact}");
        prop_assert!(u128::from(got) * 1024 <= u128::from(exact) * 1025, "got {got} too far above {exact}");
    }
}
