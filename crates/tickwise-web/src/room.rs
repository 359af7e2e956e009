//! The room page's match: one player per tab of a match of any catalog
//! sim, over a room of `tickwise serve` or of a game's own `serve`
//! (docs/rooms.md).
//!
//! The lobby (create or join a room, who is in, WebRTC negotiation, ready)
//! is the page's JavaScript (`web/src/room.js`, shared by every game): it
//! is promise-driven UI state the session never sees. When the room says
//! `start` (or, for a player coming back into a started match, on its
//! `welcome`), the page builds a [`RoomMatchPage`] from the room's
//! `welcome` message:
//!
//! * **Sim.** Anything [`RoomSim`] describes: a [`CatalogSim`] (config,
//!   initial state, clock, replay header, snapshot codec) plus the page's
//!   keys, drawing and state fields. The horde's is `crate::horde_room`
//!   (feature `pages`); a game's page crate writes its own and gets the
//!   JavaScript class from [`room_page!`](crate::room_page) (feature `room`,
//!   without the built-in sims).
//! * **Session.** The sim from the room's config, `players` players; this
//!   tab is the player in the `welcome`'s slot, with the room's session key,
//!   stop tick (`ticks`), `checkEvery` and `disconnectAfter`. One
//!   [`FixedLoop`] whose sim is the session ([`NetGame`]), fed by this tab's
//!   keyboard through an [`InputBuffer`]: player `slot` moves only by this
//!   tab's keys.
//! * **Rejoin.** A `welcome` with `started: true` is a seat taken back in a
//!   running match: the loop ticks a [`Rejoiner`] (a fresh random epoch)
//!   until the donor's snapshot is in, then plays the session it gives. Every
//!   session can be a donor ([`Session::enable_rejoin`]) when the sim has a
//!   snapshot codec ([`CatalogSim::snapshot_codec`]); without one a rejoin
//!   is refused with [`RoomPageError::NoRejoin`].
//! * **Transport.** Whatever [`Transport`] the page is given: in the browser
//!   [`crate::room_link::RoomTransport`] (data channels, relay over the
//!   room's WebSocket); natively, in the tests, a simulated network.
//! * **Replay.** The session records from tick 0; a rejoined one does not
//!   (docs/netplay.md, "Rejoining"): the match replay comes from a player
//!   who stayed.

use serde_json::{Value, json};
use tickwise::{
    Capture, ClockConfig, FixedLoop, FrameReport, InputBuffer, Nanos, Presenter, ReplayHeader, Sim,
    StateVisitor, TickInput, TimeError, Timestamp,
};
pub use tickwise_catalog::CatalogSim;
use tickwise_catalog::SimInfo;
use tickwise_net::{
    NetGame, RejoinError, RejoinProgress, Rejoiner, Session, SessionError, Transport,
};

use crate::host::HostClock;
use crate::keys::Keys;

/// The largest snapshot a rejoin accepts (as `tickwise netplay`'s).
pub const MAX_REJOIN_SNAPSHOT: usize = 16 << 20;
/// The longest room config accepted (the server's own cap, docs/rooms.md).
pub const MAX_CONFIG_BYTES: usize = 16 * 1024;

/// Ticks per second of `clock` (presentation only: the page's figures).
#[allow(clippy::cast_precision_loss, reason = "a display figure")]
fn hz(clock: &ClockConfig) -> f64 {
    let step = clock.step();
    step.denominator() as f64 * 1e9 / step.numerator() as f64
}

/// Ticks per second under `S`'s default config (what a room created
/// without a config runs; the lobby's match lengths); 0 if the sim refuses
/// its own default config.
#[must_use]
pub fn default_ticks_per_second<S: CatalogSim>() -> f64 {
    S::parse_config(S::DEFAULT_CONFIG).map_or(0.0, |c| hz(&S::clock_config(&c)))
}

/// Where this tab is in the match.
enum Phase<S: CatalogSim, T: Transport> {
    /// Taking the seat back: the rejoiner and the transport it uses.
    Rejoining(Box<Rejoiner<S>>, T),
    /// Playing.
    Playing(Box<NetGame<S, T>>),
    /// The rejoin failed (the page says why; a new join starts over).
    Failed(RejoinError),
}

impl<S: CatalogSim, T: Transport> std::fmt::Debug for Phase<S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Phase::Rejoining(..) => "Rejoining",
            Phase::Playing(_) => "Playing",
            Phase::Failed(_) => "Failed",
        })
    }
}

/// Input-to-remote-apply lag: at each tick this tab simulates, how many
/// ticks the newest tick with every player's input (the confirmed tick)
/// lags behind the simulated one. With this tab's own input known ahead
/// (its input delay), that is how late the other players' inputs arrive,
/// in ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lag {
    /// Ticks sampled.
    pub samples: u64,
    /// Their sum.
    pub sum: u64,
    /// The largest.
    pub max: u64,
}

/// The loop's sim: the session (or the rejoin before it). See the
/// [module docs](self).
#[derive(Debug)]
pub struct RoomGame<S: CatalogSim, T: Transport> {
    phase: Phase<S, T>,
    /// What is drawn before a rejoin has a state.
    blank: S,
    lag: Lag,
    rejoin_ticks: u64,
}

impl<S: CatalogSim, T: Transport> RoomGame<S, T> {
    /// The session, once playing.
    #[must_use]
    pub const fn session(&self) -> Option<&Session<S>> {
        match &self.phase {
            Phase::Playing(g) => Some(g.session()),
            _ => None,
        }
    }

    /// The transport (while it has one).
    #[must_use]
    pub const fn transport(&self) -> Option<&T> {
        match &self.phase {
            Phase::Playing(g) => Some(g.transport()),
            Phase::Rejoining(_, t) => Some(t),
            Phase::Failed(_) => None,
        }
    }

    /// The state drawn and reported: the session's, or the initial state
    /// while rejoining.
    #[must_use]
    pub fn world(&self) -> &S {
        self.session().map_or(&self.blank, Session::sim)
    }
}

impl<S: CatalogSim<Input = TickInput>, T: Transport> Sim for RoomGame<S, T> {
    type Input = TickInput;

    fn step(&mut self, inputs: &[TickInput]) {
        let phase = std::mem::replace(
            &mut self.phase,
            Phase::Failed(RejoinError::Payload { what: "in step" }),
        );
        self.phase = match phase {
            Phase::Rejoining(mut rj, mut t) => {
                self.rejoin_ticks += 1;
                match rj.tick(&mut t) {
                    Ok(RejoinProgress::Joined { .. }) => match rj.take_session() {
                        Some(mut s) => {
                            if let Some(codec) = S::snapshot_codec() {
                                s.enable_rejoin(codec, MAX_REJOIN_SNAPSHOT);
                            }
                            Phase::Playing(Box::new(NetGame::new(s, t)))
                        }
                        None => Phase::Failed(RejoinError::Payload {
                            what: "joined without a session",
                        }),
                    },
                    Ok(_) => Phase::Rejoining(rj, t),
                    Err(e) => Phase::Failed(e),
                }
            }
            Phase::Playing(mut g) => {
                g.step(inputs);
                let s = g.session();
                if !s.is_finished() {
                    let lag = s.current_tick().saturating_sub(s.confirmed_tick());
                    self.lag.samples += 1;
                    self.lag.sum = self.lag.sum.saturating_add(lag);
                    self.lag.max = self.lag.max.max(lag);
                }
                Phase::Playing(g)
            }
            failed @ Phase::Failed(_) => failed,
        };
    }

    fn visit_state(&self, visitor: &mut dyn StateVisitor) {
        self.world().visit_state(visitor);
    }
}

impl<S: CatalogSim<Input = TickInput> + Capture, T: Transport> Capture for RoomGame<S, T> {
    type Snapshot = S::Snapshot;

    fn capture_into(&self, out: &mut S::Snapshot) {
        self.world().capture_into(out);
    }

    fn capture(&self) -> S::Snapshot {
        self.world().capture()
    }
}

/// One tab's match in a room. See the [module docs](self).
pub struct RoomMatchPage<G: RoomSim, T: Transport> {
    welcome: Welcome,
    cfg: ConfigOf<G>,
    header: ReplayHeader,
    tick_hz: f64,
    lp: FixedLoop<RoomGame<G::Sim, T>, InputBuffer>,
    view: Presenter<SnapshotOf<G>>,
    clock: HostClock,
    keys: Keys,
    draw: Vec<f32>,
    frames: u64,
}

impl<G: RoomSim, T: Transport> std::fmt::Debug for RoomMatchPage<G, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoomMatchPage")
            .field("welcome", &self.welcome)
            .field("sim", &G::Sim::ID)
            .field("phase", &self.lp.sim().phase)
            .field("tick", &self.lp.tick())
            .finish_non_exhaustive()
    }
}

impl<G: RoomSim, T: Transport> RoomMatchPage<G, T> {
    /// The identity this page plays (what [`Welcome::parse`] checks).
    #[must_use]
    pub const fn sim_info() -> SimInfo {
        SimInfo::of::<G::Sim>()
    }

    /// The match `welcome` describes, over `transport`; `epoch` is a
    /// number drawn at random for this page (used only when rejoining).
    ///
    /// # Errors
    ///
    /// [`RoomPageError::Config`] or [`RoomPageError::Catalog`] for a config
    /// the sim refuses, [`RoomPageError::Welcome`] for one of another
    /// number of players, [`RoomPageError::NoRejoin`] for a started match
    /// of a sim without a snapshot codec, [`RoomPageError::Session`] for
    /// settings out of range.
    pub fn new(welcome: Welcome, transport: T, epoch: u64) -> Result<Self, RoomPageError> {
        let bytes = welcome.config.as_bytes();
        let cfg = G::Sim::parse_config(bytes).map_err(|e| RoomPageError::Config(e.to_string()))?;
        let world = G::Sim::build(&cfg);
        if world.players() != usize::from(welcome.players) {
            return Err(bad(
                "config",
                format!(
                    "is for {} players, in a room of {} players",
                    world.players(),
                    welcome.players
                ),
            ));
        }
        let header = tickwise_catalog::replay_header::<G::Sim>(bytes, G::CHECKPOINT_EVERY)
            .map_err(RoomPageError::Catalog)?;
        let clock_config = G::Sim::clock_config(&cfg);
        let tick_hz = hz(&clock_config);
        let sc = welcome.session_config();
        let phase = if welcome.started {
            let codec =
                G::Sim::snapshot_codec().ok_or(RoomPageError::NoRejoin { sim: G::Sim::ID })?;
            let rj = Rejoiner::new(world.clone(), sc, codec, epoch, MAX_REJOIN_SNAPSHOT)?;
            Phase::Rejoining(Box::new(rj), transport)
        } else {
            let mut s = Session::new(world.clone(), sc)?;
            s.start_recording(header.clone())?;
            if let Some(codec) = G::Sim::snapshot_codec() {
                s.enable_rejoin(codec, MAX_REJOIN_SNAPSHOT);
            }
            Phase::Playing(Box::new(NetGame::new(s, transport)))
        };
        let game = RoomGame {
            phase,
            blank: world,
            lag: Lag::default(),
            rejoin_ticks: 0,
        };
        let lp = FixedLoop::new(
            game,
            InputBuffer::new(),
            clock_config,
            G::catch_up_policy(&cfg),
        );
        let view = Presenter::new(lp.sim());
        Ok(RoomMatchPage {
            welcome,
            cfg,
            header,
            tick_hz,
            lp,
            view,
            clock: HostClock::new(),
            keys: Keys::new(G::button_for_key),
            draw: Vec::new(),
            frames: 0,
        })
    }

    /// The `welcome` this match was built from.
    #[must_use]
    pub const fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// The sim's config.
    #[must_use]
    pub const fn config(&self) -> &ConfigOf<G> {
        &self.cfg
    }

    /// The loop's sim.
    #[must_use]
    pub const fn game(&self) -> &RoomGame<G::Sim, T> {
        self.lp.sim()
    }

    /// Runs the loop to host time `now`.
    pub fn frame_to(&mut self, now: Timestamp) -> FrameReport {
        self.frames += 1;
        self.view.frame_at(&mut self.lp, now)
    }

    /// A display frame at browser time `ms`.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (the frame is ignored and counted).
    pub fn frame_at(&mut self, ms: f64) -> Result<FrameReport, TimeError> {
        let now = self.clock.map(ms, self.lp.host_time())?;
        Ok(self.frame_to(now))
    }

    /// `ms` of loop time with no real time passing (tests); re-anchors.
    pub fn advance(&mut self, ms: u64) -> FrameReport {
        let now = self.lp.host_time().saturating_add(Nanos::from_millis(ms));
        let r = self.frame_to(now);
        self.clock.reanchor();
        r
    }

    /// The next real frame measures from the loop's time (the tab is back:
    /// the time away is not caught up tick by tick; the session's time
    /// sync evens out the difference with the other players).
    pub const fn reanchor(&mut self) {
        self.clock.reanchor();
    }

    /// Whether the page binds `code` (a key of this tab's player).
    #[must_use]
    pub fn binds(code: &str) -> bool {
        G::button_for_key(code).is_some()
    }

    /// A key of this tab's player went down or up at browser time `ms`;
    /// whether it moves this tab's player.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (the event is ignored and counted).
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> Result<bool, TimeError> {
        if !self.keys.binds(code) {
            return Ok(false);
        }
        let at = self.clock.map(ms, self.lp.host_time())?;
        Ok(self.keys.key(self.lp.inputs_mut(), code, down, at))
    }

    /// Releases every held key at browser time `ms` (blur, hidden tab).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp.
    pub fn release_all(&mut self, ms: f64) -> Result<(), TimeError> {
        let at = self.clock.map(ms, self.lp.host_time())?;
        self.lp.inputs_mut().release_all(at);
        Ok(())
    }

    /// The match replay of the confirmed inputs (the file `tickwise
    /// verify`, or the game's own `verify`, reads).
    ///
    /// # Errors
    ///
    /// [`SessionError::NotRecording`] for a tab that rejoined (its session
    /// starts at the join tick) or is still rejoining.
    pub fn replay_bytes(&self) -> Result<Vec<u8>, SessionError> {
        match self.lp.sim().session() {
            Some(s) => Ok(s.replay()?.to_bytes()),
            None => Err(SessionError::NotRecording),
        }
    }

    /// What to draw, blended between the last two ticks ([`RoomSim::draw`]).
    pub fn interpolated(&mut self) -> &[f32] {
        self.draw.clear();
        G::draw(
            self.view.previous(),
            self.view.current(),
            self.view.alpha(),
            &mut self.draw,
        );
        &self.draw
    }

    /// Sizes for drawing ([`RoomSim::draw_info`]), JSON text.
    #[must_use]
    pub fn draw_info(&self) -> String {
        G::draw_info(&self.cfg).to_string()
    }

    /// The test API's state, with `connection` given by the caller (the
    /// transport's view of each peer), and the sim's own fields
    /// ([`RoomSim::state_json`]).
    #[must_use]
    pub fn state_json(&self, connection: Value) -> Value {
        let g = self.lp.sim();
        let (phase, error) = match &g.phase {
            Phase::Rejoining(..) => ("rejoining", None),
            Phase::Playing(_) => ("playing", None),
            Phase::Failed(e) => ("failed", Some(e.to_string())),
        };
        let mut v = json!({
            "players": self.welcome.players,
            "slot": self.welcome.slot,
            "phase": phase,
            "error": error,
            "rejoined": self.welcome.started,
            "rejoinTicks": g.rejoin_ticks,
            "stopAt": self.welcome.ticks,
            "disconnectAfter": self.welcome.disconnect_after,
            "tickHz": self.tick_hz,
            "sim": self.header.sim_id,
            "loopTick": self.lp.tick().get(),
            "frames": self.frames,
            "rejectedTimes": self.clock.rejected(),
            "lag": {
                "samples": g.lag.samples,
                "sum": g.lag.sum,
                "max": g.lag.max,
            },
            "connection": connection,
        });
        let s = g.session();
        let fields = json!({
            "currentTick": s.map_or(0, Session::current_tick),
            "confirmedTick": s.map_or(0, Session::confirmed_tick),
            "confirmedChecksum": s.and_then(Session::confirmed_checksum).map(|c| format!("{c:016x}")),
            "finished": s.is_some_and(Session::is_finished),
            "desyncs": s.map_or(0, |s| s.stats().desyncs),
            "desync": s.and_then(Session::desync).map(ToString::to_string),
            "inputDelay": s.map_or(0, |s| s.config().input_delay),
            "window": s.map_or(0, |s| s.config().window),
            "rollbacks": s.map_or(0, |s| s.stats().rollbacks),
            "stalls": s.map_or(0, |s| s.stats().stalls),
            "sent": s.map_or(0, |s| s.stats().sent),
            "received": s.map_or(0, |s| s.stats().received),
            "dropped": s.map_or(0, |s| s.stats().drops.total()),
            "departed": (0..self.welcome.players)
                .map(|p| s.and_then(|s| s.departed(p)))
                .collect::<Vec<_>>(),
            "rttTicks": (0..self.welcome.players)
                .map(|p| s.map_or(0, |s| if p == self.welcome.slot { 0 } else { s.rtt_ticks(p) }))
                .collect::<Vec<_>>(),
        });
        if let (Some(o), Value::Object(f)) = (v.as_object_mut(), fields) {
            o.extend(f);
        }
        if let (Some(o), Value::Object(f)) = (v.as_object_mut(), G::state_json(g.world())) {
            o.extend(f);
        }
        v
    }
}

mod sim;
mod wasm;
mod welcome;

pub use sim::{ConfigOf, RoomSim, SnapshotOf};
pub use wasm::{RoomMatchCore, epoch};
use welcome::bad;
pub use welcome::{RoomPageError, Welcome};

#[cfg(all(test, feature = "pages"))]
mod tests;
