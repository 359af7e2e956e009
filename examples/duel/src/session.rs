//! A live session: how a game's main loop drives the duel.
//!
//! The host keeps a [`FixedLoop`] (the sim, its clock, its lifecycle and the
//! input source) and a [`Presenter`] (the last two ticks and alpha). On each
//! display frame it pushes the key events that arrived, with the timestamps
//! the platform gave them, then runs the frame and draws the interpolated
//! [`DuelFrame`]. Frames can be any length: the loop turns them into whole
//! ticks and hands every tick the keys of its own time window, so a tap
//! shorter than a tick still reaches the sim as a press and a release.
//!
//! A session is a list of [`Action`]s, which makes it replayable in tests: the
//! same keys under a different frame schedule must give the same ticks.

use core::fmt;

use tickwise::{
    CatchUpPolicy, EventKind, FixedLoop, InputBuffer, InputError, InputEvent, InputSource,
    LifecycleError, Nanos, Presenter, ResumeReport, Tick, TickInput, Timestamp,
};

use crate::{Duel, DuelConfig, DuelFrame, Key};

/// The policy of [`demo_actions`]: a pause shorter than two ticks is
/// forgiven, a longer one is caught up for at most 30 ticks (about half a
/// second: enough to finish a rally in flight, too little to stall a frame).
pub const DEMO_POLICY: CatchUpPolicy = CatchUpPolicy::Capped {
    max_steps: 30,
    min_elapsed: Nanos::from_millis(32),
};

/// The frame lengths of a jittery display, in milliseconds (100 ms in all).
pub const IRREGULAR_MS: [u64; 5] = [3, 7, 13, 29, 48];

/// The keys of [`demo_actions`]: the left player holds up from 5 ms to 90 ms
/// and taps smash from 37 ms to 41 ms (inside one 16 ms tick); the right
/// player holds down from 120 ms to 300 ms. `(ms, key, down)`.
pub const DEMO_KEYS: [(u64, Key, bool); 6] = [
    (5, Key::LeftUp, true),
    (37, Key::LeftSmash, true),
    (41, Key::LeftSmash, false),
    (90, Key::LeftUp, false),
    (120, Key::RightDown, true),
    (300, Key::RightDown, false),
];

/// One thing the host does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A key went down (`down: true`) or up at host time `at`.
    Key {
        /// When the platform says it happened.
        at: Timestamp,
        /// Which key.
        key: Key,
        /// Down or up.
        down: bool,
    },
    /// A display frame of this length. While paused it only moves the host clock.
    Frame(Nanos),
    /// The player opens the pause menu (at the loop's host time).
    Pause,
    /// The player closes it: the time paused is caught up under the policy.
    Resume,
}

/// Why an action was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// The input buffer refused a key event.
    Input(InputError),
    /// A pause while paused, or a resume while running.
    Lifecycle(LifecycleError),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Input(e) => write!(f, "key event refused: {e}"),
            SessionError::Lifecycle(e) => write!(f, "pause or resume refused: {e}"),
        }
    }
}

impl core::error::Error for SessionError {}

/// The session's input source: an [`InputBuffer`] that also keeps each
/// tick's input as the sim received it (about 24 bytes a tick), so a test can
/// run the same ticks offline. Live recording in the kernel will do this job.
#[derive(Clone, Debug, Default)]
pub struct LoggedInputs {
    buffer: InputBuffer,
    log: Vec<TickInput>,
}

impl LoggedInputs {
    /// Every tick's input so far; index = tick.
    #[must_use]
    pub fn log(&self) -> &[TickInput] {
        &self.log
    }
}

impl InputSource<TickInput> for LoggedInputs {
    fn input(&mut self, tick: Tick, window_end: Timestamp) -> TickInput {
        let input = self.buffer.input(tick, window_end);
        self.log.push(input);
        input
    }
}

/// A duel played live.
#[derive(Debug)]
pub struct LiveSession {
    lp: FixedLoop<Duel, LoggedInputs>,
    presenter: Presenter<DuelFrame>,
    drawn: DuelFrame,
    resumes: Vec<ResumeReport>,
    thrown_away: Nanos,
}

impl LiveSession {
    /// A session at tick 0 and host time 0.
    #[must_use]
    pub fn new(cfg: &DuelConfig, policy: CatchUpPolicy) -> LiveSession {
        let sim = Duel::new(cfg);
        let lp = FixedLoop::new(sim, LoggedInputs::default(), cfg.clock_config(), policy);
        let presenter = Presenter::new(lp.sim());
        LiveSession {
            drawn: *presenter.current(),
            lp,
            presenter,
            resumes: Vec::new(),
            thrown_away: Nanos::ZERO,
        }
    }

    /// Does one action.
    ///
    /// # Errors
    ///
    /// [`SessionError::Input`] when the buffer is full, and
    /// [`SessionError::Lifecycle`] for a pause while not running or a resume
    /// while running; the session is unchanged in both cases.
    pub fn apply(&mut self, action: Action) -> Result<(), SessionError> {
        match action {
            Action::Key { at, key, down } => {
                let b = key.button();
                let kind = if down {
                    EventKind::Down(b)
                } else {
                    EventKind::Up(b)
                };
                let event = InputEvent { at, kind };
                let buffer = &mut self.lp.inputs_mut().buffer;
                buffer.push(event).map_err(SessionError::Input)?;
            }
            Action::Frame(dt) => {
                let report = self.presenter.frame(&mut self.lp, dt);
                self.thrown_away = self.thrown_away.saturating_add(report.thrown_away());
                let p = &self.presenter;
                self.drawn = DuelFrame::interpolate(p.previous(), p.current(), p.alpha());
            }
            Action::Pause => {
                let now = self.lp.host_time();
                self.lp.pause(now).map_err(SessionError::Lifecycle)?;
            }
            Action::Resume => {
                let now = self.lp.host_time();
                let report = self.lp.resume(now).map_err(SessionError::Lifecycle)?;
                // The catch-up ticks took no snapshots: start the presenter
                // again from the state they reached, or the next frames would
                // draw the world from before the pause.
                self.presenter = Presenter::new(self.lp.sim());
                self.drawn = *self.presenter.current();
                self.resumes.push(report);
            }
        }
        Ok(())
    }

    /// Does every action in order, stopping at the first refused one.
    ///
    /// # Errors
    ///
    /// The first refusal, as [`LiveSession::apply`].
    pub fn run(&mut self, actions: impl IntoIterator<Item = Action>) -> Result<(), SessionError> {
        actions.into_iter().try_for_each(|a| self.apply(a))
    }

    /// The sim, read-only.
    #[must_use]
    pub const fn sim(&self) -> &Duel {
        self.lp.sim()
    }

    /// What the last frame drew.
    #[must_use]
    pub const fn drawn(&self) -> DuelFrame {
        self.drawn
    }

    /// Every tick's input as the sim received it; index = tick.
    #[must_use]
    pub fn inputs(&self) -> &[TickInput] {
        self.lp.inputs().log()
    }

    /// The report of every resume, in order.
    pub fn resumes(&self) -> &[ResumeReport] {
        &self.resumes
    }

    /// Time frames threw away (step cap or frame clamp), summed.
    #[must_use]
    pub const fn thrown_away(&self) -> Nanos {
        self.thrown_away
    }

    /// The loop, read-only (tick, host time, clock, lifecycle).
    #[must_use]
    pub const fn fixed_loop(&self) -> &FixedLoop<Duel, LoggedInputs> {
        &self.lp
    }
}

/// Frames of `frames_ms` starting at host time `start_ms`, each preceded by
/// the `keys` that happened before its end: what a host that polls events
/// once per frame delivers. Keys after the last frame are not delivered.
#[must_use]
pub fn deliver(keys: &[(u64, Key, bool)], frames_ms: &[u64], start_ms: u64) -> Vec<Action> {
    let mut out = Vec::new();
    let mut now = start_ms;
    let mut next = keys.iter().peekable();
    for &ms in frames_ms {
        now = now.saturating_add(ms);
        while let Some(&(at, key, down)) = next.next_if(|k| k.0 < now) {
            out.push(Action::Key {
                at: Timestamp::from_millis(at),
                key,
                down,
            });
        }
        out.push(Action::Frame(Nanos::from_millis(ms)));
    }
    out
}

/// The demo session (run it with [`DEMO_POLICY`]): 400 ms of play on
/// [`IRREGULAR_MS`] frames with [`DEMO_KEYS`], a pause of one second (the
/// pause menu still gets frames), a resume, 400 ms more, and one 8 ms frame
/// that runs no tick and only moves the interpolation.
#[must_use]
pub fn demo_actions() -> Vec<Action> {
    let mut out = deliver(&DEMO_KEYS, &IRREGULAR_MS.repeat(4), 0);
    out.push(Action::Pause);
    out.extend(
        IRREGULAR_MS
            .repeat(10)
            .into_iter()
            .map(|ms| Action::Frame(Nanos::from_millis(ms))),
    );
    out.push(Action::Resume);
    out.extend(deliver(&[], &IRREGULAR_MS.repeat(4), 1_400));
    out.push(Action::Frame(Nanos::from_millis(8)));
    out
}
