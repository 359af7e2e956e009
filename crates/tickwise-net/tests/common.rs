//! Shared helpers: the island world with its checked-in config.
#![allow(dead_code, unreachable_pub)]

use tickwise::{Pcg32, Replay, ReplayHeader, ReplayLimits, TickInput};
use tickwise_net::wire::{WIRE_MAGIC, WIRE_VERSION};
use tickwise_net::{Auth, SessionKey};
use tickwise_sims::horde::{HordeConfig, HordeWorld};
use tickwise_sims::island::{IslandConfig, IslandWorld};

/// The tests' session key (a real game gets its key from a lobby or a flag).
pub const KEY: SessionKey = SessionKey::from_bytes(*b"tickwise tests k");

/// The MAC key and session id the tests' key gives.
pub fn auth() -> Auth {
    Auth::new(&KEY)
}

/// A hand-written envelope (docs/netplay.md): magic, version, `kind`, the
/// tests' session id, `sender`, sequence number `seq` (below 128: one byte).
pub fn envelope(kind: u8, sender: u8, seq: u8) -> Vec<u8> {
    let mut v = WIRE_MAGIC.to_vec();
    v.extend([WIRE_VERSION, kind]);
    v.extend(auth().session_id().to_le_bytes());
    v.extend([sender, seq]);
    v
}

/// `v` with the MAC of the tests' key appended.
pub fn seal(mut v: Vec<u8>) -> Vec<u8> {
    let tag = auth().tag(&v);
    v.extend(tag);
    v
}

pub const ISLAND: &[u8] = include_bytes!("../../../config/island_loop.json");
pub const HORDE: &[u8] = include_bytes!("../../../config/horde.json");

pub fn island() -> (IslandWorld, ReplayHeader, IslandConfig) {
    let cfg = IslandConfig::from_json(ISLAND).unwrap();
    let header = ReplayHeader {
        sim_id: "island".into(),
        sim_version: 1,
        config: ISLAND.to_vec(),
        seed: u64::from(cfg.seed),
        ticks: 0,
        checkpoint_every: 60,
        input_kind: 0,
    };
    (IslandWorld::new(&cfg), header, cfg)
}

pub fn island_input(rng: &mut Pcg32) -> i32 {
    rng.range_i32(-1, 1)
}

pub fn horde(enemies: u64) -> (HordeWorld, ReplayHeader) {
    let cfg = HordeConfig::from_json(HORDE)
        .unwrap()
        .with_enemies(enemies)
        .unwrap();
    let header = ReplayHeader {
        sim_id: "horde".into(),
        sim_version: 1,
        config: HORDE.to_vec(),
        seed: cfg.seed(),
        ticks: 0,
        checkpoint_every: 60,
        input_kind: 0,
    };
    (HordeWorld::new(&cfg), header)
}

pub fn horde_input(rng: &mut Pcg32) -> TickInput {
    let mut t = TickInput::default();
    t.axes[0] = i16::try_from(rng.range_i32(-32767, 32767)).unwrap();
    t.axes[1] = i16::try_from(rng.range_i32(-32767, 32767)).unwrap();
    t
}

/// Re-simulates an island replay from its config with the kernel's verifier.
pub fn island_replay_verifies(bytes: &[u8]) -> (bool, u64, u64) {
    let replay = Replay::<i32>::from_bytes(bytes, &ReplayLimits::DEFAULT).unwrap();
    let (sim, _, _) = island();
    let report = tickwise::verify(sim, &replay);
    (
        report.is_match(),
        replay.ticks(),
        replay.final_state().checksum,
    )
}
