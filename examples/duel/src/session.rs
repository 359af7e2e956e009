//! A live session: how a game's main loop drives the duel, and records it.
//!
//! The host keeps a [`FixedLoop`] (the sim, its clock, its lifecycle and one
//! [`InputBuffer`] per player, in [`PlayerSources`]) and a [`Presenter`] (the
//! last two ticks and alpha). Two players share one keyboard: each key is
//! one player's button ([`Key::side`], [`Key::button`]), so its events go to
//! that player's buffer only. On each display frame the host pushes the key
//! events that arrived, with the
//! timestamps the platform gave them, then runs the frame and draws the
//! interpolated [`DuelFrame`]. Frames can be any length: the loop turns them
//! into whole ticks and hands every tick the keys of its own time window, so
//! a tap shorter than a tick still reaches the sim as a press and a release.
//!
//! The loop records from tick 0 ([`FixedLoop::start_recording`]): every
//! tick's inputs as the sim consumed them (one stream per player), catch-up
//! ticks included, and every
//! stretch of time it threw away. [`LiveSession::replay`] is that record; the
//! `duel verify` tool re-simulates it to the live session's final state.
//!
//! Every call that can run steps goes through the presenter (frames, pause,
//! hide, resume), so after a capped catch-up it draws the ticks the sim
//! really ran, not the world from before the pause.
//!
//! A session is a list of [`Action`]s, which makes it replayable in tests: the
//! same keys under a different frame schedule must give the same ticks.

use core::fmt;

use tickwise::{
    CatchUpPolicy, EventKind, FixedLoop, InputBuffer, InputError, InputEvent, LifecycleError,
    Nanos, PlayerSources, Presenter, Replay, ReplayError, ResumeReport, TickInput, Timestamp,
};
use tickwise_catalog::{CatalogError, replay_header};

use crate::{Duel, DuelConfig, DuelFrame, Key};

/// The policy of [`demo_actions`]: a pause shorter than two ticks is
/// forgiven, a longer one is caught up for at most 30 ticks (about half a
/// second: enough to finish a rally in flight, too little to stall a frame).
pub const DEMO_POLICY: CatchUpPolicy = CatchUpPolicy::Capped {
    max_steps: 30,
    min_elapsed: Nanos::from_millis(32),
};

/// A checkpoint every 30 ticks (about half a second at 16 ms): a desync is
/// located to within half a second of play for 12 bytes per checkpoint.
pub const LIVE_CHECKPOINT_EVERY: u64 = 30;

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

/// The host time at which [`demo_actions`] ends, in milliseconds: 400 ms of
/// play, 1000 ms paused, 400 ms of play and one 8 ms frame.
pub const DEMO_END_MS: u64 = 1_808;

/// The keys of [`live_demo_actions`] after the demo: the right player
/// presses up at 1850 ms and is still holding it when the app is hidden.
pub const HIDE_KEYS: [(u64, Key, bool); 1] = [(1_850, Key::RightUp, true)];

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
    /// A display frame of this length. While paused or hidden it only moves
    /// the host clock.
    Frame(Nanos),
    /// The player opens the pause menu (at the loop's host time). Held keys
    /// stay held: the window keeps focus and will see their key-ups.
    Pause,
    /// The app goes to the background (at the loop's host time). Every held
    /// key is released then: the key-ups will go to another window.
    Hide,
    /// The pause menu closes or the app comes back: the time away is caught
    /// up under the policy.
    Resume,
}

/// Why a session could not start or an action was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionError {
    /// The config was refused, or recording could not start.
    Setup(CatalogError),
    /// The input buffer refused a key event.
    Input(InputError),
    /// A pause or hide while not running, or a resume while running.
    Lifecycle(LifecycleError),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Setup(e) => write!(f, "cannot start the session: {e}"),
            SessionError::Input(e) => write!(f, "key event refused: {e}"),
            SessionError::Lifecycle(e) => write!(f, "pause, hide or resume refused: {e}"),
        }
    }
}

impl core::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SessionError::Setup(e) => Some(e),
            SessionError::Input(e) => Some(e),
            SessionError::Lifecycle(e) => Some(e),
        }
    }
}

/// The two players' input buffers, player 0's first.
pub type Keyboard = PlayerSources<InputBuffer>;

/// A duel played live, recording itself.
#[derive(Debug)]
pub struct LiveSession {
    lp: FixedLoop<Duel, Keyboard>,
    presenter: Presenter<DuelFrame>,
    drawn: DuelFrame,
    resumes: Vec<ResumeReport>,
    thrown_away: Nanos,
    capped_frames: u64,
}

impl LiveSession {
    /// A session at tick 0 and host time 0 under `config` (the bytes are
    /// stored in the replay, so a verifier rebuilds the same duel), recording
    /// with a checkpoint every `checkpoint_every` ticks.
    ///
    /// # Errors
    ///
    /// [`SessionError::Setup`]: the config is refused (naming its key), or
    /// `checkpoint_every` is 0.
    pub fn new(
        config: &[u8],
        policy: CatchUpPolicy,
        checkpoint_every: u64,
    ) -> Result<LiveSession, SessionError> {
        let cfg = DuelConfig::parse(config).map_err(|e| {
            SessionError::Setup(CatalogError::Config {
                sim: crate::ID,
                message: e.to_string(),
            })
        })?;
        let header =
            replay_header::<Duel>(config, checkpoint_every).map_err(SessionError::Setup)?;
        let mut lp = FixedLoop::new(
            Duel::new(&cfg),
            PlayerSources::new(vec![InputBuffer::new(), InputBuffer::new()]),
            cfg.clock_config(),
            policy,
        );
        lp.start_recording(header)
            .map_err(|e| SessionError::Setup(CatalogError::Replay(e)))?;
        let presenter = Presenter::new(lp.sim());
        Ok(LiveSession {
            drawn: *presenter.current(),
            lp,
            presenter,
            resumes: Vec::new(),
            thrown_away: Nanos::ZERO,
            capped_frames: 0,
        })
    }

    /// Does one action.
    ///
    /// # Errors
    ///
    /// [`SessionError::Input`] when the buffer is full, and
    /// [`SessionError::Lifecycle`] for a pause or hide while not running or a
    /// resume while running; the session is unchanged in both cases.
    pub fn apply(&mut self, action: Action) -> Result<(), SessionError> {
        let now = self.lp.host_time();
        let (lp, presenter) = (&mut self.lp, &mut self.presenter);
        match action {
            Action::Key { at, key, down } => {
                let b = key.button();
                let kind = if down {
                    EventKind::Down(b)
                } else {
                    EventKind::Up(b)
                };
                let event = InputEvent { at, kind };
                if let Some(buffer) = lp.inputs_mut().get_mut(key.side().index()) {
                    buffer.push(event).map_err(SessionError::Input)?;
                }
            }
            Action::Frame(dt) => {
                let report = presenter.frame(lp, dt);
                self.thrown_away = self.thrown_away.saturating_add(report.thrown_away());
                self.capped_frames += u64::from(report.capped);
            }
            Action::Pause => presenter.pause(lp, now).map_err(SessionError::Lifecycle)?,
            Action::Hide => presenter
                .background(lp, now)
                .map_err(SessionError::Lifecycle)?,
            Action::Resume => {
                let report = presenter.resume(lp, now).map_err(SessionError::Lifecycle)?;
                self.resumes.push(report);
            }
        }
        let p = &self.presenter;
        self.drawn = DuelFrame::interpolate(p.previous(), p.current(), p.alpha());
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

    /// The session so far as a replay: the config, every tick's inputs as
    /// the sim consumed them (one stream per player), the time the loop threw away, checkpoints and the
    /// current state. Write it with [`Replay::to_bytes`].
    ///
    /// # Errors
    ///
    /// [`ReplayError`] if the recording cannot be encoded (a sim that
    /// changed its field list mid-session; the duel never does).
    pub fn replay(&self) -> Result<Replay<TickInput>, ReplayError> {
        self.lp.replay()
    }

    /// The sim, read-only.
    #[must_use]
    pub const fn sim(&self) -> &Duel {
        self.lp.sim()
    }

    /// What the last action left on screen.
    #[must_use]
    pub const fn drawn(&self) -> DuelFrame {
        self.drawn
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

    /// Frames that hit the step cap with a whole step still owed.
    #[must_use]
    pub const fn capped_frames(&self) -> u64 {
        self.capped_frames
    }

    /// The loop, read-only (tick, host time, clock, lifecycle, the players'
    /// input buffers).
    #[must_use]
    pub const fn fixed_loop(&self) -> &FixedLoop<Duel, Keyboard> {
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

/// Frames of `frames_ms` with no keys (while paused or hidden, say).
fn frames(frames_ms: &[u64]) -> impl Iterator<Item = Action> + '_ {
    frames_ms
        .iter()
        .map(|&ms| Action::Frame(Nanos::from_millis(ms)))
}

/// The demo session (run it with [`DEMO_POLICY`]): 400 ms of play on
/// [`IRREGULAR_MS`] frames with [`DEMO_KEYS`], a pause of one second (the
/// pause menu still gets frames), a resume, 400 ms more, and one 8 ms frame
/// that runs no tick and only moves the interpolation.
#[must_use]
pub fn demo_actions() -> Vec<Action> {
    let mut out = deliver(&DEMO_KEYS, &IRREGULAR_MS.repeat(4), 0);
    out.push(Action::Pause);
    out.extend(frames(&IRREGULAR_MS.repeat(10)));
    out.push(Action::Resume);
    out.extend(deliver(&[], &IRREGULAR_MS.repeat(4), 1_400));
    out.push(Action::Frame(Nanos::from_millis(8)));
    out
}

/// What `duel-live` plays (with [`DEMO_POLICY`]): [`demo_actions`], then
/// 200 ms of play in which the right player starts holding up
/// ([`HIDE_KEYS`]), a hide with the key still down, three seconds in the
/// background, a resume, one 200 ms frame that hits the step cap of 8, and
/// 200 ms more play.
#[must_use]
pub fn live_demo_actions() -> Vec<Action> {
    let mut out = demo_actions();
    out.extend(deliver(&HIDE_KEYS, &IRREGULAR_MS.repeat(2), DEMO_END_MS));
    out.push(Action::Hide);
    out.extend(frames(&IRREGULAR_MS.repeat(30)));
    out.push(Action::Resume);
    out.push(Action::Frame(Nanos::from_millis(200)));
    out.extend(frames(&IRREGULAR_MS.repeat(2)));
    out
}
