//! Recording a replay while a sim runs: offline ([`Recorder`]) or live
//! (`FixedLoop::start_recording`), with one bookkeeping implementation.

use alloc::string::ToString;
use alloc::vec::Vec;

use super::codec::ReplayInput;
use super::error::ReplayError;
use super::format::{
    HostEvent, HostEventKind, Replay, ReplayHeader, ReplayParts, check_interval, push_input,
};
use super::run::Run;
use crate::sim::{MAX_PLAYERS, Sim};
use crate::state_hasher::StateHasher;
use crate::time::Nanos;

/// What a recording keeps: the inputs as runs, the host events, a
/// checkpoint every `checkpoint_every` ticks. Shared by [`Recorder`] and the
/// live recording of [`crate::FixedLoop`], so both write the same replay for
/// the same run.
#[derive(Debug)]
pub(crate) struct Recording<I> {
    header: ReplayHeader,
    /// Each player's runs, in slot order.
    runs: Vec<Vec<Run<I>>>,
    events: Vec<HostEvent>,
    field_names: Vec<&'static str>,
    checksums: Vec<u64>,
    fields: Vec<u32>,
    probe: StateHasher,
    next_checkpoint: u64,
    schema_changed_at: Option<u64>,
}

impl<I: PartialEq + Clone> Recording<I> {
    /// Records the step just run: `inputs` were its players' inputs (one per
    /// player the recording started with; missing ones are recorded as the
    /// absent input), `sim` is the state after it.
    #[inline]
    pub(crate) fn record_step<S: Sim<Input = I> + ?Sized>(&mut self, sim: &S, inputs: &[I])
    where
        I: Default,
    {
        // One player (most recordings): no loop over the players' runs.
        if let [runs] = self.runs.as_mut_slice() {
            push_input(runs, inputs.first().cloned().unwrap_or_default());
        } else {
            for (p, runs) in self.runs.iter_mut().enumerate() {
                push_input(runs, inputs.get(p).cloned().unwrap_or_default());
            }
        }
        self.header.ticks = self.header.ticks.saturating_add(1);
        if self.header.ticks == self.next_checkpoint {
            self.checkpoint(sim);
        }
    }

    #[cold]
    fn checkpoint<S: Sim<Input = I> + ?Sized>(&mut self, sim: &S) {
        self.next_checkpoint = self
            .next_checkpoint
            .saturating_add(self.header.checkpoint_every);
        self.probe.take(sim);
        if self.probe.names() != self.field_names.as_slice() {
            self.schema_changed_at.get_or_insert(self.header.ticks);
        }
        self.checksums.push(self.probe.checksum());
        self.fields.extend(self.probe.short_hashes());
    }

    /// Records a host event at the current tick (after its step and checkpoint).
    pub(crate) fn record_event(&mut self, kind: HostEventKind) {
        self.events.push(HostEvent {
            tick: self.header.ticks,
            kind,
        });
    }

    /// Ticks recorded so far.
    pub(crate) const fn ticks(&self) -> u64 {
        self.header.ticks
    }
}

impl<I: ReplayInput> Recording<I> {
    /// Starts from `sim`'s current state (tick 0 of the replay).
    pub(crate) fn new<S: Sim<Input = I> + ?Sized>(
        sim: &S,
        mut header: ReplayHeader,
    ) -> Result<Recording<I>, ReplayError> {
        check_interval(header.checkpoint_every)?;
        header.ticks = 0;
        header.input_kind = I::KIND;
        let players = sim.players().clamp(1, MAX_PLAYERS);
        #[allow(clippy::cast_possible_truncation, reason = "at most MAX_PLAYERS")]
        {
            header.players = players as u8;
        }
        let mut probe = StateHasher::default();
        probe.take(sim);
        Ok(Recording {
            field_names: probe.names().to_vec(),
            next_checkpoint: header.checkpoint_every,
            header,
            runs: (0..players).map(|_| Vec::new()).collect(),
            events: Vec::new(),
            checksums: Vec::new(),
            fields: Vec::new(),
            probe,
            schema_changed_at: None,
        })
    }

    /// The replay of everything recorded so far, `sim` being the final state;
    /// the recording goes on.
    pub(crate) fn snapshot<S: Sim<Input = I> + ?Sized>(
        &self,
        sim: &S,
    ) -> Result<Replay<I>, ReplayError> {
        let mut probe = StateHasher::default();
        probe.take(sim);
        self.build(
            &probe,
            sim,
            self.runs.clone(),
            self.events.clone(),
            self.checksums.clone(),
            self.fields.clone(),
        )
    }

    /// The replay, consuming the recording (no copies).
    pub(crate) fn into_replay<S: Sim<Input = I> + ?Sized>(
        mut self,
        sim: &S,
    ) -> Result<Replay<I>, ReplayError> {
        let mut probe = core::mem::take(&mut self.probe);
        probe.take(sim);
        let runs = core::mem::take(&mut self.runs);
        let runs = if runs.is_empty() {
            (0..self.header.players).map(|_| Vec::new()).collect()
        } else {
            runs
        };
        let events = core::mem::take(&mut self.events);
        let checksums = core::mem::take(&mut self.checksums);
        let fields = core::mem::take(&mut self.fields);
        self.build(&probe, sim, runs, events, checksums, fields)
    }

    fn build<S: Sim<Input = I> + ?Sized>(
        &self,
        last: &StateHasher,
        sim: &S,
        runs: Vec<Vec<Run<I>>>,
        host_events: Vec<HostEvent>,
        checkpoint_checksums: Vec<u64>,
        checkpoint_fields: Vec<u32>,
    ) -> Result<Replay<I>, ReplayError> {
        let mut changed = self.schema_changed_at;
        if last.names() != self.field_names.as_slice() {
            changed.get_or_insert(self.header.ticks);
        }
        if let Some(tick) = changed {
            return Err(ReplayError::FieldsChanged { tick });
        }
        Replay::from_parts(ReplayParts {
            header: self.header.clone(),
            runs,
            host_events,
            field_names: self.field_names.iter().map(ToString::to_string).collect(),
            checkpoint_checksums,
            checkpoint_fields,
            final_checksum: last.checksum(),
            final_fields: last.short_hashes().collect(),
            final_digest: sim.digest(),
        })
    }
}

/// Steps a sim and records a replay of it: the inputs as runs, the host
/// events, a checkpoint every `checkpoint_every` ticks, the final state.
///
/// For a sim driven by a [`crate::FixedLoop`], record the loop itself
/// instead (`FixedLoop::start_recording`): it records the same things,
/// catch-up ticks and time dropped by its clock included.
#[derive(Debug)]
pub struct Recorder<S: Sim> {
    sim: S,
    recording: Recording<S::Input>,
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
    pub fn new(sim: S, header: ReplayHeader) -> Result<Recorder<S>, ReplayError> {
        let recording = Recording::new(&sim, header)?;
        Ok(Recorder { sim, recording })
    }

    /// Runs one tick with every player's input (`inputs[p]` is player
    /// `p`'s; pass [`Sim::players`] of them, a missing one is the absent
    /// input) and records it.
    // Always inlined into the caller's tick loop: out of line, its register
    // saves and restores cost half as much as the island's whole step.
    #[inline(always)]
    pub fn step(&mut self, inputs: &[S::Input]) {
        self.sim.step(inputs);
        self.recording.record_step(&self.sim, inputs);
    }

    /// Hands the sim time its host threw away ([`Sim::on_time_dropped`])
    /// and records it as a host event at the current tick, so that
    /// verification applies it at the same point. Use it for whatever a
    /// loop of your own drops (a step cap, a clamp); a [`crate::FixedLoop`]
    /// records its own.
    pub fn time_dropped(&mut self, dropped: Nanos) {
        self.sim.on_time_dropped(dropped);
        self.recording
            .record_event(HostEventKind::TimeDropped(dropped));
    }

    /// The sim (read-only).
    #[must_use]
    pub const fn sim(&self) -> &S {
        &self.sim
    }

    /// Ticks recorded so far.
    #[must_use]
    pub const fn ticks(&self) -> u64 {
        self.recording.ticks()
    }

    /// Ends the recording: the sim in its final state, and the replay.
    ///
    /// # Errors
    ///
    /// [`ReplayError::FieldsChanged`] when the sim's field list changed during
    /// the run (its state description must be fixed), and
    /// [`ReplayError::BadName`] for an invalid sim id or field name.
    pub fn finish(self) -> Result<(S, Replay<S::Input>), ReplayError> {
        let replay = self.recording.into_replay(&self.sim)?;
        Ok((self.sim, replay))
    }
}
