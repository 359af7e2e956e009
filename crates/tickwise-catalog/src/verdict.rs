//! One finished verdict per replay, shared by every front end.
//!
//! Why here: `tickwise verify`, `verify --json` and the verification
//! service all answer the same question about the same bytes. When each
//! turned the kernel's report and the catalog's errors into its own words,
//! the words drifted (an old-version replay was `unreadable` in one and
//! `invalid` in the other, lumped with corrupt files) and the header was
//! read three or four times per file. [`Catalog::judge`] reads the header
//! once, re-simulates, and returns a [`Verdict`] that the front ends print
//! as it is: its message texts and its JSON object
//! ([`Verdict::to_json`]) are written once, here.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use serde_json::{Value, json};
use tickwise::{
    Divergence, HeaderRead, Nanos, ReplayError, ReplayHeader, ReplayLimits, ReplayVerdict,
    VerifyReport, read_header, read_header_unchecked,
};

use crate::catalog::Catalog;
use crate::error::CatalogError;
use crate::limits::check_work;
use crate::owner::field_players;

/// Why a replay was refused without a verdict on its contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// Another version: of the sim (the file may be fine; this build runs
    /// other rules) or of the replay format.
    Version,
    /// The file is damaged or inconsistent: not a replay, a bad checksum,
    /// a malformed section, a seed or player count its config contradicts.
    Corrupt,
    /// Over a limit of the verifier: file size, ticks, config size, work.
    Limit,
    /// No sim of the catalog has the replay's id.
    UnknownSim,
    /// The sim refused the config the replay embeds.
    Config,
    /// The file could not be read at all (a front end's I/O error: missing,
    /// not a regular file). The catalog itself never returns it.
    Unreadable,
}

impl Refusal {
    /// The reason as it appears in JSON and text: `version`, `corrupt`,
    /// `limit`, `unknown-sim`, `config`, `unreadable`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Refusal::Version => "version",
            Refusal::Corrupt => "corrupt",
            Refusal::Limit => "limit",
            Refusal::UnknownSim => "unknown-sim",
            Refusal::Config => "config",
            Refusal::Unreadable => "unreadable",
        }
    }

    /// The reason a catalog error refuses a replay for.
    #[must_use]
    pub fn of(e: &CatalogError) -> Refusal {
        match e {
            CatalogError::VersionMismatch { .. } => Refusal::Version,
            CatalogError::UnknownSim { .. } => Refusal::UnknownSim,
            CatalogError::Config { .. } => Refusal::Config,
            CatalogError::Replay(e) => Refusal::of_replay(e),
            CatalogError::TooMuchWork { .. }
            | CatalogError::TooMuchMemory { .. }
            | CatalogError::ReplayTooLarge { .. } => Refusal::Limit,
            CatalogError::Players { .. }
            | CatalogError::SeedMismatch { .. }
            | CatalogError::Inputs(_)
            | CatalogError::Net(_)
            | CatalogError::DifferentSims { .. }
            | CatalogError::NoSnapshot { .. } => Refusal::Corrupt,
        }
    }

    fn of_replay(e: &ReplayError) -> Refusal {
        match e {
            ReplayError::UnsupportedVersion { .. } | ReplayError::UnsupportedFlags { .. } => {
                Refusal::Version
            }
            ReplayError::FileTooLarge { .. } | ReplayError::TooManyTicks { .. } => Refusal::Limit,
            // The lengths a reader limit bounds (config, field count,
            // digest, file length): over the maximum is a limit; any other
            // out-of-range length is damage.
            ReplayError::LengthOutOfRange { declared, max, .. } if declared > max => Refusal::Limit,
            _ => Refusal::Corrupt,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where re-simulation first disagreed with the replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diverged {
    /// The tick of the failed check (0 for a field list that differs as a
    /// whole).
    pub tick: u64,
    /// The last tick whose stored state matched.
    pub last_good_tick: u64,
    /// The stored checkpoint (1-based) that failed; `None` for the final
    /// state or a field list that differs as a whole.
    pub checkpoint: Option<usize>,
    /// The one player whose own fields differ, when exactly one's do.
    pub player: Option<usize>,
    /// Every player whose own fields differ ([`field_players`]).
    pub field_players: Vec<usize>,
    /// The fields that differ.
    pub fields: Vec<String>,
    /// The re-simulated final digest, for a final-state divergence.
    pub digest: Option<String>,
}

/// What verification concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every checkpoint and the final state match.
    Ok {
        /// The final text digest.
        digest: String,
    },
    /// Re-simulation disagreed with the replay.
    Diverged(Diverged),
    /// The replay was not re-simulated (or not to the end) for this reason.
    Refused {
        /// Why.
        reason: Refusal,
    },
}

/// One replay's finished verdict, with what its header names.
///
/// The header facts are `None` when the header could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct Verdict {
    /// The sim id the header names.
    pub sim: Option<String>,
    /// The sim version the header names.
    pub version: Option<u32>,
    /// The players the header names.
    pub players: Option<usize>,
    /// The ticks the header declares.
    pub ticks: Option<u64>,
    /// The ticks re-simulated (fewer when it diverged early; `None` when
    /// refused before running).
    pub ticks_run: Option<u64>,
    /// The final digest the replay claims, when verification read it.
    pub claimed_digest: Option<String>,
    /// The conclusion.
    pub outcome: Outcome,
    /// The conclusion in words: the divergence or the refusal's cause
    /// (`None` for [`Outcome::Ok`]).
    pub message: Option<String>,
    /// The declared ticks' simulated duration (ticks × the sim's step under
    /// the embedded config), for a wall-clock plausibility check; `None`
    /// when the sim or its config is not known.
    pub simulated: Option<Nanos>,
    /// For a refusal over a limit, the [`ReplayLimits`]
    /// field that refused it (`max_work`, `max_ticks`, `max_file_bytes`),
    /// so a front end can say how to raise it.
    pub limit: Option<&'static str>,
}

impl Verdict {
    /// A refusal for `reason` with its message, naming what `header` says.
    pub fn refused(header: Option<&ReplayHeader>, reason: Refusal, message: String) -> Verdict {
        let mut v = Verdict {
            sim: None,
            version: None,
            players: None,
            ticks: None,
            ticks_run: None,
            claimed_digest: None,
            outcome: Outcome::Refused { reason },
            message: Some(message),
            simulated: None,
            limit: None,
        };
        if let Some(h) = header {
            v.sim = Some(h.sim_id.clone());
            v.version = Some(h.sim_version);
            v.players = Some(usize::from(h.players));
            v.ticks = Some(h.ticks);
        }
        v
    }

    /// The refusal a catalog error stands for, naming what `header` says.
    pub fn of_error(header: Option<&ReplayHeader>, e: &CatalogError) -> Verdict {
        let mut v = Verdict::refused(header, Refusal::of(e), e.to_string());
        v.limit = match e {
            CatalogError::TooMuchWork { .. } => Some("max_work"),
            CatalogError::ReplayTooLarge { .. }
            | CatalogError::Replay(ReplayError::FileTooLarge { .. }) => Some("max_file_bytes"),
            CatalogError::Replay(ReplayError::TooManyTicks { .. }) => Some("max_ticks"),
            _ => None,
        };
        v
    }

    /// The verdict of a finished re-simulation of the replay `header` heads.
    pub fn of_report(header: &ReplayHeader, report: VerifyReport) -> Verdict {
        let players = usize::from(header.players);
        let mut v = Verdict::refused(Some(header), Refusal::Corrupt, String::new());
        v.ticks_run = Some(report.ticks_run);
        v.claimed_digest = Some(report.claimed_digest);
        match report.verdict {
            ReplayVerdict::Match { digest } => {
                v.outcome = Outcome::Ok { digest };
                v.message = None;
            }
            ReplayVerdict::Diverged(d) => {
                let (diverged, message) = diverged(&d, players);
                v.outcome = Outcome::Diverged(diverged);
                v.message = Some(message);
            }
            ReplayVerdict::FieldNamesDiffer { recorded, sim } => {
                v.message = Some(format!(
                    "the replay records fields [{}] but this build's sim has [{}]",
                    recorded.join(", "),
                    sim.join(", ")
                ));
                // The names on one side only, recorded ones first.
                let mut fields: Vec<String> = recorded
                    .iter()
                    .filter(|r| !sim.contains(&r.as_str()))
                    .cloned()
                    .collect();
                fields.extend(
                    sim.iter()
                        .filter(|s| !recorded.iter().any(|r| r == *s))
                        .map(|s| (*s).to_string()),
                );
                let field_players = field_players(&fields, players);
                v.outcome = Outcome::Diverged(Diverged {
                    tick: 0,
                    last_good_tick: 0,
                    checkpoint: None,
                    player: only(&field_players),
                    field_players,
                    fields,
                    digest: None,
                });
            }
            ReplayVerdict::PlayersDiffer { recorded, sim } => {
                v.message = Some(format!(
                    "the replay holds inputs of {recorded} players but its config builds a \
                     sim of {sim}"
                ));
            }
        }
        v
    }

    /// `"ok"`, `"diverged"` or `"refused"`.
    #[must_use]
    pub const fn status(&self) -> &'static str {
        match self.outcome {
            Outcome::Ok { .. } => "ok",
            Outcome::Diverged(_) => "diverged",
            Outcome::Refused { .. } => "refused",
        }
    }

    /// Whether the replay verified.
    #[must_use]
    pub const fn is_ok(&self) -> bool {
        matches!(self.outcome, Outcome::Ok { .. })
    }

    /// The refusal's reason, for a refused replay.
    #[must_use]
    pub const fn reason(&self) -> Option<Refusal> {
        match self.outcome {
            Outcome::Refused { reason } => Some(reason),
            _ => None,
        }
    }

    /// The final digest found: an `ok` replay's, or the re-simulated one of
    /// a final-state divergence.
    #[must_use]
    pub fn digest(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Ok { digest } => Some(digest),
            Outcome::Diverged(d) => d.digest.as_deref(),
            Outcome::Refused { .. } => None,
        }
    }

    /// The verdict as one JSON object, the same for every front end
    /// (`verify --json` adds `type` and `path`; the service's job record
    /// carries it as `verdict`). Keys: `status`, `reason`, `sim`,
    /// `simVersion`, `players`, `ticks` (declared), `ticksRun`, `digest`,
    /// `claimedDigest`, `error`, `divergence` (`checkpoint`, `tick`,
    /// `lastGoodTick`, `fields`, `player`, `fieldPlayers`); absent values
    /// are `null`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let divergence = match &self.outcome {
            Outcome::Diverged(d) => json!({
                "checkpoint": d.checkpoint,
                "tick": d.tick,
                "lastGoodTick": d.last_good_tick,
                "fields": d.fields,
                "player": d.player,
                "fieldPlayers": d.field_players,
            }),
            _ => Value::Null,
        };
        json!({
            "status": self.status(),
            "reason": self.reason().map(Refusal::as_str),
            "sim": self.sim,
            "simVersion": self.version,
            "players": self.players,
            "ticks": self.ticks,
            "ticksRun": self.ticks_run,
            "digest": self.digest(),
            "claimedDigest": self.claimed_digest,
            "error": self.message,
            "divergence": divergence,
        })
    }
}

/// One line of text: `ok: N ticks, digest D`, `diverged: …` or
/// `refused (reason): …`.
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self.message.as_deref().unwrap_or("");
        match &self.outcome {
            Outcome::Ok { digest } => write!(
                f,
                "ok: {} ticks, digest {digest}",
                self.ticks_run.unwrap_or(0)
            ),
            Outcome::Diverged(_) => write!(f, "diverged: {message}"),
            Outcome::Refused { reason } => write!(f, "refused ({reason}): {message}"),
        }
    }
}

fn only(players: &[usize]) -> Option<usize> {
    match players {
        [p] => Some(*p),
        _ => None,
    }
}

/// A state divergence and its message: the kernel's text plus whose own
/// fields differ.
fn diverged(d: &Divergence, players: usize) -> (Diverged, String) {
    let field_players = field_players(&d.fields, players);
    let message = format!("{d}{}", owners_text(&field_players));
    let diverged = Diverged {
        tick: d.tick,
        last_good_tick: d.last_good_tick,
        checkpoint: d.checkpoint.map(|j| j + 1),
        player: only(&field_players),
        field_players,
        fields: d.fields.clone(),
        digest: d.digests.as_ref().map(|(_, found)| found.clone()),
    };
    (diverged, message)
}

/// `"; player P's own fields differ"` (or the list of players) for the
/// players whose own fields differ, empty for none: what a state
/// divergence's message ends with.
#[must_use]
pub fn owners_text(players: &[usize]) -> String {
    match players {
        [] => String::new(),
        [p] => format!("; player {p}'s own fields differ"),
        many => {
            let list: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("; own fields of players {} differ", list.join(", "))
        }
    }
}

impl Catalog {
    /// The finished [`Verdict`] on a replay read into memory: what
    /// `tickwise verify` and the verification service print.
    ///
    /// The header is read once, without the integrity check, to choose the
    /// sim and name it in the verdict; the decode then checks everything,
    /// the checksum first (as [`Catalog::verify_vec`]). Only when that read
    /// does not name a sim and version of the catalog is the header read
    /// again with the checksum, so a damaged file is refused as `corrupt`
    /// before its (possibly damaged) id or version is believed.
    /// [`Verdict::simulated`] is filled whenever the embedded config parses.
    pub fn judge(&self, bytes: Vec<u8>, limits: &ReplayLimits) -> Verdict {
        let header = match read_header_unchecked(&bytes, limits) {
            Ok(h) => h,
            Err(e) => return self.refusal(None, &bytes, limits, e.into()),
        };
        let e = match self.entry_of(&header) {
            Ok(e) => e,
            Err(err) => return self.refusal(Some(&header), &bytes, limits, err),
        };
        let simulated = e
            .profile(&header.config)
            .ok()
            .map(|p| p.clock.step().steps_to_nanos(header.ticks));
        let mut verdict = match e.verify_vec(bytes, limits) {
            Ok(report) => Verdict::of_report(&header, report),
            // A file whose checksum fails names nothing: its header may be
            // the damaged part (as `admit` reports it).
            Err(err @ CatalogError::Replay(ReplayError::ChecksumMismatch { .. })) => {
                Verdict::of_error(None, &err)
            }
            Err(err) => Verdict::of_error(Some(&header), &err),
        };
        verdict.simulated = simulated;
        verdict
    }

    /// The verdict on a file that names no catalog sim: the checked header
    /// read's error, naming nothing (the damaged part may be the header:
    /// as [`Catalog::admit`] refuses it), when the file is damaged; else
    /// `err`, naming `header`.
    fn refusal(
        &self,
        header: Option<&ReplayHeader>,
        bytes: &[u8],
        limits: &ReplayLimits,
        err: CatalogError,
    ) -> Verdict {
        match read_header(bytes, limits) {
            Err(e) => Verdict::of_error(None, &e.into()),
            Ok(_) => Verdict::of_error(header, &err),
        }
    }

    /// The checks a service makes before it queues an upload: the
    /// envelope, the integrity checksum and the header read, the sim and
    /// version are known, the config is valid and the declared work fits
    /// `limits.max_work`. `Ok` carries what they read ([`Admitted`]: the
    /// header and the work, declared ticks × the sim's cost per tick under
    /// the replay's config), for [`Catalog::judge_admitted`].
    ///
    /// # Errors
    ///
    /// The refused [`Verdict`] the upload gets without being run: the same
    /// verdict [`Catalog::judge`] gives the same file.
    pub fn admit(&self, bytes: &[u8], limits: &ReplayLimits) -> Result<Admitted, Box<Verdict>> {
        let read = HeaderRead::of(bytes, limits)
            .map_err(|e| Box::new(Verdict::of_error(None, &CatalogError::from(e))))?;
        let header = read.header();
        let refuse = |e: &CatalogError| Box::new(Verdict::of_error(Some(header), e));
        let e = self.entry_of(header).map_err(|e| refuse(&e))?;
        let profile = e.profile(&header.config).map_err(|e| refuse(&e))?;
        let work = check_work(header.ticks, profile.work_per_tick, limits.max_work)
            .map_err(|e| refuse(&e))?;
        let simulated = Some(profile.clock.step().steps_to_nanos(header.ticks));
        Ok(Admitted {
            read,
            work,
            simulated,
        })
    }

    /// [`Catalog::judge`] for bytes that passed [`Catalog::admit`] with
    /// the same limits: the same verdict, without reading the header or
    /// hashing the file again (the second pass cost a sixth of verifying
    /// a 10-minute island replay), and without copying the file (only its
    /// input blocks are copied out of `bytes`).
    ///
    /// `bytes` must be the bytes `admitted` was read from: bytes of
    /// another length are judged from scratch ([`Catalog::judge`]); bytes
    /// of the same length but other contents are decoded without the
    /// integrity checksum's check, so their verdict may be a divergence or
    /// a refusal instead of `corrupt`, but it is always a verdict, never a
    /// panic. A catalog that no longer knows the admitted sim and version
    /// also judges from scratch.
    pub fn judge_admitted(
        &self,
        bytes: &[u8],
        admitted: &Admitted,
        limits: &ReplayLimits,
    ) -> Verdict {
        let header = admitted.read.header();
        let known = self.entry_of(header).ok();
        let Some(e) = known.filter(|_| admitted.read.file_len() == bytes.len()) else {
            return self.judge(bytes.to_vec(), limits);
        };
        // The decode takes a copy of the header (a few small allocations;
        // the admitted job keeps its own for a retry).
        let mut verdict = match e.verify_read(bytes, admitted.read.clone(), limits) {
            Ok(report) => Verdict::of_report(header, report),
            Err(err) => Verdict::of_error(Some(header), &err),
        };
        verdict.simulated = admitted.simulated;
        verdict
    }
}

/// An upload that passed [`Catalog::admit`]: its envelope and header, read
/// once with the integrity checksum, the work it was priced at and its
/// simulated duration. [`Catalog::judge_admitted`] judges it without
/// reading any of that again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted {
    read: HeaderRead,
    work: u64,
    simulated: Option<Nanos>,
}

impl Admitted {
    /// The work: declared ticks × the sim's work units per tick under the
    /// replay's config (what the service prices and bounds per client).
    #[must_use]
    pub const fn work(&self) -> u64 {
        self.work
    }

    /// The header.
    #[must_use]
    pub const fn header(&self) -> &ReplayHeader {
        self.read.header()
    }
}
