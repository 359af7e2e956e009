//! Jobs, their ids, and the record a client reads back.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tickwise_catalog::{Outcome, Verdict};

/// A job's id: [`JobId::PREFIX`] (`b3-`, naming the hash) and the BLAKE3
/// hash of the uploaded bytes as 64 lowercase hex digits, e.g.
/// `b3-af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262`
/// for an empty upload (what `b3sum` prints, after the prefix).
///
/// Why a cryptographic hash: the id is also the idempotency key (the same
/// bytes uploaded twice are one job with one verdict). With a weak hash an
/// attacker could craft a forged replay whose id collides with a valid
/// one's and be answered with the valid one's verdict. Why BLAKE3: it is
/// several times faster than SHA-256 on the same CPU (the id is computed
/// for every upload, a pass over every byte), and as collision resistant.
///
/// Why a prefix: the form is versioned. Ids before it were the bare
/// SHA-256 of the upload (64 hex digits); [`JobId::parse`] recognises that
/// form and refuses it as [`JobIdError::Retired`], so a client holding
/// an old id is told to upload again (uploads are idempotent) instead of
/// hearing "unknown job".
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId([u8; 32]);

/// Why a text is not a job id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobIdError {
    /// The retired form: 64 hex digits without a prefix, the SHA-256 of
    /// an upload, as ids were before [`JobId::PREFIX`]. The service no
    /// longer finds jobs by it.
    Retired,
    /// Not a job id of any form.
    Malformed,
}

impl fmt::Display for JobIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobIdError::Retired => write!(
                f,
                "a retired job id form (SHA-256, 64 hex digits without a prefix); ids are now \"{}\" and the BLAKE3 hash of the upload: upload the replay again to get its id (the same bytes are the same job)",
                JobId::PREFIX
            ),
            JobIdError::Malformed => write!(
                f,
                "not a job id (\"{}\" and 64 lowercase hex digits)",
                JobId::PREFIX
            ),
        }
    }
}

impl std::error::Error for JobIdError {}

impl JobId {
    /// What every id starts with: the name of its hash, BLAKE3, so that a
    /// later change of hash is a new prefix, not a silent change of
    /// meaning.
    pub const PREFIX: &'static str = "b3-";

    /// The id of `bytes`.
    #[must_use]
    pub fn of(bytes: &[u8]) -> JobId {
        JobId(*blake3::hash(bytes).as_bytes())
    }

    /// Parses [`JobId::PREFIX`] and 64 lowercase hex digits.
    ///
    /// # Errors
    ///
    /// [`JobIdError::Retired`] for an id of the old form (64 hex digits
    /// without a prefix), [`JobIdError::Malformed`] for anything else.
    pub fn parse(s: &str) -> Result<JobId, JobIdError> {
        match s.strip_prefix(JobId::PREFIX) {
            Some(hex) => parse_hex(hex).map(JobId).ok_or(JobIdError::Malformed),
            None if parse_hex(s).is_some() => Err(JobIdError::Retired),
            None => Err(JobIdError::Malformed),
        }
    }
}

/// 64 lowercase hex digits as 32 bytes.
fn parse_hex(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        let hi = hex_digit(pair[0])?;
        let lo = hex_digit(pair[1])?;
        out[i] = hi << 4 | lo;
    }
    Some(out)
}

const fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(JobId::PREFIX)?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JobId({self})")
    }
}

/// What travels with an upload besides its bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobMeta {
    /// When the upload was accepted, in milliseconds since the Unix epoch
    /// (for the verdict latency).
    pub submitted_ms: u64,
    /// The session's real duration as the client stated it, in
    /// milliseconds (the optional wall-clock plausibility check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ms: Option<u64>,
    /// The client's address (the TCP peer), for the per-client work bound
    /// and fair turns between clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<std::net::IpAddr>,
}

impl JobMeta {
    /// Metadata for an upload accepted now.
    #[must_use]
    pub fn now(session_ms: Option<u64>) -> JobMeta {
        JobMeta {
            submitted_ms: unix_ms(),
            session_ms,
            source: None,
        }
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
#[must_use]
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Waiting for a worker.
    Queued,
    /// A worker is re-simulating it.
    Running,
    /// Re-simulation reached every checkpoint and the final state.
    Ok,
    /// Re-simulation disagreed with the replay (a forgery, or a
    /// non-deterministic recorder).
    Diverged,
    /// The upload was not verified: another sim or format version, a
    /// corrupt file, over a limit, an unknown sim, a config the sim
    /// refuses, or dead-lettered after repeated worker failures. The
    /// record's `reason` says which ([`JobRecord::reason`]), in the words
    /// `tickwise verify --json` uses, so an old-version replay is never
    /// lumped with a corrupt one.
    Refused,
}

impl JobStatus {
    /// Whether this is a verdict (no further change will happen).
    #[must_use]
    pub const fn is_final(self) -> bool {
        matches!(
            self,
            JobStatus::Ok | JobStatus::Diverged | JobStatus::Refused
        )
    }

    /// The lowercase name used in JSON and metrics.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Ok => "ok",
            JobStatus::Diverged => "diverged",
            JobStatus::Refused => "refused",
        }
    }
}

/// The `reason` of a job refused because its worker failed on every
/// delivery (not a judgement of the replay: the service could not run it).
pub const DEAD_LETTER: &str = "dead-letter";

/// The wall-clock plausibility of a verified replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WallClock {
    /// The session's real duration the client stated.
    pub session_ms: u64,
    /// The replay's simulated duration: ticks × the sim's step.
    pub simulated_ms: u64,
    /// `"plausible"`, `"too-fast"` (more ticks than the real time could
    /// run) or `"too-slow"` (the real time was far longer than the ticks
    /// need: a slowed-down run).
    pub verdict: Plausibility,
}

/// See [`WallClock::verdict`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Plausibility {
    /// Simulated and real time agree within the tolerance.
    Plausible,
    /// The replay holds more ticks than the stated real time could run.
    TooFast,
    /// The stated real time is far longer than the replay's ticks take.
    TooSlow,
}

/// The tolerance of the plausibility check: 5 % of the longer duration
/// plus 2 s (start-up, network, a frame or two of clock slack).
pub const PLAUSIBILITY_SLACK_MS: u64 = 2_000;

impl WallClock {
    /// Compares a stated real duration with a simulated one.
    #[must_use]
    pub fn judge(session_ms: u64, simulated_ms: u64) -> WallClock {
        let slack = session_ms.max(simulated_ms) / 20 + PLAUSIBILITY_SLACK_MS;
        let verdict = if simulated_ms > session_ms.saturating_add(slack) {
            Plausibility::TooFast
        } else if session_ms > simulated_ms.saturating_add(slack) {
            Plausibility::TooSlow
        } else {
            Plausibility::Plausible
        };
        WallClock {
            session_ms,
            simulated_ms,
            verdict,
        }
    }
}

/// What `GET /v1/replays/{id}` answers: a job's status and, once verified,
/// its verdict. Absent fields are omitted from the JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[must_use]
pub struct JobRecord {
    /// The job id ([`JobId`]: `b3-` and the hex BLAKE3 of the upload).
    pub id: String,
    /// Where the job is, or its verdict.
    pub status: JobStatus,
    /// The sim id the replay names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<String>,
    /// Ticks the replay declares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticks: Option<u64>,
    /// Ticks actually re-simulated (fewer when it diverged early).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticks_run: Option<u64>,
    /// The re-simulated final digest (`ok`, or a final-state divergence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The final digest the replay claims (when verification reached it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_digest: Option<String>,
    /// The first checkpoint tick whose state differs (`diverged`); the
    /// states first differed after `lastMatchTick` and by this tick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_divergent_tick: Option<u64>,
    /// The last tick whose stored state matched (`diverged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_match_tick: Option<u64>,
    /// The state fields that differ (`diverged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<String>>,
    /// Why the upload is `refused`, as a word: the catalog's refusal
    /// reason (`version`, `corrupt`, `limit`, `unknown-sim`, `config`,
    /// the same as `verify --json`'s `reason`), or [`DEAD_LETTER`] for a
    /// job whose worker failed on every delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why the upload is `refused` or `diverged`, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Deliveries so far (1 unless a worker died or failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// Wall time the re-simulation took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_ms: Option<u64>,
    /// From the upload being accepted to the verdict being stored, in
    /// milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    /// The wall-clock plausibility check, when the client sent the
    /// session's duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_clock: Option<WallClock>,
    /// The catalog's verdict as `tickwise verify --json` prints it
    /// ([`Verdict::to_json`]): `status` `ok`, `diverged` or `refused`, and
    /// for a refusal its `reason` (`version`, `corrupt`, `limit`,
    /// `unknown-sim`, `config`). Absent for a job not verified yet or
    /// dead-lettered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<serde_json::Value>,
}

impl JobRecord {
    /// A record with only the id and the status.
    pub const fn bare(id: String, status: JobStatus) -> JobRecord {
        JobRecord {
            id,
            status,
            sim: None,
            ticks: None,
            ticks_run: None,
            digest: None,
            claimed_digest: None,
            first_divergent_tick: None,
            last_match_tick: None,
            fields: None,
            reason: None,
            error: None,
            attempts: None,
            verified_ms: None,
            latency_ms: None,
            wall_clock: None,
            verdict: None,
        }
    }

    /// The record of the catalog's verdict: the status (`ok`, `diverged`
    /// or `refused`, with its `reason`), the header's facts, the message as
    /// `error`, and the verdict itself as `verdict`.
    pub fn of_verdict(id: JobId, v: &Verdict) -> JobRecord {
        let status = match v.outcome {
            Outcome::Ok { .. } => JobStatus::Ok,
            Outcome::Diverged(_) => JobStatus::Diverged,
            Outcome::Refused { .. } => JobStatus::Refused,
        };
        let mut r = JobRecord::bare(id.to_string(), status);
        r.sim.clone_from(&v.sim);
        r.ticks = v.ticks;
        r.ticks_run = v.ticks_run;
        r.digest = v.digest().map(str::to_string);
        r.claimed_digest.clone_from(&v.claimed_digest);
        if let Outcome::Refused { reason } = v.outcome {
            r.reason = Some(reason.as_str().to_string());
        }
        if let Outcome::Diverged(d) = &v.outcome {
            r.first_divergent_tick = Some(d.tick);
            r.last_match_tick = Some(d.last_good_tick);
            r.fields = Some(d.fields.clone());
        }
        r.error.clone_from(&v.message);
        r.verdict = Some(v.to_json());
        r
    }

    /// The `refused` record of a job dead-lettered after its worker failed
    /// on every delivery; `error` names the last failure.
    pub fn dead_lettered(id: JobId, deliveries: u32, last_error: &str) -> JobRecord {
        let mut r = JobRecord::bare(id.to_string(), JobStatus::Refused);
        r.reason = Some(DEAD_LETTER.to_string());
        r.error = Some(format!(
            "dead-lettered after {deliveries} deliveries; last error: {last_error}"
        ));
        r.attempts = Some(deliveries);
        r
    }

    /// The record as JSON text.
    #[must_use]
    pub fn to_json(&self) -> String {
        // A struct of strings, integers and enums always serialises.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Parses a record stored as JSON.
    ///
    /// # Errors
    ///
    /// The JSON error for text that is not a record.
    pub fn from_json(text: &[u8]) -> Result<JobRecord, serde_json::Error> {
        serde_json::from_slice(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The input of the BLAKE3 team's published test vectors
    /// (`test_vectors/test_vectors.json` in github.com/BLAKE3-team/BLAKE3):
    /// `len` bytes of 0, 1, …, 250, 0, 1, ….
    fn vector_input(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    fn ids_are_blake3_in_hex_with_their_prefix() {
        // Expected values: the published test vectors (first 32 bytes of
        // each "hash"), and `b3sum` 1.2.0 (Debian) for "abc".
        let cases: [(&[u8], &str); 4] = [
            (
                b"",
                "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
            ),
            (
                &vector_input(1024),
                "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7",
            ),
            (
                &vector_input(7169),
                "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817",
            ),
            (
                b"abc",
                "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85",
            ),
        ];
        for (bytes, hex) in cases {
            let id = JobId::of(bytes);
            let text = format!("b3-{hex}");
            assert_eq!(id.to_string(), text);
            assert_eq!(format!("{id:?}"), format!("JobId({text})"));
            assert_eq!(JobId::parse(&text), Ok(id));
        }
    }

    #[test]
    fn a_large_upload_hashes_as_published() {
        // 102 400 bytes: many chunks, the SIMD paths (published vector).
        assert_eq!(
            JobId::of(&vector_input(102_400)).to_string(),
            "b3-bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"
        );
    }

    #[test]
    fn other_texts_are_refused_and_the_old_form_is_named() {
        let hex = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262";
        // The SHA-256 ids of before: 64 hex digits, no prefix.
        assert_eq!(JobId::parse(hex), Err(JobIdError::Retired));
        let sha_abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(JobId::parse(sha_abc), Err(JobIdError::Retired));
        assert!(
            JobIdError::Retired
                .to_string()
                .contains("upload the replay again")
        );
        for bad in [
            String::new(),
            "b3-".to_string(),
            format!("b3-{}", hex.to_uppercase()),
            format!("b3-{}", &hex[1..]),
            format!("b3-{hex}0"),
            format!("B3-{hex}"),
            format!("sha256-{hex}"),
            hex.to_uppercase(),
            "zz".to_string(),
        ] {
            assert_eq!(JobId::parse(&bad), Err(JobIdError::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn plausibility_bounds() {
        // 10 minutes simulated: slack = 600 000 / 20 + 2 000 = 32 000 ms.
        let sim = 600_000;
        assert_eq!(
            WallClock::judge(600_000, sim).verdict,
            Plausibility::Plausible
        );
        assert_eq!(
            WallClock::judge(632_000, sim).verdict,
            Plausibility::Plausible
        );
        // 632 001 ms real: slack is 31 600 + 2 000 = 33 600, still fine;
        // 640 000 ms: slack 34 000, 640 000 > 634 000 → too slow.
        assert_eq!(
            WallClock::judge(640_000, sim).verdict,
            Plausibility::TooSlow
        );
        // 5 minutes of real time cannot hold 10 simulated minutes.
        assert_eq!(
            WallClock::judge(300_000, sim).verdict,
            Plausibility::TooFast
        );
    }

    #[test]
    fn records_omit_absent_fields() {
        let r = JobRecord::bare("x".into(), JobStatus::Queued);
        assert_eq!(r.to_json(), r#"{"id":"x","status":"queued"}"#);
        assert_eq!(JobRecord::from_json(r.to_json().as_bytes()).unwrap(), r);
    }
}
