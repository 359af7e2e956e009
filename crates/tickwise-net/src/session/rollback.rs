//! Prediction and rollback: stepping a tick on predicted inputs, the
//! snapshot ring, restoring and re-simulating when a confirmed input
//! differs from its prediction, and confirming the ticks whose inputs are
//! all known.

use tickwise::{ReplayInput, Run, Sim};

use super::Session;
use super::inputs::ring;
use crate::config::{ANCHORS, SPECTATOR_BUFFER};

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    pub(super) fn step_tick(&mut self) {
        let t = self.current;
        if self.cfg.window > 0 {
            let i = ring(t, self.snaps.len());
            match &mut self.snaps[i] {
                Some((tick, snap)) => {
                    *tick = t;
                    snap.clone_from(&self.sim);
                }
                slot @ None => *slot = Some((t, self.sim.clone())),
            }
        }
        self.gather(t);
        self.sim.step(&self.merged);
        self.current += 1;
    }

    pub(super) fn rollback(&mut self) {
        let Some(t) = self.first_mis.take() else {
            return;
        };
        if t >= self.current {
            return;
        }
        let i = ring(t, self.snaps.len());
        let Some((tick, snap)) = &self.snaps[i] else {
            return;
        };
        if *tick != t {
            return;
        }
        self.sim.clone_from(snap);
        let depth = self.current - t;
        let end = self.current;
        self.current = t;
        self.stats.rollbacks += 1;
        self.stats.max_rollback = self.stats.max_rollback.max(depth);
        self.stats.resimulated += depth;
        while self.current < end {
            self.step_tick();
        }
    }

    pub(super) fn should_wait(&self) -> bool {
        if !self.stats.local_ticks.is_multiple_of(3) {
            return false;
        }
        let mut ahead = i64::MIN;
        for p in 0..self.cfg.players {
            if p != self.cfg.local && self.away[usize::from(p)].is_none() {
                ahead = ahead.max(self.peers[usize::from(p)].adv16);
            }
        }
        ahead >= 2 * 16
    }

    /// Confirms every state whose inputs are all known.
    pub(super) fn confirm(&mut self) {
        let c = self.min_known().min(self.current);
        while self.probed < c {
            let s = self.probed + 1;
            let t = s - 1;
            // Tick t's confirmed input, for the replay and spectators.
            for p in 0..usize::from(self.cfg.players) {
                if self.absent(p, t) {
                    self.merged[p] = S::Input::default();
                } else if let Some(slot) = self.slot(p, t) {
                    let input = slot.input.clone();
                    self.merged[p] = input;
                }
            }
            if self.cfg.spectators > 0 {
                let n = usize::from(self.cfg.players);
                let base = ring(t, SPECTATOR_BUFFER) * n;
                for p in 0..n {
                    self.spec_buf[base + p].clone_from(&self.merged[p]);
                }
            }
            let record_due = self
                .record
                .as_ref()
                .map(|r| s.is_multiple_of(r.header.checkpoint_every));
            if let Some(r) = &mut self.record {
                for (runs, input) in r.runs.iter_mut().zip(&self.merged) {
                    match runs.last_mut() {
                        Some(run) if run.input == *input => run.len += 1,
                        _ => runs.push(Run {
                            len: 1,
                            input: input.clone(),
                        }),
                    }
                }
                r.header.ticks = s;
            }
            let check_due = s.is_multiple_of(self.cfg.check_every);
            let anchor_due = s.is_multiple_of(self.cfg.anchor_every);
            // The state is always there (the ring covers the window); if it
            // ever were not, nothing is stored, so a gap shows up as an
            // error when the replay is built, never as a wrong checksum.
            let wanted = check_due || record_due == Some(true) || anchor_due;
            if wanted && !self.probe_state(s) {
                self.stats.missing_states += 1;
            } else if wanted {
                if record_due == Some(true)
                    && let Some(r) = &mut self.record
                {
                    r.sums.push(self.probe.checksum());
                    #[allow(clippy::cast_possible_truncation, reason = "the low half")]
                    r.fields
                        .extend(self.probe.hashes().iter().map(|&h| h as u32));
                }
                if check_due {
                    self.store_check(s);
                }
                if anchor_due {
                    self.keep_anchor(s);
                }
            }
            self.probed = s;
            self.snapshot_if_joining(s);
        }
    }

    /// The confirmed state `s` (the live sim or a snapshot).
    pub(super) fn state(&self, s: u64) -> Option<&S> {
        if s == self.current {
            return Some(&self.sim);
        }
        match self.snaps.get(ring(s, self.snaps.len().max(1))) {
            Some(Some((t, snap))) if *t == s => Some(snap),
            _ => None,
        }
    }

    pub(super) fn keep_anchor(&mut self, s: u64) {
        if self.frozen {
            return;
        }
        let Self {
            anchors,
            sim,
            snaps,
            current,
            ..
        } = self;
        let src = if s == *current {
            Some(&*sim)
        } else {
            match snaps.get(ring(s, snaps.len().max(1))) {
                Some(Some((t, snap))) if *t == s => Some(snap),
                _ => None,
            }
        };
        let Some(src) = src else { return };
        let i = ring(s / self.cfg.anchor_every, ANCHORS);
        match &mut anchors[i] {
            Some((t, a)) => {
                *t = s;
                a.clone_from(src);
            }
            slot @ None => *slot = Some((s, src.clone())),
        }
    }

    /// The newest anchor: a saved confirmed state and its tick.
    /// Spectators and rejoining players start from it.
    #[must_use]
    pub fn latest_anchor(&self) -> Option<(u64, &S)> {
        self.anchors
            .iter()
            .flatten()
            .max_by_key(|(t, _)| *t)
            .map(|(t, s)| (*t, s))
    }
}
