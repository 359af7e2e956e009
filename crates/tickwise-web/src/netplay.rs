//! The netplay page's model: two players of one rollback session side by
//! side in one tab, over `tickwise-net`'s seeded network simulator.
//!
//! * **Sim and players.** The co-op horde (a catalog sim,
//!   `config/horde.json` with two heroes, 30 Hz). Every tick the sim gets
//!   both players' inputs, each in its own slot: hero 1 moves only by
//!   player 1 (the keyboard), hero 2 only by player 2 (a seeded bot,
//!   [`Bot`]). A misprediction of either is a real rollback.
//! * **Time.** Each player is a [`FixedLoop`] whose sim is a
//!   [`NetGame`] (the session plus its port on the shared [`SimNetwork`]):
//!   every tick of the loop is one `Session::tick`, as the session design
//!   requires. Both loops get the page's frame times (one browser clock,
//!   [`HostClock`]); the network's time is moved to each frame's host time
//!   before the loops run, so latency is real time on the page's clock.
//!   Each player has its own clock: player 1 (the keyboard, the *local*
//!   peer) runs only while the tab is visible; player 2 (the bot, standing
//!   in for a *remote* peer on another machine) runs on the page's clock
//!   whatever the tab does, catching up in wall-clock time, a tick at a
//!   time, through any stretch the tab did not run (a hidden tab's frames
//!   stop). Hidden for longer than `disconnect_after`, the local peer is
//!   declared gone by the remote, and on return it rejoins through
//!   [`tickwise_net::Rejoiner`]: the remote sends the confirmed state in
//!   chunks and the local peer plays on (`netplay/away.rs`).
//! * **Controls at runtime.** Round trip and loss go to
//!   [`SimNetwork::set_config`] (from the next datagram on); the input
//!   delay goes to each session's [`tickwise_net::Session::set_input_delay`]
//!   before its next tick (a loop hands out its sim read-only, so the page
//!   leaves the new value in a cell the peer's sim reads at its next step).
//!   "End match" sets the same stop tick on both sessions
//!   ([`tickwise_net::Session::set_stop_at`]); both then confirm exactly that tick.
//! * **Drawing.** Each player's view is its own session's current state,
//!   predicted ticks included (what that player sees), blended between the
//!   previous and the current tick by a [`Presenter`]; a rollback shows as
//!   a correction. Floats only there.
//! * **Replay.** `replay()` is player 1's recording of the confirmed
//!   inputs, the file `tickwise netplay --out` writes: `tickwise verify`
//!   on it ends on the confirmed state.
//!
//! The page's replay is the match's: a rejoined session records nothing
//! (it starts mid-match), so `replay()` is player 1's recording while it
//! has one, else player 2's, who never left.
//!
//! Nothing here uses `std::net`: `tickwise-net` is built without its `std`
//! feature (no UDP) for the page.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::{Value, json};
use tickwise::{
    Button, Buttons, Capture, FixedLoop, FrameReport, InputBuffer, InputSource, Nanos, Pcg32,
    Presenter, ReplayHeader, Sim, StateVisitor, Tick, TickInput, TimeError, Timestamp,
};
use tickwise_catalog::CatalogError;
use tickwise_config::ConfigError;
use tickwise_net::{
    Datagram, MAX_INPUT_DELAY, MAX_REJOIN_SNAPSHOT, NetGame, NetworkConfig, Session, SessionConfig,
    SessionError, SessionKey, SimNetwork, SnapshotCodec, Transport,
};
use tickwise_sims::horde::{DOWN, HordeConfig, HordeSnapshot, HordeWorld, LEFT, RIGHT, UP};
use wasm_bindgen::JsError;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::args::{ArgError, whole};
use crate::base64;
use crate::bindings::{js_err, num};
use crate::horde::{HORDE_JSON, blend_into, button_for_key, draw_info_json};
use crate::host::HostClock;
use crate::keys::Keys;

mod away;

use away::Rejoining;
pub use away::{MAX_REMOTE_CATCH_UP, REJOIN_TICKS_PER_FRAME};

/// Replay checkpoint interval: one second at 30 Hz.
pub const CHECKPOINT_EVERY: u64 = 30;
/// Seed of the network's fault schedule.
pub const NET_SEED: u64 = 20_261_201;
/// Seed of the bot's moves.
pub const BOT_SEED: u64 = 7;
/// The largest round trip the page offers, ms.
pub const MAX_RTT_MS: u64 = 1000;
/// The largest loss the page offers, percent.
pub const MAX_LOSS_PCT: u64 = 50;
/// The largest input delay the page offers (the session's own limit).
pub const MAX_DELAY: u64 = MAX_INPUT_DELAY as u64;
/// The round trip a fresh page starts with, ms.
pub const START_RTT_MS: u64 = 120;
/// The loss a fresh page starts with, percent.
pub const START_LOSS_PCT: u64 = 2;
/// The most frames one `stepFrames` call feeds.
pub const MAX_STEP_FRAMES: u64 = 100_000;
/// The longest synthetic frame, ms.
pub const MAX_STEP_MS: u64 = 1000;
/// Ticks of silence after which a peer declares the other gone (the
/// session's default, 10 s at 30 Hz); [`NetplayPage::set_disconnect_after`]
/// changes it.
pub const DISCONNECT_AFTER: u64 = 300;
/// The shortest timeout the page takes, ticks (1 s at 30 Hz).
pub const MIN_DISCONNECT_AFTER: u64 = 30;
/// The longest timeout the page takes, ticks (100 s at 30 Hz).
pub const MAX_DISCONNECT_AFTER: u64 = 3000;

/// A port of the shared network, owned by one player's [`NetGame`].
///
/// The network lives in an `Rc<RefCell>` because two loops share it; the
/// page never holds it across a loop's tick, so a borrow cannot fail. If
/// one ever did, the datagram is counted in [`SharedPort::refused`] and
/// treated as lost (the session survives loss), never a panic.
#[derive(Debug)]
pub struct SharedPort {
    net: Rc<RefCell<SimNetwork>>,
    slot: u8,
    refused: u64,
}

impl SharedPort {
    /// Datagrams that could not reach the network (see the type's docs).
    #[must_use]
    pub const fn refused(&self) -> u64 {
        self.refused
    }
}

impl Transport for SharedPort {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        match self.net.try_borrow_mut() {
            Ok(mut n) => n.port(self.slot).send(to, bytes),
            Err(_) => self.refused += 1,
        }
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        self.net.try_borrow_mut().ok()?.port(self.slot).recv(buf)
    }
}

/// What the page asks of both players' sessions, applied before their next tick.
#[derive(Debug, Default)]
struct Controls {
    input_delay: Cell<u32>,
    stop_at: Cell<Option<u64>>,
}

/// One player's sim in its loop: the [`NetGame`], plus the page's controls
/// applied through the session's runtime API before each tick.
#[derive(Debug)]
pub struct Player {
    game: NetGame<HordeWorld, SharedPort>,
    controls: Rc<Controls>,
    /// A control the session refused (a stop tick already passed).
    refused_controls: u64,
}

impl Player {
    /// The session.
    #[must_use]
    pub const fn session(&self) -> &Session<HordeWorld> {
        self.game.session()
    }

    fn apply_controls(&mut self) {
        let delay = self.controls.input_delay.get();
        let s = self.game.session_mut();
        if s.config().input_delay != delay && s.set_input_delay(delay).is_err() {
            self.refused_controls += 1;
        }
        if let Some(stop) = self.controls.stop_at.get()
            && s.config().stop_at != Some(stop)
            && s.set_stop_at(stop).is_err()
        {
            self.refused_controls += 1;
        }
    }
}

impl Sim for Player {
    type Input = TickInput;

    fn step(&mut self, inputs: &[TickInput]) {
        self.apply_controls();
        self.game.step(inputs);
    }

    fn visit_state(&self, visitor: &mut dyn StateVisitor) {
        self.game.visit_state(visitor);
    }
}

impl Capture for Player {
    type Snapshot = HordeSnapshot;

    fn capture_into(&self, out: &mut HordeSnapshot) {
        self.game.capture_into(out);
    }

    fn capture(&self) -> HordeSnapshot {
        self.game.capture()
    }
}

/// The moves the bot picks from: still, four straight, four diagonals.
const BOT_MOVES: [&[Button]; 9] = [
    &[],
    &[UP],
    &[DOWN],
    &[LEFT],
    &[RIGHT],
    &[UP, LEFT],
    &[UP, RIGHT],
    &[DOWN, LEFT],
    &[DOWN, RIGHT],
];

/// Player 2: a scripted bot that holds one of nine moves (still, four
/// straight, four diagonal) for 10 to 59 ticks, then picks another, all
/// drawn from a [`Pcg32`] seeded with [`BOT_SEED`]. It answers from its own count of ticks, so the same seed
/// gives the same inputs whatever the frame rate.
#[derive(Clone, Debug)]
pub struct Bot {
    rng: Pcg32,
    held: Buttons,
    left: u32,
}

impl Bot {
    /// A bot on `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Bot {
        Bot {
            rng: Pcg32::new(seed, 2),
            held: Buttons::NONE,
            left: 0,
        }
    }
}

impl InputSource<TickInput> for Bot {
    const NEEDS_WINDOW: bool = false;

    fn input(&mut self, _tick: Tick, _window_end: Timestamp) -> TickInput {
        let before = self.held;
        if self.left == 0 {
            let mv = BOT_MOVES
                .get(self.rng.below(9) as usize)
                .copied()
                .unwrap_or(&[]);
            self.held = mv.iter().fold(Buttons::NONE, |b, &x| b.with(x));
            self.left = 10 + self.rng.below(50);
        }
        self.left -= 1;
        TickInput {
            held: self.held,
            pressed: Buttons::from_bits(self.held.bits() & !before.bits()),
            released: Buttons::from_bits(before.bits() & !self.held.bits()),
            axes: [0; tickwise::AXES],
        }
    }
}

/// Every hero of a state, by player index, for the test API:
/// `[{ "x", "y", "hp" }, …]` with positions in 1/256 px (the sim's own
/// integers, so two views can be compared exactly).
fn heroes_json(heroes: &[tickwise_sims::horde::Hero]) -> Value {
    heroes
        .iter()
        .map(|h| json!({ "x": h.x, "y": h.y, "hp": h.hp }))
        .collect()
}

/// Why the page could not start, or a control was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetplayPageError {
    /// The compiled-in horde config is invalid.
    Config(ConfigError),
    /// The catalog refused the config as a replay header.
    Catalog(CatalogError),
    /// The session refused its settings or its recording.
    Session(SessionError),
    /// A JS number out of range.
    Arg(ArgError),
    /// No random source for the session key.
    Random(String),
}

impl std::fmt::Display for NetplayPageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetplayPageError::Config(e) => write!(f, "horde config: {e}"),
            NetplayPageError::Catalog(e) => write!(f, "horde replay header: {e}"),
            NetplayPageError::Session(e) => write!(f, "netplay session: {e}"),
            NetplayPageError::Arg(e) => e.fmt(f),
            NetplayPageError::Random(e) => write!(f, "no random source for the session key: {e}"),
        }
    }
}

impl std::error::Error for NetplayPageError {}

impl From<ArgError> for NetplayPageError {
    fn from(e: ArgError) -> NetplayPageError {
        NetplayPageError::Arg(e)
    }
}

impl From<SessionError> for NetplayPageError {
    fn from(e: SessionError) -> NetplayPageError {
        NetplayPageError::Session(e)
    }
}

/// Player 1's loop (keyboard through an input buffer).
pub type KeyboardLoop = FixedLoop<Player, InputBuffer>;
/// Player 2's loop (the bot).
pub type BotLoop = FixedLoop<Player, Bot>;

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    /// The browser's `crypto.getRandomValues` (fills the array in place).
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues)]
    fn get_random_values(buf: &mut [u8]);
}

/// A fresh session key for a new match: both players are in this page, so
/// the key never leaves it, but it is a real key all the same (never a
/// constant): the browser's `crypto.getRandomValues`, or the OS's random
/// source natively. The key does not change any result (datagrams are the
/// same length with any key), so the page stays deterministic.
fn fresh_key() -> Result<SessionKey, NetplayPageError> {
    let mut bytes = [0u8; 16];
    #[cfg(target_arch = "wasm32")]
    get_random_values(&mut bytes);
    #[cfg(not(target_arch = "wasm32"))]
    getrandom::fill(&mut bytes).map_err(|e| NetplayPageError::Random(e.to_string()))?;
    Ok(SessionKey::from_bytes(bytes))
}

/// The network settings the sliders give.
const fn network(rtt_ms: u64, loss_pct: u64) -> NetworkConfig {
    NetworkConfig {
        // Half the round trip each way, in whole microseconds.
        latency: Nanos::from_micros(rtt_ms * 500),
        jitter: Nanos::ZERO,
        loss_ppm: (loss_pct * 10_000) as u32,
        dup_ppm: 0,
        reorder_ppm: 0,
        bandwidth: None,
        seed: NET_SEED,
    }
}

/// The netplay page's model. See the [module docs](self).
#[derive(Debug)]
pub struct NetplayPage {
    cfg: HordeConfig,
    header: ReplayHeader,
    net: Rc<RefCell<SimNetwork>>,
    controls: Rc<Controls>,
    rtt_ms: u64,
    loss_pct: u64,
    keyboard: KeyboardLoop,
    bot: BotLoop,
    views: [Presenter<HordeSnapshot>; 2],
    clock: HostClock,
    frames: u64,
    keys: Keys,
    draw: Vec<f32>,
    /// Player 1's own clock (it stops while the tab is hidden); `clock`
    /// is the page's, which the network and the remote player follow.
    local_clock: HostClock,
    /// The tab is hidden: player 1 does not run.
    hidden: bool,
    /// Player 1 is taking its slot back after the remote declared it gone.
    rejoin: Option<Rejoining>,
    /// Times the remote declared player 1 gone, and times it rejoined.
    leaves: u64,
    rejoins: u64,
    /// Why the last rejoin failed, if one did.
    rejoin_error: Option<String>,
    disconnect_after: u64,
    key: SessionKey,
}

impl NetplayPage {
    /// A fresh page: tick 0, the starting round trip and loss, input delay 0.
    ///
    /// # Errors
    ///
    /// A [`NetplayPageError`] if the compiled-in config is invalid (a
    /// build defect the crate's tests catch).
    pub fn new() -> Result<NetplayPage, NetplayPageError> {
        NetplayPage::with_settings(START_RTT_MS, START_LOSS_PCT, 0)
    }

    /// A fresh page with these slider settings.
    ///
    /// # Errors
    ///
    /// As [`NetplayPage::new`], or [`NetplayPageError::Arg`] for a setting
    /// out of the page's range.
    pub fn with_settings(
        rtt_ms: u64,
        loss_pct: u64,
        input_delay: u64,
    ) -> Result<NetplayPage, NetplayPageError> {
        NetplayPage::build(rtt_ms, loss_pct, input_delay, DISCONNECT_AFTER)
    }

    fn build(
        rtt_ms: u64,
        loss_pct: u64,
        input_delay: u64,
        disconnect_after: u64,
    ) -> Result<NetplayPage, NetplayPageError> {
        check_settings(rtt_ms, loss_pct, input_delay)?;
        // The shipped horde with two heroes, one per player.
        let config = tickwise_catalog::Catalog::builtin()
            .config_for_players("horde", Some(HORDE_JSON), 2)
            .map_err(NetplayPageError::Catalog)?;
        let cfg = HordeConfig::from_json(&config).map_err(NetplayPageError::Config)?;
        let header = tickwise_catalog::replay_header::<HordeWorld>(&config, CHECKPOINT_EVERY)
            .map_err(NetplayPageError::Catalog)?;
        let net = Rc::new(RefCell::new(SimNetwork::new(network(rtt_ms, loss_pct))));
        let delay = u32::try_from(input_delay).unwrap_or(0);
        let controls = Rc::new(Controls {
            input_delay: Cell::new(delay),
            stop_at: Cell::new(None),
        });
        let world = HordeWorld::new(&cfg);
        let key = fresh_key()?;
        let player = |slot: u8| -> Result<Player, NetplayPageError> {
            let mut sc = SessionConfig::new(2, slot, key);
            sc.input_delay = delay;
            sc.disconnect_after = disconnect_after;
            let mut s = Session::new(world.clone(), sc)?;
            s.start_recording(header.clone())?;
            // Either may be the donor when the other rejoins.
            s.enable_rejoin(SnapshotCodec::new(), MAX_REJOIN_SNAPSHOT);
            let port = SharedPort {
                net: Rc::clone(&net),
                slot,
                refused: 0,
            };
            Ok(Player {
                game: NetGame::new(s, port),
                controls: Rc::clone(&controls),
                refused_controls: 0,
            })
        };
        let keyboard = FixedLoop::new(
            player(0)?,
            InputBuffer::new(),
            cfg.clock_config(),
            cfg.catch_up_policy(),
        );
        let bot = FixedLoop::new(
            player(1)?,
            Bot::new(BOT_SEED),
            cfg.clock_config(),
            cfg.catch_up_policy(),
        );
        let views = [Presenter::new(keyboard.sim()), Presenter::new(bot.sim())];
        Ok(NetplayPage {
            cfg,
            header,
            net,
            controls,
            rtt_ms,
            loss_pct,
            keyboard,
            bot,
            views,
            clock: HostClock::new(),
            frames: 0,
            keys: Keys::new(button_for_key),
            draw: Vec::new(),
            local_clock: HostClock::new(),
            hidden: false,
            rejoin: None,
            leaves: 0,
            rejoins: 0,
            rejoin_error: None,
            disconnect_after,
            key,
        })
    }

    /// Rebuilds the page (a fresh match, the same sliders) with peers that
    /// declare each other gone after `ticks` ticks of silence
    /// ([`MIN_DISCONNECT_AFTER`] to [`MAX_DISCONNECT_AFTER`]).
    ///
    /// # Errors
    ///
    /// [`NetplayPageError::Arg`] out of range; the page is unchanged then.
    pub fn set_disconnect_after(&mut self, ticks: f64) -> Result<(), NetplayPageError> {
        let t = whole("disconnectAfter", ticks, MAX_DISCONNECT_AFTER)?;
        if t < MIN_DISCONNECT_AFTER {
            return Err(NetplayPageError::Arg(ArgError {
                name: "disconnectAfter",
                max: MAX_DISCONNECT_AFTER,
                found: t.to_string(),
            }));
        }
        *self = NetplayPage::build(
            self.rtt_ms,
            self.loss_pct,
            u64::from(self.controls.input_delay.get()),
            t,
        )?;
        Ok(())
    }

    /// The horde config.
    #[must_use]
    pub const fn config(&self) -> &HordeConfig {
        &self.cfg
    }

    /// Player 1's loop.
    #[must_use]
    pub const fn keyboard_loop(&self) -> &KeyboardLoop {
        &self.keyboard
    }

    /// Player 2's loop.
    #[must_use]
    pub const fn bot_loop(&self) -> &BotLoop {
        &self.bot
    }

    /// Player `p`'s session (0: keyboard, 1: bot).
    #[must_use]
    pub const fn session(&self, p: usize) -> &Session<HordeWorld> {
        if p == 0 {
            self.keyboard.sim().session()
        } else {
            self.bot.sim().session()
        }
    }

    /// Runs both players to page time `now` (player 1 to its own time
    /// `local`, or not at all while hidden or rejoining): the network first
    /// (what has arrived by then is delivered), then each player's loop.
    /// The remote player runs through any backlog (a stretch the tab did
    /// not run) a tick at a time first ([`NetplayPage::catch_up_remote`]).
    fn frame_to(
        &mut self,
        now: Timestamp,
        local: Option<Timestamp>,
    ) -> (Option<FrameReport>, FrameReport) {
        self.catch_up_remote(now);
        if let Ok(mut n) = self.net.try_borrow_mut() {
            n.advance_to(now);
        }
        self.frames += 1;
        let a = match local {
            Some(l) if self.runs_locally() => Some(self.views[0].frame_at(&mut self.keyboard, l)),
            _ => None,
        };
        let b = self.views[1].frame_at(&mut self.bot, now);
        self.after_frame(now);
        (a, b)
    }

    /// Whether player 1's loop runs: the tab is visible and it is not
    /// rejoining.
    const fn runs_locally(&self) -> bool {
        !self.hidden && self.rejoin.is_none()
    }

    /// A display frame at browser time `ms`: player 1's frame (none while
    /// it does not run) and player 2's.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (the frame is ignored and counted).
    pub fn frame_at(&mut self, ms: f64) -> Result<(Option<FrameReport>, FrameReport), TimeError> {
        let now = self.clock.map(ms, self.bot.host_time())?;
        let local = if self.runs_locally() {
            Some(self.local_clock.map(ms, self.keyboard.host_time())?)
        } else {
            None
        };
        Ok(self.frame_to(now, local))
    }

    /// Test API: `n` frames of `ms` each with no real time passing; the
    /// browser clock is re-anchored after. Returns player 1's loop tick.
    ///
    /// # Errors
    ///
    /// [`NetplayPageError::Arg`] unless `n` is a whole number up to
    /// [`MAX_STEP_FRAMES`] and `ms` one up to [`MAX_STEP_MS`]; nothing runs then.
    pub fn step_frames(&mut self, n: f64, ms: f64) -> Result<u64, NetplayPageError> {
        let n = whole("n", n, MAX_STEP_FRAMES)?;
        let ms = whole("ms", ms, MAX_STEP_MS)?;
        for _ in 0..n {
            let d = Nanos::from_millis(ms);
            let now = self.bot.host_time().saturating_add(d);
            let local = self.keyboard.host_time().saturating_add(d);
            let _ = self.frame_to(now, Some(local));
        }
        self.reanchor();
        Ok(self.keyboard.tick().get())
    }

    /// The next real frame measures from the loops' time (real-time mode
    /// starting, the tab visible again).
    pub const fn reanchor(&mut self) {
        self.clock.reanchor();
        self.local_clock.reanchor();
    }

    /// A key went down (`down`) or up at browser time `ms`, for player 1.
    /// Returns whether the key moves the player.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (the event is ignored and counted).
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> Result<bool, TimeError> {
        if !self.keys.binds(code) {
            return Ok(false);
        }
        let at = self.local_clock.map(ms, self.keyboard.host_time())?;
        Ok(self.keys.key(self.keyboard.inputs_mut(), code, down, at))
    }

    /// Releases every held key of player 1 at browser time `ms` (blur,
    /// hidden tab: the key-ups will never come).
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp.
    pub fn release_all(&mut self, ms: f64) -> Result<(), TimeError> {
        let at = self.local_clock.map(ms, self.keyboard.host_time())?;
        self.keyboard.inputs_mut().release_all(at);
        Ok(())
    }

    /// Sets the round trip (whole ms, 0 to [`MAX_RTT_MS`]) from the next datagram on.
    ///
    /// # Errors
    ///
    /// [`NetplayPageError::Arg`] out of range; nothing changes then.
    pub fn set_rtt(&mut self, ms: f64) -> Result<(), NetplayPageError> {
        self.rtt_ms = whole("rttMs", ms, MAX_RTT_MS)?;
        self.push_network();
        Ok(())
    }

    /// Sets the loss (whole percent, 0 to [`MAX_LOSS_PCT`]) from the next datagram on.
    ///
    /// # Errors
    ///
    /// [`NetplayPageError::Arg`] out of range; nothing changes then.
    pub fn set_loss(&mut self, pct: f64) -> Result<(), NetplayPageError> {
        self.loss_pct = whole("lossPct", pct, MAX_LOSS_PCT)?;
        self.push_network();
        Ok(())
    }

    fn push_network(&mut self) {
        if let Ok(mut n) = self.net.try_borrow_mut() {
            n.set_config(network(self.rtt_ms, self.loss_pct));
        }
    }

    /// Sets both players' input delay (0 to [`MAX_DELAY`] ticks) from their
    /// next tick on, through `Session::set_input_delay`.
    ///
    /// # Errors
    ///
    /// [`NetplayPageError::Arg`] out of range; nothing changes then.
    pub fn set_input_delay(&mut self, d: f64) -> Result<(), NetplayPageError> {
        let d = whole("inputDelay", d, MAX_DELAY)?;
        self.controls.input_delay.set(u32::try_from(d).unwrap_or(0));
        Ok(())
    }

    /// Ends the match: both sessions stop at the same tick (the later of the
    /// two players' next ticks), set before their next tick, and confirm it.
    /// Returns the stop tick; a second call returns the first one's.
    pub fn end_match(&mut self) -> u64 {
        if let Some(t) = self.controls.stop_at.get() {
            return t;
        }
        let t = self
            .session(0)
            .current_tick()
            .max(self.session(1).current_tick());
        self.controls.stop_at.set(Some(t));
        t
    }

    /// Player `p`'s recording of the confirmed inputs (0 or 1), the replay
    /// format `tickwise netplay --out` writes.
    ///
    /// # Errors
    ///
    /// [`NetplayPageError::Arg`] for another `p`; [`NetplayPageError::Session`]
    /// if the recording cannot be built.
    pub fn replay_bytes(&self, p: f64) -> Result<Vec<u8>, NetplayPageError> {
        let p = whole("player", p, 1)?;
        Ok(self.session(usize::from(p == 1)).replay()?.to_bytes())
    }

    /// The match's replay: player 1's recording while it has one (it
    /// started the match), else player 2's (player 1 rejoined: a rejoined
    /// session starts mid-match and records nothing).
    ///
    /// # Errors
    ///
    /// [`NetplayPageError::Session`] if the recording cannot be built.
    pub fn match_replay_bytes(&self) -> Result<Vec<u8>, NetplayPageError> {
        match self.session(0).replay() {
            Ok(r) => Ok(r.to_bytes()),
            Err(SessionError::NotRecording) => Ok(self.session(1).replay()?.to_bytes()),
            Err(e) => Err(e.into()),
        }
    }

    /// Interpolated drawing positions of player `p`'s view in px, every
    /// hero then the enemies: `[n, hero0X, hero0Y, hero1X, hero1Y, x0, y0, …]`
    /// ([`blend_into`]).
    pub fn interpolated(&mut self, p: usize) -> &[f32] {
        let v = &self.views[usize::from(p == 1)];
        blend_into(
            v.previous(),
            v.current(),
            v.alpha().as_f32(),
            &mut self.draw,
        );
        &self.draw
    }

    /// The test API's state: the settings and, per player, the session's
    /// counters and confirmed state.
    #[must_use]
    pub fn state_json(&self) -> Value {
        let net = self.net.try_borrow().ok();
        let peer = |p: usize| {
            let s = self.session(p);
            let st = s.stats();
            let (loop_tick, alpha, player, refused) = if p == 0 {
                let l = &self.keyboard;
                (
                    l.tick().get(),
                    &self.views[0],
                    l.sim(),
                    l.sim().game.transport().refused(),
                )
            } else {
                let l = &self.bot;
                (
                    l.tick().get(),
                    &self.views[1],
                    l.sim(),
                    l.sim().game.transport().refused(),
                )
            };
            #[allow(clippy::cast_possible_truncation, reason = "slot 0 or 1")]
            let link = net.as_ref().map(|n| n.stats(p as u8)).unwrap_or_default();
            json!({
                "slot": p,
                "loopTick": loop_tick,
                "currentTick": s.current_tick(),
                "confirmedTick": s.confirmed_tick(),
                "confirmedChecksum": s.confirmed_checksum().map(|c| format!("{c:016x}")),
                "finished": s.is_finished(),
                "rollbacks": st.rollbacks,
                "maxRollback": st.max_rollback,
                "resimulated": st.resimulated,
                "mispredictions": st.mispredictions,
                "stalls": st.stalls,
                "syncWaits": st.sync_waits,
                "checksCompared": st.checks_compared,
                "desyncs": st.desyncs,
                "desync": s.desync().map(ToString::to_string),
                "ended": s.ended().map(|e| e.to_string()),
                "inputDelay": s.config().input_delay,
                "stopAt": s.config().stop_at,
                "rttTicks": s.rtt_ticks(u8::from(p == 0)),
                "packetsSent": link.sent,
                "packetsLost": link.lost,
                "packetsReceived": st.received,
                "packetsDropped": st.drops.total(),
                "packetsUnauthenticated": st.drops.unauthenticated,
                "portRefused": refused,
                "refusedControls": player.refused_controls,
                "alpha": f64::from(alpha.alpha().as_f32()),
                "digest": s.sim().digest(),
                "heroes": heroes_json(s.sim().heroes()),
            })
        };
        json!({
            "rttMs": self.rtt_ms,
            "lossPct": self.loss_pct,
            "inputDelay": self.controls.input_delay.get(),
            "window": self.session(0).config().window,
            "tickHz": self.cfg.tick_hz(),
            "frames": self.frames,
            "networkMs": net.as_ref().map_or(0, |n| n.now().as_nanos() / 1_000_000),
            "inFlight": net.as_ref().map_or(0, |n| n.pending()),
            "stopAt": self.controls.stop_at.get(),
            "rejectedTimes": self.clock.rejected() + self.local_clock.rejected(),
            "hidden": self.hidden,
            "leaves": self.leaves,
            "rejoins": self.rejoins,
            "rejoining": self.rejoin.as_ref().map(Rejoining::progress_json),
            "rejoinError": self.rejoin_error,
            "disconnectAfter": self.disconnect_after,
            "refusedEvents": self.keys.refused(),
            "lateEvents": self.keyboard.inputs().late_events(),
            "sim": self.header.sim_id,
            "peers": [peer(0), peer(1)],
        })
    }

    /// Back to a fresh page with the current slider settings.
    ///
    /// # Errors
    ///
    /// As [`NetplayPage::with_settings`]; the page is unchanged then.
    pub fn reset(&mut self) -> Result<(), NetplayPageError> {
        *self = NetplayPage::build(
            self.rtt_ms,
            self.loss_pct,
            u64::from(self.controls.input_delay.get()),
            self.disconnect_after,
        )?;
        Ok(())
    }
}

fn check_settings(rtt_ms: u64, loss_pct: u64, delay: u64) -> Result<(), NetplayPageError> {
    let out = |name: &'static str, value: u64, max: u64| {
        NetplayPageError::Arg(ArgError {
            name,
            max,
            found: value.to_string(),
        })
    };
    if rtt_ms > MAX_RTT_MS {
        return Err(out("rttMs", rtt_ms, MAX_RTT_MS));
    }
    if loss_pct > MAX_LOSS_PCT {
        return Err(out("lossPct", loss_pct, MAX_LOSS_PCT));
    }
    if delay > MAX_DELAY {
        return Err(out("inputDelay", delay, MAX_DELAY));
    }
    Ok(())
}

/// The netplay page for JavaScript: `new Netplay()`.
#[wasm_bindgen(js_name = Netplay)]
#[derive(Debug)]
pub struct NetplayHandle {
    page: NetplayPage,
    /// `benchSimSteps`' world, kept so its buffers are reused (`clone_from`).
    bench: Option<HordeWorld>,
}

impl NetplayHandle {
    /// The model.
    #[must_use]
    pub const fn page(&self) -> &NetplayPage {
        &self.page
    }
}

#[wasm_bindgen(js_class = Netplay)]
impl NetplayHandle {
    /// A fresh page.
    ///
    /// # Errors
    ///
    /// When the compiled-in config is invalid.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<NetplayHandle, JsError> {
        NetplayPage::new()
            .map(|page| NetplayHandle { page, bench: None })
            .map_err(js_err)
    }

    /// A display frame at browser time `ms`: player 1's ticks run, or
    /// `undefined` for a refused time (ignored and counted).
    #[wasm_bindgen(js_name = frameAt)]
    pub fn frame_at(&mut self, ms: f64) -> Option<u32> {
        self.page
            .frame_at(ms)
            .ok()
            .map(|(a, _)| a.map_or(0, |a| a.steps))
    }

    /// Test API: `n` frames of `ms`; returns player 1's loop tick.
    ///
    /// # Errors
    ///
    /// For numbers out of range (nothing runs).
    #[wasm_bindgen(js_name = stepFrames)]
    pub fn step_frames(&mut self, n: f64, ms: f64) -> Result<f64, JsError> {
        self.page.step_frames(n, ms).map(num).map_err(js_err)
    }

    /// Forgets the browser-clock anchor.
    pub fn reanchor(&mut self) {
        self.page.reanchor();
    }

    /// A key event for player 1; whether the key moves the player.
    pub fn key(&mut self, code: &str, down: bool, ms: f64) -> bool {
        let _ = self.page.key(code, down, ms);
        button_for_key(code).is_some()
    }

    /// Releases player 1's held keys at browser time `ms`.
    #[wasm_bindgen(js_name = releaseAll)]
    pub fn release_all(&mut self, ms: f64) {
        let _ = self.page.release_all(ms);
    }

    /// Round trip in whole ms.
    ///
    /// # Errors
    ///
    /// Out of range (nothing changes).
    #[wasm_bindgen(js_name = setRtt)]
    pub fn set_rtt(&mut self, ms: f64) -> Result<(), JsError> {
        self.page.set_rtt(ms).map_err(js_err)
    }

    /// Loss in whole percent.
    ///
    /// # Errors
    ///
    /// Out of range (nothing changes).
    #[wasm_bindgen(js_name = setLoss)]
    pub fn set_loss(&mut self, pct: f64) -> Result<(), JsError> {
        self.page.set_loss(pct).map_err(js_err)
    }

    /// Both players' input delay in ticks.
    ///
    /// # Errors
    ///
    /// Out of range (nothing changes).
    #[wasm_bindgen(js_name = setInputDelay)]
    pub fn set_input_delay(&mut self, d: f64) -> Result<(), JsError> {
        self.page.set_input_delay(d).map_err(js_err)
    }

    /// Ends the match at one tick for both players; returns it.
    #[wasm_bindgen(js_name = endMatch)]
    pub fn end_match(&mut self) -> f64 {
        num(self.page.end_match())
    }

    /// The state as JSON text.
    #[wasm_bindgen(js_name = stateJson)]
    pub fn state_json(&self) -> String {
        self.page.state_json().to_string()
    }

    /// Player `p`'s replay of the confirmed inputs, base64; without `p`,
    /// the match's (player 1's, or player 2's once player 1 rejoined).
    ///
    /// # Errors
    ///
    /// For a `p` other than 0 or 1, or a player that has no recording.
    pub fn replay(&self, p: Option<f64>) -> Result<String, JsError> {
        match p {
            Some(p) => self.page.replay_bytes(p),
            None => self.page.match_replay_bytes(),
        }
        .map(|b| base64::encode(&b))
        .map_err(js_err)
    }

    /// The tab was hidden at browser time `ms`: player 1 stops (its keys
    /// are released); player 2 plays on.
    pub fn hide(&mut self, ms: f64) {
        let _ = self.page.hide(ms);
    }

    /// The tab is visible again at browser time `ms`: player 2 catches up
    /// through the time away; player 1 goes on, or rejoins if player 2
    /// declared it gone.
    pub fn show(&mut self, ms: f64) {
        let _ = self.page.show(ms);
    }

    /// Rebuilds the page with this silence timeout, in ticks.
    ///
    /// # Errors
    ///
    /// Out of range (nothing changes).
    #[wasm_bindgen(js_name = setDisconnectAfter)]
    pub fn set_disconnect_after(&mut self, ticks: f64) -> Result<(), JsError> {
        self.page.set_disconnect_after(ticks).map_err(js_err)
    }

    /// Player `p`'s view (0 or 1), interpolated, in px: `[n, hero0X, hero0Y,
    /// hero1X, hero1Y, x0, y0, …]` (the hero count, every hero, the enemies).
    pub fn interpolated(&mut self, p: u32) -> Vec<f32> {
        self.page.interpolated(p as usize).to_vec()
    }

    /// Back to a fresh match with the current settings.
    ///
    /// # Errors
    ///
    /// When the page cannot start again (it is unchanged then).
    pub fn reset(&mut self) -> Result<(), JsError> {
        self.page.reset().map_err(js_err)
    }

    /// Sizes for drawing, JSON (as the horde page's `drawInfo`).
    #[wasm_bindgen(js_name = drawInfo)]
    pub fn draw_info(&self) -> String {
        draw_info_json(self.page.config())
    }

    /// The test API's bench hook: copies player 1's current state into a
    /// world kept for this (its buffers are reused after the first call),
    /// steps it `n` times with an empty input and returns `n` (time it
    /// around the call): the sim step's own cost, to subtract from a frame's.
    ///
    /// # Errors
    ///
    /// For an `n` that is not a whole number up to 1 000 000.
    #[wasm_bindgen(js_name = benchSimSteps)]
    pub fn bench_sim_steps(&mut self, n: f64) -> Result<f64, JsError> {
        let n = whole("n", n, 1_000_000).map_err(js_err)?;
        let now = self.page.session(0).sim();
        let w = match &mut self.bench {
            Some(w) => {
                w.clone_from(now);
                w
            }
            slot @ None => slot.insert(now.clone()),
        };
        let inputs = vec![TickInput::default(); w.players()];
        for _ in 0..n {
            w.step(&inputs);
        }
        Ok(num(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(rtt: u64, loss: u64, delay: u64) -> NetplayPage {
        NetplayPage::with_settings(rtt, loss, delay).expect("valid settings")
    }

    fn peers(p: &NetplayPage) -> Vec<Value> {
        p.state_json()["peers"].as_array().unwrap().clone()
    }

    /// `tickwise verify`'s check: the built-in catalog re-simulates the replay.
    fn verified(bytes: &[u8]) -> (u64, String) {
        let report = tickwise_catalog::Catalog::builtin()
            .verify(bytes, &tickwise::ReplayLimits::DEFAULT)
            .expect("a readable replay");
        match report.verdict {
            tickwise::ReplayVerdict::Match { digest } => (report.ticks_run, digest),
            other => panic!("the page's replay did not verify: {other:?}"),
        }
    }

    #[test]
    fn both_views_end_on_the_same_confirmed_state_and_the_replay_verifies() {
        let mut p = page(200, 5, 0);
        p.step_frames(5.0, 16.0).unwrap();
        p.key("ArrowRight", true, 200.0).unwrap();
        p.step_frames(120.0, 16.0).unwrap();
        p.key("ArrowRight", false, 2300.0).unwrap();
        p.set_rtt(60.0).unwrap();
        p.set_input_delay(2.0).unwrap();
        p.step_frames(120.0, 16.0).unwrap();
        let stop = p.end_match();
        p.step_frames(200.0, 16.0).unwrap();
        let ps = peers(&p);
        for s in &ps {
            assert_eq!(s["finished"], true, "{s}");
            assert_eq!(s["confirmedTick"], stop);
            assert_eq!(s["desyncs"], 0);
            assert_eq!(s["inputDelay"], 2, "the slider reached the session");
        }
        assert_eq!(ps[0]["confirmedChecksum"], ps[1]["confirmedChecksum"]);
        assert!(ps[0]["rollbacks"].as_u64().unwrap() > 0, "{}", ps[0]);
        // Both players' recordings re-simulate to the confirmed state; the
        // horde's digest ends with its checksum.
        for k in [0.0, 1.0] {
            let (ticks, digest) = verified(&p.replay_bytes(k).unwrap());
            assert_eq!(ticks, stop);
            let sum = digest.rsplit('|').next().unwrap();
            assert_eq!(sum, ps[0]["confirmedChecksum"].as_str().unwrap());
        }
    }

    /// Both views' heroes after a finished match, with or without the
    /// keyboard holding ArrowRight for 1.5 s, and a fresh page's heroes.
    fn heroes_after(keys: bool) -> (Value, Value, u64) {
        let mut p = page(120, 0, 0);
        let start = peers(&p)[0]["heroes"].clone();
        p.step_frames(5.0, 16.0).unwrap();
        if keys {
            p.key("ArrowRight", true, 100.0).unwrap();
        }
        p.step_frames(100.0, 16.0).unwrap();
        if keys {
            p.key("ArrowRight", false, 1_700.0).unwrap();
        }
        p.step_frames(20.0, 16.0).unwrap();
        let stop = p.end_match();
        p.step_frames(200.0, 16.0).unwrap();
        let ps = peers(&p);
        for s in &ps {
            assert_eq!(
                (s["finished"].as_bool(), s["confirmedTick"].as_u64()),
                (Some(true), Some(stop))
            );
        }
        // Finished, each view's current state is the confirmed one: the
        // two views agree on every hero.
        assert_eq!(ps[0]["heroes"], ps[1]["heroes"]);
        assert_eq!(ps[0]["confirmedChecksum"], ps[1]["confirmedChecksum"]);
        (start, ps[0]["heroes"].clone(), stop)
    }

    #[test]
    fn the_keys_move_only_hero_0_and_the_bot_only_hero_1() {
        let (start, keyed, stop) = heroes_after(true);
        let (start2, still, stop2) = heroes_after(false);
        assert_eq!((start.clone(), stop), (start2, stop2));
        assert_eq!(start.as_array().unwrap().len(), 2, "two heroes");
        let at = |v: &Value, h: usize, k: &str| v[h][k].as_i64().unwrap();
        // Without keys, hero 0 never moves; with ArrowRight held it moves
        // right only, in whole steps of playerSpeed (768/256 px a tick).
        assert_eq!(
            (at(&still, 0, "x"), at(&still, 0, "y")),
            (at(&start, 0, "x"), at(&start, 0, "y"))
        );
        let dx = at(&keyed, 0, "x") - at(&start, 0, "x");
        assert!(dx > 0 && dx % 768 == 0, "hero 0 moved {dx}");
        assert_eq!(at(&keyed, 0, "y"), at(&start, 0, "y"));
        // Hero 1 moves by the bot alone: it moved, and the same way whether
        // or not the keyboard was used.
        assert_eq!(
            (at(&keyed, 1, "x"), at(&keyed, 1, "y")),
            (at(&still, 1, "x"), at(&still, 1, "y"))
        );
        assert_ne!(
            (at(&still, 1, "x"), at(&still, 1, "y")),
            (at(&start, 1, "x"), at(&start, 1, "y"))
        );
    }

    #[test]
    fn each_view_draws_every_hero() {
        let mut p = page(100, 0, 0);
        p.step_frames(10.0, 16.0).unwrap();
        for v in 0..2 {
            let d = p.interpolated(v).to_vec();
            // The count, two heroes (four numbers), then one pair per
            // enemy alive (at most the config's 300).
            assert_eq!(d[0], 2.0, "two heroes in view {v}");
            assert_eq!((d.len() - 5) % 2, 0);
            assert!(d.len() > 5 && d.len() <= 5 + 2 * 300, "{}", d.len());
            // Hero 1 is drawn within a tick's move (3 px) of where the view's
            // state has it.
            let h1 = &peers(&p)[v]["heroes"][1];
            let x = h1["x"].as_i64().unwrap() as f32 / 256.0;
            assert!((d[3] - x).abs() <= 3.0, "{} vs {x}", d[3]);
        }
    }

    #[test]
    fn two_pages_fed_the_same_frames_and_keys_agree() {
        // Deterministic: two pages fed the same frames and events agree.
        let run = || {
            let mut p = page(100, 10, 0);
            p.step_frames(10.0, 20.0).unwrap();
            p.key("KeyA", true, 250.0).unwrap();
            p.step_frames(50.0, 20.0).unwrap();
            p.key("KeyA", false, 1300.0).unwrap();
            p.step_frames(50.0, 20.0).unwrap();
            p.state_json()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn no_delay_and_no_latency_means_no_rollback_but_latency_does() {
        let mut still = page(0, 0, 2);
        still.step_frames(300.0, 16.0).unwrap();
        assert_eq!(peers(&still)[0]["rollbacks"], 0);
        let mut lag = page(300, 0, 0);
        lag.step_frames(300.0, 16.0).unwrap();
        let ps = peers(&lag);
        // 150 ms each way at 30 Hz is 4.5 ticks: the bot changes direction
        // every 10 to 59 ticks, so player 1 mispredicts and rolls back.
        assert!(ps[0]["mispredictions"].as_u64().unwrap() > 0, "{}", ps[0]);
        assert!(ps[0]["rollbacks"].as_u64().unwrap() > 0);
        assert_eq!(ps[0]["desyncs"], 0);
    }

    #[test]
    fn bad_settings_are_refused_and_change_nothing() {
        let mut p = page(100, 2, 0);
        assert!(p.set_rtt(1001.0).is_err());
        assert!(p.set_rtt(f64::NAN).is_err());
        assert!(p.set_loss(51.0).is_err());
        assert!(p.set_loss(2.5).is_err());
        assert!(p.set_input_delay(17.0).is_err());
        assert!(p.set_input_delay(-1.0).is_err());
        assert!(p.step_frames(1.0, 1001.0).is_err());
        assert!(p.replay_bytes(2.0).is_err());
        let s = p.state_json();
        assert_eq!(
            (s["rttMs"].as_u64(), s["lossPct"].as_u64()),
            (Some(100), Some(2))
        );
        assert_eq!(s["inputDelay"], 0);
        assert_eq!(s["frames"], 0);
        assert!(p.frame_at(f64::NAN).is_err());
        assert_eq!(p.state_json()["rejectedTimes"], 1);
        assert!(NetplayPage::with_settings(2000, 0, 0).is_err());
    }

    #[test]
    fn end_match_is_idempotent_and_reset_starts_over() {
        let mut p = page(40, 0, 1);
        p.step_frames(30.0, 33.0).unwrap();
        let t = p.end_match();
        assert_eq!(p.end_match(), t);
        p.step_frames(60.0, 33.0).unwrap();
        assert_eq!(peers(&p)[1]["confirmedTick"], t);
        p.reset().unwrap();
        let s = p.state_json();
        assert_eq!(s["stopAt"], Value::Null);
        assert_eq!(s["peers"][0]["confirmedTick"], 0);
        assert_eq!(s["inputDelay"], 1, "settings survive a reset");
    }

    /// A page whose peers declare each other gone after 45 ticks (1.5 s).
    fn quick_page() -> NetplayPage {
        let mut p = page(120, 0, 0);
        p.set_disconnect_after(45.0).unwrap();
        p
    }

    /// Ends the match and checks it finished clean: both peers on the stop
    /// tick with one checksum, and the match replay verifies to it.
    fn finish_clean(p: &mut NetplayPage) -> Vec<Value> {
        let stop = p.end_match();
        p.step_frames(300.0, 16.0).unwrap();
        let ps = peers(p);
        for s in &ps {
            assert_eq!(s["finished"], true, "{s}");
            assert_eq!(s["confirmedTick"], stop, "{s}");
            assert_eq!(s["desyncs"], 0, "{s}");
        }
        assert_eq!(ps[0]["confirmedChecksum"], ps[1]["confirmedChecksum"]);
        let (ticks, digest) = verified(&p.match_replay_bytes().unwrap());
        assert_eq!(ticks, stop);
        assert_eq!(
            digest.rsplit('|').next().unwrap(),
            ps[0]["confirmedChecksum"].as_str().unwrap()
        );
        ps
    }

    #[test]
    fn hidden_past_the_timeout_player_1_stops_is_declared_gone_and_rejoins() {
        let mut p = quick_page();
        p.step_frames(90.0, 16.0).unwrap();
        p.key("ArrowRight", true, 100.0).unwrap();
        p.step_frames(30.0, 16.0).unwrap();
        let before = peers(&p);
        p.hide(0.0).unwrap();
        // 3.2 s hidden with frames still coming (an emulated hidden tab):
        // only player 2 runs.
        p.step_frames(200.0, 16.0).unwrap();
        let hidden = peers(&p);
        assert_eq!(
            hidden[0]["loopTick"], before[0]["loopTick"],
            "player 1 stopped"
        );
        assert!(hidden[1]["loopTick"].as_u64() > before[1]["loopTick"].as_u64());
        assert_eq!(p.leaves_and_rejoins(), (0, 0), "no rejoin while hidden");
        p.show(0.0).unwrap();
        p.step_frames(120.0, 16.0).unwrap();
        assert_eq!(p.leaves_and_rejoins(), (1, 1), "{}", p.state_json());
        let ps = finish_clean(&mut p);
        // Player 2 saw player 1 leave and come back.
        assert!(p.session(1).rejoined(0).is_some());
        assert!(ps[0]["rollbacks"].is_u64());
        // The rejoined session records nothing: player 1's replay is gone,
        // the match's is player 2's.
        assert!(p.replay_bytes(0.0).is_err());
    }

    #[test]
    fn frames_that_stop_for_longer_than_the_timeout_rejoin_too() {
        // A frozen page: no events, its frames just stop for 4 s; the next
        // frame runs player 2 through the gap a tick at a time.
        let mut p = quick_page();
        for k in 0..=120u32 {
            let _ = p.frame_at(f64::from(k) * 16.0).unwrap();
        }
        let at = peers(&p)[1]["loopTick"].as_u64().unwrap();
        let _ = p.frame_at(1_920.0 + 4_000.0).unwrap();
        let caught = peers(&p)[1]["loopTick"].as_u64().unwrap();
        // 4 s at 30 Hz: about 120 ticks of player 2, none dropped.
        assert!((at + 118..=at + 122).contains(&caught), "{at} -> {caught}");
        for k in 1..=300u32 {
            let _ = p.frame_at(5_920.0 + f64::from(k) * 16.0).unwrap();
        }
        assert_eq!(p.leaves_and_rejoins(), (1, 1), "{}", p.state_json());
        finish_clean(&mut p);
    }

    #[test]
    fn a_short_hide_catches_up_without_a_leave() {
        let mut p = quick_page();
        p.step_frames(90.0, 16.0).unwrap();
        p.hide(0.0).unwrap();
        p.step_frames(50.0, 16.0).unwrap(); // 0.8 s < 1.5 s
        p.show(0.0).unwrap();
        p.step_frames(120.0, 16.0).unwrap();
        assert_eq!(p.leaves_and_rejoins(), (0, 0));
        let ps = finish_clean(&mut p);
        assert!(p.session(1).departed(0).is_none());
        assert!(
            ps[1]["stalls"].as_u64().unwrap() > 0,
            "player 2 waited for player 1"
        );
    }

    #[test]
    fn the_timeout_is_checked() {
        let mut p = page(120, 0, 0);
        assert!(p.set_disconnect_after(29.0).is_err());
        assert!(p.set_disconnect_after(3001.0).is_err());
        assert!(p.set_disconnect_after(1.5).is_err());
        assert_eq!(p.state_json()["disconnectAfter"], 300);
        p.set_disconnect_after(60.0).unwrap();
        assert_eq!(p.state_json()["disconnectAfter"], 60);
    }
}
