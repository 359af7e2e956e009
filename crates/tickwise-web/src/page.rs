//! A page model for JavaScript, for any sim: the [`WebPage`] trait and the
//! [`wasm_page!`](crate::wasm_page) macro.
//!
//! `#[wasm_bindgen]` cannot export a generic type, so each page has a concrete
//! model type that owns a [`WebLoop`] and implements [`WebPage`] (a
//! constructor and two accessors; every other method has a default). The
//! macro then writes the JavaScript class around it: the same method names on
//! every page, so the platform glue in `web/src/platform.js` and the test
//! tools work unchanged on a game's own page.
//!
//! The generated class (`js_name` of your choice) has:
//!
//! | JS | does |
//! |---|---|
//! | `new Class()` | [`WebPage::create`]; throws its error message |
//! | `frameAt(ms)` | a real-time frame: steps run, or `undefined` for a refused time |
//! | `visibility(hidden, ms)` | JSON `{"outcome": "ignored"\|"backgrounded"\|"resumed"\|"rejected", "resume": report\|null}` |
//! | `reanchor()` | real-time mode is starting: the next frame time maps to the loop's time |
//! | `pauseNow()`, `backgroundNow()` | `true`, or `false` unless running |
//! | `pauseAt(ms)` | a player's pause at browser time `ms`; `false` unless running or for a bad time |
//! | `resumeAt(ms)` | a player's resume at browser time `ms`: the resume report (JSON), `null` for a bad time |
//! | `resumeAfter(ms)` | test API: `ms` later (no real time), resume: the resume report (JSON) |
//! | `stepFrames(n, ms?)` | test API: `n` frames of `ms` (default one step): the tick |
//! | `advance(n)` | test API: `n` steps: the tick |
//! | `tick()`, `digest()` | the loop's tick and the sim's digest |
//! | `stateJson()` | [`WebPage::state_json`] as JSON text |
//! | `reset()` | [`WebPage::reset`] (a recording page starts a new recording at tick 0) |
//! | `setSpeed(p, q)` | sim time at `p/q` of browser time from the next frame: `true`, or `false` (nothing changes) unless both are whole numbers with `1 ≤ p, q ≤ 1000` and `p/q ≤ 16` |
//! | `replay()` | the session so far as a replay file, base64; throws unless the page records |
//! | `stopRecording()` | drops the recording (benchmarks); `replay()` throws from then until `reset()` |
//!
//! Resume reports carry the keys of `tickwise script`'s `resume-after` line
//! plus `digest`. Bad numbers throw an `Error` naming the argument (test API)
//! or are ignored and counted (browser times). Add page-specific methods in
//! your own `#[wasm_bindgen(js_class = ...)] impl` block on the generated
//! type; its model is [`page()`](crate::wasm_page)/`page_mut()`.

use serde_json::Value;
use tickwise::{FrameReport, InputSource, Sim, TimeError};

use crate::lifecycle::{ResumeOutcome, VisibilityOutcome};
use crate::web_loop::WebLoop;

/// A page's model: what the [`wasm_page!`](crate::wasm_page) class wraps.
///
/// Implement the four required items; override a provided method when the
/// page keeps more than the loop (an interpolating [`tickwise::Presenter`]
/// updated every frame, a scene stack, a config to reset to).
pub trait WebPage: Sized {
    /// The sim.
    type Sim: Sim;
    /// Its input source.
    type Inputs: InputSource<<Self::Sim as Sim>::Input>;
    /// Why [`WebPage::create`] failed (shown to JavaScript as the `Error`'s message).
    type Error: core::fmt::Display;

    /// A fresh page (the JavaScript constructor).
    ///
    /// # Errors
    ///
    /// When the page cannot start (an invalid compiled-in config, say).
    fn create() -> Result<Self, Self::Error>;

    /// The adapter.
    fn web_loop(&self) -> &WebLoop<Self::Sim, Self::Inputs>;

    /// The adapter, mutably.
    fn web_loop_mut(&mut self) -> &mut WebLoop<Self::Sim, Self::Inputs>;

    /// A real-time frame at browser time `ms` ([`WebLoop::frame_at`]).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (ignored and counted).
    fn frame_at(&mut self, ms: f64) -> Result<FrameReport, TimeError> {
        self.web_loop_mut().frame_at(ms)
    }

    /// Hidden (`true`) or visible at browser time `ms` ([`WebLoop::visibility`]).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (ignored and counted).
    fn visibility(&mut self, hidden: bool, ms: f64) -> Result<VisibilityOutcome, TimeError> {
        self.web_loop_mut().visibility(hidden, ms)
    }

    /// A player's pause at browser time `ms` ([`WebLoop::pause_at`]);
    /// `Ok(false)` unless running.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (ignored and counted).
    fn pause_at(&mut self, ms: f64) -> Result<bool, TimeError> {
        self.web_loop_mut().pause_at(ms)
    }

    /// A player's resume at browser time `ms` ([`WebLoop::resume_at`]).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (ignored and counted).
    fn resume_at(&mut self, ms: f64) -> Result<ResumeOutcome, TimeError> {
        self.web_loop_mut().resume_at(ms).cloned()
    }

    /// The test API's state object ([`WebLoop::state_json`] plus the page's keys).
    fn state_json(&self) -> Value {
        Value::Object(self.web_loop().state_json())
    }

    /// Back to a fresh page (by default: [`WebPage::create`] again).
    ///
    /// # Errors
    ///
    /// As [`WebPage::create`]; the page is unchanged then.
    fn reset(&mut self) -> Result<(), Self::Error> {
        *self = Self::create()?;
        Ok(())
    }
}

/// Writes the `#[wasm_bindgen]` class for a [`WebPage`] model.
///
/// ```
/// use tickwise::{CatchUpPolicy, ClockConfig, FixedLoop, FnInputs, StateVisitor, StepLength, Sim, Tick};
/// use tickwise_web::{WebLoop, WebPage};
///
/// /// A counter that adds its input every tick.
/// #[derive(Debug)]
/// pub struct Counter(u64);
///
/// impl Sim for Counter {
///     type Input = u64;
///     fn step(&mut self, inputs: &[u64]) {
///         let input = &inputs[0];
///         self.0 += input;
///     }
///     fn visit_state(&self, v: &mut dyn StateVisitor) {
///         v.field("count");
///         v.value(self.0);
///     }
/// }
///
/// type Inputs = FnInputs<fn(Tick) -> u64>;
///
/// /// The counter page's model.
/// #[derive(Debug)]
/// pub struct CounterPage(WebLoop<Counter, Inputs>);
///
/// impl WebPage for CounterPage {
///     type Sim = Counter;
///     type Inputs = Inputs;
///     type Error = tickwise::TimeError;
///     fn create() -> Result<CounterPage, tickwise::TimeError> {
///         let clock = ClockConfig::new(StepLength::from_hz(60)?);
///         let inputs: Inputs = FnInputs(|_| 1);
///         let lp = FixedLoop::new(Counter(0), inputs, clock, CatchUpPolicy::Full);
///         Ok(CounterPage(WebLoop::new(lp)))
///     }
///     fn web_loop(&self) -> &WebLoop<Counter, Inputs> {
///         &self.0
///     }
///     fn web_loop_mut(&mut self) -> &mut WebLoop<Counter, Inputs> {
///         &mut self.0
///     }
/// }
///
/// tickwise_web::wasm_page! {
///     /// The counter page for JavaScript: `new Counter()`.
///     pub struct CounterHandle(CounterPage) as Counter;
/// }
///
/// // Natively, the class is an ordinary Rust type.
/// let mut h = CounterHandle::new().map_err(|_| "create")?;
/// assert_eq!(h.step_frames(60.0, None).map_err(|_| "step")?, 60.0);
/// assert_eq!(h.page().web_loop().sim().0, 60);
/// # Ok::<(), &'static str>(())
/// ```
///
/// The crate using it needs no `wasm-bindgen` dependency of its own, only
/// `use tickwise_web::wasm_bindgen;` in the module of the call: the derive
/// that wasm-bindgen generates for the struct names its crate
/// `wasm_bindgen` whatever path it is given, and that line makes the
/// adapter's copy that crate (`examples/duel-web` does this).
#[macro_export]
macro_rules! wasm_page {
    (
        $(#[$meta:meta])*
        $vis:vis struct $handle:ident($page:ty) as $js:ident;
    ) => {
        $(#[$meta])*
        #[$crate::wasm_bindgen::prelude::wasm_bindgen(js_name = $js, wasm_bindgen = $crate::wasm_bindgen)]
        #[derive(Debug)]
        $vis struct $handle {
            page: $page,
        }

        impl $handle {
            /// The page model.
            #[must_use]
            #[allow(dead_code, reason = "for page-specific methods")]
            $vis const fn page(&self) -> &$page {
                &self.page
            }

            /// The page model, mutably.
            #[allow(dead_code, reason = "for page-specific methods")]
            $vis const fn page_mut(&mut self) -> &mut $page {
                &mut self.page
            }

            /// Wraps a model (for page-specific constructors).
            #[must_use]
            #[allow(dead_code, reason = "for page-specific constructors")]
            $vis const fn from_page(page: $page) -> $handle {
                $handle { page }
            }
        }

        #[$crate::wasm_bindgen::prelude::wasm_bindgen(js_class = $js, wasm_bindgen = $crate::wasm_bindgen)]
        impl $handle {
            /// A fresh page.
            ///
            /// # Errors
            ///
            /// When the page cannot start.
            #[wasm_bindgen(constructor)]
            pub fn new() -> ::core::result::Result<$handle, $crate::wasm_bindgen::JsError> {
                <$page as $crate::WebPage>::create()
                    .map(|page| $handle { page })
                    .map_err($crate::bindings::js_err)
            }

            /// A real-time frame at browser time `ms`: the steps run, or
            /// `undefined` when the time was refused (ignored and counted).
            #[wasm_bindgen(js_name = frameAt)]
            pub fn frame_at(&mut self, ms: f64) -> ::core::option::Option<u32> {
                <$page as $crate::WebPage>::frame_at(&mut self.page, ms)
                    .ok()
                    .map(|r| r.steps)
            }

            /// Hidden or visible at browser time `ms`: JSON `{"outcome":
            /// "ignored"|"backgrounded"|"resumed"|"rejected", "resume": report|null}`.
            pub fn visibility(&mut self, hidden: bool, ms: f64) -> ::std::string::String {
                $crate::bindings::visibility_json(
                    <$page as $crate::WebPage>::visibility(&mut self.page, hidden, ms),
                )
            }

            /// Forgets the browser-clock anchor (real-time mode starting).
            pub fn reanchor(&mut self) {
                <$page as $crate::WebPage>::web_loop_mut(&mut self.page).reanchor();
            }

            /// Pauses now; `false` unless running.
            #[wasm_bindgen(js_name = pauseNow)]
            pub fn pause_now(&mut self) -> bool {
                <$page as $crate::WebPage>::web_loop_mut(&mut self.page).pause_now()
            }

            /// Goes to the background now; `false` unless running.
            #[wasm_bindgen(js_name = backgroundNow)]
            pub fn background_now(&mut self) -> bool {
                <$page as $crate::WebPage>::web_loop_mut(&mut self.page).background_now()
            }

            /// A player's pause at browser time `ms`; `false` unless running
            /// or for a refused time.
            #[wasm_bindgen(js_name = pauseAt)]
            pub fn pause_at(&mut self, ms: f64) -> bool {
                <$page as $crate::WebPage>::pause_at(&mut self.page, ms).unwrap_or(false)
            }

            /// A player's resume at browser time `ms`: the resume report as
            /// JSON, `null` for a refused time.
            #[wasm_bindgen(js_name = resumeAt)]
            pub fn resume_at(&mut self, ms: f64) -> ::std::string::String {
                <$page as $crate::WebPage>::resume_at(&mut self.page, ms)
                    .map_or_else(|_| "null".into(), |r| r.to_json().to_string())
            }

            /// Test API: moves the clock `ms` and resumes; the report as JSON.
            ///
            /// # Errors
            ///
            /// For an `ms` that is not a whole number in range.
            #[wasm_bindgen(js_name = resumeAfter)]
            pub fn resume_after(
                &mut self,
                ms: f64,
            ) -> ::core::result::Result<::std::string::String, $crate::wasm_bindgen::JsError> {
                <$page as $crate::WebPage>::web_loop_mut(&mut self.page)
                    .resume_after(ms)
                    .map(|r| r.to_json().to_string())
                    .map_err($crate::bindings::js_err)
            }

            /// Test API: `n` frames of `ms` (default: one step); returns the tick.
            ///
            /// # Errors
            ///
            /// For arguments that are not whole numbers in range.
            #[wasm_bindgen(js_name = stepFrames)]
            pub fn step_frames(
                &mut self,
                n: f64,
                ms: ::core::option::Option<f64>,
            ) -> ::core::result::Result<f64, $crate::wasm_bindgen::JsError> {
                let w = <$page as $crate::WebPage>::web_loop_mut(&mut self.page);
                w.step_frames(n, ms)
                    .map(|_| $crate::bindings::num(w.tick()))
                    .map_err($crate::bindings::js_err)
            }

            /// Test API: `n` direct steps; returns the tick.
            ///
            /// # Errors
            ///
            /// For an `n` that is not a whole number in range.
            pub fn advance(
                &mut self,
                n: f64,
            ) -> ::core::result::Result<f64, $crate::wasm_bindgen::JsError> {
                let w = <$page as $crate::WebPage>::web_loop_mut(&mut self.page);
                w.advance(n)
                    .map(|_| $crate::bindings::num(w.tick()))
                    .map_err($crate::bindings::js_err)
            }

            /// Steps run so far.
            pub fn tick(&self) -> f64 {
                $crate::bindings::num(<$page as $crate::WebPage>::web_loop(&self.page).tick())
            }

            /// The sim's digest.
            pub fn digest(&self) -> ::std::string::String {
                <$page as $crate::WebPage>::web_loop(&self.page).digest()
            }

            /// The test API's state as JSON text.
            #[wasm_bindgen(js_name = stateJson)]
            pub fn state_json(&self) -> ::std::string::String {
                <$page as $crate::WebPage>::state_json(&self.page).to_string()
            }

            /// Back to a fresh page.
            ///
            /// # Errors
            ///
            /// When the page cannot start again (it is unchanged then).
            pub fn reset(&mut self) -> ::core::result::Result<(), $crate::wasm_bindgen::JsError> {
                <$page as $crate::WebPage>::reset(&mut self.page).map_err($crate::bindings::js_err)
            }

            /// Sim time at `p/q` of browser time from the next frame on;
            /// `false` (nothing changes) unless `1 ≤ p, q ≤ 1000` are whole
            /// numbers and `p/q ≤ 16`.
            #[wasm_bindgen(js_name = setSpeed)]
            pub fn set_speed(&mut self, p: f64, q: f64) -> bool {
                <$page as $crate::WebPage>::web_loop_mut(&mut self.page).set_speed(p, q)
            }

            /// The session so far as a replay file (what `tickwise verify`
            /// reads), in base64.
            ///
            /// # Errors
            ///
            /// When the page does not record (or stopped recording).
            pub fn replay(&self) -> ::core::result::Result<::std::string::String, $crate::wasm_bindgen::JsError> {
                <$page as $crate::WebPage>::web_loop(&self.page)
                    .replay_base64()
                    .map_err($crate::bindings::js_err)
            }

            /// Stops recording (for benchmarks); `reset()` starts again.
            #[wasm_bindgen(js_name = stopRecording)]
            pub fn stop_recording(&mut self) {
                <$page as $crate::WebPage>::web_loop_mut(&mut self.page).stop_recording();
            }
        }
    };
}
