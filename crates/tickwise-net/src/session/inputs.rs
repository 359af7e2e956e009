//! The input ring: every player's input per tick, predicted or confirmed,
//! the local input filed `input_delay` ticks ahead, and the inputs
//! exchanged with the other players (sent until acknowledged, received
//! after a plausibility check).

use alloc::vec::Vec;

use tickwise::codec::Reader;
use tickwise::{ReplayInput, Sim};

use super::Session;
use crate::config::{CHECK_HISTORY, INPUT_RING};
use crate::transport::Transport;
use crate::wire::{
    Buf, InputsMsg, KIND_INPUTS, MAX_CHECKS_PER_PACKET, MAX_INPUTS_PER_PACKET, MAX_UNSEALED,
    write_envelope,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SlotState {
    Empty,
    Predicted,
    Confirmed,
}

#[derive(Clone, Debug)]
pub(super) struct InputSlot<I> {
    pub(super) tick: u64,
    pub(super) state: SlotState,
    pub(super) input: I,
}

pub(super) fn find<I>(
    inputs: &[Vec<InputSlot<I>>],
    player: usize,
    t: u64,
) -> Option<&InputSlot<I>> {
    inputs
        .get(player)
        .and_then(|r| r.get(ring(t, INPUT_RING)))
        .filter(|s| s.tick == t && s.state != SlotState::Empty)
}

#[allow(
    clippy::cast_possible_truncation,
    reason = "ring indices are taken modulo small sizes"
)]
pub(super) const fn ring(t: u64, n: usize) -> usize {
    (t % n as u64) as usize
}

/// Which of a player's inputs [`pack_inputs`] writes into a datagram.
#[derive(Clone, Copy, Debug)]
pub(super) struct InputRange {
    /// The player (slot) whose inputs are written.
    pub(super) player: usize,
    /// The first tick written.
    pub(super) start: u64,
    /// The tick to stop before.
    pub(super) end: u64,
    /// The datagram's byte budget (unsealed): an input that would end past
    /// it is not written.
    pub(super) budget: usize,
    /// Write only confirmed inputs: stop at the first predicted one (a
    /// relayed departure must carry only what is final).
    pub(super) confirmed_only: bool,
}

/// Writes a count byte and then the inputs of `range.player` from
/// `range.start` on, tick by tick, encoded with [`ReplayInput::encode`]:
/// at most [`MAX_INPUTS_PER_PACKET`], stopping before `range.end`, at the
/// first tick this peer does not hold (or, with `confirmed_only`, does not
/// hold confirmed) and at the first input that would not fit
/// `range.budget`. Returns how many it wrote (the count byte's value). The
/// one loop behind both the inputs datagram and the departure relay.
pub(super) fn pack_inputs<I: ReplayInput>(
    out: &mut Buf,
    enc: &mut Vec<u8>,
    inputs: &[Vec<InputSlot<I>>],
    range: InputRange,
) -> u8 {
    let count_at = out.len();
    out.push(0);
    let mut count = 0u8;
    let mut t = range.start;
    while t < range.end && usize::from(count) < MAX_INPUTS_PER_PACKET {
        let Some(slot) = find(inputs, range.player, t)
            .filter(|s| !range.confirmed_only || s.state == SlotState::Confirmed)
        else {
            break;
        };
        enc.clear();
        slot.input.encode(enc);
        if out.len() + enc.len() > range.budget {
            break;
        }
        out.extend(enc);
        count += 1;
        t += 1;
    }
    out.set(count_at, count);
    count
}

impl<S: Sim + Clone> Session<S>
where
    S::Input: ReplayInput,
{
    /// The oldest local input still needed: not yet confirmed, or not yet
    /// acknowledged by a peer.
    pub(super) fn oldest_local(&self) -> u64 {
        let mut o = self.probed;
        for p in 0..self.cfg.players {
            if p != self.cfg.local && self.away[usize::from(p)].is_none() {
                o = o.min(self.peers[usize::from(p)].acked);
            }
        }
        o
    }

    pub(super) fn set_input(&mut self, player: usize, t: u64, input: S::Input, state: SlotState) {
        if let Some(slot) = self
            .inputs
            .get_mut(player)
            .and_then(|r| r.get_mut(ring(t, INPUT_RING)))
        {
            slot.tick = t;
            slot.state = state;
            slot.input = input;
        }
    }

    pub(super) fn slot(&self, player: usize, t: u64) -> Option<&InputSlot<S::Input>> {
        find(&self.inputs, player, t)
    }

    pub(super) fn min_known(&self) -> u64 {
        self.known[..usize::from(self.cfg.players)]
            .iter()
            .zip(&self.away)
            .filter(|(_, a)| !a.is_some_and(|a| a.settled))
            .map(|(k, _)| *k)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// From this tick on, player `p`'s input is the absent input: it left
    /// and the remaining players agreed on its last tick.
    pub(super) fn absent_from(&self, p: usize) -> Option<u64> {
        self.away
            .get(p)
            .copied()
            .flatten()
            .filter(|a| a.settled)
            .map(|a| a.end)
    }

    /// Whether player `p`'s input at tick `t` is the absent input: it left
    /// before `t` (agreed), or `t` is in the ticks it was away before it
    /// rejoined.
    pub(super) fn absent(&self, p: usize, t: u64) -> bool {
        self.absent_from(p).is_some_and(|e| t >= e)
            || self
                .gap
                .get(p)
                .copied()
                .flatten()
                .is_some_and(|(from, until)| from <= t && t < until)
    }

    pub(super) fn add_local(&mut self, input: &S::Input) {
        let me = usize::from(self.cfg.local);
        let target = self.current + u64::from(self.cfg.input_delay);
        let limit = self.oldest_local() + INPUT_RING as u64;
        while self.known[me] < target && self.known[me] < limit {
            let t = self.known[me];
            self.set_input(me, t, self.local_last.clone(), SlotState::Confirmed);
            self.known[me] += 1;
        }
        if self.known[me] == target && target < limit {
            self.set_input(me, target, input.clone(), SlotState::Confirmed);
            self.local_last.clone_from(input);
            self.known[me] += 1;
        } else if self.known[me] > target {
            self.stats.inputs_dropped += 1;
        }
    }

    /// Fills `self.merged` for tick `t`: known inputs, or the last known one.
    pub(super) fn gather(&mut self, t: u64) {
        for p in 0..usize::from(self.cfg.players) {
            if self.absent(p, t) {
                self.merged[p] = S::Input::default();
                continue;
            }
            let known = self.known[p];
            if t < known {
                if let Some(s) = self.slot(p, t) {
                    let input = s.input.clone();
                    self.merged[p] = input;
                }
            } else {
                let last = if known == 0 {
                    None
                } else {
                    self.slot(p, known - 1).map(|s| s.input.clone())
                };
                let predicted = last.unwrap_or_default();
                self.set_input(p, t, predicted.clone(), SlotState::Predicted);
                self.merged[p] = predicted;
            }
        }
    }

    /// Takes peer `p`'s inputs message; whether it was taken. One that
    /// claims more than the sender can know (an ack of inputs this session
    /// never sent, a start past the input ring, a pong from the future) is
    /// counted as `far_future` and changes nothing.
    pub(super) fn receive_inputs(&mut self, p: usize, m: &InputsMsg<'_>) -> bool {
        if !self.inputs_plausible(p, m) {
            self.stats.drops.far_future += 1;
            return false;
        }
        self.take_inputs(p, m);
        self.rejoiner_playing(p);
        true
    }

    fn inputs_plausible(&self, p: usize, m: &InputsMsg<'_>) -> bool {
        let me = usize::from(self.cfg.local);
        // A rejoined player holds everything before its join tick.
        let joined = self.gap[p].map_or(0, |(_, until)| until);
        m.ack <= self.known[me].max(joined)
            && m.start <= self.known[p].saturating_add(INPUT_RING as u64)
            && m.pong <= self.stats.local_ticks
    }

    fn take_inputs(&mut self, p: usize, m: &InputsMsg<'_>) {
        let now = self.stats.local_ticks;
        {
            let peer = &mut self.peers[p];
            peer.acked = peer.acked.max(m.ack);
            // The newest ping, not the largest ever seen: datagrams are
            // taken in sequence order, so for a working peer the two are
            // the same, and a wrong one is echoed once, not for good.
            peer.ping_echo = m.ping;
            if m.pong > 0 {
                peer.rtt = now - m.pong;
            }
            peer.remote_tick = m.sim_tick;
            peer.checks_they_have = peer.checks_they_have.max(m.checks_upto);
            let est = m.sim_tick.saturating_add(peer.rtt / 2);
            let adv = i64::try_from(self.current)
                .unwrap_or(i64::MAX)
                .saturating_sub(i64::try_from(est).unwrap_or(i64::MAX))
                .clamp(-1000, 1000);
            peer.adv16 = (peer.adv16 * 15 + adv * 16) / 16;
        }
        let mut r = Reader::new(m.inputs);
        for k in 0..u64::from(m.count) {
            let Ok(input) = S::Input::decode(&mut r) else {
                return;
            };
            let t = m.start + k;
            if t != self.known[p] {
                continue;
            }
            if t >= self.probed + INPUT_RING as u64 {
                // Room frees up as ticks are confirmed; the sender resends.
                break;
            }
            if let Some(slot) = self
                .inputs
                .get(p)
                .and_then(|ring_| ring_.get(ring(t, INPUT_RING)))
                && slot.tick == t
                && slot.state == SlotState::Predicted
                && slot.input != input
            {
                self.stats.mispredictions += 1;
                self.first_mis = Some(self.first_mis.map_or(t, |f| f.min(t)));
            }
            self.set_input(p, t, input, SlotState::Confirmed);
            self.known[p] += 1;
        }
        for (t, sum) in m.checks.iter() {
            // A peer has confirmed tick t only if it holds every one of our
            // inputs below t, which is what its ack says: a checksum of a
            // later tick is a claim it cannot make, never compared.
            if t > m.ack {
                self.stats.drops.far_future += 1;
                continue;
            }
            self.receive_check(p, t, sum);
        }
    }

    pub(super) fn send_inputs(&mut self, p: u8, transport: &mut dyn Transport) {
        let env = self.env();
        let me = usize::from(self.cfg.local);
        let pi = usize::from(p);
        let (start, ping_echo, checks_we_have, have) = {
            let peer = &self.peers[pi];
            (
                peer.acked,
                peer.ping_echo,
                peer.checks_we_have,
                peer.checks_they_have,
            )
        };
        let upto = self.known[me].min(self.gate.unwrap_or(u64::MAX));
        let Self {
            out,
            inputs,
            enc,
            known,
            hist_tick,
            hist_sum,
            ..
        } = self;
        write_envelope(out, KIND_INPUTS, &env);
        out.varint(known[pi]);
        out.varint(self.stats.local_ticks);
        out.varint(ping_echo);
        out.varint(self.current);
        out.varint(checks_we_have);
        out.varint(start);
        // Inputs, as many as fit while leaving room for the checks.
        pack_inputs(
            out,
            enc,
            inputs,
            InputRange {
                player: me,
                start,
                end: upto,
                budget: MAX_UNSEALED - 1 - MAX_CHECKS_PER_PACKET * 18,
                confirmed_only: false,
            },
        );
        // Checksums the peer does not have yet, oldest first.
        let k = self.cfg.check_every;
        let lo = self
            .probed
            .saturating_sub((CHECK_HISTORY as u64).saturating_sub(1).saturating_mul(k));
        // The newest checks the peer has not acknowledged: new ones go out
        // at once and each rides in several consecutive datagrams, so a
        // lost datagram costs nothing and a slow ack never holds them back.
        let recent = (self.probed / k)
            .saturating_sub(MAX_CHECKS_PER_PACKET as u64 - 1)
            .saturating_mul(k);
        // `have` is the peer's word (any u64): saturate, so that a claim
        // past every check sent means none is sent, never an overflow.
        let mut s = (have / k)
            .saturating_add(1)
            .saturating_mul(k)
            .max(lo)
            .max(recent)
            .div_ceil(k)
            .saturating_mul(k);
        if s == 0 {
            s = k;
        }
        let n_at = out.len();
        out.push(0);
        let mut n = 0u8;
        while s <= self.probed && usize::from(n) < MAX_CHECKS_PER_PACKET {
            let i = ring(s / k, CHECK_HISTORY);
            if hist_tick[i] == s {
                out.varint(s);
                out.extend(&hist_sum[i].to_le_bytes());
                n += 1;
            }
            s += k;
        }
        out.set(n_at, n);
        if out.seal(&self.auth) {
            transport.send(p, out.bytes());
            self.stats.sent += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// Player 0 holds confirmed inputs 1, −1, 0, 100, 2 at ticks 0..5, a
    /// predicted 3 at tick 5 and nothing from tick 6; player 1 holds none.
    fn ring_of_inputs() -> Vec<Vec<InputSlot<i32>>> {
        let empty = InputSlot {
            tick: 0,
            state: SlotState::Empty,
            input: 0,
        };
        let mut inputs = vec![vec![empty; INPUT_RING]; 2];
        for (t, (input, state)) in [
            (1, SlotState::Confirmed),
            (-1, SlotState::Confirmed),
            (0, SlotState::Confirmed),
            (100, SlotState::Confirmed),
            (2, SlotState::Confirmed),
            (3, SlotState::Predicted),
        ]
        .into_iter()
        .enumerate()
        {
            inputs[0][t] = InputSlot {
                tick: t as u64,
                state,
                input,
            };
        }
        inputs
    }

    fn pack(range: InputRange) -> (u8, Vec<u8>) {
        let mut out = Buf::new();
        let mut enc = Vec::new();
        let n = pack_inputs(&mut out, &mut enc, &ring_of_inputs(), range);
        (n, out.bytes().to_vec())
    }

    const ALL: InputRange = InputRange {
        player: 0,
        start: 0,
        end: 100,
        budget: MAX_UNSEALED,
        confirmed_only: false,
    };

    #[test]
    fn packs_a_count_then_zigzag_inputs_until_the_first_gap() {
        // Zigzag varints by hand: 1 → 02, −1 → 01, 0 → 00, 100 → 200 = c8 01,
        // 2 → 04, 3 → 06; tick 6 is not held, so the run stops there.
        assert_eq!(
            pack(ALL),
            (6, vec![6, 0x02, 0x01, 0x00, 0xc8, 0x01, 0x04, 0x06])
        );
        // A range ends before `end`; a player with nothing held sends none.
        assert_eq!(
            pack(InputRange {
                start: 1,
                end: 3,
                ..ALL
            }),
            (2, vec![2, 0x01, 0x00])
        );
        assert_eq!(pack(InputRange { player: 1, ..ALL }), (0, vec![0]));
    }

    #[test]
    fn confirmed_only_stops_at_the_first_prediction() {
        assert_eq!(
            pack(InputRange {
                confirmed_only: true,
                ..ALL
            }),
            (5, vec![5, 0x02, 0x01, 0x00, 0xc8, 0x01, 0x04])
        );
    }

    #[test]
    fn an_input_that_would_pass_the_budget_is_not_written() {
        // Count byte + three one-byte inputs = 4 bytes; tick 3's two bytes
        // would end at 6.
        for budget in [4, 5] {
            assert_eq!(
                pack(InputRange { budget, ..ALL }),
                (3, vec![3, 0x02, 0x01, 0x00]),
                "{budget}"
            );
        }
        assert_eq!(pack(InputRange { budget: 6, ..ALL }).0, 4);
    }

    #[test]
    fn at_most_a_packet_of_inputs() {
        let mut inputs = ring_of_inputs();
        for (t, slot) in inputs[1].iter_mut().enumerate() {
            *slot = InputSlot {
                tick: t as u64,
                state: SlotState::Confirmed,
                input: 0,
            };
        }
        let mut out = Buf::new();
        let n = pack_inputs(
            &mut out,
            &mut Vec::new(),
            &inputs,
            InputRange { player: 1, ..ALL },
        );
        assert_eq!(usize::from(n), MAX_INPUTS_PER_PACKET);
        assert_eq!(out.len(), 1 + MAX_INPUTS_PER_PACKET);
    }
}
