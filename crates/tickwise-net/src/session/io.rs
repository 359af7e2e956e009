//! Wire I/O: reading every waiting datagram (authenticated and checked
//! before anything in it is used; bad ones dropped and counted by reason),
//! dispatching it by kind, and the per-tick send to every peer.

use tickwise::codec::Reader;
use tickwise::{ReplayInput, Sim};

use super::Session;
use crate::config::{FIRST_SPECTATOR_SLOT, MAX_SEQ_JUMP};
use crate::transport::Transport;
use crate::wire::{Body, Envelope, MAX_PACKET, decode};

#[derive(Clone, Debug, Default)]
pub(super) struct Peer {
    pub(super) acked: u64,
    pub(super) last_seq: Option<u64>,
    pub(super) last_heard: u64,
    pub(super) remote_tick: u64,
    pub(super) ping_echo: u64,
    pub(super) rtt: u64,
    pub(super) adv16: i64,
    pub(super) checks_they_have: u64,
    pub(super) checks_we_have: u64,
    pub(super) last_compared: u64,
    pub(super) fields_resend: u8,
}

/// Whether `seq` jumps more than [`MAX_SEQ_JUMP`] past `last` (the first
/// datagram of a sender counts from 0).
pub(super) const fn seq_jump(last: Option<u64>, seq: u64) -> bool {
    let base = match last {
        Some(l) => l,
        None => 0,
    };
    seq > base.saturating_add(MAX_SEQ_JUMP)
}

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    pub(super) fn poll(&mut self, transport: &mut dyn Transport) {
        let mut buf = core::mem::take(&mut self.rbuf);
        while let Some(d) = transport.recv(&mut buf) {
            let len = d.len.min(buf.len());
            if d.len > MAX_PACKET {
                self.stats.received += 1;
                self.stats.drops.oversized += 1;
                continue;
            }
            self.handle_datagram(d.from, &buf[..len]);
            self.admit_spectator(transport);
        }
        self.rbuf = buf;
    }

    /// Handles one datagram from `from` (its slot as the transport knows
    /// it). Public so tests and other transports can feed bytes directly;
    /// any bytes are safe: bad ones are dropped and counted.
    pub fn handle_datagram(&mut self, from: Option<u8>, bytes: &[u8]) {
        self.stats.received += 1;
        let decoded = decode(bytes, &self.auth, |r: &mut Reader<'_>| {
            S::Input::decode(r).is_ok()
        });
        let (env, body) = match decoded {
            Ok(x) => x,
            Err(e) => {
                self.stats.drops.count(&e);
                return;
            }
        };
        if let Body::Watch { epoch } = body {
            // Checked by MAC and epoch: the spectator has no slot yet.
            self.receive_watch(from, env.sender, epoch);
            return;
        }
        if from != Some(env.sender) {
            self.stats.drops.unknown_peer += 1;
            return;
        }
        let now = self.stats.local_ticks;
        let sender = env.sender;
        if sender >= FIRST_SPECTATOR_SLOT {
            self.receive_from_spectator(sender, &env, &body);
            return;
        }
        if sender >= self.cfg.players || sender == self.cfg.local {
            self.stats.drops.unknown_peer += 1;
            return;
        }
        let p = usize::from(sender);
        if let Body::Rejoin { epoch } = body {
            // Epoch-checked, not sequence-checked: a new process for the
            // slot numbers its datagrams from 1 again.
            self.receive_rejoin(p, epoch);
            return;
        }
        if self.away[p].is_some() {
            self.stats.drops.departed += 1;
            return;
        }
        if self.peers[p].last_seq.is_some_and(|l| env.seq <= l) {
            self.stats.drops.stale += 1;
            return;
        }
        if seq_jump(self.peers[p].last_seq, env.seq) {
            self.stats.drops.far_future += 1;
            return;
        }
        // Only a datagram this session takes moves the sender's sequence
        // window: junk from a buggy peer (authenticated, a sequence number
        // far ahead but inside `MAX_SEQ_JUMP`) that answers nothing asked
        // would otherwise make every later datagram of that peer `stale`,
        // and each side would see the other leave. Each refusal below is
        // counted where it is made.
        let taken = match body {
            Body::Inputs(m) => self.receive_inputs(p, &m),
            Body::Fields(m) => self.receive_fields(p, &m),
            Body::Goodbye => {
                self.declare_away(p);
                true
            }
            Body::Departure(m) => self.receive_departure(p, &m),
            Body::Notice {
                player,
                epoch,
                join,
            } => self.receive_notice(p, player, epoch, join),
            Body::NoticeAck { player, join } => self.receive_notice_ack(p, player, join),
            Body::ChunkAck { epoch, next, have } => self.receive_chunk_ack(p, epoch, next, have),
            Body::Rejoin { .. } | Body::Chunk(_) | Body::Refuse { .. } => {
                self.stats.drops.unknown_peer += 1;
                false
            }
            Body::Spectate(_)
            | Body::SpectatorAck { .. }
            | Body::Watch { .. }
            | Body::WatchReply(_) => {
                self.stats.drops.unknown_peer += 1;
                false
            }
        };
        if taken {
            let peer = &mut self.peers[p];
            peer.last_seq = Some(env.seq);
            peer.last_heard = now;
        }
    }

    pub(super) fn env(&mut self) -> Envelope {
        self.seq += 1;
        Envelope {
            session: self.auth.session_id(),
            sender: self.cfg.local,
            seq: self.seq,
        }
    }

    pub(super) fn send_all(&mut self, transport: &mut dyn Transport) {
        for p in 0..self.cfg.players {
            if p == self.cfg.local || self.away[usize::from(p)].is_some() {
                continue;
            }
            self.send_inputs(p, transport);
            if self.peers[usize::from(p)].fields_resend > 0 {
                self.peers[usize::from(p)].fields_resend -= 1;
                self.send_fields(p, transport);
            }
        }
        for k in 0..self.spectators.len() {
            self.send_to_spectator(k, transport);
        }
        self.send_rejoin(transport);
        for p in 0..self.cfg.players {
            let Some(a) = self.away[usize::from(p)] else {
                continue;
            };
            let rem = self.remaining_except(usize::from(p));
            for q in 0..self.cfg.players {
                let bit = 1 << q;
                let quiet = a.settled && a.done & bit != 0 && a.reply & bit == 0;
                if rem & bit != 0 && !quiet {
                    self.send_departure(p, q, transport);
                }
            }
            if let Some(a) = self.away[usize::from(p)].as_mut() {
                a.reply = 0;
            }
        }
    }
}
