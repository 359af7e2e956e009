//! Whole sessions: all peers in one process over the network simulator
//! ([`run_local`]), or one peer of a real multi-process game ([`run_peer`]).
//! Both produce the replay of the confirmed inputs and, on a desync, a
//! forensic bundle.
//!
//! One concept per private module, re-exported flat here: `options` (the
//! settings and their checks), `error` ([`RunError`]), `inputs` (the
//! players' input streams), `report` (what a run hands back), `local` (the
//! in-process driver over the network simulator), `peer` (the driver of
//! one process over a real transport) and `forensics` (naming a desync's
//! fields and writing the bundle). The two drivers share only the settings
//! and the reports, not each other.

mod error;
mod forensics;
mod inputs;
mod local;
mod options;
mod peer;
mod report;

pub use error::RunError;
pub use inputs::{PlayerInput, random_inputs};
pub use local::{run_local, run_local_rejoin};
pub use options::{MAX_REJOIN_SNAPSHOT, RunOptions};
pub use peer::{HostClock, PeerRejoin, run_peer};
pub use report::{BundleFile, Finding, LocalRun, PeerReport, PeerRun, SpectatorReport};
