//! `tickwise loadtest`: uploads replays to a running `verifyd`, waits for
//! every verdict, and reports throughput and verdict latency.
//!
//! Bounded by construction: only loopback URLs are accepted, each replay
//! is uploaded once (ids are content hashes, so re-uploads would only hit
//! the cache), and the run stops after its time budget even if verdicts
//! are still missing (they count as errors).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::{Frame, SizeHint};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::sync::Mutex;

use crate::job::{JobRecord, JobStatus};

/// The longest run accepted.
pub const MAX_SECONDS: u64 = 3_600;
/// The most concurrent clients.
pub const MAX_CONCURRENCY: usize = 1_024;
/// The most replays per batch request (the service's default cap).
pub const MAX_BATCH: usize = 256;

/// What to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadConfig {
    /// The service's base URL, e.g. `http://127.0.0.1:8087`.
    pub url: String,
    /// Uploads in flight at once.
    pub concurrency: usize,
    /// The run stops after this long.
    pub duration: Duration,
    /// Uploads per second (spread evenly); `None` = as fast as verdicts come.
    pub rate: Option<u32>,
    /// The session duration header to send, if any.
    pub session_ms: Option<u64>,
    /// Replays per request: 1 uploads each with `POST /v1/replays`; more
    /// sends them together with `POST /v1/batches` and waits for the
    /// verdicts with `?wait=` on the batch, then `GET /v1/replays?ids=…&wait=`
    /// for any still open.
    pub batch: usize,
}

/// Why a load test could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// The URL is not `http://` on a loopback address.
    NotLoopback {
        /// The URL given.
        url: String,
    },
    /// The URL does not parse.
    BadUrl {
        /// The URL given.
        url: String,
    },
    /// Nothing to upload.
    NoReplays,
    /// Concurrency, duration or rate out of range.
    OutOfRange {
        /// Which setting.
        what: &'static str,
        /// Its limit.
        limit: u64,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotLoopback { url } => write!(
                f,
                "{url} is not on this machine: load tests only target http://127.0.0.1, localhost or [::1]"
            ),
            LoadError::BadUrl { url } => {
                write!(f, "{url:?} is not a URL like http://127.0.0.1:8087")
            }
            LoadError::NoReplays => f.write_str("no replays to upload"),
            LoadError::OutOfRange { what, limit } => {
                write!(f, "{what} must be between 1 and {limit}")
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// What a load test measured.
#[derive(Clone, Debug, Default, PartialEq)]
#[must_use]
pub struct LoadReport {
    /// Replays uploaded (accepted by the service).
    pub uploaded: u64,
    /// Verdicts received, by status: ok, diverged, refused.
    pub verdicts: [u64; 3],
    /// Uploads or polls that failed, or verdicts missing at the end.
    pub errors: u64,
    /// `429` answers (retried after `Retry-After`).
    pub throttled: u64,
    /// Ticks the verdicts re-simulated.
    pub ticks: u64,
    /// From the first upload to the last verdict.
    pub elapsed: Duration,
    /// Verdict latencies (upload sent → verdict received), sorted, in
    /// milliseconds.
    pub latencies_ms: Vec<f64>,
    /// The first few error messages.
    pub error_samples: Vec<String>,
}

impl LoadReport {
    /// Verdicts received.
    #[must_use]
    pub fn verdict_count(&self) -> u64 {
        self.verdicts.iter().sum()
    }

    /// Verdicts per second.
    #[must_use]
    pub fn replays_per_sec(&self) -> f64 {
        per_sec(self.verdict_count(), self.elapsed)
    }

    /// Verified ticks per second.
    #[must_use]
    pub fn ticks_per_sec(&self) -> f64 {
        per_sec(self.ticks, self.elapsed)
    }

    /// The `q`-quantile of verdict latency in ms (nearest rank), 0 if none.
    #[must_use]
    pub fn latency_ms(&self, q: f64) -> f64 {
        if self.latencies_ms.is_empty() {
            return 0.0;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a rank within the vector"
        )]
        let rank = ((q * self.latencies_ms.len() as f64).ceil() as usize)
            .clamp(1, self.latencies_ms.len());
        self.latencies_ms[rank - 1]
    }
}

#[allow(clippy::cast_precision_loss, reason = "a rate for display")]
fn per_sec(n: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 { n as f64 / s } else { 0.0 }
}

/// Checks that `url` is plain HTTP on a loopback address and returns it
/// without a trailing slash.
///
/// # Errors
///
/// [`LoadError::BadUrl`], [`LoadError::NotLoopback`].
pub fn loopback_base(url: &str) -> Result<String, LoadError> {
    let uri: Uri = url
        .parse()
        .map_err(|_| LoadError::BadUrl { url: url.into() })?;
    if uri.scheme_str() != Some("http") {
        return Err(LoadError::NotLoopback { url: url.into() });
    }
    let host = uri
        .host()
        .ok_or_else(|| LoadError::BadUrl { url: url.into() })?;
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host == "[::1]"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return Err(LoadError::NotLoopback { url: url.into() });
    }
    Ok(url.trim_end_matches('/').to_string())
}

type HttpClient = Client<HttpConnector, Pieces>;

/// A request body sent as the pieces it is made of (a batch: each replay's
/// length, then the replay itself), so the replays, already in memory, go
/// out in one vectored write instead of first being copied into a body of
/// their own: 264 KB copied and freed again for a batch of eight 10-minute
/// island replays.
#[derive(Clone, Debug, Default)]
struct Pieces {
    left: VecDeque<Bytes>,
    len: u64,
}

impl Pieces {
    /// The body made of `pieces`, in order (empty ones dropped).
    fn of(pieces: impl IntoIterator<Item = Bytes>) -> Pieces {
        let left: VecDeque<Bytes> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        let len = left.iter().map(|p| p.len() as u64).sum();
        Pieces { left, len }
    }
}

impl hyper::body::Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        Poll::Ready(this.left.pop_front().map(|piece| {
            this.len -= piece.len() as u64;
            Ok(Frame::data(piece))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.left.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.len)
    }
}

struct Shared {
    client: HttpClient,
    base: String,
    replays: Vec<Bytes>,
    next: AtomicUsize,
    start: Instant,
    deadline: Instant,
    config: LoadConfig,
    report: Mutex<LoadReport>,
}

enum Answer {
    Verdict(Box<JobRecord>),
    Pending(String),
    Throttled(Duration),
}

async fn call(
    s: &Shared,
    method: Method,
    path: &str,
    body: Pieces,
) -> Result<(StatusCode, Option<Duration>, Bytes), String> {
    let kind = if path.starts_with("/v1/batches") {
        crate::batch::BATCH_CONTENT_TYPE
    } else {
        "application/octet-stream"
    };
    let mut req = Request::builder()
        .method(method)
        .uri(format!("{}{path}", s.base))
        .header("content-type", kind);
    if let Some(ms) = s.config.session_ms {
        req = req.header(crate::http::SESSION_HEADER, ms);
    }
    let req = req.body(body).map_err(|e| e.to_string())?;
    let remaining = s.deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
    let resp = tokio::time::timeout(remaining, s.client.request(req))
        .await
        .map_err(|_| String::from("timed out"))?
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let retry = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, retry, body))
}

fn answer(status: StatusCode, retry: Option<Duration>, body: &[u8]) -> Result<Answer, String> {
    match status {
        StatusCode::OK | StatusCode::ACCEPTED => {
            let r = JobRecord::from_json(body)
                .map_err(|e| format!("bad JSON from the service: {e}"))?;
            if r.status.is_final() {
                Ok(Answer::Verdict(Box::new(r)))
            } else {
                Ok(Answer::Pending(r.id))
            }
        }
        StatusCode::TOO_MANY_REQUESTS => Ok(Answer::Throttled(
            retry.unwrap_or(Duration::from_millis(200)),
        )),
        other => Err(format!("{other}: {}", String::from_utf8_lossy(body))),
    }
}

async fn one(s: &Shared, replay: Bytes) -> Result<(JobRecord, Duration), String> {
    let sent = Instant::now();
    let wait = s
        .deadline
        .saturating_duration_since(sent)
        .as_secs()
        .clamp(1, 30);
    let mut id = loop {
        if Instant::now() >= s.deadline {
            return Err("time budget ran out before the upload was accepted".into());
        }
        let (status, retry, body) = call(
            s,
            Method::POST,
            &format!("/v1/replays?wait={wait}"),
            Pieces::of([replay.clone()]),
        )
        .await?;
        match answer(status, retry, &body)? {
            Answer::Verdict(r) => return Ok((*r, sent.elapsed())),
            Answer::Pending(id) => break id,
            Answer::Throttled(d) => {
                s.report.lock().await.throttled += 1;
                tokio::time::sleep(d.min(Duration::from_secs(2))).await;
            }
        }
    };
    loop {
        if Instant::now() >= s.deadline {
            return Err(format!("no verdict for {id} within the time budget"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        let (status, retry, body) = call(
            s,
            Method::GET,
            &format!("/v1/replays/{id}"),
            Pieces::default(),
        )
        .await?;
        match answer(status, retry, &body)? {
            Answer::Verdict(r) => return Ok((*r, sent.elapsed())),
            Answer::Pending(i) => id = i,
            Answer::Throttled(d) => tokio::time::sleep(d).await,
        }
    }
}

/// The records of a `{"replays": [...]}` answer.
fn records_of(body: &[u8]) -> Result<Vec<JobRecord>, String> {
    #[derive(serde::Deserialize)]
    struct Many {
        replays: Vec<JobRecord>,
    }
    serde_json::from_slice::<Many>(body)
        .map(|m| m.replays)
        .map_err(|e| format!("bad JSON from the service: {e}"))
}

/// Uploads `replays` as one batch and waits for all their verdicts; the
/// verdicts in upload order, each with its latency (batch sent → that
/// verdict received).
async fn many(s: &Shared, replays: &[Bytes]) -> Result<Vec<(JobRecord, Duration)>, String> {
    let sent = Instant::now();
    let wait = |now: Instant| {
        s.deadline
            .saturating_duration_since(now)
            .as_secs()
            .clamp(1, 30)
    };
    let body = Pieces::of(crate::batch::frame_batch_pieces(replays));
    let records = loop {
        if Instant::now() >= s.deadline {
            return Err("time budget ran out before the batch was accepted".into());
        }
        let path = format!("/v1/batches?wait={}", wait(Instant::now()));
        let (status, retry, reply) = call(s, Method::POST, &path, body.clone()).await?;
        match status {
            StatusCode::OK | StatusCode::ACCEPTED => break records_of(&reply)?,
            StatusCode::TOO_MANY_REQUESTS => {
                s.report.lock().await.throttled += 1;
                let d = retry.unwrap_or(Duration::from_millis(200));
                tokio::time::sleep(d.min(Duration::from_secs(2))).await;
            }
            other => return Err(format!("{other}: {}", String::from_utf8_lossy(&reply))),
        }
    };
    if records.len() != replays.len() {
        return Err(format!(
            "the service answered {} records for a batch of {}",
            records.len(),
            replays.len()
        ));
    }
    let at = sent.elapsed();
    let mut out: Vec<(JobRecord, Duration)> = records.into_iter().map(|r| (r, at)).collect();
    loop {
        let open: Vec<&str> = out
            .iter()
            .filter(|(r, _)| !r.status.is_final())
            .map(|(r, _)| r.id.as_str())
            .collect();
        if open.is_empty() {
            return Ok(out);
        }
        if Instant::now() >= s.deadline {
            return Err(format!(
                "no verdict for {} replays of a batch within the time budget",
                open.len()
            ));
        }
        let path = format!(
            "/v1/replays?ids={}&wait={}",
            open.join(","),
            wait(Instant::now())
        );
        let (status, _, reply) = call(s, Method::GET, &path, Pieces::default()).await?;
        if status != StatusCode::OK && status != StatusCode::ACCEPTED {
            return Err(format!("{status}: {}", String::from_utf8_lossy(&reply)));
        }
        let now = sent.elapsed();
        for r in records_of(&reply)? {
            if r.status.is_final() {
                for slot in out.iter_mut().filter(|(o, _)| o.id == r.id) {
                    *slot = (r.clone(), now);
                }
            }
        }
    }
}

fn count(report: &mut LoadReport, record: &JobRecord, latency: Duration, start: Instant) {
    let k = match record.status {
        JobStatus::Ok => 0,
        JobStatus::Diverged => 1,
        _ => 2,
    };
    report.verdicts[k] += 1;
    report.ticks += record.ticks_run.unwrap_or(0);
    report.latencies_ms.push(latency.as_secs_f64() * 1e3);
    report.elapsed = start.elapsed();
}

/// One client: takes the next `batch` replays (one at a time with a batch of
/// 0 or 1, through `POST /v1/replays`; otherwise through `POST /v1/batches`),
/// paced by the configured rate, until the replays or the time run out.
async fn client_task(s: Arc<Shared>) {
    let n = s.config.batch.max(1);
    loop {
        let i = s.next.fetch_add(n, Ordering::Relaxed);
        if i >= s.replays.len() {
            return;
        }
        let chunk = &s.replays[i..(i + n).min(s.replays.len())];
        if let Some(rate) = s.config.rate {
            let due = s.start + Duration::from_secs_f64(i as f64 / f64::from(rate.max(1)));
            tokio::time::sleep_until(due.into()).await;
        }
        if Instant::now() >= s.deadline {
            return;
        }
        let result = if n == 1 {
            one(&s, chunk[0].clone()).await.map(|v| vec![v])
        } else {
            many(&s, chunk).await
        };
        let mut report = s.report.lock().await;
        report.uploaded += chunk.len() as u64;
        match result {
            Ok(verdicts) => {
                for (record, latency) in &verdicts {
                    count(&mut report, record, *latency, s.start);
                }
            }
            Err(e) => {
                report.errors += chunk.len() as u64;
                if report.error_samples.len() < 5 {
                    report.error_samples.push(e);
                }
            }
        }
    }
}

/// Uploads every replay once with `config.concurrency` clients and waits
/// for the verdicts, within `config.duration`.
///
/// # Errors
///
/// A [`LoadError`] for a bad configuration; failures during the run are
/// counted in the report.
pub async fn run(config: LoadConfig, replays: Vec<Bytes>) -> Result<LoadReport, LoadError> {
    let base = loopback_base(&config.url)?;
    if replays.is_empty() {
        return Err(LoadError::NoReplays);
    }
    if config.concurrency == 0 || config.concurrency > MAX_CONCURRENCY {
        return Err(LoadError::OutOfRange {
            what: "concurrency",
            limit: MAX_CONCURRENCY as u64,
        });
    }
    if config.duration.is_zero() || config.duration > Duration::from_secs(MAX_SECONDS) {
        return Err(LoadError::OutOfRange {
            what: "seconds",
            limit: MAX_SECONDS,
        });
    }
    if config.batch == 0 || config.batch > MAX_BATCH {
        return Err(LoadError::OutOfRange {
            what: "batch",
            limit: MAX_BATCH as u64,
        });
    }
    if config.rate == Some(0) {
        return Err(LoadError::OutOfRange {
            what: "rate",
            limit: u64::from(u32::MAX),
        });
    }
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(config.concurrency)
        .build(connector);
    let start = Instant::now();
    let shared = Arc::new(Shared {
        client,
        base,
        replays,
        next: AtomicUsize::new(0),
        start,
        deadline: start + config.duration,
        config: config.clone(),
        report: Mutex::new(LoadReport::default()),
    });
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..config.concurrency {
        tasks.spawn(client_task(Arc::clone(&shared)));
    }
    while tasks.join_next().await.is_some() {}
    let mut report = shared.report.lock().await.clone();
    let unsent = shared
        .replays
        .len()
        .saturating_sub(usize::try_from(report.uploaded).unwrap_or(usize::MAX));
    if unsent > 0 && report.error_samples.len() < 5 {
        report.error_samples.push(format!(
            "{unsent} replays not uploaded within the time budget"
        ));
    }
    report.latencies_ms.sort_by(f64::total_cmp);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_http() {
        assert_eq!(
            loopback_base("http://127.0.0.1:8087/").unwrap(),
            "http://127.0.0.1:8087"
        );
        assert!(loopback_base("http://localhost:1").is_ok());
        assert!(loopback_base("http://127.3.4.5:1").is_ok());
        assert!(loopback_base("http://[::1]:1").is_ok());
        for bad in [
            "http://10.0.0.1:80",
            "http://example.com",
            "https://127.0.0.1:1",
            "http://192.168.1.1",
        ] {
            assert!(
                matches!(loopback_base(bad), Err(LoadError::NotLoopback { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            loopback_base("not a url"),
            Err(LoadError::BadUrl { .. })
        ));
    }

    #[test]
    fn nearest_rank_quantiles() {
        let r = LoadReport {
            latencies_ms: (1..=100).map(f64::from).collect(),
            ..LoadReport::default()
        };
        assert!((r.latency_ms(0.5) - 50.0).abs() < 1e-9);
        assert!((r.latency_ms(0.99) - 99.0).abs() < 1e-9);
        assert!((r.latency_ms(1.0) - 100.0).abs() < 1e-9);
    }
}
