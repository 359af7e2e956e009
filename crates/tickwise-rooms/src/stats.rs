//! The room server's counters, and their Prometheus text.

use core::fmt::Write as _;

use crate::protocol::Reason;

/// Relay frames dropped, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelayDrops {
    /// The receiving seat was empty.
    pub empty_seat: u64,
    /// The room's relay budget was spent.
    pub over_rate: u64,
    /// The receiver's queue was full.
    pub slow_receiver: u64,
}

/// What a room server did (counters since start, and the gauges
/// `rooms_open`, `rooms_started`, `connections_open`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoomStats {
    /// Rooms open now.
    pub rooms_open: u64,
    /// Rooms open now whose match has started.
    pub rooms_started: u64,
    /// Room connections open now.
    pub connections_open: u64,
    /// Rooms created.
    pub rooms_created: u64,
    /// Create requests refused because the server held its maximum.
    pub rooms_refused: u64,
    /// Rooms closed (expired, or at shutdown).
    pub rooms_closed: u64,
    /// Connections accepted into a room.
    pub connections_opened: u64,
    /// Connections closed by the server, by [`Reason::index`] (refused
    /// connections included).
    pub closes: [u64; Reason::ALL.len()],
    /// Seats taken.
    pub joins: u64,
    /// Player seats taken in a started room (rejoins).
    pub rejoins: u64,
    /// `leave` messages.
    pub leaves: u64,
    /// Matches started.
    pub starts: u64,
    /// Signalling messages forwarded.
    pub signals: u64,
    /// Signalling messages to an empty seat (dropped).
    pub signal_drops: u64,
    /// Relay frames forwarded.
    pub relay_frames: u64,
    /// Datagram bytes forwarded (the seat byte not counted).
    pub relay_bytes: u64,
    /// Relay frames dropped.
    pub relay_drops: RelayDrops,
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

impl RoomStats {
    /// The counters in the Prometheus text exposition format (0.0.4).
    #[must_use]
    pub fn render(&self) -> String {
        let mut o = String::with_capacity(2048);
        let gauges = [
            ("tickwise_rooms_open", "Rooms open.", self.rooms_open),
            (
                "tickwise_rooms_started",
                "Rooms open whose match has started.",
                self.rooms_started,
            ),
            (
                "tickwise_room_connections",
                "Room WebSocket connections open.",
                self.connections_open,
            ),
        ];
        for (name, help, v) in gauges {
            family(&mut o, name, "gauge", help);
            let _ = writeln!(o, "{name} {v}");
        }
        let counters = [
            (
                "tickwise_rooms_created_total",
                "Rooms created.",
                self.rooms_created,
            ),
            (
                "tickwise_rooms_refused_total",
                "Create requests refused: the server held its maximum of rooms.",
                self.rooms_refused,
            ),
            (
                "tickwise_rooms_closed_total",
                "Rooms closed (expired or at shutdown).",
                self.rooms_closed,
            ),
            (
                "tickwise_room_connections_total",
                "Connections accepted into a room.",
                self.connections_opened,
            ),
            ("tickwise_room_joins_total", "Seats taken.", self.joins),
            (
                "tickwise_room_rejoins_total",
                "Player seats taken in a started room.",
                self.rejoins,
            ),
            (
                "tickwise_room_starts_total",
                "Matches started.",
                self.starts,
            ),
            (
                "tickwise_room_signals_total",
                "Signalling messages forwarded.",
                self.signals,
            ),
            (
                "tickwise_room_signal_drops_total",
                "Signalling messages to an empty seat.",
                self.signal_drops,
            ),
            (
                "tickwise_relay_frames_total",
                "Relay frames forwarded.",
                self.relay_frames,
            ),
            (
                "tickwise_relay_bytes_total",
                "Datagram bytes forwarded by the relay.",
                self.relay_bytes,
            ),
        ];
        for (name, help, v) in counters {
            family(&mut o, name, "counter", help);
            let _ = writeln!(o, "{name} {v}");
        }
        family(
            &mut o,
            "tickwise_relay_drops_total",
            "counter",
            "Relay frames dropped, by reason.",
        );
        let d = self.relay_drops;
        for (reason, v) in [
            ("empty-seat", d.empty_seat),
            ("over-rate", d.over_rate),
            ("slow-receiver", d.slow_receiver),
        ] {
            let _ = writeln!(o, "tickwise_relay_drops_total{{reason=\"{reason}\"}} {v}");
        }
        family(
            &mut o,
            "tickwise_room_closes_total",
            "counter",
            "Room connections closed or refused by the server, by reason.",
        );
        for r in Reason::ALL {
            let _ = writeln!(
                o,
                "tickwise_room_closes_total{{reason=\"{}\"}} {}",
                r.as_str(),
                self.closes[r.index()]
            );
        }
        o
    }
}
