//! A native member of a room whose datagrams go through the relay: the
//! WebSocket client behind `tickwise peer --room`.
//!
//! [`RelayClient::join`] connects (blocking, with a deadline), takes a
//! seat and returns the `welcome`; [`RelayClient::wait_start`] says
//! `ready` and waits for `start` (pinging so the server never finds it
//! idle). From then on the client is a [`Transport`]: `send` writes a
//! binary frame `[to][datagram]`, `recv` reads `[from][datagram]` without
//! blocking. Text messages that arrive meanwhile (`joined`, `left`) are
//! counted; an `error` or a close ends the relay (the session then sees
//! silence and handles it as a peer that left).

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::time::{Duration, Instant};

use tickwise_net::{Datagram, Transport};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

use crate::protocol::{
    ClientMsg, MAX_RELAY_FRAME, MAX_SERVER_TEXT_BYTES, Role, ServerMsg, Welcome, relay_out,
};

/// Frames received before `start` and kept for the first `recv` calls.
const EARLY_FRAMES: usize = 256;
/// Bytes the client buffers for a server that does not read.
const MAX_WRITE_BUFFER: usize = 1 << 20;
/// A lobby ping every this long keeps the server's idle timer fresh.
const LOBBY_PING: Duration = Duration::from_secs(10);

/// Why a client could not join or start.
#[derive(Debug)]
pub enum ClientError {
    /// Not a `ws://HOST:PORT/PATH` URL.
    Url {
        /// The URL.
        url: String,
        /// What is wrong with it.
        detail: &'static str,
    },
    /// The TCP connection failed.
    Connect {
        /// The address tried.
        addr: String,
        /// The error.
        source: std::io::Error,
    },
    /// The WebSocket handshake or a later read failed.
    WebSocket {
        /// What failed.
        detail: String,
    },
    /// The server refused, with its `error` message.
    Refused {
        /// The reason code (docs/rooms.md).
        reason: String,
        /// The server's sentence.
        message: String,
    },
    /// The server closed the connection without a reason.
    Closed,
    /// No answer in time.
    Timeout {
        /// What was awaited.
        waiting_for: &'static str,
        /// The deadline.
        after: Duration,
    },
}

impl core::fmt::Display for ClientError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ClientError::Url { url, detail } => write!(f, "room URL {url:?}: {detail}"),
            ClientError::Connect { addr, source } => {
                write!(f, "cannot connect to the room server at {addr}: {source}")
            }
            ClientError::WebSocket { detail } => write!(f, "room connection: {detail}"),
            ClientError::Refused { reason, message } => {
                write!(f, "the room server refused: {reason}: {message}")
            }
            ClientError::Closed => f.write_str("the room server closed the connection"),
            ClientError::Timeout { waiting_for, after } => write!(
                f,
                "no {waiting_for} from the room server within {} s",
                after.as_secs()
            ),
        }
    }
}

impl core::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ClientError::Connect { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What the relay carried for this client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelayCounters {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagram bytes sent (the seat byte not counted).
    pub bytes_sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// Datagram bytes received.
    pub bytes_received: u64,
    /// Datagrams not sent: the write buffer was full or the connection gone.
    pub send_failures: u64,
    /// Empty binary frames or undecodable text messages received.
    pub bad_frames: u64,
    /// `joined` messages seen after the start.
    pub joined: u64,
    /// `left` messages seen after the start.
    pub left: u64,
}

/// A member of a room, and (after [`RelayClient::wait_start`]) the relay
/// transport of its session.
#[derive(Debug)]
pub struct RelayClient {
    ws: WebSocket<TcpStream>,
    welcome: Welcome,
    early: VecDeque<Vec<u8>>,
    closed: Option<String>,
    counters: RelayCounters,
}

fn ws_error(e: &tungstenite::Error) -> ClientError {
    ClientError::WebSocket {
        detail: e.to_string(),
    }
}

fn is_timeout(e: &tungstenite::Error) -> bool {
    matches!(e, tungstenite::Error::Io(io) if matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut))
}

/// The `host:port` of a `ws://` URL.
fn authority(url: &str) -> Result<&str, ClientError> {
    let bad = |detail| ClientError::Url {
        url: url.into(),
        detail,
    };
    if url.starts_with("wss://") {
        return Err(bad(
            "wss:// is not supported by the native relay client (no TLS); use ws://",
        ));
    }
    let rest = url
        .strip_prefix("ws://")
        .ok_or_else(|| bad("it must start with ws://"))?;
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() {
        return Err(bad("no host"));
    }
    if rest.len() == host.len() {
        return Err(bad("no path (ws://HOST:PORT/v1/rooms/CODE)"));
    }
    Ok(host)
}

impl RelayClient {
    /// Connects to the room at `url` (`ws://HOST:PORT/v1/rooms/CODE`) and
    /// takes a seat of `role` (`slot`: a given seat), within `timeout`.
    ///
    /// # Errors
    ///
    /// [`ClientError`]: a bad URL, no connection, a failed handshake, a
    /// refusal by the server (`room-full`, `no-such-room`, ...) or no
    /// `welcome` in time.
    pub fn join(
        url: &str,
        role: Role,
        slot: Option<u8>,
        timeout: Duration,
    ) -> Result<RelayClient, ClientError> {
        let host = authority(url)?;
        let with_port = if host.rsplit_once(':').is_some_and(|(_, p)| !p.contains(']')) {
            host.to_string()
        } else {
            format!("{host}:80")
        };
        let connect_err = |source| ClientError::Connect {
            addr: with_port.clone(),
            source,
        };
        let addr: SocketAddr = with_port
            .to_socket_addrs()
            .map_err(connect_err)?
            .next()
            .ok_or_else(|| {
                connect_err(std::io::Error::new(
                    ErrorKind::NotFound,
                    "the host has no address",
                ))
            })?;
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(connect_err)?;
        stream.set_nodelay(true).map_err(connect_err)?;
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .map_err(connect_err)?;
        stream
            .set_write_timeout(Some(timeout))
            .map_err(connect_err)?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_SERVER_TEXT_BYTES.max(MAX_RELAY_FRAME)))
            .max_frame_size(Some(MAX_SERVER_TEXT_BYTES.max(MAX_RELAY_FRAME)))
            .write_buffer_size(0)
            .max_write_buffer_size(MAX_WRITE_BUFFER);
        let (ws, _) =
            tungstenite::client::client_with_config(url, stream, Some(config)).map_err(|e| {
                ClientError::WebSocket {
                    detail: e.to_string(),
                }
            })?;
        let mut client = RelayClient {
            ws,
            welcome: Welcome {
                slot: 0,
                role,
                code: String::new(),
                spec: crate::RoomSpec {
                    sim: String::new(),
                    version: 0,
                    config: String::new(),
                    players: 0,
                    spectators: 0,
                    ticks: 0,
                    check_every: 1,
                    disconnect_after: 1,
                },
                session_key: String::new(),
                started: false,
                peers: Vec::new(),
            },
            early: VecDeque::new(),
            closed: None,
            counters: RelayCounters::default(),
        };
        client.send_text(&ClientMsg::Join { role, slot })?;
        let deadline = Instant::now() + timeout;
        loop {
            match client.next_lobby_message(deadline, "welcome")? {
                ServerMsg::Welcome(w) => {
                    client.welcome = w;
                    return Ok(client);
                }
                _ => continue,
            }
        }
    }

    /// The `welcome`: seat, sim, config, match settings, session key.
    #[must_use]
    pub const fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// Says `ready` and waits for `start` (at most `timeout`), unless the
    /// match already started (a rejoin). Then the client reads without
    /// blocking and is ready to be a [`Transport`].
    ///
    /// # Errors
    ///
    /// [`ClientError`]: a refusal, a closed connection, no `start` in time.
    pub fn wait_start(&mut self, timeout: Duration) -> Result<(), ClientError> {
        if !self.welcome.started {
            self.send_text(&ClientMsg::Ready {})?;
            let deadline = Instant::now() + timeout;
            let mut next_ping = Instant::now() + LOBBY_PING;
            loop {
                if Instant::now() >= next_ping {
                    self.send_text(&ClientMsg::Ping { id: None })?;
                    next_ping += LOBBY_PING;
                }
                let wait = deadline.min(next_ping);
                match self.next_lobby_message(wait, "start") {
                    Ok(ServerMsg::Start {}) => break,
                    Ok(_) => {}
                    Err(ClientError::Timeout { .. }) if Instant::now() < deadline => {}
                    Err(ClientError::Timeout { .. }) => {
                        return Err(ClientError::Timeout {
                            waiting_for: "start (every player seat taken and ready)",
                            after: timeout,
                        });
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        self.ws
            .get_mut()
            .set_nonblocking(true)
            .map_err(|e| ClientError::WebSocket {
                detail: format!("cannot make the socket non-blocking: {e}"),
            })?;
        Ok(())
    }

    /// Leaves the room (`leave`), and closes the connection.
    pub fn leave(mut self) {
        let _ = self.ws.send(Message::text(ClientMsg::Leave {}.to_text()));
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
    }

    /// What the relay carried.
    #[must_use]
    pub const fn counters(&self) -> RelayCounters {
        self.counters
    }

    /// Why the relay ended, if it did (the server's `error` reason, or a
    /// closed connection).
    #[must_use]
    pub fn closed(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    fn send_text(&mut self, msg: &ClientMsg) -> Result<(), ClientError> {
        self.ws
            .send(Message::text(msg.to_text()))
            .map_err(|e| ws_error(&e))
    }

    /// The next text message in the lobby (blocking until `deadline`);
    /// binary frames meanwhile are kept for the session.
    fn next_lobby_message(
        &mut self,
        deadline: Instant,
        waiting_for: &'static str,
    ) -> Result<ServerMsg, ClientError> {
        let start = Instant::now();
        loop {
            if Instant::now() >= deadline {
                return Err(ClientError::Timeout {
                    waiting_for,
                    after: deadline.saturating_duration_since(start),
                });
            }
            match self.ws.read() {
                Ok(Message::Text(t)) => match ServerMsg::parse(t.as_str()) {
                    Ok(ServerMsg::Error { reason, message }) => {
                        return Err(ClientError::Refused { reason, message });
                    }
                    Ok(m) => return Ok(m),
                    Err(_) => self.counters.bad_frames += 1,
                },
                Ok(Message::Binary(b)) => {
                    if self.early.len() < EARLY_FRAMES {
                        self.early.push_back(b.to_vec());
                    }
                }
                Ok(Message::Close(_)) => return Err(ClientError::Closed),
                Ok(_) => {}
                Err(e) if is_timeout(&e) => {}
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    return Err(ClientError::Closed);
                }
                Err(e) => return Err(ws_error(&e)),
            }
        }
    }

    fn deliver(&mut self, frame: &[u8], buf: &mut [u8]) -> Option<Datagram> {
        let (&from, datagram) = frame.split_first()?;
        let n = datagram.len().min(buf.len());
        buf[..n].copy_from_slice(&datagram[..n]);
        self.counters.received += 1;
        self.counters.bytes_received += datagram.len() as u64;
        Some(Datagram {
            from: Some(from),
            len: datagram.len(),
        })
    }
}

impl Transport for RelayClient {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        if self.closed.is_some() {
            self.counters.send_failures += 1;
            return;
        }
        let frame = relay_out(to, bytes);
        match self.ws.send(Message::binary(frame)) {
            Ok(()) => {}
            // Written into the buffer; flushed by the next call.
            Err(tungstenite::Error::Io(e)) if e.kind() == ErrorKind::WouldBlock => {}
            Err(tungstenite::Error::WriteBufferFull(_)) => {
                self.counters.send_failures += 1;
                return;
            }
            Err(e) => {
                self.closed = Some(e.to_string());
                self.counters.send_failures += 1;
                return;
            }
        }
        self.counters.sent += 1;
        self.counters.bytes_sent += bytes.len() as u64;
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        while let Some(frame) = self.early.pop_front() {
            if let Some(d) = self.deliver(&frame, buf) {
                return Some(d);
            }
            self.counters.bad_frames += 1;
        }
        if self.closed.is_some() {
            return None;
        }
        loop {
            match self.ws.read() {
                Ok(Message::Binary(b)) => {
                    if let Some(d) = self.deliver(&b, buf) {
                        return Some(d);
                    }
                    self.counters.bad_frames += 1;
                }
                Ok(Message::Text(t)) => match ServerMsg::parse(t.as_str()) {
                    Ok(ServerMsg::Left { .. }) => self.counters.left += 1,
                    Ok(ServerMsg::Joined { .. }) => self.counters.joined += 1,
                    Ok(ServerMsg::Error { reason, .. }) => {
                        self.closed = Some(reason);
                        return None;
                    }
                    Ok(_) => {}
                    Err(_) => self.counters.bad_frames += 1,
                },
                Ok(Message::Close(_)) => {
                    self.closed = Some("closed by the server".into());
                    return None;
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e)) if e.kind() == ErrorKind::WouldBlock => {
                    // Nothing to read: push out what is still buffered.
                    let _ = self.ws.flush();
                    return None;
                }
                Err(e) => {
                    self.closed = Some(e.to_string());
                    return None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            authority("ws://127.0.0.1:8080/v1/rooms/x").ok(),
            Some("127.0.0.1:8080")
        );
        for bad in [
            "http://127.0.0.1/v1/rooms/x",
            "wss://h/v1/rooms/x",
            "ws:///x",
            "ws://h",
        ] {
            assert!(authority(bad).is_err(), "{bad}");
        }
    }
}
