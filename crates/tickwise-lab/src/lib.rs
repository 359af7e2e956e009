//! # tickwise-lab
//!
//! The loop experiment (see `docs/background.md`), runnable: game-loop designs
//! are judged by what they do, not by how many classes they have.
//!
//! * [`run_lab`] runs every [`Strategy`] (variable step, sleep, fixed step
//!   per frame, and the kernel's accumulator plain, interpolated and with the
//!   jitter guard, each with and without death-spiral guards) on every
//!   simulated [`Profile`] (144 Hz, 60 Hz, 30 Hz, jittery, stalls, overloaded)
//!   and records real time, sim time, updates, alpha, frame-time percentiles,
//!   steps per frame, thrown-away time, on-screen error and the world's state.
//! * A strategy **passes** when, on every normal machine, sim time advances
//!   at 1.0 sim second per real second (±1 %) and the world at the same sim
//!   time is bit-identical. The fault machines (stalls, overloaded) show what
//!   the guards cost and prevent. See `docs/lab.md`.
//! * [`table::render`], [`json::to_json`] and [`report::write_report`] turn
//!   a [`LabReport`] into a text table, JSON, and a folder of SVG charts.
//! * [`runner`] runs the kernel loop against a real clock: hosted (one call
//!   per platform frame) or owned (capped by sleep + spin, or uncapped), with
//!   frame-time percentiles, ticks against expected, and CPU time.
//! * [`sim_budget`] budgets any catalog sim with [`budget`]'s method, its
//!   own defaults filling the gaps (`tickwise budget`).
//! * [`horde`] runs the horde headless with every tick timed (`tickwise horde`).
//! * [`script`] drives any catalog sim in its loop from a text script (the
//!   language of `tickwise script`): frames, pauses, resumes, speed, scenes.
//! * [`soak`] runs a sim through the loop for a very long time with random
//!   frames, pauses and resumes, against a straight run (the `soak` binary).
//!
//! This is a reporting crate: floats are fine here, and only here and in
//! other presentation code. The simulation itself stays in integers (the
//! script language and the horde run only drive sims; their timings are
//! the only floats).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod budget;
pub mod charts;
pub mod cpu;
pub mod experiment;
pub mod histogram;
pub mod horde;
pub mod json;
pub mod machine;
pub mod report;
pub mod runner;
pub mod script;
pub mod sim_budget;
pub mod soak;
pub mod stats;
pub mod strategy;
pub mod svg;
pub mod table;
pub mod world;

pub use experiment::{
    Cell, LabError, LabReport, LabSettings, MIN_RUN_STEPS, StrategySummary, StrategyVerdict,
    min_seconds, run_cell, run_lab,
};
pub use machine::Profile;
pub use strategy::{Design, Strategy};
