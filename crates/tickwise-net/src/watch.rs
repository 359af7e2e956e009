//! Spectators over the wire, the spectator's side: a [`Watcher`] asks a
//! player of a running match to be fed it, loads the latest confirmed
//! anchor as a snapshot in chunks (the rejoin's transfer), checks it, and becomes a
//! [`Spectator`] that steps the confirmed inputs the player sends. The
//! player's side is in the session; docs/netplay.md, "Spectators over UDP".

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use tickwise::codec::Reader;
use tickwise::{ReplayInput, Sim};

use tickwise::{ClockConfig, Nanos};

use crate::auth::{Auth, SessionKey};
use crate::config::{FIRST_SPECTATOR_SLOT, MAX_SEQ_JUMP, MAX_SPECTATORS, SPECTATOR_BUFFER};
use crate::game::Injected;
use crate::rejoin::{Incoming, RejoinError, read_payload};
use crate::run::{HostClock, MAX_REJOIN_SNAPSHOT, PeerReport, RunError, RunOptions};
use crate::session::SessionStats;
use crate::session::{Drops, SnapshotCodec};
use crate::spectator::Spectator;
use crate::transport::{RECV_BUFFER, Transport, drain};
use crate::wire::{
    Body, Buf, Envelope, KIND_CHUNK_ACK, KIND_WATCH, UNASSIGNED_SLOT, WATCH_ADMITTED, WATCH_FULL,
    WATCH_NO_SNAPSHOT, WATCH_SILENT, WATCH_TOO_LARGE, WatchReplyMsg, decode, write_envelope,
};

/// Why a spectator stopped watching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchError {
    /// The player already feeds its cap of spectators.
    Full {
        /// Its cap.
        cap: u64,
    },
    /// The sim has no snapshot encoding, so there is no snapshot to send.
    NoSnapshotEncoding,
    /// The snapshot is larger than the limit (the player's or this one's).
    TooLarge {
        /// Its size in bytes.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The player dropped this spectator: it fell more than the player's
    /// spectator buffer behind the player's confirmed tick.
    TooFarBehind {
        /// The tick it needed next.
        needs: u64,
        /// The player's confirmed tick when it dropped it.
        confirmed: u64,
    },
    /// The player dropped this spectator: it was silent past the player's
    /// timeout.
    DroppedSilent {
        /// The timeout, in the player's ticks.
        after: u64,
    },
    /// No answer from the player to the watch requests.
    NoAnswer {
        /// Ticks asked for.
        ticks: u64,
    },
    /// The player went silent while this spectator watched.
    HostSilent {
        /// Ticks without a datagram.
        ticks: u64,
    },
    /// The snapshot could not be loaded (malformed, or its checksum is
    /// not the player's).
    Load(RejoinError),
}

impl fmt::Display for WatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchError::Full { cap } => write!(
                f,
                "spectating refused: the player already feeds its cap of {cap} spectators"
            ),
            WatchError::NoSnapshotEncoding => f.write_str(
                "spectating refused: the sim has no snapshot encoding (it does not implement SnapshotBytes)",
            ),
            WatchError::TooLarge { bytes, limit } => write!(
                f,
                "spectating refused: the snapshot is {bytes} bytes, over the limit of {limit}"
            ),
            WatchError::TooFarBehind { needs, confirmed } => write!(
                f,
                "dropped by the player: this spectator fell too far behind (it needed tick {needs}, the player had confirmed tick {confirmed} and keeps the last {SPECTATOR_BUFFER} ticks for spectators)"
            ),
            WatchError::DroppedSilent { after } => write!(
                f,
                "dropped by the player: this spectator was silent for more than {after} ticks"
            ),
            WatchError::NoAnswer { ticks } => write!(
                f,
                "no answer from the player in {ticks} ticks (is the match running, with the same key, and does that player admit spectators?)"
            ),
            WatchError::HostSilent { ticks } => write!(
                f,
                "the player was silent for {ticks} ticks (it left, or its match ended before this spectator caught up)"
            ),
            WatchError::Load(e) => write!(f, "spectating: {e}"),
        }
    }
}

impl core::error::Error for WatchError {}

impl From<&WatchReplyMsg> for WatchError {
    fn from(r: &WatchReplyMsg) -> WatchError {
        match r.code {
            WATCH_FULL => WatchError::Full { cap: r.a },
            WATCH_NO_SNAPSHOT => WatchError::NoSnapshotEncoding,
            WATCH_TOO_LARGE => WatchError::TooLarge {
                bytes: r.a,
                limit: r.b,
            },
            WATCH_SILENT => WatchError::DroppedSilent { after: r.a },
            _ => WatchError::TooFarBehind {
                needs: r.a,
                confirmed: r.b,
            },
        }
    }
}

/// Where a watcher is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchProgress {
    /// Asking; no chunk of the snapshot yet.
    Asking,
    /// Loading the snapshot.
    Loading {
        /// Bytes received.
        received: u64,
        /// Its size.
        total: u64,
    },
    /// Watching: the state's tick.
    Watching {
        /// Confirmed ticks stepped.
        tick: u64,
    },
}

/// A spectator process of a running match: tick it from the loop until it
/// watches ([`WatchProgress::Watching`]); it goes on following the player
/// it asked, never sending an input.
#[derive(Debug)]
pub struct Watcher<S: Sim> {
    sim: Option<S>,
    codec: SnapshotCodec<S>,
    players: u8,
    host: u8,
    key: SessionKey,
    auth: Auth,
    epoch: u64,
    max_bytes: usize,
    slot: Option<u8>,
    seq: u64,
    host_seq: Option<u64>,
    incoming: Option<Incoming>,
    spectator: Option<Spectator<S>>,
    joined_at: Option<u64>,
    loaded: u64,
    silent: u64,
    out: Buf,
    rbuf: Vec<u8>,
    drops: Drops,
}

impl<S: Sim + Clone> Watcher<S>
where
    S::Input: ReplayInput,
{
    /// A spectator of a `players`-player match with key `key`, fed by
    /// player `host`: `sim` is built from the match's config (its state is
    /// replaced by the snapshot), `epoch` a number this process picked
    /// at random, `max_bytes` the largest snapshot accepted.
    #[must_use]
    pub fn new(
        sim: S,
        players: u8,
        host: u8,
        key: &SessionKey,
        codec: SnapshotCodec<S>,
        epoch: u64,
        max_bytes: usize,
    ) -> Watcher<S> {
        Watcher {
            sim: Some(sim),
            codec,
            players,
            host,
            key: *key,
            auth: Auth::new(key),
            epoch,
            max_bytes,
            slot: None,
            seq: 0,
            host_seq: None,
            incoming: None,
            spectator: None,
            joined_at: None,
            loaded: 0,
            silent: 0,
            out: Buf::new(),
            rbuf: vec![0; RECV_BUFFER],
            drops: Drops::default(),
        }
    }

    /// The spectator, once the snapshot is loaded.
    #[must_use]
    pub const fn spectator(&self) -> Option<&Spectator<S>> {
        self.spectator.as_ref()
    }

    /// The snapshot's tick, once loaded.
    #[must_use]
    pub const fn joined_at(&self) -> Option<u64> {
        self.joined_at
    }

    /// The snapshot's size in bytes (0 before its first chunk).
    #[must_use]
    pub const fn snapshot_bytes(&self) -> u64 {
        self.loaded
    }

    /// Ticks since the player's last datagram.
    #[must_use]
    pub fn silent_ticks(&self) -> u64 {
        self.spectator
            .as_ref()
            .map_or(self.silent, Spectator::silent_ticks)
    }

    /// Datagrams dropped, by reason (while loading and while watching).
    #[must_use]
    pub fn drops(&self) -> Drops {
        let mut d = self.drops;
        if let Some(s) = &self.spectator {
            let w = s.drops();
            d.malformed += w.malformed;
            d.oversized += w.oversized;
            d.version += w.version;
            d.unknown_kind += w.unknown_kind;
            d.unknown_peer += w.unknown_peer;
            d.wrong_session += w.wrong_session;
            d.unauthenticated += w.unauthenticated;
            d.stale += w.stale;
            d.far_future += w.far_future;
            d.departed += w.departed;
        }
        d
    }

    /// One tick: reads datagrams; asks, acknowledges chunks, or (watching)
    /// steps up to `max_steps` confirmed ticks and acks.
    ///
    /// # Errors
    ///
    /// A [`WatchError`]: refused, dropped, or a snapshot that does not
    /// load. The watcher is done then.
    pub fn tick(
        &mut self,
        transport: &mut dyn Transport,
        max_steps: u64,
    ) -> Result<WatchProgress, WatchError> {
        if let Some(sp) = self.spectator.as_mut() {
            sp.tick_once(transport, max_steps);
            if let Some(r) = sp.dropped() {
                return Err(WatchError::from(r));
            }
            return Ok(WatchProgress::Watching { tick: sp.tick() });
        }
        self.silent = self.silent.saturating_add(1);
        let mut buf = core::mem::take(&mut self.rbuf);
        let (oversized, result) = drain(transport, &mut buf, |from, bytes| {
            self.handle_datagram(from, bytes)
        });
        self.rbuf = buf;
        self.drops.oversized += oversized;
        result?;
        if self.slot.is_some() && self.incoming.as_ref().is_some_and(Incoming::complete) {
            return self.finish();
        }
        self.send(transport);
        Ok(match &self.incoming {
            None => WatchProgress::Asking,
            Some(i) => WatchProgress::Loading {
                received: i.received,
                total: i.total,
            },
        })
    }

    fn handle_datagram(&mut self, from: Option<u8>, bytes: &[u8]) -> Result<(), WatchError> {
        let decoded = decode(bytes, &self.auth, |r: &mut Reader<'_>| {
            S::Input::decode(r).is_ok()
        });
        let (env, body) = match decoded {
            Ok(x) => x,
            Err(e) => {
                self.drops.count(&e);
                return Ok(());
            }
        };
        if from != Some(self.host) || env.sender != self.host {
            self.drops.unknown_peer += 1;
            return Ok(());
        }
        // A chunk is checked by MAC and epoch, not by sequence number: the
        // player sends up to 9 datagrams a tick to a loading spectator, and
        // jitter reorders datagrams of one tick, so a chunk overtaken by a
        // later datagram is still news (a copy of one is filed once).
        let chunk = matches!(body, Body::Chunk(m) if m.epoch == self.epoch);
        if !chunk && self.host_seq.is_some_and(|l| env.seq <= l) {
            self.drops.stale += 1;
            return Ok(());
        }
        // The player's first datagram sets the baseline: it has numbered
        // its datagrams since the match began.
        if let Some(l) = self.host_seq
            && env.seq > l.saturating_add(MAX_SEQ_JUMP)
        {
            self.drops.far_future += 1;
            return Ok(());
        }
        match body {
            Body::WatchReply(r) if r.epoch == self.epoch => {
                self.host_seq = Some(env.seq);
                self.silent = 0;
                if r.code != WATCH_ADMITTED {
                    return Err(WatchError::from(&r));
                }
                let last = FIRST_SPECTATOR_SLOT + MAX_SPECTATORS;
                if !(FIRST_SPECTATOR_SLOT..last).contains(&r.slot) {
                    self.drops.malformed += 1;
                    return Ok(());
                }
                self.slot = Some(r.slot);
            }
            Body::Chunk(m) if m.epoch == self.epoch => {
                self.host_seq = Some(self.host_seq.map_or(env.seq, |l| l.max(env.seq)));
                self.silent = 0;
                Incoming::receive(
                    &mut self.incoming,
                    self.host,
                    &m,
                    self.max_bytes,
                    &mut self.drops,
                )
                .map_err(|e| match e {
                    RejoinError::TooLarge { bytes, limit } => WatchError::TooLarge { bytes, limit },
                    e => WatchError::Load(e),
                })?;
                if let Some(i) = &self.incoming {
                    self.loaded = i.total;
                }
            }
            // Inputs, checksums and the rest are for players.
            _ => self.drops.unknown_peer += 1,
        }
        Ok(())
    }

    fn env(&mut self, sender: u8) -> Envelope {
        self.seq += 1;
        Envelope {
            session: self.auth.session_id(),
            sender,
            seq: self.seq,
        }
    }

    fn send(&mut self, transport: &mut dyn Transport) {
        let Some(inc) = self.incoming.as_ref() else {
            let env = self.env(UNASSIGNED_SLOT);
            write_envelope(&mut self.out, KIND_WATCH, &env);
            self.out.extend(&self.epoch.to_le_bytes());
            if self.out.seal(&self.auth) {
                transport.send(self.host, self.out.bytes());
            }
            return;
        };
        let (next, have) = inc.ack();
        let Some(slot) = self.slot else {
            // Chunks came before the welcome: ask again (the player
            // answers an admitted spectator's request with the welcome).
            let env = self.env(UNASSIGNED_SLOT);
            write_envelope(&mut self.out, KIND_WATCH, &env);
            self.out.extend(&self.epoch.to_le_bytes());
            if self.out.seal(&self.auth) {
                transport.send(self.host, self.out.bytes());
            }
            return;
        };
        let env = self.env(slot);
        write_envelope(&mut self.out, KIND_CHUNK_ACK, &env);
        self.out.extend(&self.epoch.to_le_bytes());
        self.out.varint(next);
        self.out.extend(&have.to_le_bytes());
        if self.out.seal(&self.auth) {
            transport.send(self.host, self.out.bytes());
        }
    }

    fn finish(&mut self) -> Result<WatchProgress, WatchError> {
        let (Some(inc), Some(slot)) = (self.incoming.take(), self.slot) else {
            return Ok(WatchProgress::Asking);
        };
        let (_, rest) = read_payload(&inc.buf, self.players, None).map_err(WatchError::Load)?;
        let mut sim = self
            .sim
            .take()
            .ok_or(WatchError::Load(RejoinError::Payload { what: "state" }))?;
        self.codec
            .read(&mut sim, rest)
            .map_err(|e| WatchError::Load(RejoinError::Snapshot(e)))?;
        let found = sim.checksum();
        if found != inc.checksum {
            return Err(WatchError::Load(RejoinError::Checksum {
                expected: inc.checksum,
                found,
            }));
        }
        let sp = Spectator::new(sim, inc.join, slot, self.players, &self.key).watching(
            self.host,
            self.epoch,
            self.seq,
            self.host_seq,
        );
        self.spectator = Some(sp);
        self.joined_at = Some(inc.join);
        Ok(WatchProgress::Watching { tick: inc.join })
    }
}

/// The most confirmed ticks a spectator steps per tick of its loop while it
/// catches up from its snapshot (and after a stall).
pub const SPECTATOR_CATCH_UP: u64 = 8;

/// The outcome of [`run_spectator`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct SpectatorRun {
    /// What a player's report says, for the spectator: its slot (255
    /// before it had one), the confirmed tick it reached and its state's
    /// checksum, the ticks of its loop and the datagrams it dropped.
    pub report: PeerReport,
    /// Whether it reached the match's last tick.
    pub finished: bool,
    /// The tick of the snapshot it started from.
    pub joined_at: Option<u64>,
    /// The snapshot's size in bytes.
    pub snapshot_bytes: u64,
    /// Ticks of its loop from its first request to watching.
    pub load_ticks: Option<u64>,
    /// Why it stopped early: refused, dropped, or the player went silent.
    pub error: Option<WatchError>,
}

/// Runs a spectator process of a running match: asks player `host` over
/// `transport` (the players started with the same key and settings in
/// `opts`), loads the snapshot, and follows the match at the sim's step
/// (`clock_config`) on `clock` until it has stepped `opts.ticks` ticks,
/// stopped (refused, dropped, or the player silent for
/// `opts.disconnect_after` ticks of its loop), or `deadline` passed.
/// `epoch` is a random number of this process.
///
/// # Errors
///
/// [`RunError::Config`] for settings out of range, and
/// [`RunError::Rejoin`] when the sim has no snapshot encoding.
#[allow(clippy::too_many_arguments, reason = "one call site per front end")]
pub fn run_spectator<S: Sim + Clone + 'static>(
    initial: &S,
    clock_config: ClockConfig,
    opts: &RunOptions,
    host: u8,
    codec: Option<&SnapshotCodec<S>>,
    epoch: u64,
    transport: &mut dyn Transport,
    clock: &mut dyn HostClock,
    deadline: Nanos,
) -> Result<SpectatorRun, RunError>
where
    S::Input: ReplayInput,
{
    let mut cfg = crate::config::SessionConfig::new(opts.players, 0, opts.key);
    cfg.disconnect_after = opts.disconnect_after;
    cfg.validate()?;
    if host >= opts.players {
        return Err(RunError::Config(
            crate::config::SessionConfigError::LocalSlot {
                slot: host,
                players: opts.players,
            },
        ));
    }
    let Some(codec) = codec else {
        return Err(RunError::Rejoin(RejoinError::NoSnapshotEncoding));
    };
    let sim = Injected::new(initial.clone(), 0, None);
    let mut w = Watcher::new(
        sim,
        opts.players,
        host,
        &opts.key,
        SnapshotCodec::injected(codec),
        epoch,
        MAX_REJOIN_SNAPSHOT,
    );
    let step = clock_config.step().steps_to_nanos(1).as_nanos().max(1);
    let start = clock.now().as_nanos();
    let mut next = start;
    let mut ticks = 0u64;
    let mut load_ticks = None;
    let mut error = None;
    let mut finished = false;
    loop {
        let now = clock.now().as_nanos();
        if now >= next {
            // One tick per pass; a stall's backlog is dropped (a spectator
            // catches up in confirmed ticks, SPECTATOR_CATCH_UP a tick).
            next = next.saturating_add(step).max(now.saturating_sub(step));
            ticks += 1;
            match w.tick(transport, SPECTATOR_CATCH_UP) {
                Err(e) => {
                    error = Some(e);
                    break;
                }
                Ok(WatchProgress::Watching { tick }) => {
                    load_ticks.get_or_insert(ticks);
                    if tick >= opts.ticks {
                        finished = true;
                        break;
                    }
                }
                Ok(_) => {}
            }
            let silent = w.silent_ticks();
            if silent > opts.disconnect_after {
                error = Some(if w.joined_at().is_some() {
                    WatchError::HostSilent { ticks: silent }
                } else {
                    WatchError::NoAnswer { ticks: silent }
                });
                break;
            }
        }
        if now.saturating_sub(start) >= deadline.as_nanos() {
            break;
        }
        clock.sleep(Nanos::from_millis(1));
    }
    let sp = w.spectator();
    let stats = SessionStats {
        local_ticks: ticks,
        drops: w.drops(),
        ..SessionStats::default()
    };
    let report = PeerReport {
        slot: sp.map_or(UNASSIGNED_SLOT, Spectator::slot),
        confirmed_tick: sp.map_or(0, Spectator::tick),
        confirmed_checksum: sp.map_or(0, |s| s.sim().checksum()),
        stats,
        bytes_sent: 0,
        lost: 0,
        duplicated: 0,
        reordered: 0,
        frame_p50_ns: 0,
        frame_p99_ns: 0,
        desync: None,
        ended: None,
        departed: Vec::new(),
        rejoined: Vec::new(),
        rejoin: None,
    };
    Ok(SpectatorRun {
        report,
        finished,
        joined_at: w.joined_at(),
        snapshot_bytes: w.snapshot_bytes(),
        load_ticks,
        error,
    })
}
