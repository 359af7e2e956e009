//! Live recording: a loop started at tick 0 records every tick's input as
//! the sim consumed it and every host event, and hands the session out as a
//! [`Replay`] that [`crate::verify`] re-simulates.

use alloc::boxed::Box;

use super::FixedLoop;
use crate::input::InputSource;
use crate::replay::{Recording, Replay, ReplayError, ReplayHeader, ReplayInput};
use crate::sim::Sim;
use crate::time::Tick;

impl<S: Sim, I: InputSource<S::Input>> FixedLoop<S, I> {
    /// Whether the loop is recording ([`FixedLoop::start_recording`]).
    #[must_use]
    pub const fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// Stops recording (if it was) and returns nothing; the loop runs on
    /// without the recording's per-tick cost. Take [`FixedLoop::replay`] first
    /// to keep the session.
    pub fn stop_recording(&mut self) {
        self.recording = None;
    }
}

impl<S: Sim, I: InputSource<S::Input>> FixedLoop<S, I>
where
    S::Input: ReplayInput,
{
    /// Starts recording the session from here. Allowed only on a fresh loop:
    /// at tick 0, before any host event (a frame clamp or step cap that
    /// already told the sim about dropped time), because a verifier starts
    /// from the state the config builds. `header.ticks` and
    /// `header.input_kind` are set by the recording, as by
    /// [`crate::Recorder::new`]; the other fields say which sim and config
    /// this is. Starting again at tick 0 discards the earlier recording.
    ///
    /// # Errors
    ///
    /// [`ReplayError::RecordingStartedLate`] (naming the tick) past tick 0
    /// or after a host event; [`ReplayError::LengthOutOfRange`] for a
    /// `checkpoint_every` of 0. The loop is unchanged then.
    pub fn start_recording(&mut self, header: ReplayHeader) -> Result<(), ReplayError> {
        if self.tick != Tick::ZERO || self.host_events != 0 {
            return Err(ReplayError::RecordingStartedLate {
                tick: self.tick.get(),
                host_events: self.host_events,
            });
        }
        self.recording = Some(Box::new(Recording::new(&self.sim, header)?));
        Ok(())
    }

    /// The session recorded so far as a replay whose final state is the sim's
    /// current state. Non-destructive: recording goes on, and it can be
    /// called again later (each call copies the recording, O(its size)).
    ///
    /// # Errors
    ///
    /// [`ReplayError::NotRecording`] unless [`FixedLoop::start_recording`]
    /// succeeded; [`ReplayError::FieldsChanged`] when the sim's field list
    /// changed during the session; [`ReplayError::BadName`] for an invalid
    /// sim id or field name.
    pub fn replay(&self) -> Result<Replay<S::Input>, ReplayError> {
        match self.recording.as_deref() {
            Some(rec) => rec.snapshot(&self.sim),
            None => Err(ReplayError::NotRecording),
        }
    }
}
