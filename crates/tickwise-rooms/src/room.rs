//! One room: its settings, key, seats and the start rule.

use crate::action::{Action, ConnId};
use crate::limits::TokenBucket;
use crate::protocol::{PeerInfo, Reason, Role, RoomSpec, ServerMsg};
use tickwise_net::MAX_SLOTS;

pub(crate) struct Room {
    pub(crate) spec: RoomSpec,
    pub(crate) key: [u8; 16],
    pub(crate) created_ms: u64,
    /// When the last connection left (`None` while someone is connected).
    pub(crate) empty_since: Option<u64>,
    /// Every connection to the room, seated or still in its handshake.
    pub(crate) conns: Vec<ConnId>,
    pub(crate) seats: [Option<ConnId>; MAX_SLOTS],
    pub(crate) ready: [bool; MAX_SLOTS],
    pub(crate) started: bool,
    pub(crate) relay: TokenBucket,
}

impl Room {
    pub(crate) fn seated(&self) -> impl Iterator<Item = (u8, ConnId)> + '_ {
        (0u8..)
            .zip(self.seats.iter())
            .filter_map(|(s, c)| Some((s, (*c)?)))
    }

    pub(crate) fn peers(&self, except: u8) -> Vec<PeerInfo> {
        self.seated()
            .filter(|&(s, _)| s != except)
            .filter_map(|(slot, _)| {
                Some(PeerInfo {
                    slot,
                    role: self.spec.seat_role(slot)?,
                    ready: self.ready[usize::from(slot)],
                })
            })
            .collect()
    }

    pub(crate) fn broadcast(&self, msg: &ServerMsg, except: Option<ConnId>, out: &mut Vec<Action>) {
        let text = msg.to_text();
        for (_, c) in self.seated() {
            if Some(c) != except {
                out.push(Action::Text {
                    to: c,
                    text: text.clone(),
                });
            }
        }
    }

    pub(crate) fn all_ready(&self) -> bool {
        self.spec
            .seats(Role::Player)
            .all(|s| self.seats[usize::from(s)].is_some() && self.ready[usize::from(s)])
    }

    /// The seat a `join` of `role` gets: `slot` when given (if it is a
    /// free seat of that role), else the lowest free seat of the role; or
    /// why not.
    pub(crate) fn choose_seat(&self, role: Role, slot: Option<u8>) -> Result<u8, (Reason, String)> {
        let free = |s: u8| self.seats[usize::from(s)].is_none();
        match slot {
            Some(s) => match self.spec.seat_role(s) {
                Some(r) if r == role && free(s) => Ok(s),
                Some(r) if r == role => Err((
                    Reason::RoomFull,
                    format!("seat {s} is taken; leave slot out to get a free seat"),
                )),
                _ => Err((
                    Reason::NoSuchSlot,
                    format!("slot {s} is not a {} seat of this room", role.as_str()),
                )),
            },
            None => self.spec.seats(role).find(|&s| free(s)).ok_or_else(|| {
                (
                    Reason::RoomFull,
                    format!("every {} seat of this room is taken", role.as_str()),
                )
            }),
        }
    }
}
