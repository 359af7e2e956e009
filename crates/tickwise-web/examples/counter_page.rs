//! A page for your own sim, in one file: the smallest page built on
//! `tickwise_web`, and the browser tests' proof that a crate other than the
//! built-in pages can ship one (`web/examples/counter/`, built by
//! `.ci/build-web.sh` with `--example counter_page --no-default-features`).
//!
//! A game does the same in its own crate: a `Sim`, a page model that owns a
//! `WebLoop` and implements `WebPage`, and one `wasm_page!` line for the
//! JavaScript class. See `docs/browser.md`, "A page for your own sim".

use core::num::NonZeroU32;

use serde_json::Value;
use tickwise::{
    CatchUpPolicy, ClockConfig, FixedLoop, FnInputs, Nanos, Sim, StateVisitor, StepLength, Tick,
    TimeError,
};
use tickwise_web::{WebLoop, WebPage, wasm_page};

/// Adds each tick's input to a total; the input is `tick % 3`.
#[derive(Clone, Debug, Default)]
pub struct Counter {
    total: u64,
}

impl Sim for Counter {
    type Input = u64;

    fn step(&mut self, inputs: &[u64]) {
        let input = &inputs.first().cloned().unwrap_or_default();
        self.total += input;
    }

    fn visit_state(&self, v: &mut dyn StateVisitor) {
        v.field("total");
        v.value(self.total);
    }
}

/// The counter's scripted input source.
pub type CounterInputs = FnInputs<fn(Tick) -> u64>;

fn input(t: Tick) -> u64 {
    t.get() % 3
}

/// The page model: the adapter, nothing else.
#[derive(Debug)]
pub struct CounterPage {
    web: WebLoop<Counter, CounterInputs>,
}

impl WebPage for CounterPage {
    type Sim = Counter;
    type Inputs = CounterInputs;
    type Error = TimeError;

    /// 60 Hz, at most 8 steps per frame; a tab hidden longer than 50 ms
    /// catches up at most 120 steps (two seconds).
    fn create() -> Result<CounterPage, TimeError> {
        let cap = NonZeroU32::new(8).unwrap_or(tickwise::DEFAULT_MAX_STEPS_PER_FRAME);
        let clock = ClockConfig::new(StepLength::from_hz(60)?).with_max_steps_per_frame(cap);
        let policy = CatchUpPolicy::Capped {
            max_steps: 120,
            min_elapsed: Nanos::from_millis(50),
        };
        let inputs: CounterInputs = FnInputs(input);
        let lp = FixedLoop::new(Counter::default(), inputs, clock, policy);
        Ok(CounterPage {
            web: WebLoop::new(lp),
        })
    }

    fn web_loop(&self) -> &WebLoop<Counter, CounterInputs> {
        &self.web
    }

    fn web_loop_mut(&mut self) -> &mut WebLoop<Counter, CounterInputs> {
        &mut self.web
    }

    /// The adapter's state plus `total`.
    fn state_json(&self) -> Value {
        let mut m = self.web.state_json();
        m.insert("total".into(), self.web.sim().total.into());
        Value::Object(m)
    }
}

wasm_page! {
    /// The counter page for JavaScript: `new Counter()`.
    pub struct CounterHandle(CounterPage) as Counter;
}
