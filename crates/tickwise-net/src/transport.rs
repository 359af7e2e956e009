//! Transports: how datagrams move between sessions.
//!
//! The session core never touches a socket or a clock. It is handed a
//! [`Transport`] on every tick and asks it to send and receive whole
//! datagrams addressed by *slot* (players `0..=3`, spectators from 4). Two
//! transports ship: [`SimNetwork`], a seeded in-memory network with
//! latency, jitter, loss, duplication, reordering and a bandwidth limit, and
//! (with the `std` feature) [`crate::UdpTransport`] on real sockets.

use alloc::collections::{BinaryHeap, VecDeque};
use alloc::vec::Vec;
use core::cmp::Reverse;

use tickwise::{Nanos, Pcg32, Timestamp};

use crate::wire::MAX_PACKET;

/// The most slots a network connects (4 players and up to 8 spectators).
pub const MAX_SLOTS: usize = 12;
/// The receive buffer a session hands to [`Transport::recv`]: larger than
/// [`MAX_PACKET`] so an oversized datagram is seen (and counted) as such.
pub const RECV_BUFFER: usize = 1536;

/// One received datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// The sender's slot, or `None` when the transport does not know the
    /// source (an unknown UDP address).
    pub from: Option<u8>,
    /// Bytes written into the receive buffer.
    pub len: usize,
}

/// Moves datagrams for one session.
pub trait Transport {
    /// Sends `bytes` to slot `to`. Delivery is not guaranteed.
    fn send(&mut self, to: u8, bytes: &[u8]);
    /// The next received datagram, copied into `buf`, or `None` when there is
    /// none right now. A datagram longer than `buf` is cut to `buf.len()`
    /// and reported with its full length.
    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram>;
    /// Binds the source of the last datagram [`Transport::recv`] returned
    /// with `from: None` to spectator slot `slot` (replacing the address
    /// the slot had), so that a spectator process the session admitted
    /// (docs/netplay.md, "Spectators over UDP") is sent to and heard from
    /// by slot. Returns whether it did; a transport whose slots are fixed
    /// (the default) never does. Player slots are never rebound.
    fn admit(&mut self, slot: u8) -> bool {
        let _ = slot;
        false
    }
    /// Sends `bytes` to the source of the last datagram [`Transport::recv`]
    /// returned with `from: None` (a refusal to a spectator that has no
    /// slot); the default sends nothing.
    fn reply(&mut self, bytes: &[u8]) {
        let _ = bytes;
    }
}

/// A borrowed transport is a transport (so [`crate::NetGame`] can own its
/// transport or borrow one).
/// Reads every datagram waiting on `transport` into `buf` and hands each
/// one within [`MAX_PACKET`] to `handle`, stopping at its first error.
/// Returns how many were longer than [`MAX_PACKET`] (dropped unread, for the
/// caller to count) and the result. The loop of a process that is not a
/// session yet (a rejoiner, a spectator loading its snapshot).
pub(crate) fn drain<E>(
    transport: &mut dyn Transport,
    buf: &mut [u8],
    mut handle: impl FnMut(Option<u8>, &[u8]) -> Result<(), E>,
) -> (u64, Result<(), E>) {
    let mut oversized = 0;
    while let Some(d) = transport.recv(buf) {
        if d.len > MAX_PACKET {
            oversized += 1;
            continue;
        }
        let len = d.len.min(buf.len());
        if let Err(e) = handle(d.from, &buf[..len]) {
            return (oversized, Err(e));
        }
    }
    (oversized, Ok(()))
}

impl<T: Transport + ?Sized> Transport for &mut T {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        (**self).send(to, bytes);
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        (**self).recv(buf)
    }

    fn admit(&mut self, slot: u8) -> bool {
        (**self).admit(slot)
    }

    fn reply(&mut self, bytes: &[u8]) {
        (**self).reply(bytes);
    }
}

/// The faults of a [`SimNetwork`]. Probabilities are in parts per million
/// so that no float decides what is delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkConfig {
    /// One-way latency (half the round trip).
    pub latency: Nanos,
    /// Extra delay drawn uniformly from `0..=jitter` per datagram.
    pub jitter: Nanos,
    /// Chance a datagram is lost, ppm.
    pub loss_ppm: u32,
    /// Chance a datagram is delivered twice, ppm.
    pub dup_ppm: u32,
    /// Chance a datagram is held back by 1 to 3 extra latencies' worth of
    /// up to 50 ms, so that later ones overtake it, ppm.
    pub reorder_ppm: u32,
    /// Link capacity per direction in bytes per second (`None`: unlimited).
    /// A datagram waits for the link, so a saturated link adds delay.
    pub bandwidth: Option<u64>,
    /// Seed of the fault schedule.
    pub seed: u64,
}

impl NetworkConfig {
    /// A perfect network: no latency, no faults.
    pub const PERFECT: NetworkConfig = NetworkConfig {
        latency: Nanos::ZERO,
        jitter: Nanos::ZERO,
        loss_ppm: 0,
        dup_ppm: 0,
        reorder_ppm: 0,
        bandwidth: None,
        seed: 0,
    };
}

/// What a [`SimNetwork`] did, per sending slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Datagrams handed to the network.
    pub sent: u64,
    /// Bytes of those datagrams (payload only: the UDP/IP headers a real
    /// network adds, 28 bytes a datagram over IPv4, are not counted).
    pub bytes: u64,
    /// Datagrams the network lost.
    pub lost: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
    /// Datagrams held back to be reordered.
    pub reordered: u64,
    /// Datagrams refused because they were larger than [`MAX_PACKET`].
    pub oversized: u64,
}

#[derive(Clone, Debug)]
struct Packet {
    from: u8,
    to: u8,
    len: u16,
    data: [u8; MAX_PACKET],
}

#[derive(Clone, Debug)]
struct InFlight {
    at: u64,
    seq: u64,
    packet: Packet,
}

impl PartialEq for InFlight {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for InFlight {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// A seeded in-memory network between up to [`MAX_SLOTS`] slots.
///
/// Everything is decided by one [`Pcg32`] stream drawn in send order, and
/// delivery order is `(arrival time, send order)`, so the same sends give
/// the same deliveries on every machine. Time is moved by
/// [`SimNetwork::advance_to`]; a datagram is delivered once the network's
/// time reaches its arrival time.
#[derive(Clone, Debug)]
pub struct SimNetwork {
    cfg: NetworkConfig,
    rng: Pcg32,
    now: u64,
    seq: u64,
    in_flight: BinaryHeap<Reverse<InFlight>>,
    inbox: Vec<VecDeque<Packet>>,
    link_free: [[u64; MAX_SLOTS]; MAX_SLOTS],
    stats: [LinkStats; MAX_SLOTS],
    down: [bool; MAX_SLOTS],
}

impl SimNetwork {
    /// A network with `cfg`'s faults, at time 0.
    #[must_use]
    pub fn new(cfg: NetworkConfig) -> SimNetwork {
        SimNetwork {
            cfg,
            rng: Pcg32::new(cfg.seed, 0x6e65_7470_6c61_7900),
            now: 0,
            seq: 0,
            in_flight: BinaryHeap::new(),
            inbox: (0..MAX_SLOTS).map(|_| VecDeque::new()).collect(),
            link_free: [[0; MAX_SLOTS]; MAX_SLOTS],
            stats: [LinkStats::default(); MAX_SLOTS],
            down: [false; MAX_SLOTS],
        }
    }

    /// The faults in force.
    #[must_use]
    pub const fn config(&self) -> &NetworkConfig {
        &self.cfg
    }

    /// Changes the faults from the next datagram sent on (a live "network
    /// conditions" control). Datagrams already in flight keep the arrival
    /// time they were given, so lowering the latency lets later datagrams
    /// overtake earlier ones for a moment, as on a real route change. The
    /// fault schedule's random stream goes on where it was: `cfg.seed` is
    /// only read by [`SimNetwork::new`], so the same sends and the same
    /// changes at the same moments give the same deliveries.
    pub const fn set_config(&mut self, cfg: NetworkConfig) {
        self.cfg = cfg;
    }

    /// The network's time.
    #[must_use]
    pub const fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.now)
    }

    /// Moves time to `now` (never backwards) and delivers what has arrived.
    pub fn advance_to(&mut self, now: Timestamp) {
        self.now = self.now.max(now.as_nanos());
        while let Some(Reverse(top)) = self.in_flight.peek() {
            if top.at > self.now {
                break;
            }
            if let Some(Reverse(f)) = self.in_flight.pop()
                && let Some(q) = self.inbox.get_mut(usize::from(f.packet.to))
            {
                q.push_back(f.packet);
            }
        }
    }

    /// Cuts slot `slot` off (`true`): what it sends is lost and nothing is
    /// delivered to it, as for a peer that went silent.
    pub fn set_down(&mut self, slot: u8, down: bool) {
        if let Some(d) = self.down.get_mut(usize::from(slot)) {
            *d = down;
        }
    }

    /// Per-slot send statistics.
    #[must_use]
    pub fn stats(&self, slot: u8) -> LinkStats {
        self.stats
            .get(usize::from(slot))
            .copied()
            .unwrap_or_default()
    }

    /// Datagrams in flight or waiting in inboxes.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.in_flight.len() + self.inbox.iter().map(VecDeque::len).sum::<usize>()
    }

    /// The transport of slot `slot`.
    pub const fn port(&mut self, slot: u8) -> Port<'_> {
        Port { net: self, slot }
    }

    fn chance(&mut self, ppm: u32) -> bool {
        ppm > 0 && self.rng.below(1_000_000) < ppm
    }

    fn delay(&mut self, from: usize, to: usize, len: usize) -> u64 {
        let mut at = self.now;
        if let Some(bw) = self.cfg.bandwidth.filter(|&b| b > 0) {
            let start = self.link_free[from][to].max(self.now);
            let busy = (len as u64).saturating_mul(1_000_000_000) / bw;
            self.link_free[from][to] = start.saturating_add(busy);
            at = self.link_free[from][to];
        }
        at = at.saturating_add(self.cfg.latency.as_nanos());
        let j = self.cfg.jitter.as_nanos();
        if j > 0 {
            let r = self.rng.next_u64() % j.saturating_add(1);
            at = at.saturating_add(r);
        }
        at
    }

    fn submit(&mut self, from: u8, to: u8, bytes: &[u8]) {
        let (f, t) = (usize::from(from), usize::from(to));
        if f >= MAX_SLOTS || t >= MAX_SLOTS {
            return;
        }
        self.stats[f].sent += 1;
        self.stats[f].bytes = self.stats[f].bytes.saturating_add(bytes.len() as u64);
        if bytes.len() > MAX_PACKET {
            self.stats[f].oversized += 1;
            return;
        }
        if self.down[f] || self.down[t] || self.chance(self.cfg.loss_ppm) {
            self.stats[f].lost += 1;
            return;
        }
        let mut packet = Packet {
            from,
            to,
            len: u16::try_from(bytes.len()).unwrap_or(0),
            data: [0; MAX_PACKET],
        };
        packet.data[..bytes.len()].copy_from_slice(bytes);
        let copies = if self.chance(self.cfg.dup_ppm) {
            self.stats[f].duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let mut at = self.delay(f, t, bytes.len());
            if self.chance(self.cfg.reorder_ppm) {
                self.stats[f].reordered += 1;
                let hold = self.cfg.latency.as_nanos().clamp(1_000_000, 50_000_000);
                at = at.saturating_add(hold * u64::from(1 + self.rng.below(3)));
            }
            self.seq += 1;
            self.in_flight.push(Reverse(InFlight {
                at,
                seq: self.seq,
                packet: packet.clone(),
            }));
        }
    }
}

/// One slot's view of a [`SimNetwork`].
#[derive(Debug)]
pub struct Port<'a> {
    net: &'a mut SimNetwork,
    slot: u8,
}

impl Transport for Port<'_> {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        self.net.submit(self.slot, to, bytes);
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        let p = self
            .net
            .inbox
            .get_mut(usize::from(self.slot))?
            .pop_front()?;
        let len = usize::from(p.len);
        let n = len.min(buf.len());
        buf[..n].copy_from_slice(&p.data[..n]);
        Some(Datagram {
            from: Some(p.from),
            len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn drain(net: &mut SimNetwork, slot: u8) -> usize {
        let mut buf = [0u8; RECV_BUFFER];
        let mut n = 0;
        while net.port(slot).recv(&mut buf).is_some() {
            n += 1;
        }
        n
    }

    #[test]
    fn set_config_applies_from_the_next_send_and_keeps_what_is_in_flight() {
        let slow = NetworkConfig {
            latency: Nanos::from_millis(100),
            seed: 3,
            ..NetworkConfig::PERFECT
        };
        let mut net = SimNetwork::new(slow);
        net.port(0).send(1, b"old");
        // 10 ms later the route gets faster: a datagram sent now with 20 ms
        // latency arrives at 30 ms, before the one sent at 0 (due at 100 ms).
        net.advance_to(Timestamp::from_nanos(10 * MS));
        net.set_config(NetworkConfig {
            latency: Nanos::from_millis(20),
            ..slow
        });
        assert_eq!(net.config().latency, Nanos::from_millis(20));
        net.port(0).send(1, b"new");
        net.advance_to(Timestamp::from_nanos(29 * MS));
        assert_eq!(drain(&mut net, 1), 0, "nothing due before 30 ms");
        net.advance_to(Timestamp::from_nanos(30 * MS));
        let mut buf = [0u8; RECV_BUFFER];
        let d = net
            .port(1)
            .recv(&mut buf)
            .expect("the new datagram at 30 ms");
        assert_eq!(&buf[..d.len], b"new");
        net.advance_to(Timestamp::from_nanos(99 * MS));
        assert_eq!(drain(&mut net, 1), 0, "the old one keeps its 100 ms");
        net.advance_to(Timestamp::from_nanos(100 * MS));
        assert_eq!(drain(&mut net, 1), 1);
        // Total loss from now on: every later datagram is lost and counted.
        net.set_config(NetworkConfig {
            loss_ppm: 1_000_000,
            ..slow
        });
        for _ in 0..50 {
            net.port(0).send(1, b"x");
        }
        net.advance_to(Timestamp::from_nanos(1000 * MS));
        assert_eq!(drain(&mut net, 1), 0);
        let s = net.stats(0);
        assert_eq!((s.sent, s.lost), (52, 50));
    }
}
