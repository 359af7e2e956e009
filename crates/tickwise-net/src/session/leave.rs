//! Leaving: a player silent for longer than `disconnect_after` (or one
//! that said goodbye) is declared away; the remaining players agree on its
//! last tick with real input (docs/netplay.md, "Leaving"), and from that
//! tick on its input is the sim's absent-player input.

use tickwise::codec::Reader;
use tickwise::{ReplayInput, Sim};

use super::inputs::{InputRange, pack_inputs};
use super::spectators::DROP_NOTICES;
use super::{Session, SessionEnd, SlotState};
use crate::config::{INPUT_RING, MAX_PLAYERS};
use crate::transport::Transport;
use crate::wire::{
    DepartureMsg, KIND_DEPARTURE, KIND_GOODBYE, MAX_UNSEALED, WATCH_SILENT, write_envelope,
};

/// Answers a settled peer gives to departure messages of one player.
pub(super) const DEPARTURE_REPLIES: u8 = 8;

/// A player declared gone, while the remaining players agree on its last
/// tick with real input (docs/netplay.md, "Leaving").
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Away {
    /// The largest `held` heard of, ours included: the agreed end once
    /// every remaining player has been heard.
    pub(super) end: u64,
    /// Remaining players whose departure message arrived (bit per slot).
    pub(super) heard: u8,
    /// Remaining players that said they settled (bit per slot).
    pub(super) done: u8,
    /// Remaining players whose departure message awaits one answer (so a
    /// peer that settled and stopped sending still tells one that did not
    /// hear it), at most [`DEPARTURE_REPLIES`] times each (two settled
    /// peers would otherwise answer each other for good).
    pub(super) reply: u8,
    /// Answers left per player.
    pub(super) replies: [u8; MAX_PLAYERS as usize],
    /// Each remaining player's `held`, as last heard.
    pub(super) held: [u64; MAX_PLAYERS as usize],
    /// Agreed: from tick `end` on this player's input is the absent input.
    pub(super) settled: bool,
}

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    /// The first tick from which player `p` (who left) plays the absent
    /// input, once the remaining players agreed on it.
    #[must_use]
    pub fn departed(&self, p: u8) -> Option<u64> {
        self.absent_from(usize::from(p))
    }

    /// Whether player `p` has been declared gone (it may still be waiting
    /// for the agreement on its last tick).
    #[must_use]
    pub fn is_away(&self, p: u8) -> bool {
        self.away.get(usize::from(p)).is_some_and(Option::is_some)
    }

    /// Leaves the match: says goodbye to every other player (one datagram
    /// each; the silence timeout covers a lost one) and ends this session
    /// ([`SessionEnd::Left`]). The others go on without this player.
    pub fn leave(&mut self, transport: &mut dyn Transport) {
        if self.ended.is_some() {
            return;
        }
        for p in 0..self.cfg.players {
            if p == self.cfg.local || self.away[usize::from(p)].is_some() {
                continue;
            }
            let env = self.env();
            write_envelope(&mut self.out, KIND_GOODBYE, &env);
            if self.out.seal(&self.auth) {
                transport.send(p, self.out.bytes());
                self.stats.sent += 1;
            }
        }
        self.ended = Some(SessionEnd::Left {
            at_local_tick: self.stats.local_ticks,
        });
    }

    /// The remaining players other than this one and `p` (bit per slot).
    pub(super) fn remaining_except(&self, p: usize) -> u8 {
        let mut m = 0u8;
        for q in 0..usize::from(self.cfg.players) {
            if q != p && q != usize::from(self.cfg.local) && self.away[q].is_none() {
                m |= 1 << q;
            }
        }
        m
    }

    /// Declares player `p` gone: its inputs stop counting at what this
    /// peer holds now, and the agreement on its last tick starts.
    pub(super) fn declare_away(&mut self, p: usize) {
        if p == usize::from(self.cfg.local) || p >= usize::from(self.cfg.players) {
            return;
        }
        if self.away[p].is_some() {
            return;
        }
        self.away[p] = Some(Away {
            end: self.known[p],
            replies: [DEPARTURE_REPLIES; MAX_PLAYERS as usize],
            ..Away::default()
        });
        // Another player's agreement may have been waiting for p.
        for q in 0..usize::from(self.cfg.players) {
            self.try_settle(q);
        }
    }

    /// Settles the agreement on `p`'s last tick once every remaining player
    /// has been heard and every input up to the agreed end is held.
    pub(super) fn try_settle(&mut self, p: usize) {
        let rem = self.remaining_except(p);
        let known = self.known[p];
        let Some(a) = self.away.get_mut(p).and_then(Option::as_mut) else {
            return;
        };
        if a.settled || a.heard & rem != rem || known < a.end {
            return;
        }
        a.settled = true;
        let end = a.end;
        // Ticks from `end` on were predicted with the leaver's last input;
        // they are run again with the absent input.
        if end < self.current {
            self.first_mis = Some(self.first_mis.map_or(end, |f| f.min(end)));
        }
    }

    pub(super) fn check_timeouts(&mut self) {
        let now = self.stats.local_ticks;
        for p in 0..usize::from(self.cfg.players) {
            if p == usize::from(self.cfg.local) || self.away[p].is_some() {
                continue;
            }
            if now.saturating_sub(self.peers[p].last_heard) > self.cfg.disconnect_after {
                self.declare_away(p);
            }
        }
        for s in &mut self.spectators {
            if s.active && now.saturating_sub(s.last_heard) > self.cfg.disconnect_after {
                s.active = false;
                s.loading = None;
                if s.epoch.is_some() {
                    s.dropped = Some((WATCH_SILENT, self.cfg.disconnect_after, 0));
                    s.notices = DROP_NOTICES;
                }
            }
        }
    }

    /// Takes peer `q`'s word that a player left; whether it was taken. One
    /// about no other player of the session, or with ticks this session
    /// cannot hold, is counted as `far_future` and changes nothing.
    pub(super) fn receive_departure(&mut self, q: usize, m: &DepartureMsg<'_>) -> bool {
        if !self.departure_plausible(q, m) {
            self.stats.drops.far_future += 1;
            return false;
        }
        self.take_departure(q, m);
        true
    }

    /// A departure about another player of the session whose ticks this
    /// session can hold (an end past the input ring could never be reached).
    fn departure_plausible(&self, q: usize, m: &DepartureMsg<'_>) -> bool {
        let p = usize::from(m.leaver);
        p < usize::from(self.cfg.players)
            && p != q
            && m.held <= m.end
            && m.end <= self.probed.saturating_add(INPUT_RING as u64)
    }

    fn take_departure(&mut self, q: usize, m: &DepartureMsg<'_>) {
        let p = usize::from(m.leaver);
        if self.gap[p].is_some_and(|(_, until)| m.end < until) && self.away[p].is_none() {
            // About the leave before its rejoin: settled and done with.
            return;
        }
        if p == usize::from(self.cfg.local) {
            // The others think this peer left: it cannot take its slot back
            // without rejoining, so there is nothing to do with it here.
            return;
        }
        self.declare_away(p);
        let Some(a) = self.away[p].as_mut() else {
            return;
        };
        a.heard |= 1 << q;
        if a.replies[q] > 0 {
            a.replies[q] -= 1;
            a.reply |= 1 << q;
        }
        a.held[q] = a.held[q].max(m.held);
        if !a.settled {
            a.end = a.end.max(m.end);
        }
        if m.settled {
            a.done |= 1 << q;
        }
        let end = a.end;
        let settled = a.settled;
        if !settled {
            let mut r = Reader::new(m.inputs);
            for k in 0..u64::from(m.count) {
                let Ok(input) = S::Input::decode(&mut r) else {
                    break;
                };
                let t = m.start + k;
                if t != self.known[p] {
                    continue;
                }
                if t >= end || t >= self.probed + INPUT_RING as u64 {
                    break;
                }
                if let Some(slot) = self.slot(p, t)
                    && slot.state == SlotState::Predicted
                    && slot.input != input
                {
                    self.stats.mispredictions += 1;
                    self.first_mis = Some(self.first_mis.map_or(t, |f| f.min(t)));
                }
                self.set_input(p, t, input, SlotState::Confirmed);
                self.known[p] += 1;
            }
        }
        self.try_settle(p);
    }

    /// Tells remaining player `q` what this peer knows of leaver `p`, with
    /// the leaver's inputs `q` is missing.
    pub(super) fn send_departure(&mut self, p: u8, q: u8, transport: &mut dyn Transport) {
        let Some(a) = self.away[usize::from(p)] else {
            return;
        };
        let pi = usize::from(p);
        let env = self.env();
        let held = self.known[pi];
        // Relay only once q said what it holds.
        let start = if a.heard & (1 << q) != 0 {
            a.held[usize::from(q)]
        } else {
            held
        };
        let Self {
            out, inputs, enc, ..
        } = self;
        write_envelope(out, KIND_DEPARTURE, &env);
        out.push(p);
        out.push(u8::from(a.settled));
        out.varint(held);
        out.varint(a.end);
        out.varint(start);
        pack_inputs(
            out,
            enc,
            inputs,
            InputRange {
                player: pi,
                start,
                end: held,
                budget: MAX_UNSEALED,
                confirmed_only: true,
            },
        );
        if out.seal(&self.auth) {
            transport.send(q, out.bytes());
            self.stats.sent += 1;
        }
    }
}
