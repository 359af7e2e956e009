//! The live recording of the confirmed run: each player's confirmed
//! inputs, checkpoints every `checkpoint_every` ticks, and the replay built
//! from them at the end.

use alloc::vec::Vec;

use tickwise::{Replay, ReplayError, ReplayHeader, ReplayInput, ReplayParts, Run, Sim};

use super::{Session, SessionError};
use tickwise::StateHasher;

/// Live recording of the confirmed run, checkpoints every `every` ticks.
#[derive(Clone, Debug)]
pub(super) struct LiveRecord<I> {
    pub(super) header: ReplayHeader,
    /// Each player's confirmed inputs, in slot order.
    pub(super) runs: Vec<Vec<Run<I>>>,
    pub(super) names: Vec<&'static str>,
    pub(super) sums: Vec<u64>,
    pub(super) fields: Vec<u32>,
}

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    /// Records the confirmed run as a replay with `header` (its `ticks` and
    /// `input_kind` are set here), a checkpoint every
    /// `header.checkpoint_every` ticks. Call before the first tick. The
    /// recording grows with the session (it is the replay).
    ///
    /// # Errors
    ///
    /// [`SessionError::Replay`] for a zero checkpoint interval.
    pub fn start_recording(&mut self, mut header: ReplayHeader) -> Result<(), SessionError> {
        if header.checkpoint_every == 0 {
            return Err(SessionError::Replay(ReplayError::LengthOutOfRange {
                what: "checkpoint interval",
                declared: 0,
                min: 1,
                max: u64::MAX,
            }));
        }
        header.ticks = 0;
        header.input_kind = S::Input::KIND;
        header.players = self.cfg.players;
        self.record = Some(LiveRecord {
            header,
            runs: (0..self.cfg.players).map(|_| Vec::new()).collect(),
            names: self.probe_names(),
            sums: Vec::new(),
            fields: Vec::new(),
        });
        Ok(())
    }

    /// The replay of the confirmed run so far: the confirmed inputs, this
    /// peer's own checkpoints of its confirmed states, and the newest
    /// confirmed state as the final state.
    ///
    /// # Errors
    ///
    /// [`SessionError::NotRecording`], or [`SessionError::Replay`] if the
    /// sim's field list changed during the run.
    pub fn replay(&self) -> Result<Replay<S::Input>, SessionError> {
        let r = self.record.as_ref().ok_or(SessionError::NotRecording)?;
        let state = self.state(self.probed).ok_or(SessionError::NotRecording)?;
        let mut probe = StateHasher::new();
        probe.take(state);
        let every = r.header.checkpoint_every;
        let count = usize::try_from(r.header.ticks / every).unwrap_or(usize::MAX);
        let nf = r.names.len();
        #[allow(clippy::cast_possible_truncation, reason = "the low half")]
        let parts = ReplayParts {
            header: r.header.clone(),
            runs: r.runs.clone(),
            // A netplay session runs whole ticks only: its sim never hears of
            // dropped host time, so there are no host events to record.
            host_events: Vec::new(),
            field_names: r.names.iter().map(|n| (*n).into()).collect(),
            checkpoint_checksums: r.sums.iter().copied().take(count).collect(),
            checkpoint_fields: r.fields.iter().copied().take(count * nf).collect(),
            final_checksum: probe.checksum(),
            final_fields: probe.hashes().iter().map(|&h| h as u32).collect(),
            final_digest: state.digest(),
        };
        Ok(Replay::from_parts(parts)?)
    }
}
