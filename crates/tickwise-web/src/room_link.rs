//! The room page's transport: a [`Transport`] over the browser's own
//! network stack.
//!
//! * **Direct:** one WebRTC data channel per other player
//!   (`{ordered: false, maxRetransmits: 0}`: the datagram semantics the
//!   session expects; a lost datagram is never resent), a `web-sys`
//!   [`RtcDataChannel`] the page's lobby negotiated and attached with
//!   [`RoomLinks::attach_channel`].
//! * **Relay:** the room's WebSocket (`web-sys` [`WebSocket`]): a binary
//!   frame `[to][datagram]` out, `[from][datagram]` in (docs/rooms.md,
//!   "Binary frames: the relay"). The server sets `from`; the datagram's
//!   MAC is checked by the session as for any other path.
//!
//! A datagram to a player goes over that player's channel while it is
//! open, and over the relay otherwise (before the channel opens, after it
//! closes, when it never opens, or always with `relay_only`): the path is
//! chosen per datagram, so a channel that fails mid-match costs nothing
//! but the switch. Both paths may deliver in the same match; the session
//! drops what it already has (`stale`).
//!
//! Received datagrams wait in a bounded queue ([`INBOX_CAP`]); a full
//! queue drops the newest (counted), and a sender's path is never allowed
//! to buffer more than [`MAX_BUFFERED`] bytes in the browser (a datagram
//! over it is dropped and counted): a stalled tab or link costs bounded
//! memory, never an unbounded backlog. The queue and the counters are
//! plain Rust ([`Inbox`], tested natively); only [`RoomLinks`] touches the
//! browser.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use tickwise_net::{Datagram, Transport};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{
    BinaryType, MessageEvent, RtcDataChannel, RtcDataChannelState, RtcDataChannelType, WebSocket,
};

/// The longest datagram of the netplay wire (docs/netplay.md, "Wire
/// format"), and so the longest a relay frame carries (docs/rooms.md).
pub const MAX_PACKET: usize = 508;
/// Player seats (slots 0–3); spectators are not linked by this page.
pub const PLAYER_SLOTS: usize = 4;
/// The most received datagrams held between two ticks (a tick reads them
/// all; 1024 is several seconds of a 4-player match at 60 Hz).
pub const INBOX_CAP: usize = 1024;
/// The most bytes a path may hold unsent in the browser
/// (`bufferedAmount`): over it a datagram is dropped, as a full socket
/// buffer would.
pub const MAX_BUFFERED: u32 = 64 * 1024;
/// A relay frame: the seat byte and a datagram of up to [`MAX_PACKET`].
pub const MAX_RELAY_FRAME: usize = 1 + MAX_PACKET;
/// The longest datagram kept whole: longer ones are queued cut to this
/// length and reported with their full length, so the session counts
/// them `oversized` (its receive buffer is 1536 bytes).
pub const MAX_KEPT: usize = tickwise_net::RECV_BUFFER;

/// Which path datagrams to a peer take right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The WebRTC data channel (open).
    Direct,
    /// The room's WebSocket.
    Relay,
}

impl Path {
    /// `"direct"` or `"relay"`, as the page shows it.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::Relay => "relay",
        }
    }
}

/// Datagrams and their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    /// Datagrams.
    pub datagrams: u64,
    /// Their bytes (the datagram alone: no seat byte, no headers).
    pub bytes: u64,
}

impl Count {
    fn add(&mut self, len: usize) {
        self.datagrams += 1;
        self.bytes = self.bytes.saturating_add(len as u64);
    }
}

/// What went to and came from one peer, per path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerCounts {
    /// Sent over the data channel.
    pub sent_direct: Count,
    /// Sent over the relay.
    pub sent_relay: Count,
    /// Received over the data channel.
    pub received_direct: Count,
    /// Received over the relay.
    pub received_relay: Count,
    /// Not sent: no path was open, the browser refused it, or the path
    /// held over [`MAX_BUFFERED`] bytes.
    pub unsent: u64,
}

/// Received datagrams and every counter: the part of the transport that
/// is plain Rust.
#[derive(Debug, Default)]
pub struct Inbox {
    queue: VecDeque<(u8, Vec<u8>, usize)>,
    peers: [PeerCounts; PLAYER_SLOTS],
    overflow: u64,
    bad_frames: u64,
}

impl Inbox {
    /// An empty inbox.
    #[must_use]
    pub fn new() -> Inbox {
        Inbox::default()
    }

    fn push(&mut self, from: u8, bytes: &[u8]) -> bool {
        if self.queue.len() >= INBOX_CAP {
            self.overflow += 1;
            return false;
        }
        let kept = &bytes[..bytes.len().min(MAX_KEPT)];
        self.queue.push_back((from, kept.to_vec(), bytes.len()));
        true
    }

    /// A datagram from player `from` over its data channel.
    pub fn push_direct(&mut self, from: u8, bytes: &[u8]) {
        if let Some(p) = self.peers.get_mut(usize::from(from)) {
            p.received_direct.add(bytes.len());
        }
        self.push(from, bytes);
    }

    /// A binary frame from the room's WebSocket: `[from][datagram]`. An
    /// empty frame, one from a seat that is not a player's, or one longer
    /// than [`MAX_RELAY_FRAME`] is dropped and counted
    /// ([`Inbox::bad_frames`]): the server never sends them, so such a
    /// frame is a broken server, never a reason to fail.
    pub fn push_relay_frame(&mut self, frame: &[u8]) {
        let Some((&from, datagram)) = frame.split_first() else {
            self.bad_frames += 1;
            return;
        };
        if usize::from(from) >= PLAYER_SLOTS || frame.len() > MAX_RELAY_FRAME {
            self.bad_frames += 1;
            return;
        }
        self.peers[usize::from(from)]
            .received_relay
            .add(datagram.len());
        self.push(from, datagram);
    }

    /// The next datagram into `buf` (cut to its length; the full length
    /// is reported, as [`Transport::recv`] requires).
    pub fn pop(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        let (from, bytes, len) = self.queue.pop_front()?;
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        Some(Datagram {
            from: Some(from),
            len,
        })
    }

    /// Datagrams waiting.
    #[must_use]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether none is waiting.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The counters of player `slot` (zeros for another slot).
    #[must_use]
    pub fn counts(&self, slot: u8) -> PeerCounts {
        self.peers
            .get(usize::from(slot))
            .copied()
            .unwrap_or_default()
    }

    /// Datagrams dropped because the queue was full.
    #[must_use]
    pub const fn overflow(&self) -> u64 {
        self.overflow
    }

    /// Relay frames dropped as malformed.
    #[must_use]
    pub const fn bad_frames(&self) -> u64 {
        self.bad_frames
    }

    fn count_sent(&mut self, to: u8, path: Option<Path>, len: usize) {
        if let Some(p) = self.peers.get_mut(usize::from(to)) {
            match path {
                Some(Path::Direct) => p.sent_direct.add(len),
                Some(Path::Relay) => p.sent_relay.add(len),
                None => p.unsent += 1,
            }
        }
    }
}

/// Writes the relay frame of a datagram to seat `to` into `out`.
pub fn relay_frame(to: u8, datagram: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.push(to);
    out.extend_from_slice(datagram);
}

type Handler = Closure<dyn FnMut(MessageEvent)>;

/// The bytes of a message event's `ArrayBuffer` data, or `None` for text.
fn binary(e: &MessageEvent) -> Option<Vec<u8>> {
    let buf = e.data().dyn_into::<js_sys::ArrayBuffer>().ok()?;
    let len = buf.byte_length() as usize;
    // Never copy more than a relay frame plus one byte out of JS memory:
    // the inbox only needs to know the frame was too long.
    let take = u32::try_from(len.min(MAX_KEPT + 1)).unwrap_or(0);
    let view = js_sys::Uint8Array::new_with_byte_offset_and_length(&buf, 0, take);
    // A longer buffer arrives as MAX_KEPT + 1 bytes: still over every
    // limit, so it is counted as what it is (oversized, or a bad frame).
    Some(view.to_vec())
}

/// The browser side: the room's WebSocket, a data channel per player and
/// the [`Inbox`] their handlers fill. Shared (`Rc<RefCell>`) between the
/// transport, the handlers and the page, which attaches channels as the
/// lobby opens them. See the [module docs](self).
pub struct RoomLinks {
    inbox: Rc<RefCell<Inbox>>,
    ws: Option<(WebSocket, Handler)>,
    channels: [Option<(RtcDataChannel, Handler)>; PLAYER_SLOTS],
    relay_only: bool,
    frame: Vec<u8>,
}

impl std::fmt::Debug for RoomLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoomLinks")
            .field("relay_only", &self.relay_only)
            .field("relay", &self.ws.is_some())
            .finish_non_exhaustive()
    }
}

impl RoomLinks {
    /// No paths yet; `relay_only` never uses a data channel (`?relay=1`).
    #[must_use]
    pub fn new(relay_only: bool) -> RoomLinks {
        RoomLinks {
            inbox: Rc::new(RefCell::new(Inbox::new())),
            ws: None,
            channels: [None, None, None, None],
            relay_only,
            frame: Vec::with_capacity(MAX_RELAY_FRAME),
        }
    }

    /// Whether data channels are never used.
    #[must_use]
    pub const fn relay_only(&self) -> bool {
        self.relay_only
    }

    /// The received datagrams and counters.
    #[must_use]
    pub fn inbox(&self) -> std::cell::Ref<'_, Inbox> {
        self.inbox.borrow()
    }

    /// Uses the room's WebSocket as the relay: its binary frames are
    /// datagrams (text frames are the lobby's, left to the page).
    pub fn attach_relay(&mut self, ws: WebSocket) {
        ws.set_binary_type(BinaryType::Arraybuffer);
        let inbox = Rc::clone(&self.inbox);
        let h: Handler = Closure::new(move |e: MessageEvent| {
            if let (Some(bytes), Ok(mut i)) = (binary(&e), inbox.try_borrow_mut()) {
                i.push_relay_frame(&bytes);
            }
        });
        let _ = ws.add_event_listener_with_callback("message", h.as_ref().unchecked_ref());
        self.detach_relay();
        self.ws = Some((ws, h));
    }

    fn detach_relay(&mut self) {
        if let Some((ws, h)) = self.ws.take() {
            let _ = ws.remove_event_listener_with_callback("message", h.as_ref().unchecked_ref());
        }
    }

    /// Uses `dc` (an open or opening data channel) for player `slot`,
    /// replacing any channel it had. Another slot is ignored (`false`).
    pub fn attach_channel(&mut self, slot: u8, dc: RtcDataChannel) -> bool {
        let s = usize::from(slot);
        if s >= PLAYER_SLOTS {
            return false;
        }
        self.detach_channel(slot);
        dc.set_binary_type(RtcDataChannelType::Arraybuffer);
        let inbox = Rc::clone(&self.inbox);
        let h: Handler = Closure::new(move |e: MessageEvent| {
            if let (Some(bytes), Ok(mut i)) = (binary(&e), inbox.try_borrow_mut()) {
                i.push_direct(slot, &bytes);
            }
        });
        dc.set_onmessage(Some(h.as_ref().unchecked_ref()));
        self.channels[s] = Some((dc, h));
        true
    }

    /// Stops using player `slot`'s channel (its datagrams go by relay).
    pub fn detach_channel(&mut self, slot: u8) {
        if let Some(Some((dc, _))) = self.channels.get_mut(usize::from(slot)).map(Option::take) {
            dc.set_onmessage(None);
        }
    }

    /// Detaches every handler (the page is done with this match): nothing
    /// is delivered after.
    pub fn detach_all(&mut self) {
        self.detach_relay();
        for s in 0..PLAYER_SLOTS {
            #[allow(clippy::cast_possible_truncation, reason = "at most 4")]
            self.detach_channel(s as u8);
        }
    }

    /// The path datagrams to `slot` take right now.
    #[must_use]
    pub fn path(&self, slot: u8) -> Path {
        match self.channels.get(usize::from(slot)) {
            Some(Some((dc, _)))
                if !self.relay_only && dc.ready_state() == RtcDataChannelState::Open =>
            {
                Path::Direct
            }
            _ => Path::Relay,
        }
    }

    fn send(&mut self, to: u8, bytes: &[u8]) {
        let mut used = None;
        if self.path(to) == Path::Direct
            && let Some(Some((dc, _))) = self.channels.get(usize::from(to))
            && dc.buffered_amount() <= MAX_BUFFERED
            && dc.send_with_u8_array(bytes).is_ok()
        {
            used = Some(Path::Direct);
        }
        if used.is_none()
            && let Some((ws, _)) = &self.ws
            && ws.ready_state() == WebSocket::OPEN
            && ws.buffered_amount() <= MAX_BUFFERED
            && bytes.len() <= MAX_PACKET
        {
            relay_frame(to, bytes, &mut self.frame);
            if ws.send_with_u8_array(&self.frame).is_ok() {
                used = Some(Path::Relay);
            }
        }
        if let Ok(mut i) = self.inbox.try_borrow_mut() {
            i.count_sent(to, used, bytes.len());
        }
    }
}

impl Drop for RoomLinks {
    fn drop(&mut self) {
        self.detach_all();
    }
}

/// The [`Transport`] a room match's session owns: a handle on the shared
/// [`RoomLinks`]. A borrow that fails (never, in one thread that does not
/// hold it across a tick) counts the datagram unsent.
#[derive(Debug, Clone)]
pub struct RoomTransport {
    links: Rc<RefCell<RoomLinks>>,
}

impl RoomTransport {
    /// A transport over `links`.
    #[must_use]
    pub const fn new(links: Rc<RefCell<RoomLinks>>) -> RoomTransport {
        RoomTransport { links }
    }
}

impl Transport for RoomTransport {
    fn send(&mut self, to: u8, bytes: &[u8]) {
        if let Ok(mut l) = self.links.try_borrow_mut() {
            l.send(to, bytes);
        }
    }

    fn recv(&mut self, buf: &mut [u8]) -> Option<Datagram> {
        let l = self.links.try_borrow().ok()?;
        let mut i = l.inbox.try_borrow_mut().ok()?;
        i.pop(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_frames_round_trip_and_bad_ones_are_counted() {
        let mut out = Vec::new();
        relay_frame(1, b"hello", &mut out);
        assert_eq!(out, b"\x01hello");
        let mut i = Inbox::new();
        i.push_relay_frame(&out);
        i.push_relay_frame(&[]);
        i.push_relay_frame(&[4, 1, 2]); // a spectator seat: not linked here
        i.push_relay_frame(&vec![0u8; MAX_RELAY_FRAME + 1]);
        assert_eq!(i.bad_frames(), 3);
        assert_eq!(i.len(), 1);
        let mut buf = [0u8; 16];
        let d = i.pop(&mut buf).unwrap();
        assert_eq!((d.from, d.len, &buf[..5]), (Some(1), 5, &b"hello"[..]));
        assert_eq!(
            i.counts(1).received_relay,
            Count {
                datagrams: 1,
                bytes: 5
            }
        );
        assert!(i.pop(&mut buf).is_none());
    }

    #[test]
    fn a_long_datagram_is_cut_and_reported_with_its_length() {
        let mut i = Inbox::new();
        i.push_direct(2, &vec![7u8; 3000]);
        let mut buf = [0u8; 1536];
        let d = i.pop(&mut buf).unwrap();
        // The session sees 3000 > 508 and counts it `oversized`.
        assert_eq!((d.from, d.len), (Some(2), 3000));
        assert_eq!(i.counts(2).received_direct.bytes, 3000);
    }

    #[test]
    fn a_full_inbox_drops_the_newest_and_counts_it() {
        let mut i = Inbox::new();
        for k in 0..INBOX_CAP + 10 {
            i.push_direct(1, &[u8::try_from(k % 251).unwrap()]);
        }
        assert_eq!((i.len(), i.overflow()), (INBOX_CAP, 10));
        let mut buf = [0u8; 4];
        assert_eq!(i.pop(&mut buf).map(|d| d.len), Some(1));
        assert_eq!(buf[0], 0, "the oldest is kept");
    }

    #[test]
    fn sends_are_counted_per_path() {
        let mut i = Inbox::new();
        i.count_sent(1, Some(Path::Direct), 100);
        i.count_sent(1, Some(Path::Relay), 50);
        i.count_sent(1, None, 50);
        i.count_sent(9, None, 1); // not a player: ignored
        let c = i.counts(1);
        assert_eq!(
            (c.sent_direct.bytes, c.sent_relay.bytes, c.unsent),
            (100, 50, 1)
        );
        assert_eq!(i.counts(9), PeerCounts::default());
    }
}
