//! Binary frames: a seated player's datagram relayed to another seat,
//! within the room's relay byte budget.

use crate::action::{Action, ConnId};
use crate::protocol::{Reason, RelayFrame, relay_out};

use super::Rooms;

impl Rooms {
    /// A binary frame (a relay frame) from `id`.
    pub fn on_binary(&mut self, id: ConnId, frame: &[u8], now: u64, out: &mut Vec<Action>) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        conn.last_rx_ms = now;
        let Some(from) = conn.seat else {
            return self.refuse(
                id,
                Reason::BadMessage,
                "join first: relay frames are for members with a seat".into(),
                now,
                out,
            );
        };
        let f = match RelayFrame::parse(frame) {
            Ok(f) => f,
            Err(reason) => {
                let message = if reason == Reason::TooBig {
                    format!(
                        "a relay frame of {} bytes is over the limit of {} (a seat byte and a datagram of at most {} bytes)",
                        frame.len(),
                        crate::MAX_RELAY_FRAME,
                        crate::MAX_DATAGRAM
                    )
                } else {
                    "an empty relay frame (it needs a seat byte)".into()
                };
                return self.refuse(id, reason, message, now, out);
            }
        };
        let Some(room) = self.rooms.get_mut(&conn.room) else {
            return;
        };
        if f.to == from || room.spec.seat_role(f.to).is_none() {
            return self.refuse(
                id,
                Reason::NoSuchSlot,
                format!(
                    "relay frame to slot {}: not another seat of this room",
                    f.to
                ),
                now,
                out,
            );
        }
        let Some(to) = room.seats[usize::from(f.to)] else {
            self.stats.relay_drops.empty_seat += 1;
            return;
        };
        if !room.relay.take(f.datagram.len() as u64, now) {
            self.stats.relay_drops.over_rate += 1;
            return;
        }
        self.stats.relay_frames += 1;
        self.stats.relay_bytes += f.datagram.len() as u64;
        out.push(Action::Binary {
            to,
            frame: relay_out(from, f.datagram),
        });
    }
}
