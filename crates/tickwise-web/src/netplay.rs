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
    FixedLoop, FrameReport, InputBuffer, Nanos, Presenter, ReplayHeader, Sim, TimeError, Timestamp,
};
use tickwise_net::{
    MAX_INPUT_DELAY, MAX_REJOIN_SNAPSHOT, NetGame, NetworkConfig, Session, SessionConfig,
    SessionError, SessionKey, SimNetwork, SnapshotCodec,
};
use tickwise_sims::horde::{HordeConfig, HordeSnapshot, HordeWorld};

use crate::args::{ArgError, whole};
use crate::horde::{HORDE_JSON, blend_into, button_for_key};
use crate::host::HostClock;
use crate::keys::Keys;

mod away;
mod error;
mod handle;
mod player;
#[cfg(test)]
mod tests;

use away::Rejoining;
pub use away::{MAX_REMOTE_CATCH_UP, REJOIN_TICKS_PER_FRAME};
pub use error::NetplayPageError;
pub use handle::NetplayHandle;
use player::Controls;
pub use player::{Bot, Player, SharedPort};

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

/// Every hero of a state, by player index, for the test API:
/// `[{ "x", "y", "hp" }, …]` with positions in 1/256 px (the sim's own
/// integers, so two views can be compared exactly).
fn heroes_json(heroes: &[tickwise_sims::horde::Hero]) -> Value {
    heroes
        .iter()
        .map(|h| json!({ "x": h.x, "y": h.y, "hp": h.hp }))
        .collect()
}

/// Player 1's loop (keyboard through an input buffer).
pub type KeyboardLoop = FixedLoop<Player, InputBuffer>;
/// Player 2's loop (the bot).
pub type BotLoop = FixedLoop<Player, Bot>;

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
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
