//! Replays, verification, desync reports and the sync test.
//!
//! A replay is everything needed to re-simulate a run and prove its result:
//! the sim's id and version, its config bytes, the inputs of every tick
//! (in blocks of runs or of packed symbols, whichever is smaller), the host events that changed the sim's state
//! outside a step (time dropped by the loop), a checkpoint of the state
//! every K ticks, and the final state. The byte layout is specified in
//! `docs/replay-format.md` so that a server in any language can read it.
//!
//! * A [`crate::FixedLoop`] records the session it runs
//!   (`FixedLoop::start_recording`, `FixedLoop::replay`): every tick's input
//!   as the sim saw it, catch-up ticks included, and every time-dropped call.
//! * [`Recorder`] steps a sim and records a [`Replay`]; [`Replay::to_bytes`]
//!   writes it and [`Replay::from_bytes`] reads it back under
//!   [`ReplayLimits`], with a specific [`ReplayError`] for every malformed
//!   file (never a panic, never unbounded work).
//! * [`verify()`] re-simulates a replay and reports the first checkpoint that
//!   diverges, its tick range and the fields that differ.
//! * [`compare_lockstep`] steps two runs side by side and names the first
//!   tick whose checksums differ (a desync report); [`compare_replays`] does
//!   it for two replays, host events included.
//! * [`sync_test()`] rolls back and re-simulates every tick, GGRS style, to
//!   catch state that a snapshot misses.
//!
//! The integrity checksum at the end of a file detects corruption, not
//! forgery: anyone can recompute it. Forged inputs are caught by
//! re-simulation, at the first checkpoint after the edit.
//!
//! ```
//! use tickwise::{ReplayHeader, ReplayLimits, Recorder, Replay, Sim, StateVisitor, verify};
//!
//! #[derive(Clone, Default)]
//! struct Counter { total: i64 }
//! impl Sim for Counter {
//!     type Input = i32;
//!     fn step(&mut self, inputs: &[i32]) { self.total += i64::from(inputs[0]); }
//!     fn visit_state(&self, v: &mut dyn StateVisitor) { v.field("total"); v.value_i64(self.total); }
//! }
//!
//! let header = ReplayHeader { sim_id: "counter".into(), sim_version: 1, config: b"{}".to_vec(),
//!                             seed: 0, ticks: 0, checkpoint_every: 60, input_kind: 0,
//!                             players: 1 };
//! let mut rec = Recorder::new(Counter::default(), header)?;
//! for t in 0..1000 { rec.step(&[if t % 40 < 20 { 1 } else { -1 }]); }
//! let (_, replay) = rec.finish()?;
//! let bytes = replay.to_bytes();
//!
//! let read = Replay::<i32>::from_bytes(&bytes, &ReplayLimits::DEFAULT)?;
//! assert!(verify(Counter::default(), &read).is_match());
//! # Ok::<(), tickwise::ReplayError>(())
//! ```

mod blocks;
mod codec;
mod compare;
mod error;
mod format;
mod record;
mod run;
mod symbols;
mod sync_test;
mod verify;

pub use blocks::BlockFault;
pub use codec::{INPUT_KIND_I32, INPUT_KIND_TICK_INPUT, ReplayInput};
pub use compare::{
    Comparison, InputDifference, TickDivergence, compare_lockstep, compare_lockstep_with_events,
    compare_replays, one_player,
};
pub use error::ReplayError;
pub use format::{
    Checkpoint, DEFAULT_CHECKPOINT_EVERY, FORMAT_VERSION, HeaderRead, HostEvent, HostEventKind,
    MAGIC, MAX_NAME_BYTES, Replay, ReplayHeader, ReplayLimits, ReplayParts, TickInputsCursor,
    is_valid_name, read_header, read_header_unchecked,
};
pub use record::Recorder;
pub(crate) use record::Recording;
pub use run::Run;
pub use sync_test::{SyncMismatch, SyncTestReport, sync_test};
pub use verify::{Divergence, ReplayVerdict, VerifyReport, verify};
