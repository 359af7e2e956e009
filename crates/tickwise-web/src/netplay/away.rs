//! The netplay page while the tab is hidden, and the rejoin after it.
//!
//! Player 1 (the keyboard) is this tab's peer: when the tab is hidden it
//! stops, as a real page does (its frames stop, and it would be throttled
//! or frozen). Player 2 (the bot) stands in for the peer on another
//! machine, so its time must not stop with the tab: it follows the page's
//! clock, and any stretch the tab did not run (rAF stopped, the page was
//! frozen) is caught up in wall-clock time, one tick per sub-frame, before
//! the frame's other work, up to [`MAX_REMOTE_CATCH_UP`] (beyond that its
//! loop's frame clamp drops the rest, as its own tab would). Catching up
//! on return, rather than running the bot from a timer or a worker, is
//! what survives a frozen page: timers and workers of a frozen page stop
//! too, and the remote's clock does not.
//!
//! While player 1 is silent, player 2 waits within its prediction window;
//! past `disconnect_after` ticks it declares player 1 gone and plays on
//! alone with player 1's absent input (docs/netplay.md, "Leaving"). When
//! the tab is back:
//!
//! * if player 2 has not declared player 1 gone (a short hide), player 1's
//!   clock is re-anchored, so its loop goes on from where it stopped and
//!   the session catches up with player 2 (which waited) through the
//!   normal window and time sync: no leave;
//! * if it has, player 1 takes its slot back with a
//!   [`tickwise_net::Rejoiner`] (a new epoch), ticked at the sim's rate,
//!   at most [`REJOIN_TICKS_PER_FRAME`] ticks per frame: player 2 (the
//!   donor) picks the join tick, sends the confirmed state in chunks, and
//!   player 1 plays on from it in a new loop.
//!
//! The page learns that player 2 declared player 1 gone from player 2's
//! session (both are in this tab); a client on its own machine would
//! learn it from its time away (longer than `disconnect_after` ticks plus
//! a round trip), the same rule.

use serde_json::{Value, json};
use tickwise::{FixedLoop, InputBuffer, Nanos, Presenter, TimeError, Timestamp};
use tickwise_net::{
    MAX_REJOIN_SNAPSHOT, NetGame, RejoinProgress, Rejoiner, SessionConfig, SnapshotCodec,
};
use tickwise_sims::horde::HordeWorld;

use super::{NetplayPage, Player, SharedPort};

/// The longest stretch of the remote player's time caught up tick by tick
/// (2 minutes): the work of a return is bounded whatever the time away.
pub const MAX_REMOTE_CATCH_UP: Nanos = Nanos::from_secs(120);
/// The most rejoin ticks one frame runs (the rejoin's own catch-up bound).
pub const REJOIN_TICKS_PER_FRAME: u32 = 4;

/// A rejoin in progress: the rejoiner, its port, and the page time of its
/// next tick.
#[derive(Debug)]
pub(crate) struct Rejoining {
    rejoiner: Rejoiner<HordeWorld>,
    port: SharedPort,
    next: Timestamp,
    ticks: u64,
    progress: RejoinProgress,
}

impl Rejoining {
    /// Where the rejoin is, for the test API.
    pub(super) fn progress_json(&self) -> Value {
        match self.progress {
            RejoinProgress::Asking => json!({ "ticks": self.ticks, "phase": "asking" }),
            RejoinProgress::Loading { received, total } => json!({
                "ticks": self.ticks, "phase": "loading", "received": received, "total": total,
            }),
            RejoinProgress::Joined { tick } => {
                json!({ "ticks": self.ticks, "phase": "joined", "tick": tick })
            }
        }
    }
}

/// A random rejoin epoch (a new one per rejoin, as for a new process).
fn fresh_epoch() -> u64 {
    let mut bytes = [0u8; 8];
    #[cfg(target_arch = "wasm32")]
    super::get_random_values(&mut bytes);
    #[cfg(not(target_arch = "wasm32"))]
    if getrandom::fill(&mut bytes).is_err() {
        // No random source: the epoch only tells rejoins apart, and this
        // page's rejoins never overlap, so a count would do as well.
        return 1;
    }
    u64::from_le_bytes(bytes)
}

impl NetplayPage {
    /// The tab was hidden at browser time `ms`: player 1 stops (its held
    /// keys are released: their key-ups will never come); player 2 plays
    /// on at the page's clock.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (counted; the tab is hidden all the same).
    pub fn hide(&mut self, ms: f64) -> Result<(), TimeError> {
        if self.hidden {
            return Ok(());
        }
        self.hidden = true;
        let at = self.local_clock.map(ms, self.keyboard.host_time())?;
        self.keyboard.inputs_mut().release_all(at);
        Ok(())
    }

    /// The tab is visible again at browser time `ms`: player 2 catches up
    /// through the time away, then player 1 goes on (its own clock
    /// re-anchored) or, if player 2 declared it gone, starts its rejoin.
    ///
    /// # Errors
    ///
    /// A [`TimeError`] for a bad timestamp (counted; the tab is visible
    /// all the same and the next frame catches up).
    pub fn show(&mut self, ms: f64) -> Result<(), TimeError> {
        if !self.hidden {
            return Ok(());
        }
        self.hidden = false;
        self.local_clock.reanchor();
        let now = self.clock.map(ms, self.bot.host_time())?;
        self.catch_up_remote(now);
        self.after_frame(now);
        Ok(())
    }

    /// Whether the tab is hidden.
    #[must_use]
    pub const fn is_hidden(&self) -> bool {
        self.hidden
    }

    /// Times player 2 declared player 1 gone, and times player 1 rejoined.
    #[must_use]
    pub const fn leaves_and_rejoins(&self) -> (u64, u64) {
        (self.leaves, self.rejoins)
    }

    /// Runs player 2 and the network up to one step before page time
    /// `to`, a step at a time (so its clamp and step cap drop nothing and
    /// datagrams arrive in between as they would have), from at most
    /// [`MAX_REMOTE_CATCH_UP`] before `to`.
    pub(super) fn catch_up_remote(&mut self, to: Timestamp) {
        let step = self.cfg.step().steps_to_nanos(1).max(Nanos::from_nanos(1));
        let from = self.bot.host_time();
        if to.checked_since(from).unwrap_or(Nanos::ZERO) > MAX_REMOTE_CATCH_UP {
            // The rest of a very long absence: one clamped frame.
            let t =
                Timestamp::from_nanos(to.as_nanos().saturating_sub(MAX_REMOTE_CATCH_UP.as_nanos()));
            self.advance_remote(t);
        }
        loop {
            let t = self.bot.host_time().saturating_add(step);
            if t >= to {
                break;
            }
            self.advance_remote(t);
        }
    }

    fn advance_remote(&mut self, t: Timestamp) {
        if let Ok(mut n) = self.net.try_borrow_mut() {
            n.advance_to(t);
        }
        let _ = self.views[1].frame_at(&mut self.bot, t);
    }

    /// After player 2 ran to page time `now`: start player 1's rejoin if
    /// player 2 declared it gone (and agreed on its last tick), and tick a
    /// rejoin in progress.
    pub(super) fn after_frame(&mut self, now: Timestamp) {
        if self.hidden {
            return;
        }
        if self.rejoin.is_none()
            && self.bot.sim().session().departed(0).is_some()
            && self.rejoin_error.is_none()
        {
            self.start_rejoin(now);
        }
        self.tick_rejoin(now);
    }

    fn start_rejoin(&mut self, now: Timestamp) {
        self.leaves += 1;
        let mut sc = SessionConfig::new(2, 0, self.key);
        sc.input_delay = self.controls.input_delay.get();
        sc.disconnect_after = self.disconnect_after;
        let made = Rejoiner::new(
            HordeWorld::new(&self.cfg),
            sc,
            SnapshotCodec::new(),
            fresh_epoch(),
            MAX_REJOIN_SNAPSHOT,
        );
        match made {
            Ok(rejoiner) => {
                self.rejoin = Some(Rejoining {
                    rejoiner,
                    port: SharedPort {
                        net: std::rc::Rc::clone(&self.net),
                        slot: 0,
                        refused: 0,
                    },
                    next: now,
                    ticks: 0,
                    progress: RejoinProgress::Asking,
                });
            }
            Err(e) => self.rejoin_error = Some(e.to_string()),
        }
    }

    /// Ticks the rejoin at the sim's rate, at most
    /// [`REJOIN_TICKS_PER_FRAME`] a frame; once joined, player 1 plays on
    /// from the join tick in a new loop.
    fn tick_rejoin(&mut self, now: Timestamp) {
        let step = self.cfg.step().steps_to_nanos(1).max(Nanos::from_nanos(1));
        let Some(r) = self.rejoin.as_mut() else {
            return;
        };
        let mut ran = 0;
        while r.next <= now && ran < REJOIN_TICKS_PER_FRAME {
            ran += 1;
            r.ticks += 1;
            r.next = r.next.saturating_add(step);
            match r.rejoiner.tick(&mut r.port) {
                Ok(p) => r.progress = p,
                Err(e) => {
                    self.rejoin_error = Some(e.to_string());
                    self.rejoin = None;
                    return;
                }
            }
            if let RejoinProgress::Joined { .. } = r.progress {
                break;
            }
        }
        if r.next < now {
            // Bounded per frame: a backlog past it is not run later.
            r.next = now;
        }
        if !matches!(r.progress, RejoinProgress::Joined { .. }) {
            return;
        }
        let Some(mut session) = r.rejoiner.take_session() else {
            return;
        };
        session.enable_rejoin(SnapshotCodec::new(), MAX_REJOIN_SNAPSHOT);
        let Some(Rejoining { port, .. }) = self.rejoin.take() else {
            return;
        };
        let player = Player {
            game: NetGame::new(session, port),
            controls: std::rc::Rc::clone(&self.controls),
            refused_controls: 0,
        };
        self.keyboard = FixedLoop::new(
            player,
            InputBuffer::new(),
            self.cfg.clock_config(),
            self.cfg.catch_up_policy(),
        );
        self.views[0] = Presenter::new(self.keyboard.sim());
        self.local_clock.reanchor();
        self.rejoins += 1;
    }
}
