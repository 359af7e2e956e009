//! The test sims shared by the kernel's tests: [`Walker`] (replays, the
//! loop's fast path, speed) and [`Recorder`] (input frames, speed).

use tickwise::{Sim, StateVisitor, TickInput};

/// Three fields: `steps` (input-independent), `vel` and `pos` (input-driven).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Walker {
    pub(crate) steps: u64,
    pub(crate) vel: i64,
    pub(crate) pos: i64,
}

impl Sim for Walker {
    type Input = i32;
    fn step(&mut self, inputs: &[i32]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        self.steps += 1;
        // No friction: an input change shifts vel for good, and pos with it.
        self.vel += i64::from(*input);
        self.pos += self.vel;
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("steps");
        v.value(self.steps);
        v.field("vel");
        v.value_i64(self.vel);
        v.field("pos");
        v.value_i64(self.pos);
    }
}

/// The island rules' scripted input: `tick % 40 < 20 ? 1 : -1`.
pub(crate) fn pattern(t: u64) -> i32 {
    if t % 40 < 20 { 1 } else { -1 }
}

/// Records the input of every tick it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorder(pub(crate) Vec<TickInput>);

impl Sim for Recorder {
    type Input = TickInput;
    fn step(&mut self, inputs: &[TickInput]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        self.0.push(*input);
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("len");
        v.value(self.0.len() as u64);
    }
}
