//! The replay in memory: its inputs kept encoded as the file stores them,
//! its checkpoints, and the views that decode the inputs while a
//! re-simulation steps through them.

use alloc::string::String;
use alloc::vec::Vec;
use core::cell::OnceCell;

use super::checkpoint::Checkpoint;
use super::cursor::TickInputsCursor;
use super::events::HostEvent;
use super::header::ReplayHeader;
use super::parts::ReplayParts;
use crate::replay::blocks::{RunDecoder, merge_runs};
use crate::replay::codec::ReplayInput;
use crate::replay::run::Run;

/// A replay: header, per-tick inputs, checkpoints and the final state.
/// Always internally consistent (built by [`Replay::from_bytes`],
/// [`Replay::from_parts`] or [`super::Recorder`](crate::replay::Recorder)).
///
/// The inputs are kept encoded, as the file stores them (input blocks: about
/// 2 bytes a run, or 2 bits a tick for −1/0/1 inputs that change every tick,
/// instead of 16 bytes a run decoded), and decoded while
/// [`super::verify`](crate::replay::verify()) and
/// [`super::compare_replays`](crate::replay::compare_replays) step through
/// them: re-simulating a replay needs memory for the encoded file, not for
/// every run decoded. The
/// slice view [`Replay::runs`] (and [`Replay::inputs`]) decodes once, on
/// first use, and keeps the result.
#[derive(Clone, Debug)]
pub struct Replay<I> {
    /// Everything but the runs (`parts.runs` is always empty here).
    pub(super) parts: ReplayParts<I>,
    /// The players' input blocks sections one after the other, each encoded
    /// exactly as in the file (checked), without their length prefixes.
    pub(super) run_bytes: Vec<u8>,
    /// Where each player's section ends in `run_bytes`.
    pub(super) stream_ends: Vec<usize>,
    /// Runs in each player's section (equal neighbours merged).
    pub(super) run_counts: Vec<usize>,
    /// Each section decoded, filled by the first [`Replay::runs`] call.
    pub(super) decoded: OnceCell<Vec<Vec<Run<I>>>>,
}

/// Equal when they would write the same file (whether the runs have been
/// decoded yet does not matter).
impl<I: PartialEq> PartialEq for Replay<I> {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts
            && self.run_bytes == other.run_bytes
            && self.stream_ends == other.stream_ends
    }
}

impl<I: Eq> Eq for Replay<I> {}

impl<I> Replay<I> {
    /// The header.
    #[must_use]
    pub const fn header(&self) -> &ReplayHeader {
        &self.parts.header
    }

    /// Ticks covered.
    #[must_use]
    pub const fn ticks(&self) -> u64 {
        self.parts.header.ticks
    }

    /// How many players' inputs the replay holds.
    #[must_use]
    pub fn players(&self) -> usize {
        self.stream_ends.len()
    }

    /// How many input runs the replay holds, all players together (equal
    /// neighbours merged, also across blocks).
    #[must_use]
    pub fn run_count(&self) -> usize {
        self.run_counts.iter().sum()
    }

    /// How many input runs `player`'s stream holds (0 for a slot the
    /// replay does not have).
    #[must_use]
    pub fn player_run_count(&self, player: usize) -> usize {
        self.run_counts.get(player).copied().unwrap_or(0)
    }

    /// Bytes of the input blocks sections as stored in the file (without
    /// their length prefixes): what the inputs cost.
    #[must_use]
    pub const fn input_bytes(&self) -> usize {
        self.run_bytes.len()
    }

    /// `player`'s encoded section (empty for a slot the replay does not have).
    pub(super) fn stream(&self, player: usize) -> &[u8] {
        let end = self.stream_ends.get(player).copied().unwrap_or(0);
        let start = match player.checked_sub(1) {
            Some(q) => self.stream_ends.get(q).copied().unwrap_or(0),
            None => 0,
        };
        self.run_bytes.get(start..end).unwrap_or(&[])
    }

    /// The host events, in tick order (see [`HostEvent`]).
    #[must_use]
    pub fn host_events(&self) -> &[HostEvent] {
        &self.parts.host_events
    }

    /// The sim's state field names.
    #[must_use]
    pub fn field_names(&self) -> &[String] {
        &self.parts.field_names
    }

    /// Checkpoints stored (not counting the final state).
    #[must_use]
    pub fn checkpoint_count(&self) -> usize {
        self.parts.checkpoint_checksums.len()
    }

    /// Checkpoint `j` (0-based), at tick `(j + 1) * checkpoint_every`.
    #[must_use]
    pub fn checkpoint(&self, j: usize) -> Option<Checkpoint<'_>> {
        let f = self.parts.field_names.len();
        let checksum = *self.parts.checkpoint_checksums.get(j)?;
        Some(Checkpoint {
            tick: (j as u64 + 1).saturating_mul(self.parts.header.checkpoint_every),
            checksum,
            fields: self.parts.checkpoint_fields.get(j * f..(j + 1) * f)?,
        })
    }

    /// The final state, at tick [`Replay::ticks`].
    #[must_use]
    pub fn final_state(&self) -> Checkpoint<'_> {
        Checkpoint {
            tick: self.parts.header.ticks,
            checksum: self.parts.final_checksum,
            fields: &self.parts.final_fields,
        }
    }

    /// The final state's text digest.
    #[must_use]
    pub fn final_digest(&self) -> &str {
        &self.parts.final_digest
    }
}

impl<I: ReplayInput> Replay<I> {
    /// `player`'s input runs, in tick order, decoded one at a time from the
    /// stored encoding: what re-simulation uses, in constant memory. Runs
    /// come out as stored, so two neighbours may have the same input (a run
    /// a writer split across blocks); [`Replay::runs`] joins them. A slot
    /// the replay does not have yields no runs.
    pub fn encoded_runs(&self, player: usize) -> impl Iterator<Item = Run<I>> + Clone + '_ {
        self.run_decoder(player)
    }

    /// [`Replay::encoded_runs`] as its concrete (private) type, for the
    /// re-simulation loops that store it.
    pub(crate) fn run_decoder(&self, player: usize) -> RunDecoder<'_, I> {
        RunDecoder::new(self.stream(player))
    }

    /// `player`'s input runs, in tick order, as a slice, equal neighbours
    /// joined ([`Replay::player_run_count`] of them): every stream is decoded
    /// on the first call and kept (16 bytes or more a run);
    /// [`Replay::encoded_runs`] streams them instead. Empty for a slot the
    /// replay does not have.
    #[must_use]
    pub fn runs(&self, player: usize) -> &[Run<I>] {
        self.all_runs().get(player).map_or(&[], Vec::as_slice)
    }

    fn all_runs(&self) -> &[Vec<Run<I>>] {
        self.decoded.get_or_init(|| {
            (0..self.players())
                .map(|p| merge_runs(self.encoded_runs(p)))
                .collect()
        })
    }

    /// `player`'s input of every tick, in order (runs expanded lazily; the
    /// runs are decoded as for [`Replay::runs`]).
    pub fn inputs(&self, player: usize) -> impl Iterator<Item = &I> + '_ {
        self.runs(player).iter().flat_map(|r| RepeatN {
            item: &r.input,
            left: r.len,
        })
    }

    /// Every tick's inputs, all players, in order: a cursor that walks the
    /// streams' runs in step (constant memory) and hands out each stretch
    /// of ticks in which no player's input changes.
    #[must_use]
    pub fn tick_inputs(&self) -> TickInputsCursor<'_, I> {
        TickInputsCursor::new((0..self.players()).map(|p| self.run_decoder(p)).collect())
    }

    /// The parts, for editing and rebuilding with [`Replay::from_parts`].
    #[must_use]
    pub fn into_parts(mut self) -> ReplayParts<I> {
        let runs = match self.decoded.take() {
            Some(runs) => runs,
            None => (0..self.players())
                .map(|p| merge_runs(self.encoded_runs(p)))
                .collect(),
        };
        ReplayParts { runs, ..self.parts }
    }
}

/// `repeat(item).take(n)` with a `u64` count (runs can be longer than a
/// 32-bit `usize`).
struct RepeatN<'a, I> {
    item: &'a I,
    left: u64,
}

impl<'a, I> Iterator for RepeatN<'a, I> {
    type Item = &'a I;
    fn next(&mut self) -> Option<&'a I> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.item)
    }
}
