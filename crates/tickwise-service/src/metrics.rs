//! `/metrics` in the Prometheus text exposition format (version 0.0.4).
//!
//! Written by hand: a dozen counters and one histogram do not need a
//! metrics library, and the format is plain text.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::budget::ByteBudget;
use crate::queue::{LATENCY_BUCKETS_MS, QueueStats};

/// Counters of the HTTP layer for `/metrics`.
/// Counters of the HTTP layer for `/metrics`.
#[derive(Debug, Default)]
pub struct HttpStats {
    /// Uploads accepted into the queue (new jobs).
    pub accepted: AtomicU64,
    /// Uploads of bytes already queued, running or verified.
    pub duplicates: AtomicU64,
    /// Uploads refused as too large (`413`).
    pub too_large: AtomicU64,
    /// Uploads refused because the queue was full (`429`).
    pub queue_full: AtomicU64,
    /// Uploads whose body did not arrive in time (`408`).
    pub body_timeouts: AtomicU64,
    /// Uploads refused at upload, without a worker.
    pub rejected_early: AtomicU64,
    /// Requests that failed on a queue backend error (`503`).
    pub backend_errors: AtomicU64,
    /// Batch uploads taken in (their replays count above, one by one).
    pub batches: AtomicU64,
    /// Uploads refused because the bodies in flight held the whole byte
    /// budget (`503`).
    pub busy: AtomicU64,
    /// Uploads refused because their client had its bound of work waiting
    /// or running (`429`).
    pub client_busy: AtomicU64,
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The metrics page for queue counters `q`, HTTP counters `h` and the
/// upload byte budget `budget`.
#[must_use]
pub fn render(q: &QueueStats, h: &HttpStats, budget: &ByteBudget, engine: &str) -> String {
    let mut o = String::with_capacity(4096);
    family(
        &mut o,
        "tickwise_queue_depth",
        "gauge",
        "Jobs waiting for a worker.",
    );
    let _ = writeln!(o, "tickwise_queue_depth{{queue=\"{engine}\"}} {}", q.queued);
    family(
        &mut o,
        "tickwise_jobs_running",
        "gauge",
        "Jobs delivered to a worker and not yet finished.",
    );
    let _ = writeln!(o, "tickwise_jobs_running {}", q.running);
    family(
        &mut o,
        "tickwise_queue_capacity",
        "gauge",
        "Jobs waiting or running before uploads get 429.",
    );
    let _ = writeln!(o, "tickwise_queue_capacity {}", q.capacity);
    family(
        &mut o,
        "tickwise_jobs_total",
        "counter",
        "Verdicts stored, by outcome.",
    );
    for (name, n) in ["ok", "diverged", "refused"].iter().zip(q.outcomes) {
        let _ = writeln!(o, "tickwise_jobs_total{{outcome=\"{name}\"}} {n}");
    }
    family(
        &mut o,
        "tickwise_verified_ticks_total",
        "counter",
        "Ticks re-simulated.",
    );
    let _ = writeln!(o, "tickwise_verified_ticks_total {}", q.ticks);
    family(
        &mut o,
        "tickwise_verify_seconds_total",
        "counter",
        "Time spent re-simulating (ticks/s = rate of ticks / rate of this).",
    );
    let _ = writeln!(
        o,
        "tickwise_verify_seconds_total {}",
        seconds(q.verify_nanos)
    );
    family(
        &mut o,
        "tickwise_verify_ticks_per_second",
        "gauge",
        "Verified ticks per second of re-simulation, since start.",
    );
    #[allow(clippy::cast_precision_loss, reason = "a rate for display")]
    let rate = if q.verify_nanos == 0 {
        0.0
    } else {
        q.ticks as f64 * 1e9 / q.verify_nanos as f64
    };
    let _ = writeln!(o, "tickwise_verify_ticks_per_second {rate:.0}");
    family(
        &mut o,
        "tickwise_redeliveries_total",
        "counter",
        "Deliveries beyond a job's first (a worker died or failed).",
    );
    let _ = writeln!(o, "tickwise_redeliveries_total {}", q.redeliveries);
    family(
        &mut o,
        "tickwise_inline_verifications_total",
        "counter",
        "Jobs whose first delivery ran on the thread that received their upload (embedded queue, --inline-work).",
    );
    let _ = writeln!(o, "tickwise_inline_verifications_total {}", q.inline);
    family(
        &mut o,
        "tickwise_dead_letters_total",
        "counter",
        "Jobs dead-lettered after too many deliveries.",
    );
    let _ = writeln!(o, "tickwise_dead_letters_total {}", q.dead_letters);
    family(
        &mut o,
        "tickwise_duplicate_verdicts_total",
        "counter",
        "Second verdicts for one job, refused by the idempotent write.",
    );
    let _ = writeln!(
        o,
        "tickwise_duplicate_verdicts_total {}",
        q.duplicate_verdicts
    );
    family(
        &mut o,
        "tickwise_verdict_latency_seconds",
        "histogram",
        "From upload accepted to verdict stored.",
    );
    let mut cumulative = 0u64;
    for (bound, n) in LATENCY_BUCKETS_MS.iter().zip(q.latency_counts) {
        cumulative += n;
        let _ = writeln!(
            o,
            "tickwise_verdict_latency_seconds_bucket{{le=\"{}\"}} {cumulative}",
            seconds(bound * 1_000_000)
        );
    }
    cumulative += q.latency_counts[LATENCY_BUCKETS_MS.len()];
    let _ = writeln!(
        o,
        "tickwise_verdict_latency_seconds_bucket{{le=\"+Inf\"}} {cumulative}"
    );
    let _ = writeln!(
        o,
        "tickwise_verdict_latency_seconds_sum {}",
        seconds(q.latency_sum_ms * 1_000_000)
    );
    let _ = writeln!(o, "tickwise_verdict_latency_seconds_count {cumulative}");
    family(
        &mut o,
        "tickwise_uploads_total",
        "counter",
        "Uploads answered by this process, by result.",
    );
    for (name, c) in [
        ("accepted", &h.accepted),
        ("duplicate", &h.duplicates),
        ("refused_early", &h.rejected_early),
        ("too_large", &h.too_large),
        ("queue_full", &h.queue_full),
        ("body_timeout", &h.body_timeouts),
        ("backend_error", &h.backend_errors),
        ("busy", &h.busy),
        ("client_busy", &h.client_busy),
    ] {
        let _ = writeln!(
            o,
            "tickwise_uploads_total{{result=\"{name}\"}} {}",
            c.load(Ordering::Relaxed)
        );
    }
    family(
        &mut o,
        "tickwise_upload_bytes_in_flight",
        "gauge",
        "Bytes reserved by the upload bodies being received (buffers at their declared size).",
    );
    let _ = writeln!(o, "tickwise_upload_bytes_in_flight {}", budget.in_use());
    family(
        &mut o,
        "tickwise_upload_bytes_budget",
        "gauge",
        "Bytes all upload bodies in flight may hold together; uploads past it get 503.",
    );
    let _ = writeln!(o, "tickwise_upload_bytes_budget {}", budget.limit());
    family(
        &mut o,
        "tickwise_batches_total",
        "counter",
        "Batch uploads (POST /v1/batches) accepted by this process; their replays count in tickwise_uploads_total.",
    );
    let _ = writeln!(
        o,
        "tickwise_batches_total {}",
        h.batches.load(Ordering::Relaxed)
    );
    o
}

/// Nanoseconds as decimal seconds, exactly (no float rounding).
fn seconds(nanos: u64) -> String {
    let (s, frac) = (nanos / 1_000_000_000, nanos % 1_000_000_000);
    if frac == 0 {
        s.to_string()
    } else {
        let f = format!("{frac:09}");
        format!("{s}.{}", f.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact_decimals() {
        assert_eq!(seconds(0), "0");
        assert_eq!(seconds(5_000_000), "0.005");
        assert_eq!(seconds(1_500_000_000), "1.5");
        assert_eq!(seconds(300_000_000_000), "300");
    }

    #[test]
    fn histogram_is_cumulative_and_ends_with_inf() {
        let mut q = QueueStats::default();
        q.latency_counts[0] = 2; // <= 5 ms
        q.latency_counts[3] = 1; // <= 50 ms
        q.latency_counts[LATENCY_BUCKETS_MS.len()] = 1; // above 300 s
        let text = render(&q, &HttpStats::default(), &ByteBudget::new(1), "memory");
        assert!(
            text.contains("tickwise_verdict_latency_seconds_bucket{le=\"0.005\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("tickwise_verdict_latency_seconds_bucket{le=\"0.025\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("tickwise_verdict_latency_seconds_bucket{le=\"0.05\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("tickwise_verdict_latency_seconds_bucket{le=\"300\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("tickwise_verdict_latency_seconds_bucket{le=\"+Inf\"} 4\n"),
            "{text}"
        );
        assert!(
            text.contains("tickwise_verdict_latency_seconds_count 4\n"),
            "{text}"
        );
    }
}
