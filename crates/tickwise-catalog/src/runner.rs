//! Running any catalog sim without knowing its type: what a timing tool
//! (`tickwise budget`) needs.

use alloc::string::String;

use tickwise::ClockConfig;

use crate::sim::SimInfo;

/// What the tools need to know about a sim under one config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct SimProfile {
    /// The sim's identity.
    pub sim: SimInfo,
    /// The seed the config states.
    pub seed: u64,
    /// How a live loop steps it ([`CatalogSim::clock_config`](crate::CatalogSim::clock_config)).
    pub clock: ClockConfig,
    /// Work units per tick ([`CatalogSim::work_per_tick`](crate::CatalogSim::work_per_tick)).
    pub work_per_tick: u64,
    /// Bytes of one copy of the state ([`CatalogSim::state_bytes`](crate::CatalogSim::state_bytes)).
    pub state_bytes: u64,
    /// Ticks until its steady state ([`CatalogSim::settle_ticks`](crate::CatalogSim::settle_ticks)).
    pub settle_ticks: u64,
    /// The most ticks one resume catches up, if the config says
    /// ([`CatalogSim::max_catch_up_steps`](crate::CatalogSim::max_catch_up_steps)).
    pub max_catch_up_steps: Option<u64>,
}

/// One sim, built from a config and fed by an input plan, stepped one tick
/// at a time through a trait object ([`Catalog::runner`](crate::Catalog::runner)).
///
/// Each [`step`](TickRunner::step) takes the plan's next input and runs one
/// tick; the input is generated inside the call, which a timing tool should
/// keep in mind for very cheap sims.
pub trait TickRunner {
    /// Runs one tick with the plan's next input.
    fn step(&mut self);

    /// Runs `ticks` ticks back to back.
    fn run(&mut self, ticks: u64) {
        for _ in 0..ticks {
            self.step();
        }
    }

    /// Ticks run so far.
    fn tick(&self) -> u64;

    /// The sim's 64-bit state checksum now.
    fn checksum(&self) -> u64;

    /// The sim's text digest now.
    fn digest(&self) -> String;

    /// The sim and what its config says.
    fn profile(&self) -> &SimProfile;
}
