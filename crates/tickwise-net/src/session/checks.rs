//! Checks: each confirmed tick's checksum (and, at a checkpoint, its
//! per-field hashes) is kept in a short history, exchanged with the other
//! players and compared; the first mismatch is a [`super::Desync`], kept
//! with the per-field hashes that say which part of the state split.

use alloc::vec::Vec;

use tickwise::{ReplayInput, Sim};

use super::inputs::ring;
use super::{Desync, Session};
use crate::config::CHECK_HISTORY;
use crate::transport::Transport;
use crate::wire::{FieldsMsg, KIND_FIELDS, write_envelope};

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    pub(super) fn probe_names(&mut self) -> Vec<&'static str> {
        self.probe.take(&self.sim);
        self.probe.names().to_vec()
    }

    pub(super) fn probe_state(&mut self, s: u64) -> bool {
        let Self {
            probe,
            sim,
            snaps,
            current,
            ..
        } = self;
        if s == *current {
            probe.take(sim);
            return true;
        }
        if let Some(Some((t, snap))) = snaps.get(ring(s, snaps.len().max(1)))
            && *t == s
        {
            probe.take(snap);
            return true;
        }
        false
    }

    pub(super) fn hist_index(&self, s: u64) -> usize {
        ring(s / self.cfg.check_every, CHECK_HISTORY)
    }

    pub(super) fn store_check(&mut self, s: u64) {
        let i = self.hist_index(s);
        let sum = self.probe.checksum();
        self.hist_tick[i] = s;
        self.hist_sum[i] = sum;
        let n = self.nfields;
        for (k, dst) in self.hist_fields[i * n..(i + 1) * n].iter_mut().enumerate() {
            *dst = self.probe.hashes().get(k).copied().unwrap_or(0);
        }
        for p in 0..usize::from(self.cfg.players) {
            if let Some(&(t, remote)) = self.pending[p].get(i)
                && t == s
            {
                self.compare(p, s, sum, remote);
            }
        }
    }

    #[allow(clippy::cast_possible_truncation, reason = "player slots are below 4")]
    pub(super) fn compare(&mut self, p: usize, s: u64, local: u64, remote: u64) {
        // A checksum rides in several datagrams; compare each tick once.
        if s <= self.peers[p].last_compared {
            return;
        }
        self.peers[p].last_compared = s;
        self.stats.checks_compared += 1;
        if local == remote {
            return;
        }
        self.stats.desyncs += 1;
        if self.desync.is_none() {
            self.desync = Some(Desync {
                tick: s,
                peer: p as u8,
                local,
                remote,
                fields: None,
            });
            self.frozen = true;
            self.desync_hashes = self.field_hashes_at(s).unwrap_or_default();
            for q in &mut self.peers {
                q.fields_resend = 8;
            }
        }
    }

    pub(super) fn receive_check(&mut self, p: usize, t: u64, remote: u64) {
        if t == 0 || !t.is_multiple_of(self.cfg.check_every) {
            self.stats.drops.malformed += 1;
            return;
        }
        let peer = &mut self.peers[p];
        peer.checks_we_have = peer.checks_we_have.max(t);
        if t <= self.probed {
            let i = self.hist_index(t);
            if self.hist_tick[i] == t {
                let local = self.hist_sum[i];
                self.compare(p, t, local, remote);
            } else {
                self.stats.checks_too_old += 1;
            }
        } else if t > self
            .probed
            .saturating_add((CHECK_HISTORY as u64).saturating_mul(self.cfg.check_every))
        {
            self.stats.drops.far_future += 1;
        } else {
            let i = self.hist_index(t);
            self.pending[p][i] = (t, remote);
        }
    }

    /// Takes peer `p`'s field hashes; whether they answer the desync this
    /// session found with `p` (same tick; a resend of an answer already
    /// taken is one too). Hashes nobody asked for count as `far_future`.
    pub(super) fn receive_fields(&mut self, p: usize, m: &FieldsMsg<'_>) -> bool {
        let Some(d) = self
            .desync
            .as_ref()
            .filter(|d| d.tick == m.tick && usize::from(d.peer) == p)
        else {
            self.stats.drops.far_future += 1;
            return false;
        };
        if d.fields.is_some() {
            return true;
        }
        let i = self.hist_index(m.tick);
        if self.hist_tick[i] != m.tick {
            return true;
        }
        let n = self.nfields;
        let local = &self.hist_fields[i * n..(i + 1) * n];
        let names = self.probe.names();
        let mut differ = Vec::new();
        let mut remote_n = 0;
        for (k, h) in m.iter().enumerate() {
            remote_n += 1;
            if local.get(k) != Some(&h) {
                differ.push(names.get(k).copied().unwrap_or("?"));
            }
        }
        if remote_n != n {
            differ.push("(field count)");
        }
        if let Some(d) = &mut self.desync {
            d.fields = Some(differ);
        }
        true
    }

    pub(super) fn send_fields(&mut self, p: u8, transport: &mut dyn Transport) {
        let Some(tick) = self.desync.as_ref().map(|d| d.tick) else {
            return;
        };
        let i = self.hist_index(tick);
        if self.hist_tick[i] != tick {
            return;
        }
        let env = self.env();
        let mut out = core::mem::take(&mut self.out);
        write_envelope(&mut out, KIND_FIELDS, &env);
        out.varint(tick);
        let n = self.nfields;
        #[allow(clippy::cast_possible_truncation, reason = "at most 56 fields")]
        out.push(n as u8);
        for h in &self.hist_fields[i * n..(i + 1) * n] {
            out.extend(&h.to_le_bytes());
        }
        if out.seal(&self.auth) {
            transport.send(p, out.bytes());
            self.stats.sent += 1;
        }
        self.out = out;
    }

    /// After a desync: the newest kept confirmed snapshot from before the
    /// desync tick (snapshots stop rotating at the first desync, so it is
    /// still there when the report comes in).
    #[must_use]
    pub fn snapshot_before_desync(&self) -> Option<(u64, &S)> {
        let d = self.desync.as_ref()?;
        self.anchors
            .iter()
            .flatten()
            .filter(|(t, _)| *t < d.tick)
            .max_by_key(|(t, _)| *t)
            .map(|(t, s)| (*t, s))
    }

    /// The local per-field hashes (names and hashes) of checked confirmed
    /// tick `tick`, while it is in the history (the first desync's tick:
    /// always).
    #[must_use]
    pub fn field_hashes_at(&self, tick: u64) -> Option<Vec<(&'static str, u64)>> {
        let i = self.hist_index(tick);
        if self.hist_tick.get(i) != Some(&tick) {
            // The first desync's hashes are kept for good.
            return self
                .desync
                .as_ref()
                .filter(|d| d.tick == tick && !self.desync_hashes.is_empty())
                .map(|_| self.desync_hashes.clone());
        }
        let n = self.nfields;
        let names = self.probe.names();
        Some(
            self.hist_fields[i * n..(i + 1) * n]
                .iter()
                .enumerate()
                .map(|(k, &h)| (names.get(k).copied().unwrap_or("?"), h))
                .collect(),
        )
    }
}
