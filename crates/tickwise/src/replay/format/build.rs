//! Building a replay from its parts, checking that they fit together as
//! the reader checks a file, so that a [`Replay`] is always internally
//! consistent whichever way it was made.

use alloc::vec::Vec;
use core::cell::OnceCell;

use super::events::check_events;
use super::header::check_interval;
use super::layout::is_valid_name;
use super::parts::ReplayParts;
use super::replay::Replay;
use crate::replay::blocks::encode_blocks;
use crate::replay::codec::ReplayInput;
use crate::replay::error::ReplayError;
use crate::sim::MAX_PLAYERS;

impl<I: ReplayInput> Replay<I> {
    /// Builds a replay from parts, checking that they fit together.
    ///
    /// # Errors
    ///
    /// [`ReplayError::BadName`] for an invalid sim id or field name,
    /// [`ReplayError::LengthOutOfRange`] for a zero checkpoint interval or no
    /// fields, [`ReplayError::EmptyRun`] / [`ReplayError::RunsDoNotCoverTicks`]
    /// for runs that do not cover the ticks,
    /// [`ReplayError::HostEventsOutOfOrder`] / [`ReplayError::HostEventAfterEnd`]
    /// for host events out of tick order or past the last tick,
    /// [`ReplayError::CountMismatch`] for checkpoint or field lists of the
    /// wrong size.
    pub fn from_parts(mut parts: ReplayParts<I>) -> Result<Replay<I>, ReplayError> {
        parts.header.input_kind = I::KIND;
        let h = &parts.header;
        if !is_valid_name(h.sim_id.as_bytes()) {
            return Err(ReplayError::BadName {
                what: "sim id",
                offset: 0,
            });
        }
        check_interval(h.checkpoint_every)?;
        let players = parts.runs.len();
        if players == 0 || players > MAX_PLAYERS || players != usize::from(h.players) {
            return Err(ReplayError::CountMismatch {
                what: "player input streams",
                expected: u64::from(h.players),
                found: players as u64,
            });
        }
        for runs in &parts.runs {
            let mut covered = 0u64;
            for run in runs {
                if run.len == 0 {
                    return Err(ReplayError::EmptyRun { offset: 0 });
                }
                covered = covered.saturating_add(run.len);
            }
            if covered != h.ticks {
                return Err(ReplayError::RunsDoNotCoverTicks {
                    declared: h.ticks,
                    covered,
                });
            }
        }
        check_events(&parts.host_events, h.ticks)?;
        let f = parts.field_names.len() as u64;
        if f == 0 {
            return Err(ReplayError::LengthOutOfRange {
                what: "field count",
                declared: 0,
                min: 1,
                max: u64::MAX,
            });
        }
        if parts
            .field_names
            .iter()
            .any(|n| !is_valid_name(n.as_bytes()))
        {
            return Err(ReplayError::BadName {
                what: "field name",
                offset: 0,
            });
        }
        let count = h.checkpoint_count();
        for (what, expected, found) in [
            (
                "checkpoint checksums",
                count,
                parts.checkpoint_checksums.len() as u64,
            ),
            (
                "checkpoint field hashes",
                count.saturating_mul(f),
                parts.checkpoint_fields.len() as u64,
            ),
            ("final field hashes", f, parts.final_fields.len() as u64),
        ] {
            if expected != found {
                return Err(ReplayError::CountMismatch {
                    what,
                    expected,
                    found,
                });
            }
        }
        let mut run_bytes = Vec::new();
        let mut stream_ends = Vec::with_capacity(players);
        let mut run_counts = Vec::with_capacity(players);
        for runs in &parts.runs {
            let (bytes, count) = encode_blocks(runs);
            run_bytes.extend_from_slice(&bytes);
            stream_ends.push(run_bytes.len());
            run_counts.push(count);
        }
        parts.runs = Vec::new();
        Ok(Replay {
            parts,
            run_bytes,
            stream_ends,
            run_counts,
            decoded: OnceCell::new(),
        })
    }
}
