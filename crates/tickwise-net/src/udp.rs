//! UDP on real sockets (std only).

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::vec::Vec;

use crate::config::FIRST_SPECTATOR_SLOT;
use crate::transport::{Datagram, Transport};

/// A non-blocking UDP socket with a map from slots to addresses: the
/// players' are fixed; a spectator's is added when a session admits it
/// ([`Transport::admit`]). A datagram from an address not in the map is
/// delivered with `from: None`, and the session counts it as from an
/// unknown peer (unless it is an authenticated watch request).
#[derive(Debug)]
pub struct UdpTransport {
    socket: UdpSocket,
    peers: Vec<(u8, SocketAddr)>,
    /// The source of the last datagram from an address not in the map.
    last_unknown: Option<SocketAddr>,
    /// Send errors (the OS refused a datagram), counted, never fatal.
    pub send_errors: u64,
}

impl UdpTransport {
    /// Binds `bind` (non-blocking) and maps each `(slot, address)`.
    ///
    /// # Errors
    ///
    /// The socket error.
    pub fn bind(bind: SocketAddr, peers: Vec<(u8, SocketAddr)>) -> std::io::Result<UdpTransport> {
        let socket = UdpSocket::bind(bind)?;
        socket.set_nonblocking(true)?;
        Ok(UdpTransport {
            socket,
            peers,
            last_unknown: None,
            send_errors: 0,
        })
    }

    /// The bound address.
    ///
    /// # Errors
    ///
    /// The socket error.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.socket.local_addr()
    }
}

impl Transport for UdpTransport {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        if let Some((_, addr)) = self.peers.iter().find(|(s, _)| *s == to)
            && self.socket.send_to(bytes, addr).is_err()
        {
            self.send_errors += 1;
        }
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        loop {
            match self.socket.recv_from(buf) {
                Ok((len, addr)) => {
                    let from = self.peers.iter().find(|(_, a)| *a == addr).map(|(s, _)| *s);
                    if from.is_none() {
                        self.last_unknown = Some(addr);
                    }
                    return Some(Datagram { from, len });
                }
                // A reset from an unreachable peer (Windows) or an
                // interrupted call: try again; no data: done for now.
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
                Err(_) => return None,
            }
        }
    }

    fn admit(&mut self, slot: u8) -> bool {
        let Some(addr) = self.last_unknown else {
            return false;
        };
        if slot < FIRST_SPECTATOR_SLOT {
            return false;
        }
        self.peers.retain(|(s, _)| *s != slot);
        self.peers.push((slot, addr));
        true
    }

    fn reply(&mut self, bytes: &[u8]) {
        if let Some(addr) = self.last_unknown
            && self.socket.send_to(bytes, addr).is_err()
        {
            self.send_errors += 1;
        }
    }
}
