//! The horde's snapshot bytes: a world read back from them checksums and
//! steps exactly as the original, and bad bytes are refused, never a panic.

use tickwise::{Pcg32, Sim, SnapshotError, TickInput, read_snapshot, write_snapshot};
use tickwise_sims::horde::{HordeConfig, HordeWorld};

const HORDE: &[u8] = include_bytes!("../../../config/horde.json");

fn cfg(enemies: u64, players: u64) -> HordeConfig {
    HordeConfig::from_json(HORDE)
        .unwrap()
        .with_enemies(enemies)
        .unwrap()
        .with_players(players)
        .unwrap()
}

fn inputs(rng: &mut Pcg32, players: usize) -> Vec<TickInput> {
    (0..players)
        .map(|_| {
            let mut t = TickInput::default();
            t.axes[0] = i16::try_from(rng.range_i32(-32767, 32767)).unwrap();
            t.axes[1] = i16::try_from(rng.range_i32(-32767, 32767)).unwrap();
            t
        })
        .collect()
}

#[test]
fn a_world_read_back_steps_like_the_original() {
    let c = cfg(300, 3);
    let mut a = HordeWorld::new(&c);
    let mut rng = Pcg32::new(5, 0);
    for _ in 0..400 {
        a.step(&inputs(&mut rng, 3));
    }
    let bytes = write_snapshot(&a);
    let mut b = HordeWorld::new(&c);
    assert_ne!(
        a.checksum(),
        b.checksum(),
        "the test needs a state that moved"
    );
    read_snapshot(&mut b, &bytes).unwrap();
    assert_eq!(a.checksum(), b.checksum());
    assert_eq!(a.digest(), b.digest());
    let mut rng_b = rng;
    for _ in 0..400 {
        a.step(&inputs(&mut rng, 3));
        b.step(&inputs(&mut rng_b, 3));
    }
    assert_eq!(a.checksum(), b.checksum());
    assert_eq!(a.digest(), b.digest());
}

#[test]
fn bad_bytes_are_refused() {
    let c = cfg(50, 2);
    let mut a = HordeWorld::new(&c);
    let mut rng = Pcg32::new(1, 0);
    for _ in 0..100 {
        a.step(&inputs(&mut rng, 2));
    }
    let bytes = write_snapshot(&a);
    // Every truncation is an error.
    for n in 0..bytes.len() {
        let mut b = HordeWorld::new(&c);
        assert!(
            read_snapshot(&mut b, &bytes[..n]).is_err(),
            "{n} bytes read"
        );
    }
    // Another layout version, by its number.
    let mut v = bytes.clone();
    v[0] ^= 0x80;
    let mut b = HordeWorld::new(&c);
    assert!(matches!(
        read_snapshot(&mut b, &v),
        Err(SnapshotError::Version { expected: 1, .. })
    ));
    // Another config (enemy count, player count).
    for other in [cfg(51, 2), cfg(50, 3)] {
        let mut b = HordeWorld::new(&other);
        assert!(matches!(
            read_snapshot(&mut b, &bytes),
            Err(SnapshotError::Config { .. })
        ));
    }
    // Trailing bytes.
    let mut t = bytes.clone();
    t.push(0);
    let mut b = HordeWorld::new(&c);
    assert!(read_snapshot(&mut b, &t).is_err());
    // Any single byte flipped: an error or a world (never a panic).
    for i in 0..bytes.len() {
        let mut f = bytes.clone();
        f[i] ^= 0x5a;
        let mut b = HordeWorld::new(&c);
        let _ = read_snapshot(&mut b, &f);
    }
}
