//! The room protocol's messages (docs/rooms.md is the reference): what a
//! client sends, what the server answers, the create request, and the
//! relay frame.
//!
//! Parsing is strict on the server side (unknown fields and `t` tags,
//! wrong types and duplicate keys are refused; sizes are checked before a
//! byte is parsed) and lenient on the client side (a client ignores
//! fields and messages it does not know), so a newer server can add
//! fields without breaking older clients.

use core::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tickwise_net::FIRST_SPECTATOR_SLOT;
use tickwise_net::wire::MAX_PACKET;

/// The largest text message (in bytes) a client sends, and the largest
/// `signal` the server forwards.
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// The largest text message the server sends (a `welcome` carries the
/// config, up to [`MAX_CONFIG_BYTES`], escaped inside a JSON string).
pub const MAX_SERVER_TEXT_BYTES: usize = 128 * 1024;
/// The largest datagram the relay carries: the netplay wire's own limit.
pub const MAX_DATAGRAM: usize = MAX_PACKET;
/// The largest binary relay frame: the seat byte and a datagram.
pub const MAX_RELAY_FRAME: usize = 1 + MAX_DATAGRAM;
/// The largest `POST /v1/rooms` body.
pub const MAX_CREATE_BYTES: usize = 32 * 1024;
/// The largest sim config carried by a room.
pub const MAX_CONFIG_BYTES: usize = 16 * 1024;
/// The largest ping id (JavaScript's largest safe integer).
pub const MAX_PING_ID: u64 = (1 << 53) - 1;
/// The longest match a room is created for.
pub const MAX_TICKS: u64 = 10_000_000;
/// A room's match length when the create request does not say.
pub const DEFAULT_TICKS: u64 = 3_600;
/// A room's silence limit (ticks) when the create request does not say.
pub const DEFAULT_DISCONNECT_AFTER: u64 = 300;

/// A member's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Plays a slot `0..players`.
    Player,
    /// Watches from a slot `4..4 + spectators`.
    Spectator,
}

impl Role {
    /// `"player"` or `"spectator"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Spectator => "spectator",
        }
    }
}

/// A message from a client (a text frame).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase", deny_unknown_fields)]
pub enum ClientMsg {
    /// Take a seat.
    Join {
        /// The role wanted.
        role: Role,
        /// The seat wanted (the lowest free one of the role when absent).
        #[serde(default)]
        slot: Option<u8>,
    },
    /// Forward signalling data to the member in seat `to`.
    Signal {
        /// The receiver's seat.
        to: u8,
        /// Anything (an SDP offer or answer, an ICE candidate).
        data: Value,
    },
    /// This player is ready to start.
    Ready {},
    /// Asks for a `pong` with the same id.
    Ping {
        /// Echoed in the `pong` (0 ..= [`MAX_PING_ID`]).
        #[serde(default)]
        id: Option<u64>,
    },
    /// Leave the room (the seat is freed).
    Leave {},
}

/// Why a text frame from a client was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Longer than [`MAX_TEXT_BYTES`].
    TooBig {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Not a JSON object of a known `t` with exactly its fields and types.
    Invalid {
        /// What is wrong, for the `error` message.
        detail: String,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::TooBig { len, limit } => write!(
                f,
                "a text message of {len} bytes is over the limit of {limit} bytes"
            ),
            ParseError::Invalid { detail } => write!(f, "not a room message: {detail}"),
        }
    }
}

impl core::error::Error for ParseError {}

pub(crate) fn invalid(detail: impl fmt::Display) -> ParseError {
    let mut detail = detail.to_string();
    // serde's messages quote the input; keep the error (and the close
    // reason built from it) short whatever the client sent.
    if detail.len() > 200 {
        let mut cut = 200;
        while !detail.is_char_boundary(cut) {
            cut -= 1;
        }
        detail.truncate(cut);
        detail.push('…');
    }
    ParseError::Invalid { detail }
}

impl ClientMsg {
    /// Parses one text frame from a client: the size first, then the JSON
    /// (serde_json's recursion limit bounds the nesting of `data`).
    ///
    /// # Errors
    ///
    /// [`ParseError::TooBig`] over [`MAX_TEXT_BYTES`];
    /// [`ParseError::Invalid`] for anything but a known message with
    /// exactly its fields (a duplicate key included), or a ping id over
    /// [`MAX_PING_ID`].
    pub fn parse(text: &str) -> Result<ClientMsg, ParseError> {
        if text.len() > MAX_TEXT_BYTES {
            return Err(ParseError::TooBig {
                len: text.len(),
                limit: MAX_TEXT_BYTES,
            });
        }
        let msg: ClientMsg = serde_json::from_str(text).map_err(invalid)?;
        if let ClientMsg::Ping { id: Some(id) } = msg
            && id > MAX_PING_ID
        {
            return Err(invalid(format_args!(
                "ping id {id} is over the largest of {MAX_PING_ID}"
            )));
        }
        Ok(msg)
    }

    /// The message as a text frame (what a client sends).
    #[must_use]
    pub fn to_text(&self) -> String {
        let v = match self {
            ClientMsg::Join { role, slot } => {
                let mut v = serde_json::json!({"t": "join", "role": role});
                if let Some(s) = slot {
                    v["slot"] = Value::from(*s);
                }
                v
            }
            ClientMsg::Signal { to, data } => {
                serde_json::json!({"t": "signal", "to": to, "data": data})
            }
            ClientMsg::Ready {} => serde_json::json!({"t": "ready"}),
            ClientMsg::Ping { id } => match id {
                Some(id) => serde_json::json!({"t": "ping", "id": id}),
                None => serde_json::json!({"t": "ping"}),
            },
            ClientMsg::Leave {} => serde_json::json!({"t": "leave"}),
        };
        v.to_string()
    }
}

/// Another member, as listed in a `welcome`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerInfo {
    /// Its seat.
    pub slot: u8,
    /// Its role.
    pub role: Role,
    /// Whether it said `ready` (players before the start).
    pub ready: bool,
}

/// The `welcome` message: everything a member needs to play.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Welcome {
    /// This member's seat.
    pub slot: u8,
    /// This member's role.
    pub role: Role,
    /// The room's code.
    pub code: String,
    /// The match's settings.
    #[serde(flatten)]
    pub spec: RoomSpec,
    /// The session key, 32 lowercase hex digits.
    pub session_key: String,
    /// Whether the match has started (a player joining now rejoins it).
    pub started: bool,
    /// The other members, lowest seat first.
    pub peers: Vec<PeerInfo>,
}

/// A message from the server (a text frame).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
pub enum ServerMsg {
    /// The seat was taken.
    Welcome(Welcome),
    /// A member took a seat.
    Joined {
        /// Its seat.
        slot: u8,
        /// Its role.
        role: Role,
    },
    /// A member left; its seat is free.
    Left {
        /// Its seat.
        slot: u8,
    },
    /// A player is ready.
    Ready {
        /// Its seat.
        slot: u8,
    },
    /// Every player seat is taken and ready: the match starts.
    Start {},
    /// Forwarded signalling.
    Signal {
        /// The sender's seat.
        from: u8,
        /// What it sent.
        data: Value,
    },
    /// The answer to a ping.
    Pong {
        /// The ping's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<u64>,
    },
    /// A refusal; the connection closes next.
    Error {
        /// A [`Reason`] code.
        reason: String,
        /// A sentence for people.
        message: String,
    },
    /// A message this client does not know (a newer server).
    #[serde(other)]
    Unknown,
}

impl ServerMsg {
    /// The `error` message for `reason`.
    #[must_use]
    pub fn error(reason: Reason, message: impl Into<String>) -> ServerMsg {
        ServerMsg::Error {
            reason: reason.as_str().into(),
            message: message.into(),
        }
    }

    /// The message as a text frame.
    #[must_use]
    pub fn to_text(&self) -> String {
        // Serializing these types cannot fail (string keys, no maps with
        // other keys); an empty object would be refused by any client.
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Parses a text frame from the server, leniently (unknown fields are
    /// ignored, an unknown `t` is [`ServerMsg::Unknown`]).
    ///
    /// # Errors
    ///
    /// [`ParseError`] for a frame over [`MAX_SERVER_TEXT_BYTES`] or one
    /// that is not a message.
    pub fn parse(text: &str) -> Result<ServerMsg, ParseError> {
        if text.len() > MAX_SERVER_TEXT_BYTES {
            return Err(ParseError::TooBig {
                len: text.len(),
                limit: MAX_SERVER_TEXT_BYTES,
            });
        }
        serde_json::from_str(text).map_err(invalid)
    }
}

/// Why the server refuses a client: the `reason` of an `error` message
/// and of the close frame after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    /// Not a message of the protocol, or one out of order.
    BadMessage,
    /// A frame over its size limit.
    TooBig,
    /// A slot that is not a seat of the room (or the sender's own).
    NoSuchSlot,
    /// An unknown or expired room code.
    NoSuchRoom,
    /// No free seat of the role (or the one asked for is taken).
    RoomFull,
    /// The room's or this address's connection cap is reached.
    TooManyConnections,
    /// No `join` within the join deadline.
    JoinDeadline,
    /// Text messages faster than the per-connection rate.
    TooFast,
    /// Nothing received for the idle limit.
    Idle,
    /// The room closed (empty too long, or too old).
    Expired,
    /// The server is stopping.
    Shutdown,
}

impl Reason {
    /// Every reason, in the order of [`Reason::index`].
    pub const ALL: [Reason; 11] = [
        Reason::BadMessage,
        Reason::TooBig,
        Reason::NoSuchSlot,
        Reason::NoSuchRoom,
        Reason::RoomFull,
        Reason::TooManyConnections,
        Reason::JoinDeadline,
        Reason::TooFast,
        Reason::Idle,
        Reason::Expired,
        Reason::Shutdown,
    ];

    /// The code sent in `error.reason` and as the close reason.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::BadMessage => "bad-message",
            Reason::TooBig => "too-big",
            Reason::NoSuchSlot => "no-such-slot",
            Reason::NoSuchRoom => "no-such-room",
            Reason::RoomFull => "room-full",
            Reason::TooManyConnections => "too-many-connections",
            Reason::JoinDeadline => "join-deadline",
            Reason::TooFast => "too-fast",
            Reason::Idle => "idle",
            Reason::Expired => "expired",
            Reason::Shutdown => "shutdown",
        }
    }

    /// The WebSocket close code: 1008 (policy violation) for a bad client,
    /// 1009 for a frame too big, 1013 (try again later) for a cap, 1000
    /// for idleness, 1001 (going away) when the room or server closes.
    #[must_use]
    pub const fn close_code(self) -> u16 {
        match self {
            Reason::BadMessage
            | Reason::NoSuchSlot
            | Reason::NoSuchRoom
            | Reason::JoinDeadline
            | Reason::TooFast => 1008,
            Reason::TooBig => 1009,
            Reason::RoomFull | Reason::TooManyConnections => 1013,
            Reason::Idle => 1000,
            Reason::Expired | Reason::Shutdown => 1001,
        }
    }

    /// The position in [`Reason::ALL`] (for counters).
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a room is for: the sim and the match settings every member runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomSpec {
    /// The sim id.
    pub sim: String,
    /// The sim version.
    pub version: u32,
    /// The sim's config (text), built for `players` players.
    pub config: String,
    /// Player seats, 2 to 4.
    pub players: u8,
    /// Spectator seats, 0 to 8.
    pub spectators: u8,
    /// The match's length in ticks.
    pub ticks: u64,
    /// Checksums of every K-th confirmed tick are exchanged.
    pub check_every: u64,
    /// A peer silent this many ticks has left.
    pub disconnect_after: u64,
}

impl RoomSpec {
    /// The role of seat `slot` in this room, or `None` when it is not a
    /// seat.
    #[must_use]
    pub fn seat_role(&self, slot: u8) -> Option<Role> {
        if slot < self.players {
            Some(Role::Player)
        } else if slot >= FIRST_SPECTATOR_SLOT
            && u16::from(slot) < u16::from(FIRST_SPECTATOR_SLOT) + u16::from(self.spectators)
        {
            Some(Role::Spectator)
        } else {
            None
        }
    }

    /// The seats of `role`, lowest first.
    pub fn seats(&self, role: Role) -> impl Iterator<Item = u8> {
        let (from, n) = match role {
            Role::Player => (0, self.players),
            Role::Spectator => (FIRST_SPECTATOR_SLOT, self.spectators),
        };
        from..from.saturating_add(n)
    }
}

/// A relay frame from a client: `[to][datagram]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelayFrame<'a> {
    /// The receiver's seat.
    pub to: u8,
    /// The datagram, never read by the server.
    pub datagram: &'a [u8],
}

impl<'a> RelayFrame<'a> {
    /// Splits a binary frame.
    ///
    /// # Errors
    ///
    /// [`Reason::BadMessage`] for an empty frame, [`Reason::TooBig`] over
    /// [`MAX_RELAY_FRAME`].
    pub fn parse(frame: &'a [u8]) -> Result<RelayFrame<'a>, Reason> {
        if frame.len() > MAX_RELAY_FRAME {
            return Err(Reason::TooBig);
        }
        let (&to, datagram) = frame.split_first().ok_or(Reason::BadMessage)?;
        Ok(RelayFrame { to, datagram })
    }
}

/// The frame the server forwards: `[from][datagram]`.
#[must_use]
pub fn relay_out(from: u8, datagram: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(1 + datagram.len());
    v.push(from);
    v.extend_from_slice(datagram);
    v
}

#[cfg(test)]
mod tests;
