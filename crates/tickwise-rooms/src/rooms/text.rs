//! Text frames: a connection joins a seat (or watches), says it is ready,
//! and passes WebRTC signalling to another seat, each message checked
//! against its connection's text budget and the room's state.

use crate::action::{Action, ConnId};
use crate::code::key_hex;
use crate::protocol::{ClientMsg, ParseError, Reason, Role, ServerMsg, Welcome};

use super::Rooms;

impl Rooms {
    /// A text frame from `id`.
    pub fn on_text(&mut self, id: ConnId, text: &str, now: u64, out: &mut Vec<Action>) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        conn.last_rx_ms = now;
        if !conn.texts.take(1, now) {
            let l = self.limits;
            return self.refuse(
                id,
                Reason::TooFast,
                format!(
                    "more than {} text messages a second (bursts of {}) on one connection",
                    l.text_per_s, l.text_burst
                ),
                now,
                out,
            );
        }
        let msg = match ClientMsg::parse(text) {
            Ok(m) => m,
            Err(e @ ParseError::TooBig { .. }) => {
                return self.refuse(id, Reason::TooBig, e.to_string(), now, out);
            }
            Err(e) => return self.refuse(id, Reason::BadMessage, e.to_string(), now, out),
        };
        let seat = conn.seat;
        match (msg, seat) {
            (ClientMsg::Ping { id: ping }, _) => out.push(Action::Text {
                to: id,
                text: ServerMsg::Pong { id: ping }.to_text(),
            }),
            (ClientMsg::Join { role, slot }, None) => self.join(id, role, slot, now, out),
            (ClientMsg::Join { .. }, Some(s)) => self.refuse(
                id,
                Reason::BadMessage,
                format!("already joined, in seat {s}"),
                now,
                out,
            ),
            (_, None) => self.refuse(
                id,
                Reason::BadMessage,
                "join first: only join and ping are allowed before welcome".into(),
                now,
                out,
            ),
            (ClientMsg::Signal { to, data }, Some(from)) => {
                self.signal(id, from, to, &data, text, now, out);
            }
            (ClientMsg::Ready {}, Some(slot)) => self.ready(slot, id, out),
            (ClientMsg::Leave {}, Some(_)) => {
                self.stats.leaves += 1;
                out.push(Action::Close {
                    to: id,
                    code: 1000,
                    reason: "leave",
                });
                self.forget(id, now, out);
            }
        }
    }

    fn join(&mut self, id: ConnId, role: Role, slot: Option<u8>, now: u64, out: &mut Vec<Action>) {
        let Some(conn) = self.conns.get(&id) else {
            return;
        };
        let Some(room) = self.rooms.get_mut(&conn.room) else {
            return;
        };
        let chosen = room.choose_seat(role, slot);
        let slot = match chosen {
            Ok(s) => s,
            Err((reason, message)) => return self.refuse(id, reason, message, now, out),
        };
        room.seats[usize::from(slot)] = Some(id);
        room.ready[usize::from(slot)] = false;
        let welcome = ServerMsg::Welcome(Welcome {
            slot,
            role,
            code: conn.room.clone(),
            spec: room.spec.clone(),
            session_key: key_hex(&room.key),
            started: room.started,
            peers: room.peers(slot),
        });
        out.push(Action::Text {
            to: id,
            text: welcome.to_text(),
        });
        room.broadcast(&ServerMsg::Joined { slot, role }, Some(id), out);
        if let Some(conn) = self.conns.get_mut(&id) {
            conn.seat = Some(slot);
        }
        self.stats.joins += 1;
        if room.started && role == Role::Player {
            self.stats.rejoins += 1;
        }
    }

    fn ready(&mut self, slot: u8, id: ConnId, out: &mut Vec<Action>) {
        let Some(room) = self
            .conns
            .get(&id)
            .and_then(|c| self.rooms.get_mut(&c.room))
        else {
            return;
        };
        if room.started
            || room.spec.seat_role(slot) != Some(Role::Player)
            || room.ready[usize::from(slot)]
        {
            return;
        }
        room.ready[usize::from(slot)] = true;
        room.broadcast(&ServerMsg::Ready { slot }, None, out);
        if room.all_ready() {
            room.started = true;
            room.broadcast(&ServerMsg::Start {}, None, out);
            self.stats.starts += 1;
        }
    }

    #[allow(clippy::too_many_arguments, reason = "one message's parts")]
    fn signal(
        &mut self,
        id: ConnId,
        from: u8,
        to: u8,
        data: &serde_json::Value,
        text: &str,
        now: u64,
        out: &mut Vec<Action>,
    ) {
        let Some(room) = self.conns.get(&id).and_then(|c| self.rooms.get(&c.room)) else {
            return;
        };
        if to == from || room.spec.seat_role(to).is_none() {
            return self.refuse(
                id,
                Reason::NoSuchSlot,
                format!("signal to slot {to}: not another seat of this room"),
                now,
                out,
            );
        }
        let Some(c) = room.seats[usize::from(to)] else {
            self.stats.signal_drops += 1;
            return;
        };
        let text = signal_text(from, data, text);
        if text.len() > crate::MAX_TEXT_BYTES {
            return self.refuse(
                id,
                Reason::TooBig,
                format!(
                    "a signal forwarded as {} bytes is over the limit of {} bytes",
                    text.len(),
                    crate::MAX_TEXT_BYTES
                ),
                now,
                out,
            );
        }
        out.push(Action::Text { to: c, text });
        self.stats.signals += 1;
    }
}

/// The `signal` message forwarded from seat `from`: the `data` exactly as
/// the client wrote it (so no number is re-spelled or re-rounded), taken
/// from the client's text (`text`, already parsed as a valid `signal`).
fn signal_text(from: u8, data: &serde_json::Value, text: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Raw<'a> {
        #[serde(borrow)]
        data: &'a serde_json::value::RawValue,
    }
    match serde_json::from_str::<Raw<'_>>(text) {
        Ok(raw) => format!(
            r#"{{"t":"signal","from":{from},"data":{}}}"#,
            raw.data.get()
        ),
        // Not reached: the text parsed as a signal already.
        Err(_) => ServerMsg::Signal {
            from,
            data: data.clone(),
        }
        .to_text(),
    }
}
