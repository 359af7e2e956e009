//! Spectators: confirmed inputs only, from an anchor (a saved confirmed
//! state, sent as a snapshot), never from tick 0.

use alloc::vec;
use alloc::vec::Vec;

use tickwise::codec::Reader;
use tickwise::{ReplayInput, Sim};

use crate::auth::{Auth, SessionKey};
use crate::config::{FIRST_SPECTATOR_SLOT, MAX_SEQ_JUMP, SPECTATOR_BUFFER};
use crate::session::Drops;
use crate::transport::{RECV_BUFFER, Transport};
use crate::wire::{
    Body, Buf, ChunkMsg, Envelope, KIND_SPECTATOR_ACK, WATCH_BEHIND, WATCH_SILENT, WatchReplyMsg,
    decode, write_envelope,
};

/// A spectator: holds a confirmed state and steps it with the confirmed
/// inputs the host (player 0) sends. It never predicts, so it never rolls
/// back; it starts from the host's latest anchor
/// ([`crate::Session::latest_anchor`]) and the host sends the inputs
/// since. The host buffers [`SPECTATOR_BUFFER`] ticks; a spectator that falls
/// further behind is dropped by the host with
/// [`crate::SessionError::SpectatorTooFarBehind`].
#[derive(Debug)]
pub struct Spectator<S: Sim> {
    sim: S,
    tick: u64,
    known: u64,
    slot: u8,
    /// The player feeding it (0 unless [`Spectator::watching`] said otherwise).
    host: u8,
    /// The epoch of the process (a spectator admitted over the wire): drop
    /// notices carry it.
    epoch: Option<u64>,
    /// Why the host dropped it, once it said so.
    dropped: Option<WatchReplyMsg>,
    /// Calls to [`Spectator::tick_once`] since the host's last datagram.
    silent: u64,
    auth: Auth,
    players: u8,
    buf: Vec<S::Input>,
    merged: Vec<S::Input>,
    last_seq: Option<u64>,
    seq: u64,
    out: Buf,
    rbuf: Vec<u8>,
    drops: Drops,
}

impl<S: Sim> Spectator<S>
where
    S::Input: ReplayInput,
{
    /// A spectator in `slot` (4, 5, ...) holding `sim`, the confirmed state
    /// at `tick`, of a `players`-player session (the sim's
    /// [`Sim::players`]) with key `key` (the players' key: the host's
    /// datagrams are authenticated with it).
    #[must_use]
    pub fn new(sim: S, tick: u64, slot: u8, players: u8, key: &SessionKey) -> Spectator<S> {
        let n = usize::from(players.clamp(2, 4));
        Spectator {
            sim,
            tick,
            known: tick,
            slot: slot.max(FIRST_SPECTATOR_SLOT),
            host: 0,
            epoch: None,
            dropped: None,
            silent: 0,
            auth: Auth::new(key),
            players: players.clamp(2, 4),
            buf: vec![S::Input::default(); SPECTATOR_BUFFER * n],
            merged: vec![S::Input::default(); n],
            last_seq: None,
            seq: 0,
            out: Buf::new(),
            rbuf: vec![0; RECV_BUFFER],
            drops: Drops::default(),
        }
    }

    /// Follows player `host` instead of player 0, as a process of `epoch`
    /// admitted by it whose datagrams go on numbering from `seq`, having
    /// last accepted the host's datagram `host_seq`
    /// ([`crate::Watcher`] makes one so).
    pub(crate) const fn watching(
        mut self,
        host: u8,
        epoch: u64,
        seq: u64,
        host_seq: Option<u64>,
    ) -> Spectator<S> {
        self.host = host;
        self.epoch = Some(epoch);
        self.seq = seq;
        self.last_seq = host_seq;
        self
    }

    /// The host's word that it dropped this spectator (too far behind, or
    /// silent past its timeout), once it arrived.
    #[must_use]
    pub const fn dropped(&self) -> Option<&WatchReplyMsg> {
        self.dropped.as_ref()
    }

    /// Calls to [`Spectator::tick_once`] since the last datagram from the
    /// host that was used.
    #[must_use]
    pub const fn silent_ticks(&self) -> u64 {
        self.silent
    }

    /// Its slot.
    #[must_use]
    pub const fn slot(&self) -> u8 {
        self.slot
    }

    /// The state.
    #[must_use]
    pub const fn sim(&self) -> &S {
        &self.sim
    }

    /// Ticks simulated (the state's tick).
    #[must_use]
    pub const fn tick(&self) -> u64 {
        self.tick
    }

    /// Dropped datagrams.
    #[must_use]
    pub const fn drops(&self) -> &Drops {
        &self.drops
    }

    /// Reads the host's datagrams, runs up to `max_steps` confirmed ticks
    /// (a spectator that is behind catches up at that rate) and acks.
    pub fn tick_once(&mut self, transport: &mut dyn Transport, max_steps: u64) -> u64 {
        self.silent = self.silent.saturating_add(1);
        let mut rbuf = core::mem::take(&mut self.rbuf);
        while let Some(d) = transport.recv(&mut rbuf) {
            let len = d.len.min(rbuf.len());
            self.handle(d.from, &rbuf[..len], d.len);
        }
        self.rbuf = rbuf;
        let n = usize::from(self.players);
        let mut ran = 0;
        while self.tick < self.known && ran < max_steps {
            let base = (self.tick % SPECTATOR_BUFFER as u64) as usize * n;
            for p in 0..n {
                self.merged[p].clone_from(&self.buf[base + p]);
            }
            self.sim.step(&self.merged);
            self.tick += 1;
            ran += 1;
        }
        self.seq += 1;
        let env = Envelope {
            session: self.auth.session_id(),
            sender: self.slot,
            seq: self.seq,
        };
        write_envelope(&mut self.out, KIND_SPECTATOR_ACK, &env);
        self.out.varint(self.known);
        if self.out.seal(&self.auth) {
            transport.send(self.host, self.out.bytes());
        }
        ran
    }

    fn handle(&mut self, from: Option<u8>, bytes: &[u8], full_len: usize) {
        if full_len > bytes.len() {
            self.drops.oversized += 1;
            return;
        }
        let decoded = decode(bytes, &self.auth, |r: &mut Reader<'_>| {
            S::Input::decode(r).is_ok()
        });
        let (env, body) = match decoded {
            Ok(x) => x,
            Err(e) => return self.drops.count(&e),
        };
        if from != Some(self.host) || env.sender != self.host {
            self.drops.unknown_peer += 1;
            return;
        }
        if self.last_seq.is_some_and(|l| env.seq <= l) {
            self.drops.stale += 1;
            return;
        }
        if env.seq > self.last_seq.unwrap_or(0).saturating_add(MAX_SEQ_JUMP) {
            self.drops.far_future += 1;
            return;
        }
        let m = match body {
            Body::Spectate(m) => m,
            Body::WatchReply(r)
                if Some(r.epoch) == self.epoch
                    && (r.code == WATCH_BEHIND || r.code == WATCH_SILENT) =>
            {
                self.last_seq = Some(env.seq);
                self.dropped = Some(r);
                return;
            }
            // The welcome and chunks that were on their way when it
            // finished loading.
            Body::WatchReply(WatchReplyMsg { epoch, .. }) | Body::Chunk(ChunkMsg { epoch, .. })
                if Some(epoch) == self.epoch =>
            {
                self.last_seq = Some(env.seq);
                self.silent = 0;
                return;
            }
            _ => {
                self.drops.unknown_peer += 1;
                return;
            }
        };
        if m.players != self.players || m.start > self.known {
            self.drops.far_future += 1;
            return;
        }
        self.last_seq = Some(env.seq);
        self.silent = 0;
        let n = usize::from(self.players);
        let mut r = Reader::new(m.inputs);
        for k in 0..u64::from(m.count) {
            let t = m.start + k;
            let room = t < self.tick + SPECTATOR_BUFFER as u64;
            let base = (t % SPECTATOR_BUFFER as u64) as usize * n;
            for p in 0..n {
                let Ok(input) = S::Input::decode(&mut r) else {
                    return;
                };
                if t == self.known && room {
                    self.buf[base + p] = input;
                }
            }
            if t == self.known && room {
                self.known += 1;
            }
        }
    }
}
