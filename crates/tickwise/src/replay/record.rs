//! Recording a replay while a sim runs.

use alloc::string::ToString;
use alloc::vec::Vec;

use super::codec::ReplayInput;
use super::error::ReplayError;
use super::format::{Replay, ReplayHeader, ReplayParts, Run, check_interval, push_input};
use super::probe::Probe;
use crate::sim::Sim;

/// Steps a sim and records a replay of it: the inputs as runs, a checkpoint
/// every `checkpoint_every` ticks, the final state.
#[derive(Debug)]
pub struct Recorder<S: Sim> {
    sim: S,
    header: ReplayHeader,
    runs: Vec<Run<S::Input>>,
    field_names: Vec<&'static str>,
    checksums: Vec<u64>,
    fields: Vec<u32>,
    probe: Probe,
    schema_changed_at: Option<u64>,
}

impl<S: Sim> Recorder<S>
where
    S::Input: ReplayInput,
{
    /// Starts recording `sim` from its current state, which must be the
    /// state the sim's registry builds from `header.config` (that is what a
    /// verifier will start from). `header.ticks` and `header.input_kind` are
    /// ignored: the recorder sets them.
    ///
    /// # Errors
    ///
    /// [`ReplayError::LengthOutOfRange`] when `header.checkpoint_every` is 0.
    pub fn new(sim: S, mut header: ReplayHeader) -> Result<Recorder<S>, ReplayError> {
        check_interval(header.checkpoint_every)?;
        header.ticks = 0;
        header.input_kind = S::Input::KIND;
        let mut probe = Probe::default();
        probe.take(&sim);
        Ok(Recorder {
            field_names: probe.names().to_vec(),
            sim,
            header,
            runs: Vec::new(),
            checksums: Vec::new(),
            fields: Vec::new(),
            probe,
            schema_changed_at: None,
        })
    }

    /// Runs one tick with `input` and records it.
    pub fn step(&mut self, input: S::Input) {
        self.sim.step(&input);
        push_input(&mut self.runs, input);
        self.header.ticks += 1;
        if self
            .header
            .ticks
            .is_multiple_of(self.header.checkpoint_every)
        {
            self.probe.take(&self.sim);
            if self.probe.names() != self.field_names.as_slice() {
                self.schema_changed_at.get_or_insert(self.header.ticks);
            }
            self.checksums.push(self.probe.checksum());
            self.fields.extend(self.probe.short_hashes());
        }
    }

    /// The sim (read-only).
    #[must_use]
    pub const fn sim(&self) -> &S {
        &self.sim
    }

    /// Ticks recorded so far.
    #[must_use]
    pub const fn ticks(&self) -> u64 {
        self.header.ticks
    }

    /// Ends the recording: the sim in its final state, and the replay.
    ///
    /// # Errors
    ///
    /// [`ReplayError::FieldsChanged`] when the sim's field list changed during
    /// the run (its state description must be fixed), and
    /// [`ReplayError::BadName`] for an invalid sim id or field name.
    pub fn finish(mut self) -> Result<(S, Replay<S::Input>), ReplayError> {
        self.probe.take(&self.sim);
        if self.probe.names() != self.field_names.as_slice() {
            self.schema_changed_at.get_or_insert(self.header.ticks);
        }
        if let Some(tick) = self.schema_changed_at {
            return Err(ReplayError::FieldsChanged { tick });
        }
        let parts = ReplayParts {
            header: self.header,
            runs: self.runs,
            field_names: self.field_names.iter().map(ToString::to_string).collect(),
            checkpoint_checksums: self.checksums,
            checkpoint_fields: self.fields,
            final_checksum: self.probe.checksum(),
            final_fields: self.probe.short_hashes().collect(),
            final_digest: self.sim.digest(),
        };
        let replay = Replay::from_parts(parts)?;
        Ok((self.sim, replay))
    }
}
