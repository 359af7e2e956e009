//! # tickwise
//!
//! A deterministic fixed-timestep simulation kernel: the same seed and the same
//! inputs give a bit-identical result at any frame rate, on any machine.
//!
//! * [`Clock`] turns variable frame durations into whole fixed steps, in
//!   integer time with an exact rational step (60 Hz is exact), with two
//!   observable death-spiral guards and an optional jitter guard.
//! * [`Lifecycle`] handles running / paused / background and turns time away
//!   into steps under a [`CatchUpPolicy`], reporting every millisecond.
//! * [`FixedLoop`] owns a [`Sim`], feeds each step the input of its tick from
//!   an [`InputSource`], and only lends the sim out read-only. It runs at an
//!   exact rational [`Speed`] (slow motion, fast-forward) and can record the
//!   session it runs as a [`Replay`] (`start_recording`, `replay`).
//! * [`SceneStack`], [`Lcg32`] / [`Pcg32`], [`Fnv1a64`] checksums and per-field
//!   hashes complete the kernel.
//! * [`replay`]: versioned replay files ([`Recorder`], [`Replay`], [`verify`]),
//!   lockstep desync reports ([`compare_lockstep`]) and a GGRS-style
//!   [`sync_test`].
//!
//! The crate is `no_std` + `alloc`, has no dependencies, and contains no
//! floating-point arithmetic except two marked conversions at the boundary
//! ([`Nanos::try_from_millis_f64`] in, [`Alpha::as_f32`] out).
//!
//! ## Example
//!
//! ```
//! use tickwise::{CatchUpPolicy, ClockConfig, FixedLoop, Nanos, Sim, StateVisitor,
//!                StepLength, TickInputs, Timestamp};
//!
//! /// A counter that adds its input every step.
//! #[derive(Default)]
//! struct Counter { total: i64 }
//!
//! impl Sim for Counter {
//!     type Input = i64;
//!     // One player: `inputs` holds that player's input of the tick.
//!     fn step(&mut self, inputs: &[i64]) { self.total += inputs[0]; }
//!     fn visit_state(&self, v: &mut dyn StateVisitor) {
//!         v.field("total");
//!         v.value_i64(self.total);
//!     }
//! }
//!
//! let step = StepLength::from_hz(60)?;                 // exactly 1/60 s
//! let inputs = TickInputs::new(vec![1, 2, 3]);          // ticks 3.. read 0
//! let mut lp = FixedLoop::new(Counter::default(), inputs,
//!                             ClockConfig::new(step), CatchUpPolicy::Full);
//!
//! // A 50 ms frame owes three steps; ticks 0, 1, 2 consume their own inputs.
//! let report = lp.frame(Nanos::from_millis(50));
//! assert_eq!(report.steps, 3);
//! assert_eq!(lp.sim().total, 6);
//!
//! // Time away is accounted at resume, not lost and not frozen.
//! lp.pause(lp.host_time())?;
//! let resume = lp.resume(lp.host_time().saturating_add(Nanos::from_secs(1)))?;
//! assert_eq!(resume.catch_up_steps, 60);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(clippy::float_arithmetic)]

extern crate alloc;

mod clock;
pub mod codec;
mod digest;
mod fixed_loop;
mod input;
mod lifecycle;
mod persist;
mod play;
mod present;
pub mod replay;
mod resume_summary;
mod rng;
mod scene;
mod sim;
mod speed;
mod state_hasher;
mod time;
mod time_bounds;
mod time_error;

pub use clock::{Alpha, Clock, ClockConfig, DEFAULT_MAX_STEPS_PER_FRAME, FrameReport};
pub use digest::{Checksum, FieldHash, FieldHashes, Fnv1a64, StateVisitor, differing_fields};
pub use fixed_loop::{FixedLoop, OfflineSettlement, PlatformEvent};
pub use input::{
    AXES, Button, Buttons, EventKind, FnInputs, InputBuffer, InputError, InputEvent, InputSource,
    PlayerSources, TickInput, TickInputs,
};
pub use lifecycle::{AppState, CatchUpPolicy, Lifecycle, LifecycleError, ResumeReport};
pub use persist::{SnapshotBytes, SnapshotError, read_snapshot, write_snapshot};
pub use play::{
    MAX_ADVANCE, MAX_DURATION_MS, MAX_FRAME_LIST, MAX_FRAMES_PER_CALL, MAX_WALL_MS, PlayError,
    PlaySession,
};
pub use present::{Capture, Presenter};
pub use replay::{
    BlockFault, Checkpoint, Comparison, DEFAULT_CHECKPOINT_EVERY, Divergence, FORMAT_VERSION,
    HeaderRead, HostEvent, HostEventKind, INPUT_KIND_I32, INPUT_KIND_TICK_INPUT, InputDifference,
    MAGIC, Recorder, Replay, ReplayError, ReplayHeader, ReplayInput, ReplayLimits, ReplayParts,
    ReplayVerdict, Run, SyncMismatch, SyncTestReport, TickDivergence, TickInputsCursor,
    VerifyReport, compare_lockstep, compare_lockstep_with_events, compare_replays, one_player,
    read_header, read_header_unchecked, sync_test, verify,
};
pub use resume_summary::ResumeSummary;
pub use rng::{Lcg32, Pcg32};
pub use scene::{
    MAX_SCENE_DEPTH, MAX_SCENE_NAME, Scene, SceneError, SceneStack, is_valid_scene_name,
};
pub use sim::{MAX_PLAYERS, Sim};
pub use speed::Speed;
pub use state_hasher::StateHasher;
pub use time::{NANOS_PER_MILLI, NANOS_PER_SEC, Nanos, StepLength, Tick, Timestamp};
pub use time_bounds::{MAX_SPEED_RATIO, MAX_SPEED_TERM, MAX_STEP_DENOMINATOR};
pub use time_error::TimeError;
