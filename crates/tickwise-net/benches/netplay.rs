//! Rollback costs: save + restore + 8 re-simulated ticks of the horde,
//! snapshot bytes per enemy, and the session's own cost per tick.
#![allow(missing_docs)]

use std::hint::black_box;

use allocation_counter::measure;
use criterion::{Criterion, criterion_group, criterion_main};
use tickwise::{Nanos, Pcg32, ReplayInput, Sim, Timestamp};
use tickwise_net::{
    Auth, NetworkConfig, Session, SessionConfig, SessionKey, SimNetwork, Transport,
};
use tickwise_sims::horde::{HordeConfig, HordeWorld, scripted_input};
use tickwise_sims::island::{IslandConfig, IslandWorld};

const KEY: SessionKey = SessionKey::from_bytes(*b"tickwise bench k");

fn horde(n: u64) -> HordeWorld {
    let cfg = HordeConfig::from_json(include_bytes!("../../../config/horde.json"))
        .unwrap()
        .with_enemies(n)
        .unwrap();
    let mut w = HordeWorld::new(&cfg);
    for t in 0..200 {
        w.step(&[scripted_input(t)]);
    }
    w
}

fn rollback(c: &mut Criterion) {
    for n in [300u64, 10_000] {
        let mut world = horde(n);
        let mut slot = world.clone();
        // Snapshot bytes per enemy: what one full copy allocates (the state
        // only: the grid and other scratch stay out of a copy), and what
        // `clone_from` copies.
        // black_box: an allocation nobody reads may be optimised away.
        let bytes = measure(|| drop(black_box(world.clone()))).bytes_total;
        let state = n as usize * (12 + 8 + 4 + 2 + 4);
        println!(
            "horde {n}: a first snapshot allocates {bytes} bytes ({} per enemy, no scratch); clone_from copies about {} bytes per enemy of state",
            bytes / n,
            state / usize::try_from(n).unwrap()
        );
        c.bench_function(&format!("horde{n}_save_restore"), |b| {
            b.iter(|| {
                slot.clone_from(&world);
                world.clone_from(&slot);
                black_box(&world);
            });
        });
        // A rollback restores an old snapshot and re-simulates the same
        // ticks: every iteration restores the world at tick 200 (`base`) and
        // steps 200..208, so each measures the same work.
        let base = world.clone();
        c.bench_function(&format!("horde{n}_save_restore_resim8"), |b| {
            b.iter(|| resim8(&mut world, &mut slot, &base));
        });
        // The same on a two-thread pool: the horde's tick splits inside a
        // rayon pool (bit-identical at any thread count).
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        c.bench_function(&format!("horde{n}_save_restore_resim8_2threads"), |b| {
            b.iter(|| pool.install(|| resim8(&mut world, &mut slot, &base)));
        });
    }
}

/// Save the current state, restore the one at tick 200, re-simulate 8 ticks.
fn resim8(world: &mut HordeWorld, slot: &mut HordeWorld, base: &HordeWorld) {
    slot.clone_from(world);
    world.clone_from(base);
    for t in 200..208 {
        world.step(&[scripted_input(t)]);
    }
    black_box(&*world);
}

/// Two island worlds, one per player: the cheapest two-player sim, so the
/// session's own cost dominates.
#[derive(Clone, Debug)]
struct IslandPair([IslandWorld; 2]);

impl tickwise::Sim for IslandPair {
    type Input = i32;
    fn players(&self) -> usize {
        2
    }
    fn step(&mut self, inputs: &[i32]) {
        for (w, i) in self.0.iter_mut().zip(inputs) {
            w.step(core::slice::from_ref(i));
        }
    }
    fn visit_state(&self, v: &mut dyn tickwise::StateVisitor) {
        for w in &self.0 {
            w.visit_state(v);
        }
    }
}

fn overhead(c: &mut Criterion) {
    let cfg = IslandConfig::from_json(include_bytes!("../../../config/island_loop.json")).unwrap();
    let island = IslandWorld::new(&cfg);
    let world = IslandPair([island.clone(), island]);
    let mut net = SimNetwork::new(NetworkConfig {
        latency: Nanos::from_millis(50),
        seed: 1,
        ..NetworkConfig::PERFECT
    });
    let mut s: Vec<_> = (0..2)
        .map(|p| {
            let mut c = SessionConfig::new(2, p, KEY);
            c.input_delay = 0;
            Session::new(world.clone(), c).unwrap()
        })
        .collect();
    let mut rng = Pcg32::new(1, 0);
    let mut round = 0u64;
    c.bench_function("netplay_island_2p_one_round", |b| {
        b.iter(|| {
            round += 1;
            net.advance_to(Timestamp::from_nanos(round * 16_666_667));
            for (i, x) in s.iter_mut().enumerate() {
                let _ = x.tick(
                    &rng.range_i32(-1, 1),
                    &mut net.port(u8::try_from(i).unwrap()),
                );
            }
        });
    });
    let st = s[0].stats();
    println!(
        "per round: {} rollbacks and {} re-simulated ticks per 1000 local ticks",
        st.rollbacks * 1000 / st.local_ticks.max(1),
        st.resimulated * 1000 / st.local_ticks.max(1)
    );
}

/// The MAC of one typical inputs datagram: the last one player 0 sends in
/// a 2-player horde match (300 enemies, random stick inputs, 100 ms round
/// trip, delay 2, every tick checked) after 300 rounds, so it carries the
/// unacknowledged inputs and checksums of a steady state; sealing is the
/// sender's keyed BLAKE3, checking the receiver's (with the constant-time
/// compare). Also the largest datagram (508 bytes).
fn mac(c: &mut Criterion) {
    struct Keep<'a> {
        port: tickwise_net::Port<'a>,
        last: &'a mut Vec<u8>,
    }
    impl Transport for Keep<'_> {
        fn send(&mut self, to: u8, b: &[u8]) {
            self.last.clear();
            self.last.extend_from_slice(b);
            self.port.send(to, b);
        }
        fn recv(&mut self, buf: &mut [u8]) -> Option<tickwise_net::Datagram> {
            self.port.recv(buf)
        }
    }
    let world = {
        let cfg = HordeConfig::from_json(include_bytes!("../../../config/horde.json"))
            .unwrap()
            .with_players(2)
            .unwrap();
        HordeWorld::new(&cfg)
    };
    let mut net = SimNetwork::new(NetworkConfig {
        latency: Nanos::from_millis(50),
        seed: 1,
        ..NetworkConfig::PERFECT
    });
    let mut s: Vec<_> = (0..2)
        .map(|p| Session::new(world.clone(), SessionConfig::new(2, p, KEY)).unwrap())
        .collect();
    let mut rng = Pcg32::new(3, 0);
    let mut last = Vec::new();
    for round in 1..=300u64 {
        net.advance_to(Timestamp::from_nanos(round * 16_666_667));
        for (i, x) in s.iter_mut().enumerate() {
            let mut input = tickwise::TickInput::default();
            input.axes[0] = i16::try_from(rng.range_i32(-32767, 32767)).unwrap();
            input.axes[1] = i16::try_from(rng.range_i32(-32767, 32767)).unwrap();
            let port = net.port(u8::try_from(i).unwrap());
            if i == 0 {
                let _ = x.tick(
                    &input,
                    &mut Keep {
                        port,
                        last: &mut last,
                    },
                );
            } else {
                let mut port = port;
                let _ = x.tick(&input, &mut port);
            }
        }
    }
    let auth = Auth::new(&KEY);
    let (body, tag) = last.split_at(last.len() - tickwise_net::MAC_LEN);
    assert!(auth.check(body, tag));
    let inputs = match tickwise_net::wire::decode(&last, &auth, |r| {
        tickwise::TickInput::decode(r).is_ok()
    }) {
        Ok((_, tickwise_net::wire::Body::Inputs(m))) => (m.count, m.checks.iter().count()),
        other => panic!("{other:?}"),
    };
    println!(
        "typical inputs datagram: {} bytes, {} inputs, {} checksums",
        last.len(),
        inputs.0,
        inputs.1
    );
    c.bench_function("mac_seal_inputs_datagram", |b| {
        b.iter(|| black_box(auth.tag(black_box(body))));
    });
    c.bench_function("mac_check_inputs_datagram", |b| {
        b.iter(|| black_box(auth.check(black_box(body), black_box(tag))));
    });
    let largest = [0x5au8; tickwise_net::wire::MAX_UNSEALED];
    c.bench_function("mac_seal_508_byte_datagram", |b| {
        b.iter(|| black_box(auth.tag(black_box(&largest))));
    });
}

criterion_group!(benches, rollback, overhead, mac);
criterion_main!(benches);
