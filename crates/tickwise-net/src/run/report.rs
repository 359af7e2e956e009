//! What a run hands back: per-peer and per-spectator reports, a desync
//! finding and its bundle files, the outcomes of both drivers, and the
//! helpers both drivers use to fill a [`PeerReport`] from a session.

use alloc::string::String;
use alloc::vec::Vec;

use tickwise::{ReplayInput, Sim};

use crate::session::{Desync, Session, SessionEnd, SessionError, SessionStats};

/// One peer's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerReport {
    /// The player slot.
    pub slot: u8,
    /// The newest confirmed tick.
    pub confirmed_tick: u64,
    /// The checksum of the newest confirmed state.
    pub confirmed_checksum: u64,
    /// Counters.
    pub stats: SessionStats,
    /// Bytes of this peer's datagrams, MACs included, without UDP/IP
    /// headers (0 over UDP: not counted).
    pub bytes_sent: u64,
    /// Datagrams the network lost from this peer (0 over UDP: unknown).
    pub lost: u64,
    /// Extra copies the network delivered of this peer's datagrams (0 over
    /// UDP: unknown).
    pub duplicated: u64,
    /// This peer's datagrams the network held back so later ones overtook
    /// them (0 over UDP: unknown).
    pub reordered: u64,
    /// Median cost of one tick of this peer (session and sim), ns.
    pub frame_p50_ns: u64,
    /// 99th percentile cost, ns.
    pub frame_p99_ns: u64,
    /// The first desync this peer saw.
    pub desync: Option<Desync>,
    /// Why it ended early, if it did.
    pub ended: Option<SessionEnd>,
    /// The players this peer saw leave, each with the agreed first tick of
    /// its absent input.
    pub departed: Vec<(u8, u64)>,
    /// The players this peer saw rejoin: slot, first absent tick, join tick.
    pub rejoined: Vec<(u8, u64, u64)>,
    /// When this peer rejoined ([`run_local_rejoin`](super::run_local_rejoin),
    /// or [`run_peer`](super::run_peer) with an epoch): the ticks (of
    /// network time; over UDP, of the sim's step on the host clock) from its
    /// first request to playing, and the snapshot's size.
    pub rejoin: Option<(u64, u64)>,
}

pub(super) fn rejoins<S: Sim + Clone>(s: &Session<S>) -> Vec<(u8, u64, u64)>
where
    S::Input: ReplayInput,
{
    (0..s.config().players)
        .filter_map(|p| s.rejoined(p).map(|(a, b)| (p, a, b)))
        .collect()
}

pub(super) fn departures<S: Sim + Clone>(s: &Session<S>) -> Vec<(u8, u64)>
where
    S::Input: ReplayInput,
{
    (0..s.config().players)
        .filter_map(|p| s.departed(p).map(|t| (p, t)))
        .collect()
}

/// A spectator's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpectatorReport {
    /// Its slot.
    pub slot: u8,
    /// The tick of the anchor it started from.
    pub joined_at: u64,
    /// Ticks it reached.
    pub tick: u64,
    /// Its state's checksum.
    pub checksum: u64,
    /// The host's verdict on it (`None`: fine).
    pub error: Option<SessionError>,
}

/// A desync, with everything found out about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The first checked confirmed tick whose checksums differ.
    pub tick: u64,
    /// The two players.
    pub players: (u8, u8),
    /// Their checksums.
    pub checksums: (u64, u64),
    /// The fields whose hashes differ.
    pub fields: Vec<&'static str>,
    /// The kept confirmed snapshot before the desync, its tick and checksum.
    pub snapshot: Option<(u64, u64)>,
}

/// A file of a forensic bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleFile {
    /// File name (no directories).
    pub name: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// The outcome of [`run_local`](super::run_local).
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct LocalRun {
    /// Per player.
    pub peers: Vec<PeerReport>,
    /// Per spectator.
    pub spectators: Vec<SpectatorReport>,
    /// Whether every peer confirmed every tick.
    pub finished: bool,
    /// Whether every peer's final confirmed checksum is the same.
    pub checksums_agree: bool,
    /// The replay of the confirmed inputs (player 0's recording).
    pub replay: Vec<u8>,
    /// The first desync.
    pub desync: Option<Finding>,
    /// The forensic bundle (empty without a desync): two replays and a report.
    pub bundle: Vec<BundleFile>,
    /// Network time simulated, ns.
    pub network_ns: u64,
}

pub(super) fn percentile(sorted: &[u64], pct: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = (sorted.len() - 1) * pct / 100;
    sorted.get(i).copied().unwrap_or(0)
}

/// The outcome of [`run_peer`](super::run_peer).
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct PeerRun {
    /// This peer.
    pub report: PeerReport,
    /// Whether it confirmed every tick.
    pub finished: bool,
    /// The replay of the confirmed inputs with this peer's own checkpoints.
    pub replay: Vec<u8>,
    /// Ticks the game loop ran (the session's time base).
    pub loop_ticks: u64,
}
