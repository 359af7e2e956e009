//! Rejoin, the remaining players' side: a player process asks for its slot
//! back; the donor (the lowest remaining slot) picks the join tick, has
//! every other remaining player acknowledge it before filing its own input
//! for that tick, and sends the confirmed state at the join tick in chunks.
//! The rejoiner's side is [`crate::Rejoiner`]; docs/netplay.md, "Rejoining".

use alloc::sync::Arc;
use alloc::vec::Vec;

use tickwise::codec::put_varint;
use tickwise::{ReplayInput, Sim, SnapshotBytes, SnapshotError};

use super::{Peer, Session};
use crate::transport::Transport;
use crate::wire::{
    CHUNK_BYTES, KIND_CHUNK, KIND_NOTICE, KIND_NOTICE_ACK, KIND_REFUSE, write_envelope,
};

/// Chunks sent to a rejoiner per tick.
pub(crate) const CHUNKS_PER_TICK: u64 = 8;
/// Chunks past the rejoiner's ack that may be in flight.
const CHUNK_WINDOW: u64 = 64;
/// Local ticks before an unacknowledged chunk is sent again.
const RESEND_TICKS: u64 = 30;
/// Ticks a refusal is repeated.
const REFUSE_TICKS: u32 = 30;

/// A rejoin this peer serves as donor.
#[derive(Clone, Debug)]
pub(crate) struct Serve {
    player: u8,
    epoch: u64,
    join: u64,
    /// Remaining players that must acknowledge the join tick.
    need: u8,
    acked: u8,
    /// The payload, once the state at `join` is confirmed.
    bytes: Vec<u8>,
    checksum: u64,
    ready: bool,
    /// The rejoiner holds every chunk below `next` and those in `have`.
    next: u64,
    have: u64,
    /// By chunk index modulo the window: (index, local tick last sent).
    sent: [(u64, u64); CHUNK_WINDOW as usize],
    /// A refusal to send (reason, bytes, limit) and how many more times.
    refused: Option<(u8, u64, u64)>,
    refuse_left: u32,
}

impl Serve {
    /// A snapshot for spectator `slot` (a process of epoch `epoch`): the
    /// confirmed state at `tick`, encoded, with its checksum.
    pub(crate) const fn spectator(
        slot: u8,
        epoch: u64,
        tick: u64,
        bytes: Vec<u8>,
        checksum: u64,
    ) -> Serve {
        Serve {
            player: slot,
            epoch,
            join: tick,
            need: 0,
            acked: 0,
            bytes,
            checksum,
            ready: true,
            next: 0,
            have: 0,
            sent: [(u64::MAX, 0); CHUNK_WINDOW as usize],
            refused: None,
            refuse_left: 0,
        }
    }

    /// The epoch of the process it is for.
    pub(crate) const fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The snapshot's tick.
    pub(crate) const fn tick(&self) -> u64 {
        self.join
    }

    /// Chunks in the snapshot.
    pub(crate) fn chunks(&self) -> u64 {
        (self.bytes.len() as u64).div_ceil(CHUNK_BYTES as u64)
    }

    /// The receiver's chunk ack.
    pub(crate) fn ack(&mut self, next: u64, have: u64) {
        if next >= self.next {
            self.next = next;
            self.have = have;
        }
    }
}

/// The rejoin payload: `players u8`, `n u8`, `n × (player u8, absent-from
/// varint)` for the players who left and did not come back, then the sim's
/// snapshot ([`tickwise::write_snapshot`]: version, state).
pub(crate) fn encode_payload(out: &mut Vec<u8>, players: u8, absent: &[(u8, u64)]) {
    out.clear();
    out.push(players);
    #[allow(clippy::cast_possible_truncation, reason = "at most 4 players")]
    out.push(absent.len() as u8);
    for &(p, from) in absent {
        out.push(p);
        put_varint(out, from);
    }
}

fn write_sim<S: SnapshotBytes>(sim: &S, out: &mut Vec<u8>) {
    out.extend_from_slice(&S::SNAPSHOT_VERSION.to_le_bytes());
    sim.write_state(out);
}

type WriteFn<S> = dyn Fn(&S, &mut Vec<u8>) + Send + Sync;
type ReadFn<S> = dyn Fn(&mut S, &[u8]) -> Result<(), SnapshotError> + Send + Sync;

/// A sim's snapshot encoding as two shared functions
/// ([`SnapshotCodec::new`] for a [`SnapshotBytes`] sim), so that sessions
/// and runs generic over any sim can take rejoining players when the sim
/// has one (a catalog decides at run time).
pub struct SnapshotCodec<S> {
    write: Arc<WriteFn<S>>,
    read: Arc<ReadFn<S>>,
}

impl<S> Clone for SnapshotCodec<S> {
    fn clone(&self) -> SnapshotCodec<S> {
        SnapshotCodec {
            write: Arc::clone(&self.write),
            read: Arc::clone(&self.read),
        }
    }
}

impl<S> core::fmt::Debug for SnapshotCodec<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SnapshotCodec")
    }
}

impl<S: SnapshotBytes + 'static> SnapshotCodec<S> {
    /// The sim's own encoding ([`tickwise::write_snapshot`],
    /// [`tickwise::read_snapshot`]).
    #[must_use]
    pub fn new() -> SnapshotCodec<S> {
        SnapshotCodec::from_fns(write_sim::<S>, tickwise::read_snapshot::<S>)
    }
}

impl<S: SnapshotBytes + 'static> Default for SnapshotCodec<S> {
    fn default() -> SnapshotCodec<S> {
        SnapshotCodec::new()
    }
}

impl<S> SnapshotCodec<S> {
    /// An encoding from two functions: `write` appends the state, `read`
    /// reads it back into a sim built from the same config.
    #[must_use]
    pub fn from_fns(
        write: impl Fn(&S, &mut Vec<u8>) + Send + Sync + 'static,
        read: impl Fn(&mut S, &[u8]) -> Result<(), SnapshotError> + Send + Sync + 'static,
    ) -> SnapshotCodec<S> {
        SnapshotCodec {
            write: Arc::new(write),
            read: Arc::new(read),
        }
    }

    /// Appends `sim`'s state to `out`.
    pub fn write(&self, sim: &S, out: &mut Vec<u8>) {
        (self.write)(sim, out);
    }

    /// Reads bytes [`SnapshotCodec::write`] wrote into `sim`.
    ///
    /// # Errors
    ///
    /// The sim's [`SnapshotError`].
    pub fn read(&self, sim: &mut S, bytes: &[u8]) -> Result<(), SnapshotError> {
        (self.read)(sim, bytes)
    }
}

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    /// Lets this session serve players who rejoin with `codec`, sending
    /// snapshots of at most `max_bytes` bytes (a larger one is refused with
    /// its size and the limit). Without it, a rejoin request is refused:
    /// the sim has no snapshot encoding.
    pub fn enable_rejoin(&mut self, codec: SnapshotCodec<S>, max_bytes: usize) {
        self.snap_encode = Some((codec, max_bytes));
    }

    /// Makes this session the one of a player that rejoined: the players
    /// in `absent` (slot, tick) left for good before the join tick, and
    /// this peer's datagrams go on numbering from `seq`.
    pub(crate) fn adopt_rejoin(&mut self, absent: &[(u8, u64)], seq: u64) {
        for &(p, from) in absent {
            if let Some(slot) = self.away.get_mut(usize::from(p)) {
                *slot = Some(super::Away {
                    end: from,
                    heard: u8::MAX,
                    done: u8::MAX,
                    held: [from; crate::config::MAX_PLAYERS as usize],
                    settled: true,
                    reply: 0,
                    replies: [0; crate::config::MAX_PLAYERS as usize],
                });
            }
        }
        self.seq = seq;
    }

    /// The ticks `[from, until)` player `p` was away before it rejoined.
    #[must_use]
    pub fn rejoined(&self, p: u8) -> Option<(u64, u64)> {
        self.gap.get(usize::from(p)).copied().flatten()
    }

    /// Whether this peer is the donor for `r`'s rejoin: the lowest slot
    /// among the players here, `r` excepted.
    fn is_donor(&self, r: usize) -> bool {
        (0..usize::from(self.cfg.players))
            .find(|&q| q != r && self.away[q].is_none())
            .is_some_and(|q| q == usize::from(self.cfg.local))
    }

    /// The players who left and are absent for good, with the tick from
    /// which they are.
    fn absent_table(&self) -> Vec<(u8, u64)> {
        (0..self.cfg.players)
            .filter_map(|p| self.absent_from(usize::from(p)).map(|e| (p, e)))
            .collect()
    }

    pub(super) fn receive_rejoin(&mut self, r: usize, epoch: u64) {
        let now = self.stats.local_ticks;
        if self.rejoin_epoch[r] == Some(epoch) {
            // The process taking the slot back: alive while it loads.
            self.peers[r].last_heard = now;
            return;
        }
        let settled = self.away[r].is_some_and(|a| a.settled);
        let busy = self.serving.is_some() || self.away.iter().flatten().any(|a| !a.settled);
        if !settled || busy || !self.is_donor(r) {
            return;
        }
        #[allow(clippy::cast_possible_truncation, reason = "player slots are below 4")]
        let player = r as u8;
        let mut serve = Serve {
            player,
            epoch,
            join: 0,
            need: 0,
            acked: 0,
            bytes: Vec::new(),
            checksum: 0,
            ready: false,
            next: 0,
            have: 0,
            sent: [(u64::MAX, 0); CHUNK_WINDOW as usize],
            refused: None,
            refuse_left: REFUSE_TICKS,
        };
        let Some((codec, limit)) = self.snap_encode.clone() else {
            serve.refused = Some((1, 0, 0));
            self.serving = Some(serve);
            return;
        };
        // The size now stands for the size at the join tick (a few ticks
        // later): a sim over the limit is refused before anyone waits.
        if let Some(state) = self.state(self.probed) {
            let mut probe = Vec::new();
            codec.write(state, &mut probe);
            if probe.len() > limit {
                serve.refused = Some((2, probe.len() as u64, limit as u64));
                self.serving = Some(serve);
                return;
            }
        }
        let me = usize::from(self.cfg.local);
        let join = self.known[me];
        if !self.apply_rejoin(r, epoch, join) {
            return;
        }
        serve.join = join;
        serve.need = self.remaining_except(r);
        self.gate = Some(join);
        self.serving = Some(serve);
        self.snapshot_if_joining(self.probed);
    }

    /// Player `r` plays again from `join`: absent from its agreed last tick
    /// up to `join`, its inputs from `join` on.
    fn apply_rejoin(&mut self, r: usize, epoch: u64, join: u64) -> bool {
        let Some(a) = self.away[r].filter(|a| a.settled) else {
            return false;
        };
        if join < self.probed {
            return false;
        }
        let now = self.stats.local_ticks;
        self.gap[r] = Some((a.end.min(join), join));
        self.away[r] = None;
        self.known[r] = join;
        self.rejoin_epoch[r] = Some(epoch);
        self.peers[r] = Peer {
            acked: join,
            last_heard: now,
            remote_tick: join,
            checks_they_have: join,
            checks_we_have: join,
            last_compared: join,
            ..Peer::default()
        };
        if join < self.current {
            // Ticks from `join` ran with the absent input: run them again
            // with the rejoiner's predicted input.
            self.first_mis = Some(self.first_mis.map_or(join, |f| f.min(join)));
        }
        true
    }

    /// Takes a rejoin notice from `donor`; whether it was taken (applied
    /// now or before). A notice naming the receiver, the donor or a slot
    /// past the players counts as `malformed`, one that cannot be applied
    /// (the player is not away and settled, or it joins before the
    /// confirmed tick) as `far_future`; the donor resends a notice until it
    /// is acknowledged.
    pub(super) fn receive_notice(
        &mut self,
        donor: usize,
        player: u8,
        epoch: u64,
        join: u64,
    ) -> bool {
        let r = usize::from(player);
        if r >= usize::from(self.cfg.players) || r == usize::from(self.cfg.local) || r == donor {
            self.stats.drops.malformed += 1;
            return false;
        }
        let applied = self.rejoin_epoch[r] == Some(epoch)
            && self.gap[r].is_some_and(|(_, until)| until == join);
        if applied || self.apply_rejoin(r, epoch, join) {
            self.notice_acks[donor] = Some((player, join));
            true
        } else {
            self.stats.drops.far_future += 1;
            false
        }
    }

    /// Takes peer `q`'s acknowledgement of the rejoin this session serves;
    /// whether it was one (no such rejoin here counts as `far_future`).
    pub(super) fn receive_notice_ack(&mut self, q: usize, player: u8, join: u64) -> bool {
        if let Some(sv) = self.serving.as_mut()
            && sv.player == player
            && sv.join == join
        {
            sv.acked |= 1 << q;
            return true;
        }
        self.stats.drops.far_future += 1;
        false
    }

    /// A rejoiner sends inputs once it plays: its snapshot arrived whole.
    pub(super) fn rejoiner_playing(&mut self, r: usize) {
        if let Some(sv) = self.serving.as_mut()
            && usize::from(sv.player) == r
            && sv.ready
        {
            sv.next = u64::MAX;
        }
    }

    /// Takes the rejoiner `r`'s acknowledgement of snapshot chunks;
    /// whether this session serves `r`'s rejoin of that epoch (an older
    /// acknowledgement, overtaken, is one too, and changes nothing; no such
    /// rejoin here counts as `far_future`).
    pub(super) fn receive_chunk_ack(&mut self, r: usize, epoch: u64, next: u64, have: u64) -> bool {
        let Some(sv) = self
            .serving
            .as_mut()
            .filter(|sv| usize::from(sv.player) == r && sv.epoch == epoch)
        else {
            self.stats.drops.far_future += 1;
            return false;
        };
        if next >= sv.next {
            sv.next = next;
            sv.have = have;
        }
        true
    }

    /// Encodes the confirmed state `s` when it is the join tick of the
    /// rejoin being served.
    pub(super) fn snapshot_if_joining(&mut self, s: u64) {
        let Some((codec, _)) = self.snap_encode.clone() else {
            return;
        };
        let due = self
            .serving
            .as_ref()
            .is_some_and(|sv| sv.join == s && !sv.ready && sv.refused.is_none());
        if !due {
            return;
        }
        let absent = self.absent_table();
        let Some(state) = self.state(s) else {
            return;
        };
        let checksum = state.checksum();
        let mut bytes = Vec::new();
        encode_payload(&mut bytes, self.cfg.players, &absent);
        codec.write(state, &mut bytes);
        if let Some(sv) = self.serving.as_mut() {
            sv.bytes = bytes;
            sv.checksum = checksum;
            sv.ready = true;
        }
    }

    /// Sends what rejoins need this tick: acks of notices, and as donor the
    /// notices, the chunks, or a refusal.
    pub(super) fn send_rejoin(&mut self, transport: &mut dyn Transport) {
        for d in 0..self.cfg.players {
            if let Some((player, join)) = self.notice_acks[usize::from(d)].take() {
                let env = self.env();
                write_envelope(&mut self.out, KIND_NOTICE_ACK, &env);
                self.out.push(player);
                self.out.varint(join);
                self.seal_send(d, transport);
            }
        }
        let Some(mut sv) = self.serving.take() else {
            return;
        };
        let r = usize::from(sv.player);
        if let Some((reason, bytes, limit)) = sv.refused {
            let env = self.env();
            write_envelope(&mut self.out, KIND_REFUSE, &env);
            self.out.extend(&sv.epoch.to_le_bytes());
            self.out.push(reason);
            self.out.varint(bytes);
            self.out.varint(limit);
            self.seal_send(sv.player, transport);
            sv.refuse_left = sv.refuse_left.saturating_sub(1);
            if sv.refuse_left > 0 {
                self.serving = Some(sv);
            }
            return;
        }
        if self.away[r].is_some() {
            // Silent again before it finished loading: it left again.
            self.gate = None;
            return;
        }
        sv.need &= self.remaining_except(r);
        if sv.need & !sv.acked == 0 {
            self.gate = None;
        }
        for q in 0..self.cfg.players {
            if sv.need & !sv.acked & (1 << q) != 0 {
                let env = self.env();
                write_envelope(&mut self.out, KIND_NOTICE, &env);
                self.out.push(sv.player);
                self.out.extend(&sv.epoch.to_le_bytes());
                self.out.varint(sv.join);
                self.seal_send(q, transport);
            }
        }
        let chunks = (sv.bytes.len() as u64).div_ceil(CHUNK_BYTES as u64);
        if sv.ready && sv.next >= chunks && self.gate.is_none() {
            return; // done: the rejoiner holds it all, everyone knows
        }
        if sv.ready {
            self.send_chunks(&mut sv, chunks, transport);
        }
        self.serving = Some(sv);
    }

    pub(super) fn send_chunks(
        &mut self,
        sv: &mut Serve,
        chunks: u64,
        transport: &mut dyn Transport,
    ) {
        let now = self.stats.local_ticks;
        let mut sent = 0;
        let end = chunks.min(sv.next.saturating_add(CHUNK_WINDOW));
        for i in sv.next..end {
            if sent == CHUNKS_PER_TICK {
                break;
            }
            let bit = i - sv.next;
            if (1..=64).contains(&bit) && sv.have & (1 << (bit - 1)) != 0 {
                continue;
            }
            let slot = &mut sv.sent[(i % CHUNK_WINDOW) as usize];
            if slot.0 == i && now.saturating_sub(slot.1) < RESEND_TICKS {
                continue;
            }
            *slot = (i, now);
            let lo = usize::try_from(i)
                .unwrap_or(usize::MAX)
                .saturating_mul(CHUNK_BYTES);
            let data = sv
                .bytes
                .get(lo..sv.bytes.len().min(lo.saturating_add(CHUNK_BYTES)))
                .unwrap_or(&[]);
            let env = self.env();
            write_envelope(&mut self.out, KIND_CHUNK, &env);
            self.out.extend(&sv.epoch.to_le_bytes());
            self.out.varint(sv.join);
            self.out.varint(sv.bytes.len() as u64);
            self.out.extend(&sv.checksum.to_le_bytes());
            self.out.varint(i);
            self.out.extend(data);
            self.seal_send(sv.player, transport);
            sent += 1;
        }
    }

    pub(super) fn seal_send(&mut self, to: u8, transport: &mut dyn Transport) {
        if self.out.seal(&self.auth) {
            transport.send(to, self.out.bytes());
            self.stats.sent += 1;
        }
    }
}
