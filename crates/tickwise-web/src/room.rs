//! The room page's match: one player of a co-op horde match per tab, over
//! a room of `tickwise serve` (docs/rooms.md).
//!
//! The lobby (create or join a room, who is in, WebRTC negotiation, ready)
//! is the page's JavaScript (`web/src/room.js`): it is promise-driven UI
//! state the session never sees. When the room says `start` (or, for a
//! player coming back into a started match, on its `welcome`), the page
//! builds a [`RoomMatchPage`] from the room's `welcome` message:
//!
//! * **Session.** The horde from the room's config, `players` heroes; this
//!   tab is the player in the `welcome`'s slot, with the room's session key,
//!   stop tick (`ticks`), `checkEvery` and `disconnectAfter`. One
//!   [`FixedLoop`] whose sim is the session ([`NetGame`]), fed by this tab's
//!   keyboard through an [`InputBuffer`]: hero `slot` moves only by this
//!   tab's keys.
//! * **Rejoin.** A `welcome` with `started: true` is a seat taken back in a
//!   running match: the loop ticks a [`Rejoiner`] (a fresh random epoch)
//!   until the donor's snapshot is in, then plays the session it gives. Every
//!   session can be a donor ([`Session::enable_rejoin`]).
//! * **Transport.** Whatever [`Transport`] the page is given: in the browser
//!   [`crate::room_link::RoomTransport`] (data channels, relay over the
//!   room's WebSocket); natively, in the tests, a simulated network.
//! * **Replay.** The session records from tick 0; a rejoined one does not
//!   (docs/netplay.md, "Rejoining"): the match replay comes from a player
//!   who stayed.

use serde_json::{Value, json};
use tickwise::{
    Capture, FixedLoop, FrameReport, InputBuffer, Nanos, Presenter, ReplayHeader, Sim,
    StateVisitor, TickInput, TimeError, Timestamp,
};
use tickwise_net::{
    NetGame, RejoinError, RejoinProgress, Rejoiner, Session, SessionError, SnapshotCodec, Transport,
};
use tickwise_sims::horde::{HordeConfig, HordeSnapshot, HordeWorld};

use crate::horde::{blend_into, button_for_key};
use crate::host::HostClock;
use crate::keys::Keys;

/// Replay checkpoint interval: one second at 30 Hz.
pub const CHECKPOINT_EVERY: u64 = 30;
/// The largest snapshot a rejoin accepts (as `tickwise netplay`'s).
pub const MAX_REJOIN_SNAPSHOT: usize = 16 << 20;
/// The longest room config accepted (the server's own cap, docs/rooms.md).
pub const MAX_CONFIG_BYTES: usize = 16 * 1024;

/// Where this tab is in the match.
#[derive(Debug)]
enum Phase<T: Transport> {
    /// Taking the seat back: the rejoiner and the transport it uses.
    Rejoining(Box<Rejoiner<HordeWorld>>, T),
    /// Playing.
    Playing(Box<NetGame<HordeWorld, T>>),
    /// The rejoin failed (the page says why; a new join starts over).
    Failed(RejoinError),
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
pub struct RoomGame<T: Transport> {
    phase: Phase<T>,
    /// What is drawn before a rejoin has a state.
    blank: HordeWorld,
    lag: Lag,
    rejoin_ticks: u64,
}

impl<T: Transport> RoomGame<T> {
    /// The session, once playing.
    #[must_use]
    pub const fn session(&self) -> Option<&Session<HordeWorld>> {
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

    fn world(&self) -> &HordeWorld {
        self.session().map_or(&self.blank, Session::sim)
    }
}

impl<T: Transport> Sim for RoomGame<T> {
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
                            s.enable_rejoin(SnapshotCodec::new(), MAX_REJOIN_SNAPSHOT);
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

impl<T: Transport> Capture for RoomGame<T> {
    type Snapshot = HordeSnapshot;

    fn capture_into(&self, out: &mut HordeSnapshot) {
        self.world().capture_into(out);
    }

    fn capture(&self) -> HordeSnapshot {
        self.world().capture()
    }
}

/// One tab's match in a room. See the [module docs](self).
#[derive(Debug)]
pub struct RoomMatchPage<T: Transport> {
    welcome: Welcome,
    cfg: HordeConfig,
    header: ReplayHeader,
    lp: FixedLoop<RoomGame<T>, InputBuffer>,
    view: Presenter<HordeSnapshot>,
    clock: HostClock,
    keys: Keys,
    draw: Vec<f32>,
    frames: u64,
}

impl<T: Transport> RoomMatchPage<T> {
    /// The match `welcome` describes, over `transport`; `epoch` is a
    /// number drawn at random for this page (used only when rejoining).
    ///
    /// # Errors
    ///
    /// [`RoomPageError::Config`] or [`RoomPageError::Catalog`] for a config
    /// the horde refuses (or one for another number of players),
    /// [`RoomPageError::Session`] for settings out of range.
    pub fn new(welcome: Welcome, transport: T, epoch: u64) -> Result<Self, RoomPageError> {
        let bytes = welcome.config.as_bytes();
        let cfg = HordeConfig::from_json(bytes).map_err(RoomPageError::Config)?;
        let world = HordeWorld::new(&cfg);
        if world.players() != usize::from(welcome.players) {
            return Err(bad(
                "config",
                format!(
                    "has {} heroes for a room of {} players",
                    world.players(),
                    welcome.players
                ),
            ));
        }
        let header = tickwise_catalog::replay_header::<HordeWorld>(bytes, CHECKPOINT_EVERY)
            .map_err(RoomPageError::Catalog)?;
        let sc = welcome.session_config();
        let phase = if welcome.started {
            let rj = Rejoiner::new(
                world.clone(),
                sc,
                SnapshotCodec::new(),
                epoch,
                MAX_REJOIN_SNAPSHOT,
            )?;
            Phase::Rejoining(Box::new(rj), transport)
        } else {
            let mut s = Session::new(world.clone(), sc)?;
            s.start_recording(header.clone())?;
            s.enable_rejoin(SnapshotCodec::new(), MAX_REJOIN_SNAPSHOT);
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
            cfg.clock_config(),
            cfg.catch_up_policy(),
        );
        let view = Presenter::new(lp.sim());
        Ok(RoomMatchPage {
            welcome,
            cfg,
            header,
            lp,
            view,
            clock: HostClock::new(),
            keys: Keys::new(button_for_key),
            draw: Vec::new(),
            frames: 0,
        })
    }

    /// The `welcome` this match was built from.
    #[must_use]
    pub const fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// The horde config.
    #[must_use]
    pub const fn config(&self) -> &HordeConfig {
        &self.cfg
    }

    /// The loop's sim.
    #[must_use]
    pub const fn game(&self) -> &RoomGame<T> {
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

    /// A key of this tab's player went down or up at browser time `ms`;
    /// whether it moves the hero.
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
    /// verify` reads).
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

    /// The view's drawing positions in px ([`blend_into`]).
    pub fn interpolated(&mut self) -> &[f32] {
        blend_into(
            self.view.previous(),
            self.view.current(),
            self.view.alpha().as_f32(),
            &mut self.draw,
        );
        &self.draw
    }

    /// The test API's state, with `connection` given by the caller (the
    /// transport's view of each peer).
    #[must_use]
    pub fn state_json(&self, connection: Value) -> Value {
        let g = self.lp.sim();
        let (phase, error) = match &g.phase {
            Phase::Rejoining(..) => ("rejoining", None),
            Phase::Playing(_) => ("playing", None),
            Phase::Failed(e) => ("failed", Some(e.to_string())),
        };
        let heroes: Value = g
            .world()
            .heroes()
            .iter()
            .map(|h| json!({ "x": h.x, "y": h.y, "hp": h.hp }))
            .collect();
        let mut v = json!({
            "players": self.welcome.players,
            "slot": self.welcome.slot,
            "phase": phase,
            "error": error,
            "rejoined": self.welcome.started,
            "rejoinTicks": g.rejoin_ticks,
            "stopAt": self.welcome.ticks,
            "disconnectAfter": self.welcome.disconnect_after,
            "tickHz": self.cfg.tick_hz(),
            "sim": self.header.sim_id,
            "loopTick": self.lp.tick().get(),
            "frames": self.frames,
            "rejectedTimes": self.clock.rejected(),
            "heroes": heroes,
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
        v
    }
}

mod wasm;
mod welcome;

pub use wasm::RoomMatch;
use welcome::bad;
pub use welcome::{RoomPageError, Welcome};

#[cfg(test)]
mod tests;
