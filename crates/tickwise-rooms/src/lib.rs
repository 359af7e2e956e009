//! # tickwise-rooms
//!
//! Rooms for tickwise netplay (docs/rooms.md is the protocol's reference):
//! a room is one match of one sim for 2–4 players and up to 8 spectators.
//! It hands each player its seat (the netplay slot) and the match's
//! 128-bit session key, forwards WebRTC signalling between the members
//! and relays datagrams over the WebSocket when a direct path fails.
//!
//! * [`protocol`](crate::ClientMsg): the messages, parsed strictly on the
//!   server side (sizes before JSON, exact fields) and leniently on the
//!   client side;
//! * [`Rooms`]: the room server as a pure, synchronous state machine
//!   (seats, the start rule, caps, deadlines, the relay budget): the
//!   adapter hands it every event with the time and carries out the
//!   [`Action`]s it returns. `tickwise serve` runs it behind axum
//!   (`tickwise-service`); tests drive it by hand;
//! * with the `client` feature, [`RelayClient`]: a native member of a
//!   room (`tickwise peer --room`) whose datagrams go through the relay,
//!   a [`tickwise_net::Transport`] like the UDP one.
//!
//! The server never reads a datagram: datagrams carry the netplay MAC,
//! checked end to end by the peers with the session key.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod action;
#[cfg(feature = "client")]
mod client;
mod code;
mod create;
mod limits;
mod protocol;
mod room;
mod rooms;
mod stats;

pub use action::{Action, ConnId, CreateRefused, Refusal};
#[cfg(feature = "client")]
pub use client::{ClientError, RelayClient, RelayCounters};
pub use code::{CODE_LEN, encode_code, is_code, key_hex};
pub use create::{CreateError, CreateRequest};
pub use limits::{RoomLimits, TokenBucket};
pub use protocol::{
    ClientMsg, DEFAULT_DISCONNECT_AFTER, DEFAULT_TICKS, MAX_CONFIG_BYTES, MAX_CREATE_BYTES,
    MAX_DATAGRAM, MAX_PING_ID, MAX_RELAY_FRAME, MAX_SERVER_TEXT_BYTES, MAX_TEXT_BYTES, MAX_TICKS,
    ParseError, PeerInfo, Reason, RelayFrame, Role, RoomSpec, ServerMsg, Welcome, relay_out,
};
pub use rooms::Rooms;
pub use stats::{RelayDrops, RoomStats};
