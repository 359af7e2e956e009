//! Turning uploaded bytes into a verdict, with the catalog's verify API.
//!
//! The verdict is the catalog's ([`Catalog::judge`]); this module only
//! stores it, with the job's own facts (attempts, timings, wall clock).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

use tickwise::ReplayLimits;
use tickwise_catalog::{Admitted, Catalog, Verdict};

use crate::job::{JobId, JobMeta, JobRecord, WallClock, unix_ms};

/// Re-simulates uploads with a catalog under fixed limits. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Verifier {
    catalog: Arc<Catalog>,
    limits: ReplayLimits,
}

/// A verification that could not produce a verdict (the sim's code
/// panicked). The job is retried, then dead-lettered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyFailure {
    /// What happened, in words.
    pub message: String,
}

impl Verifier {
    /// A verifier over `catalog` with reader and work limits `limits`.
    #[must_use]
    pub fn new(catalog: Arc<Catalog>, limits: ReplayLimits) -> Verifier {
        Verifier { catalog, limits }
    }

    /// The limits.
    #[must_use]
    pub const fn limits(&self) -> &ReplayLimits {
        &self.limits
    }

    /// The catalog.
    #[must_use]
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The checks made before an upload is queued
    /// ([`Catalog::admit`]): the envelope, the integrity checksum and the
    /// header read, the sim and version are known, the config is valid and
    /// the work fits the limit. `Ok` carries what they read
    /// ([`Admitted`]): the job's estimated work (declared ticks × the sim's
    /// cost per tick under the replay's config), which picks its lane and
    /// counts against its client's bound, and the header, which the
    /// embedded queue's worker reuses ([`Verifier::verify`]); `Err` the
    /// refused verdict, which needs no worker.
    ///
    /// The checksum is a pass over the whole file (about a sixth of the
    /// cost of verifying a 10-minute island replay), but it is what refuses
    /// a corrupt body **before** it is queued: without it, any garbage
    /// behind a valid header took a place and its bytes in the queue until
    /// a worker reached it. A worker given the [`Admitted`] does not make
    /// it again.
    ///
    /// # Errors
    ///
    /// The catalog's refused [`Verdict`].
    pub fn precheck(&self, bytes: &[u8]) -> Result<Admitted, Box<Verdict>> {
        self.catalog.admit(bytes, &self.limits)
    }

    /// Re-simulates `bytes` and builds the verdict record. With what
    /// [`Verifier::precheck`] read from these same bytes (`admitted`), the
    /// header is not read and the file not hashed again
    /// ([`Catalog::judge_admitted`]); without it (bytes that crossed a
    /// process boundary, as the Redis worker's), everything is checked
    /// ([`Catalog::judge`]). A panic in the sim's code is caught and
    /// returned as a failure (never a verdict).
    ///
    /// # Errors
    ///
    /// [`VerifyFailure`] when the sim's code panicked.
    pub fn verify(
        &self,
        id: JobId,
        bytes: &[u8],
        admitted: Option<&Admitted>,
        meta: &JobMeta,
        attempts: u32,
    ) -> Result<JobRecord, VerifyFailure> {
        self.run(id, meta, attempts, || match admitted {
            Some(a) => self.catalog.judge_admitted(bytes, a, &self.limits),
            None => self.catalog.judge(bytes.to_vec(), &self.limits),
        })
    }

    /// [`Verifier::verify`] for bytes the verifier may keep (a Redis
    /// worker's, read back from Redis): everything is checked
    /// ([`Catalog::judge`]) and the bytes are not copied.
    ///
    /// # Errors
    ///
    /// [`VerifyFailure`] when the sim's code panicked.
    pub fn verify_vec(
        &self,
        id: JobId,
        bytes: Vec<u8>,
        meta: &JobMeta,
        attempts: u32,
    ) -> Result<JobRecord, VerifyFailure> {
        self.run(id, meta, attempts, move || {
            self.catalog.judge(bytes, &self.limits)
        })
    }

    /// Runs `judge`, catching a panic, and builds the record.
    fn run(
        &self,
        id: JobId,
        meta: &JobMeta,
        attempts: u32,
        judge: impl FnOnce() -> Verdict,
    ) -> Result<JobRecord, VerifyFailure> {
        let started = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| record_of(id, &judge(), meta)));
        let mut record = result.map_err(|panic| VerifyFailure {
            message: format!("the sim's code panicked: {}", panic_text(&*panic)),
        })?;
        record.attempts = Some(attempts);
        record.verified_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        record.latency_ms = Some(unix_ms().saturating_sub(meta.submitted_ms));
        Ok(record)
    }
}

/// The record of the catalog's verdict, stored as it is, with the
/// wall-clock check when the client sent the session's duration.
fn record_of(id: JobId, verdict: &Verdict, meta: &JobMeta) -> JobRecord {
    let mut r = JobRecord::of_verdict(id, verdict);
    if let (Some(session_ms), Some(simulated)) = (meta.session_ms, verdict.simulated) {
        r.wall_clock = Some(WallClock::judge(
            session_ms,
            simulated.as_nanos() / 1_000_000,
        ));
    }
    r
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("(no message)")
    }
}
