//! A replay taken apart: the plain fields a replay is built from, for
//! writers in other places (a server converting formats, a test forging a
//! file) and for editing a replay.

use alloc::string::String;
use alloc::vec::Vec;

use super::events::HostEvent;
use super::header::ReplayHeader;
use crate::replay::run::Run;

/// The parts of a replay, for building one from other sources (a server
/// converting formats, a test forging a file). [`Replay::from_parts`](super::Replay::from_parts)
/// checks that they fit together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayParts<I> {
    /// The header; `input_kind` is overwritten with `I::KIND`.
    pub header: ReplayHeader,
    /// Each player's input runs, in slot order (`header.players` of
    /// them), each covering exactly `header.ticks` ticks.
    pub runs: Vec<Vec<Run<I>>>,
    /// Host events in non-decreasing tick order, none after `header.ticks`.
    pub host_events: Vec<HostEvent>,
    /// The sim's state field names.
    pub field_names: Vec<String>,
    /// Checksums at ticks `every, 2*every, ...` (`header.checkpoint_count()` of them).
    pub checkpoint_checksums: Vec<u64>,
    /// Field hashes of those checkpoints, flattened (`count * fields`).
    pub checkpoint_fields: Vec<u32>,
    /// The final state's checksum.
    pub final_checksum: u64,
    /// The final state's field hashes.
    pub final_fields: Vec<u32>,
    /// The final state's text digest ([`crate::Sim::digest`]).
    pub final_digest: String,
}

impl<I: PartialEq> ReplayParts<I> {
    /// Replaces `player`'s inputs with one per tick (merged into runs) and
    /// sets `header.ticks` to their count (adding empty streams up to
    /// `player` when there are fewer). Checkpoints, host events and the other
    /// players' inputs are left as they are, so
    /// [`Replay::from_parts`](super::Replay::from_parts) accepts the result
    /// only for the same tick count, and
    /// [`super::verify`](crate::replay::verify()) then checks the new inputs
    /// against the old states: this is how tests forge replays.
    pub fn set_inputs(&mut self, player: usize, inputs: impl IntoIterator<Item = I>) {
        while self.runs.len() <= player {
            self.runs.push(Vec::new());
        }
        let runs = &mut self.runs[player];
        runs.clear();
        self.header.ticks = 0;
        for input in inputs {
            push_input(runs, input);
            self.header.ticks += 1;
        }
    }
}

/// Appends one tick's input, extending the last run when it is the same input.
pub(crate) fn push_input<I: PartialEq>(runs: &mut Vec<Run<I>>, input: I) {
    match runs.last_mut() {
        Some(run) if run.input == input => run.len += 1,
        _ => runs.push(Run { len: 1, input }),
    }
}
