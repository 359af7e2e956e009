//! Shared helpers: the island world with its checked-in config.
#![allow(dead_code, unreachable_pub)]

use tickwise::{Pcg32, Replay, ReplayHeader, ReplayLimits, Sim, StateVisitor, TickInput};
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

pub const ISLAND: &[u8] = include_bytes!("../../../../config/island_loop.json");
pub const HORDE: &[u8] = include_bytes!("../../../../config/horde.json");

/// One island world per player, side by side: player `p`'s input steps
/// world `p` (the island is a one-player sim; a session needs a sim that
/// takes every player's input).
#[derive(Clone, Debug)]
pub struct Islands(pub Vec<IslandWorld>);

impl Sim for Islands {
    type Input = i32;
    fn players(&self) -> usize {
        self.0.len()
    }
    fn step(&mut self, inputs: &[i32]) {
        for (w, i) in self.0.iter_mut().zip(inputs) {
            w.step(core::slice::from_ref(i));
        }
    }
    fn visit_state(&self, v: &mut dyn StateVisitor) {
        for w in &self.0 {
            w.visit_state(v);
        }
    }
}

pub fn island(players: u8) -> (Islands, ReplayHeader, IslandConfig) {
    let cfg = IslandConfig::from_json(ISLAND).unwrap();
    let header = ReplayHeader {
        sim_id: "islands".into(),
        sim_version: 1,
        config: ISLAND.to_vec(),
        seed: u64::from(cfg.seed),
        ticks: 0,
        checkpoint_every: 60,
        input_kind: 0,
        players,
    };
    let world = IslandWorld::new(&cfg);
    (Islands(vec![world; usize::from(players)]), header, cfg)
}

/// Every player's inputs drawn by `f`, player `p` from stream `p` of `seed`.
pub fn inputs<I: Clone + 'static>(
    players: u8,
    seed: u64,
    f: fn(&mut Pcg32) -> I,
) -> Vec<tickwise_net::PlayerInput<'static, I>> {
    (0..players)
        .map(|p| tickwise_net::random_inputs(seed, p, f))
        .collect()
}

pub fn island_input(rng: &mut Pcg32) -> i32 {
    rng.range_i32(-1, 1)
}

pub fn horde(enemies: u64, players: u8) -> (HordeWorld, ReplayHeader) {
    let cfg = HordeConfig::from_json(HORDE)
        .unwrap()
        .with_enemies(enemies)
        .unwrap()
        .with_players(u64::from(players))
        .unwrap();
    let header = ReplayHeader {
        sim_id: "horde".into(),
        sim_version: 1,
        config: HORDE.to_vec(),
        seed: cfg.seed(),
        ticks: 0,
        checkpoint_every: 60,
        input_kind: 0,
        players,
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
    let (sim, _, _) = island(replay.header().players);
    let report = tickwise::verify(sim, &replay);
    (
        report.is_match(),
        replay.ticks(),
        replay.final_state().checksum,
    )
}

/// Whether `observed` out of `n` trials is within 5 binomial standard
/// deviations of the rate `ppm` (parts per million):
/// `|observed - n·p| <= 5·sqrt(n·p·(1-p))` with `p = ppm / 10⁶`, squared and
/// scaled by 10¹² so that it is exact in integers (this crate bans floats).
/// Also returns the expected count and the 5-sigma margin (rounded down).
pub fn within_five_sigma(observed: u64, n: u64, ppm: u32) -> (bool, i128, i128) {
    const M: i128 = 1_000_000;
    let (observed, n, ppm) = (i128::from(observed), i128::from(n), i128::from(ppm));
    let off = observed * M - n * ppm; // (observed - n·p)·10⁶
    let var = n * ppm * (M - ppm); // n·p·(1-p)·10¹²
    (
        off * off <= 25 * var,
        n * ppm / M,
        (25 * var / (M * M)).isqrt(),
    )
}
