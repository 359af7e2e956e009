//! What the room state machine answers: the actions for the adapter,
//! and its refusals.

use crate::protocol::{Reason, ServerMsg};

/// A connection's id, given by [`Rooms::connect`](crate::Rooms::connect).
pub type ConnId = u64;

/// What the adapter must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send a text frame.
    Text {
        /// To this connection.
        to: ConnId,
        /// The frame (a [`ServerMsg`]).
        text: String,
    },
    /// Send a binary frame (a relayed datagram).
    Binary {
        /// To this connection.
        to: ConnId,
        /// `[from][datagram]`.
        frame: Vec<u8>,
    },
    /// Send a close frame and end the connection. The state machine has
    /// already forgotten it.
    Close {
        /// This connection.
        to: ConnId,
        /// The close code.
        code: u16,
        /// The close reason.
        reason: &'static str,
    },
}

/// A connection refused by [`Rooms::connect`](crate::Rooms::connect) (answer with `error` and
/// close with [`Reason::close_code`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Why.
    pub reason: Reason,
    /// A sentence for people, naming the limit.
    pub message: String,
}

impl Refusal {
    /// The `error` text frame.
    #[must_use]
    pub fn text(&self) -> String {
        ServerMsg::error(self.reason, self.message.clone()).to_text()
    }
}

/// Why [`Rooms::create`](crate::Rooms::create) refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateRefused {
    /// The server holds its maximum of rooms.
    TooManyRooms {
        /// The maximum.
        limit: usize,
    },
    /// The code is already a room's (a broken random source).
    CodeTaken,
}

impl core::fmt::Display for CreateRefused {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CreateRefused::TooManyRooms { limit } => {
                write!(
                    f,
                    "the server already holds its limit of {limit} open rooms"
                )
            }
            CreateRefused::CodeTaken => f.write_str("the new room's code is already taken"),
        }
    }
}

impl core::error::Error for CreateRefused {}
