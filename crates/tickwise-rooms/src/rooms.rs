//! The room server's state machine: rooms, connections, seats, the start
//! rule, caps, deadlines and the relay budget, with no I/O and no clock.
//!
//! The adapter (an axum WebSocket handler in `tickwise-service`, or a test)
//! hands it every event with the time (`now`, milliseconds of a monotonic
//! clock) and carries out the [`Action`]s it returns: text and binary
//! frames to send, connections to close. Every decision is here, so tests
//! drive it by hand, message by message.

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::action::{Action, ConnId, CreateRefused, Refusal};
use crate::limits::{RoomLimits, TokenBucket};
use crate::protocol::{Reason, RoomSpec, ServerMsg};
use crate::room::Room;
use crate::stats::RoomStats;
use tickwise_net::MAX_SLOTS;

mod relay;
mod text;

struct Conn {
    room: String,
    ip: IpAddr,
    opened_ms: u64,
    last_rx_ms: u64,
    seat: Option<u8>,
    texts: TokenBucket,
}

/// Every room and room connection of one server.
pub struct Rooms {
    limits: RoomLimits,
    rooms: BTreeMap<String, Room>,
    conns: BTreeMap<ConnId, Conn>,
    per_ip: BTreeMap<IpAddr, usize>,
    next_conn: ConnId,
    stats: RoomStats,
}

impl core::fmt::Debug for Rooms {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Never the codes or keys.
        f.debug_struct("Rooms")
            .field("rooms", &self.rooms.len())
            .field("conns", &self.conns.len())
            .finish_non_exhaustive()
    }
}

impl Rooms {
    /// No rooms, under `limits`.
    #[must_use]
    pub fn new(limits: RoomLimits) -> Rooms {
        Rooms {
            limits,
            rooms: BTreeMap::new(),
            conns: BTreeMap::new(),
            per_ip: BTreeMap::new(),
            next_conn: 1,
            stats: RoomStats::default(),
        }
    }

    /// The limits in force.
    #[must_use]
    pub const fn limits(&self) -> &RoomLimits {
        &self.limits
    }

    /// The counters (for `/metrics`).
    #[must_use]
    pub fn stats(&self) -> RoomStats {
        let mut s = self.stats;
        s.rooms_open = self.rooms.len() as u64;
        s.connections_open = self.conns.len() as u64;
        s.rooms_started = self.rooms.values().filter(|r| r.started).count() as u64;
        s
    }

    /// Counts a relay frame the adapter dropped because the receiver's
    /// queue was full.
    pub const fn note_slow_receiver(&mut self) {
        self.stats.relay_drops.slow_receiver += 1;
    }

    /// Opens a room for `spec` (already checked against the catalog)
    /// under `code` with session key `key` (both from the OS's random
    /// source, drawn by the adapter).
    ///
    /// # Errors
    ///
    /// [`CreateRefused`] when the server holds `max_rooms` rooms.
    pub fn create(
        &mut self,
        spec: RoomSpec,
        code: String,
        key: [u8; 16],
        now: u64,
    ) -> Result<(), CreateRefused> {
        if self.rooms.len() >= self.limits.max_rooms {
            self.stats.rooms_refused += 1;
            return Err(CreateRefused::TooManyRooms {
                limit: self.limits.max_rooms,
            });
        }
        if self.rooms.contains_key(&code) {
            return Err(CreateRefused::CodeTaken);
        }
        let relay = TokenBucket::new(
            self.limits.relay_bytes_per_s,
            self.limits.relay_burst_bytes,
            now,
        );
        self.rooms.insert(
            code,
            Room {
                spec,
                key,
                created_ms: now,
                empty_since: Some(now),
                conns: Vec::new(),
                seats: [None; MAX_SLOTS],
                ready: [false; MAX_SLOTS],
                started: false,
                relay,
            },
        );
        self.stats.rooms_created += 1;
        Ok(())
    }

    /// A new WebSocket connection from `ip` to room `code`.
    ///
    /// # Errors
    ///
    /// A [`Refusal`]: [`Reason::NoSuchRoom`], or
    /// [`Reason::TooManyConnections`] when this IP address or the room has
    /// its cap of connections.
    pub fn connect(&mut self, code: &str, ip: IpAddr, now: u64) -> Result<ConnId, Refusal> {
        let refused = |stats: &mut RoomStats, reason, message: String| {
            stats.closes[Reason::index(reason)] += 1;
            Err(Refusal { reason, message })
        };
        let Some(room) = self.rooms.get_mut(code) else {
            return refused(
                &mut self.stats,
                Reason::NoSuchRoom,
                "no room has this code (it never existed, or it expired)".into(),
            );
        };
        let mine = self.per_ip.get(&ip).copied().unwrap_or(0);
        if mine >= self.limits.max_conns_per_ip {
            return refused(
                &mut self.stats,
                Reason::TooManyConnections,
                format!(
                    "this address already has {mine} room connections open (the limit per address)"
                ),
            );
        }
        let cap = usize::from(room.spec.players)
            + usize::from(room.spec.spectators)
            + self.limits.room_conn_slack;
        if room.conns.len() >= cap {
            return refused(
                &mut self.stats,
                Reason::TooManyConnections,
                format!("the room already has its limit of {cap} connections"),
            );
        }
        let id = self.next_conn;
        self.next_conn += 1;
        room.conns.push(id);
        room.empty_since = None;
        *self.per_ip.entry(ip).or_default() += 1;
        self.conns.insert(
            id,
            Conn {
                room: code.into(),
                ip,
                opened_ms: now,
                last_rx_ms: now,
                seat: None,
                texts: TokenBucket::new(self.limits.text_per_s, self.limits.text_burst, now),
            },
        );
        self.stats.connections_opened += 1;
        Ok(id)
    }

    /// The connection closed (by the client, or the network).
    pub fn disconnect(&mut self, id: ConnId, now: u64, out: &mut Vec<Action>) {
        self.forget(id, now, out);
    }

    /// Refuses `id`: an `error` message, then a close; frees its seat.
    fn refuse(
        &mut self,
        id: ConnId,
        reason: Reason,
        message: String,
        now: u64,
        out: &mut Vec<Action>,
    ) {
        if !self.conns.contains_key(&id) {
            return;
        }
        self.stats.closes[reason.index()] += 1;
        out.push(Action::Text {
            to: id,
            text: ServerMsg::error(reason, message).to_text(),
        });
        out.push(Action::Close {
            to: id,
            code: reason.close_code(),
            reason: reason.as_str(),
        });
        self.forget(id, now, out);
    }

    /// Closes `id` for `reason` (an `error` message, then a close), as for
    /// a bad message: for the adapter's own refusals (a frame over the
    /// WebSocket layer's limit).
    pub fn close(
        &mut self,
        id: ConnId,
        reason: Reason,
        message: String,
        now: u64,
        out: &mut Vec<Action>,
    ) {
        self.refuse(id, reason, message, now, out);
    }

    /// Removes `id`, frees its seat and tells the room.
    fn forget(&mut self, id: ConnId, now: u64, out: &mut Vec<Action>) {
        let Some(conn) = self.conns.remove(&id) else {
            return;
        };
        if let Some(n) = self.per_ip.get_mut(&conn.ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&conn.ip);
            }
        }
        let Some(room) = self.rooms.get_mut(&conn.room) else {
            return;
        };
        room.conns.retain(|&c| c != id);
        if room.conns.is_empty() {
            room.empty_since = Some(now);
        }
        if let Some(slot) = conn.seat {
            let s = usize::from(slot);
            room.seats[s] = None;
            if !room.started {
                room.ready[s] = false;
            }
            room.broadcast(&ServerMsg::Left { slot }, None, out);
        }
    }

    /// Deadlines: connections without a seat past the join deadline,
    /// silent ones past the idle limit, rooms empty past the room idle
    /// limit or older than the room age limit. Call it a few times a
    /// second.
    pub fn tick(&mut self, now: u64, out: &mut Vec<Action>) {
        let l = self.limits;
        let late: Vec<(ConnId, Reason)> = self
            .conns
            .iter()
            .filter_map(|(&id, c)| {
                if c.seat.is_none() && now.saturating_sub(c.opened_ms) >= l.join_deadline_ms {
                    Some((id, Reason::JoinDeadline))
                } else if now.saturating_sub(c.last_rx_ms) >= l.client_idle_ms {
                    Some((id, Reason::Idle))
                } else {
                    None
                }
            })
            .collect();
        for (id, reason) in late {
            let message = match reason {
                Reason::JoinDeadline => format!(
                    "no join within {} ms of connecting (the join deadline)",
                    l.join_deadline_ms
                ),
                _ => format!(
                    "nothing received for {} ms (the idle limit; ping every few seconds)",
                    l.client_idle_ms
                ),
            };
            self.refuse(id, reason, message, now, out);
        }
        let old: Vec<String> = self
            .rooms
            .iter()
            .filter(|(_, r)| {
                now.saturating_sub(r.created_ms) >= l.max_room_age_ms
                    || r.empty_since
                        .is_some_and(|t| now.saturating_sub(t) >= l.room_idle_ms)
            })
            .map(|(c, _)| c.clone())
            .collect();
        for code in old {
            self.close_room(&code, Reason::Expired, now, out);
        }
    }

    fn close_room(&mut self, code: &str, reason: Reason, now: u64, out: &mut Vec<Action>) {
        let conns = self
            .rooms
            .get(code)
            .map(|r| r.conns.clone())
            .unwrap_or_default();
        for id in conns {
            let message = match reason {
                Reason::Shutdown => "the server is stopping".into(),
                _ => "the room closed (empty too long, or too old)".into(),
            };
            self.refuse(id, reason, message, now, out);
        }
        if self.rooms.remove(code).is_some() {
            self.stats.rooms_closed += 1;
        }
    }

    /// Closes every room (the server is stopping).
    pub fn shutdown(&mut self, now: u64, out: &mut Vec<Action>) {
        let codes: Vec<String> = self.rooms.keys().cloned().collect();
        for code in codes {
            self.close_room(&code, Reason::Shutdown, now, out);
        }
    }

    /// Whether room `code` is open.
    #[must_use]
    pub fn has_room(&self, code: &str) -> bool {
        self.rooms.contains_key(code)
    }

    /// The seat of connection `id`, if it has one.
    #[must_use]
    pub fn seat(&self, id: ConnId) -> Option<u8> {
        self.conns.get(&id)?.seat
    }
}

impl Rooms {
    /// Who sits in each seat of room `code` (for tests and inspection).
    #[must_use]
    pub fn seats_of(&self, code: &str) -> Option<[Option<ConnId>; MAX_SLOTS]> {
        Some(self.rooms.get(code)?.seats)
    }

    /// Whether room `code`'s match has started.
    #[must_use]
    pub fn started(&self, code: &str) -> Option<bool> {
        Some(self.rooms.get(code)?.started)
    }
}
