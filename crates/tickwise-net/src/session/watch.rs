//! Spectators over the wire, the player's side: a spectator process asks a
//! player to watch (a watch request, sender byte [`UNASSIGNED_SLOT`]); the
//! player admits it into a free spectator slot (the transport binds its
//! address to the slot), sends the latest anchor (a saved confirmed state) as a snapshot in chunks
//! (the rejoin's transfer), then the confirmed inputs since, and drops it
//! with a reply saying why when it falls too far behind or goes silent.
//! The spectator's side is [`crate::Watcher`]; docs/netplay.md,
//! "Spectators over UDP".

use alloc::vec::Vec;

use tickwise::{ReplayInput, Sim};

use super::rejoin::encode_payload;
use super::{Serve, Session, SpectatorLink, seq_jump};
use crate::config::{FIRST_SPECTATOR_SLOT, SPECTATOR_BUFFER};
use crate::transport::Transport;
use crate::wire::{
    Body, Envelope, KIND_WATCH_REPLY, UNASSIGNED_SLOT, WATCH_ADMITTED, WATCH_BEHIND, WATCH_FULL,
    WATCH_NO_SNAPSHOT, WATCH_TOO_LARGE, write_envelope,
};

/// Ticks before a new spectator process at an admitted address (or slot)
/// may replace a live one: admissions encode a snapshot each, so a
/// spectator that keeps restarting costs one encoding per this many ticks.
const REPLACE_TICKS: u64 = 30;

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    /// A spectator process asks to watch: admit it into a free slot with
    /// the latest anchor, or say why not.
    pub(super) fn receive_watch(&mut self, from: Option<u8>, sender: u8, epoch: u64) {
        if sender != UNASSIGNED_SLOT {
            self.stats.drops.unknown_peer += 1;
            return;
        }
        let now = self.stats.local_ticks;
        if let Some(k) = self.spectators.iter().position(|l| l.epoch == Some(epoch)) {
            #[allow(clippy::cast_possible_truncation, reason = "at most 8 spectators")]
            let slot = FIRST_SPECTATOR_SLOT + k as u8;
            match self.spectators.get_mut(k) {
                // Its requests go on until it hears the welcome.
                Some(l) if l.active && from == Some(slot) => l.last_heard = now,
                // A replayed request of an epoch already served.
                _ => self.stats.drops.stale += 1,
            }
            return;
        }
        let k = match from {
            // A new source: the first free slot.
            None => self
                .spectators
                .iter()
                .position(|l| !l.active && l.notices == 0)
                .or_else(|| self.spectators.iter().position(|l| !l.active)),
            // A transport whose spectators have fixed slots (the simulated
            // network), or a new process at an admitted address.
            Some(s) if s >= FIRST_SPECTATOR_SLOT => {
                let k = usize::from(s - FIRST_SPECTATOR_SLOT);
                let Some(l) = self.spectators.get(k) else {
                    self.stats.drops.unknown_peer += 1;
                    return;
                };
                // A new process replaces a live one at most once every
                // REPLACE_TICKS (each admission encodes a snapshot).
                if l.active && now.saturating_sub(l.admitted_at) < REPLACE_TICKS {
                    self.stats.drops.stale += 1;
                    return;
                }
                Some(k)
            }
            Some(_) => {
                self.stats.drops.unknown_peer += 1;
                return;
            }
        };
        let Some(k) = k else {
            self.pending_reply = Some((from, epoch, WATCH_FULL, u64::from(self.cfg.spectators), 0));
            return;
        };
        let Some((codec, limit)) = self.snap_encode.clone() else {
            self.pending_reply = Some((from, epoch, WATCH_NO_SNAPSHOT, 0, 0));
            return;
        };
        let Some((tick, state)) = self.latest_anchor() else {
            return;
        };
        let checksum = state.checksum();
        let mut bytes = Vec::new();
        encode_payload(&mut bytes, self.cfg.players, &[]);
        codec.write(state, &mut bytes);
        if bytes.len() > limit {
            self.pending_reply = Some((
                from,
                epoch,
                WATCH_TOO_LARGE,
                bytes.len() as u64,
                limit as u64,
            ));
            return;
        }
        #[allow(clippy::cast_possible_truncation, reason = "at most 8 spectators")]
        let slot = FIRST_SPECTATOR_SLOT + k as u8;
        if let Some(l) = self.spectators.get_mut(k) {
            *l = SpectatorLink {
                active: true,
                acked: tick,
                last_heard: now,
                admitted_at: now,
                epoch: Some(epoch),
                loading: Some(Serve::spectator(slot, epoch, tick, bytes, checksum)),
                ..SpectatorLink::default()
            };
        }
        if from.is_none() {
            self.pending_admit = Some(slot);
        }
    }

    /// After a datagram: binds an admitted spectator's address to its slot
    /// and sends a reply to a spectator without one.
    pub(super) fn admit_spectator(&mut self, transport: &mut dyn Transport) {
        if let Some(slot) = self.pending_admit.take()
            && !transport.admit(slot)
            && let Some(l) = self
                .spectators
                .get_mut(usize::from(slot.wrapping_sub(FIRST_SPECTATOR_SLOT)))
        {
            // The transport cannot bind it: nobody would hear it.
            *l = SpectatorLink::default();
        }
        if let Some((to, epoch, code, a, b)) = self.pending_reply.take() {
            self.write_reply(epoch, code, 0, a, b);
            if self.out.seal(&self.auth) {
                match to {
                    None => transport.reply(self.out.bytes()),
                    Some(s) => transport.send(s, self.out.bytes()),
                }
                self.stats.sent += 1;
            }
        }
    }

    fn write_reply(&mut self, epoch: u64, code: u8, slot: u8, a: u64, b: u64) {
        let env: Envelope = self.env();
        write_envelope(&mut self.out, KIND_WATCH_REPLY, &env);
        self.out.extend(&epoch.to_le_bytes());
        self.out.push(code);
        self.out.push(slot);
        self.out.varint(a);
        self.out.varint(b);
    }

    /// A datagram from spectator slot `sender`: only acks count (a
    /// spectator cannot send inputs or anything else).
    pub(super) fn receive_from_spectator(&mut self, sender: u8, env: &Envelope, body: &Body<'_>) {
        let k = usize::from(sender - FIRST_SPECTATOR_SLOT);
        let probed = self.probed;
        let now = self.stats.local_ticks;
        let Some(link) = self.spectators.get_mut(k) else {
            self.stats.drops.unknown_peer += 1;
            return;
        };
        if !link.active {
            if link.dropped.is_some() {
                // Dropped, and it does not know yet: say so again.
                self.stats.drops.departed += 1;
                link.notices = link.notices.max(1);
            } else {
                self.stats.drops.unknown_peer += 1;
            }
            return;
        }
        if link.last_seq.is_some_and(|l| env.seq <= l) {
            self.stats.drops.stale += 1;
            return;
        }
        if seq_jump(link.last_seq, env.seq) {
            self.stats.drops.far_future += 1;
            return;
        }
        match *body {
            Body::SpectatorAck { ack } if ack <= probed => {
                link.last_seq = Some(env.seq);
                link.last_heard = now;
                link.acked = link.acked.max(ack);
                // It sends acks once it holds its snapshot.
                link.loading = None;
            }
            Body::ChunkAck { epoch, next, have }
                if link.loading.as_ref().is_some_and(|sv| sv.epoch() == epoch) =>
            {
                link.last_seq = Some(env.seq);
                link.last_heard = now;
                if let Some(sv) = link.loading.as_mut() {
                    sv.ack(next, have);
                }
            }
            Body::SpectatorAck { .. } => self.stats.drops.far_future += 1,
            _ => self.stats.drops.unknown_peer += 1,
        }
    }

    /// This tick's datagrams to spectator `k`: a drop notice, or while it
    /// loads the welcome and the snapshot's chunks, or the confirmed inputs.
    pub(super) fn send_to_spectator(&mut self, k: usize, transport: &mut dyn Transport) {
        #[allow(clippy::cast_possible_truncation, reason = "at most 8 spectators")]
        let slot = FIRST_SPECTATOR_SLOT + k as u8;
        let oldest = self.probed.saturating_sub(SPECTATOR_BUFFER as u64);
        let probed = self.probed;
        let Some(link) = self.spectators.get_mut(k) else {
            return;
        };
        if link.active && link.loading.is_some() && link.acked < oldest {
            // It loads too slowly: the inputs after its snapshot are gone.
            link.error = Some(link.acked);
            link.active = false;
            link.loading = None;
            link.dropped = Some((WATCH_BEHIND, link.acked, probed));
            link.notices = super::spectators::DROP_NOTICES;
        }
        if let Some((code, a, b)) = link.dropped
            && link.notices > 0
        {
            link.notices -= 1;
            let epoch = link.epoch.unwrap_or(0);
            self.write_reply(epoch, code, 0, a, b);
            self.seal_send(slot, transport);
            return;
        }
        if !link.active {
            return;
        }
        let Some(mut sv) = link.loading.take() else {
            self.send_spectator(k, transport);
            return;
        };
        self.write_reply(
            sv.epoch(),
            WATCH_ADMITTED,
            slot,
            sv.tick(),
            SPECTATOR_BUFFER as u64,
        );
        self.seal_send(slot, transport);
        let chunks = sv.chunks();
        self.send_chunks(&mut sv, chunks, transport);
        if let Some(l) = self.spectators.get_mut(k) {
            l.loading = Some(sv);
        }
    }
}
