//! The O(n²) reference: the same rules, every pair instead of the grid.

use alloc::string::String;

use tickwise::{Sim, StateVisitor, TickInput};

use super::world::Neighbours;
use super::{HordeConfig, HordeWorld};

/// The horde stepped with all-pairs neighbour search.
///
/// Separation sums one integer push per overlapping pair, and the kernel is
/// odd (`push(−d) = −push(d)`), so the sum does not depend on the order pairs
/// are found in; contacts and the attack touch each enemy once. The grid and
/// this reference therefore reach the same state exactly when the grid finds
/// exactly the overlapping pairs and the enemies near the player — which is
/// what the tests check, digest against digest, for hundreds of ticks.
/// O(n²) per tick: for tests with up to a few thousand enemies.
#[derive(Clone, Debug)]
pub struct NaiveHorde(pub(super) HordeWorld);

impl NaiveHorde {
    /// The reference world at tick 0 (identical to [`HordeWorld::new`]).
    #[must_use]
    pub fn new(cfg: &HordeConfig) -> NaiveHorde {
        NaiveHorde(HordeWorld::new(cfg))
    }

    /// The world it steps.
    #[must_use]
    pub const fn world(&self) -> &HordeWorld {
        &self.0
    }
}

impl Sim for NaiveHorde {
    type Input = TickInput;

    fn step(&mut self, input: &TickInput) {
        self.0.step_with(input, Neighbours::AllPairs);
    }

    fn visit_state(&self, v: &mut dyn StateVisitor) {
        self.0.visit_state(v);
    }

    fn digest(&self) -> String {
        self.0.digest()
    }
}
