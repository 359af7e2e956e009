//! The horde's snapshot bytes: a world read back from them checksums and
//! steps exactly as the original, and bad bytes are refused, never a panic.

use tickwise::{Pcg32, Sim, SnapshotError, TickInput, read_snapshot, write_snapshot};
use tickwise_sims::horde::{HordeConfig, HordeWorld};

const HORDE: &[u8] = include_bytes!("../../../../config/horde.json");

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
    // Separation every tick, and every third (read back at tick 400, the
    // next two ticks go without).
    for separation in [1, 3] {
        let c = cfg(300, 3).with_separation_ticks(separation).unwrap();
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
        assert_eq!(a.checksum(), b.checksum(), "separationTicks {separation}");
        assert_eq!(a.digest(), b.digest(), "separationTicks {separation}");
    }
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

/// A hero as the snapshot layout holds it.
#[derive(Clone, Copy)]
struct HeroBytes {
    x: i64,
    y: i64,
    hp: i64,
    downs: u64,
    invuln: u64,
    attack_timer: u64,
}

/// The field's middle in sub-pixels (16384 px of 256).
const MID: i64 = 8192 * 256;

const HERO: HeroBytes = HeroBytes {
    x: MID,
    y: MID,
    hp: 100,
    downs: 0,
    invuln: 0,
    attack_timer: 5,
};

/// Snapshot bytes written by hand from the layout in the module docs of
/// `horde/persist.rs` (not by `write_snapshot`), so that a test can hold
/// states no run reaches: counters at their limits, enemies off the field.
/// `counters` are wipes, kills, waves; `enemies` are (x, y, vx, vy, hp),
/// ids in order; `alive` is counted from their hit points.
fn hand_written(
    tick: u64,
    heroes: &[HeroBytes],
    counters: [u64; 3],
    enemies: &[[i64; 5]],
) -> Vec<u8> {
    use tickwise::codec::{put_signed, put_varint};
    let mut out = 1u16.to_le_bytes().to_vec();
    for v in [
        tick,
        0x853c_49e6_748f_ea9b,
        0xda3e_39cb_94b9_5bdb,
        heroes.len() as u64,
    ] {
        put_varint(&mut out, v);
    }
    for h in heroes {
        put_signed(&mut out, h.x);
        put_signed(&mut out, h.y);
        put_signed(&mut out, h.hp);
        for v in [h.downs, h.invuln, h.attack_timer] {
            put_varint(&mut out, v);
        }
    }
    let alive = enemies.iter().filter(|e| e[4] > 0).count() as u64;
    for v in counters
        .into_iter()
        .chain([alive, 0, 0, enemies.len() as u64])
    {
        put_varint(&mut out, v);
    }
    for (id, &[x, y, vx, vy, hp]) in enemies.iter().enumerate() {
        put_signed(&mut out, x);
        put_signed(&mut out, y);
        put_varint(&mut out, id as u64);
        for v in [vx, vy, hp] {
            put_signed(&mut out, v);
        }
        put_varint(&mut out, 0);
    }
    out
}

fn read(c: &HordeConfig, bytes: &[u8]) -> Result<HordeWorld, SnapshotError> {
    let mut w = HordeWorld::new(c);
    read_snapshot(&mut w, bytes).map(|()| w)
}

#[test]
fn counters_at_their_limit_wrap_instead_of_overflowing() {
    // Found by the rejoin_snapshot fuzz target: a snapshot may hold any
    // count, and a debug build panicked on the next wipe (before the fix;
    // kills, waves and downs the same). Tick 150 is a wave; the one enemy,
    // at 5 hit points on the hero, dies to its attack (timer 0) and
    // touches the hero at 1 hit point: a kill, a down and a wipe, each
    // counter one past its limit.
    let hero = HeroBytes {
        hp: 1,
        downs: u64::MAX,
        attack_timer: 0,
        ..HERO
    };
    let bytes = hand_written(150, &[hero], [u64::MAX; 3], &[[MID, MID, 0, 0, 5]]);
    let mut w = read(&cfg(1, 1), &bytes).unwrap();
    assert_eq!(
        (w.kills(), w.waves(), w.wipes()),
        (u64::MAX, u64::MAX, u64::MAX)
    );
    w.step(&[TickInput::default()]);
    assert_eq!(
        (w.kills(), w.waves(), w.wipes(), w.player_downs()),
        (0, 0, 0, 0)
    );
    // The wipe got the hero up again; the enemy is dead.
    assert_eq!((w.player_hp(), w.alive()), (100, 0));
}

#[test]
fn enemies_at_the_limits_a_snapshot_may_hold_step_without_overflow() {
    // Found by the rejoin_snapshot fuzz target: with two heroes up, the
    // nearest-hero search squared an off-field enemy's distance in `i64`
    // and overflowed (a debug build panicked). Such bytes are refused now
    // (below); what the reader admits at its limits, an enemy in a corner
    // rushing out of the field as fast as any run allows, steps without an
    // overflow (a debug build checks every sum) and stays in its corner.
    let heroes = [
        HERO,
        HeroBytes {
            x: MID + 6144,
            ..HERO
        },
    ];
    let c = cfg(2, 2);
    let (right, bottom) = field_max(&c);
    let fast = MAX_VELOCITY;
    let enemies = [[0, 0, -fast, -fast, 20], [right, bottom, fast, fast, 20]];
    let bytes = hand_written(3, &heroes, [0; 3], &enemies);
    let mut w = read(&c, &bytes).unwrap();
    w.step(&[TickInput::default(); 2]);
    let at = |id| w.enemy(id).map(|e| (i64::from(e.x), i64::from(e.y)));
    assert_eq!(at(0), Some((0, 0)));
    assert_eq!(at(1), Some((right, bottom)));
}

/// The largest x and y on `c`'s field, in sub-pixels.
fn field_max(c: &HordeConfig) -> (i64, i64) {
    let w = HordeWorld::new(c);
    (
        i64::from(w.field_width()) - 1,
        i64::from(w.field_height()) - 1,
    )
}

/// No run moves an enemy faster than this on an axis: `enemySpeed` (at
/// most 2^14) from steering plus `maxPush · separationTicks` (at most
/// 2^20) from a separation pass, rounded up to 2^21 (the reader's limit,
/// `MAX_ENEMY_VELOCITY` in `horde/rules.rs`).
const MAX_VELOCITY: i64 = 1 << 21;

#[test]
fn an_enemy_off_the_field_or_faster_than_any_run_is_refused() {
    // Every enemy spawns on the field and every move is clamped to it;
    // steering sums a position and a velocity in `i32`, which these limits
    // keep exact.
    let c = cfg(1, 1);
    let (right, bottom) = field_max(&c);
    let fast = MAX_VELOCITY;
    for ok in [[0, 0, fast, -fast, 20], [right, bottom, -fast, fast, 0]] {
        assert!(
            read(&c, &hand_written(3, &[HERO], [0; 3], &[ok])).is_ok(),
            "{ok:?}"
        );
    }
    for (bad, what) in [
        ([-1, MID, 0, 0, 20], "enemy x"),
        ([right + 1, MID, 0, 0, 20], "enemy x"),
        ([MID, -1, 0, 0, 20], "enemy y"),
        ([MID, bottom + 1, 0, 0, 0], "enemy y"),
        ([MID, MID, fast + 1, 0, 20], "enemy velocity"),
        ([MID, MID, 0, -fast - 1, 0], "enemy velocity"),
        ([i64::from(i32::MIN); 5], "enemy x"),
    ] {
        assert_eq!(
            read(&c, &hand_written(3, &[HERO], [0; 3], &[bad])).err(),
            Some(SnapshotError::Malformed { what }),
            "{bad:?}"
        );
    }
}

#[test]
fn a_hero_off_the_field_or_a_wrong_alive_count_is_refused() {
    // No run puts a hero off the field (every move is clamped to it) or
    // lets `alive` differ from the enemies with hit points (a later kill
    // would take it below zero): such bytes are malformed.
    let c = cfg(1, 1);
    let enemy = [[MID, MID, 0, 0, 20]];
    assert!(read(&c, &hand_written(3, &[HERO], [0; 3], &enemy)).is_ok());
    for (x, y) in [(-1, MID), (MID, 16384 * 256), (i64::from(i32::MAX), MID)] {
        let off = HeroBytes { x, y, ..HERO };
        assert_eq!(
            read(&c, &hand_written(3, &[off], [0; 3], &enemy)).err(),
            Some(SnapshotError::Malformed {
                what: if x == MID { "hero y" } else { "hero x" }
            }),
            "hero at ({x}, {y})"
        );
    }
    let mut wrong = hand_written(3, &[HERO], [0; 3], &enemy);
    // alive (1) is the byte before last pairs, last contacts and the count.
    let at = wrong.len() - 4 - (enemy_bytes(&enemy));
    assert_eq!(wrong[at], 1);
    wrong[at] = 0;
    assert_eq!(
        read(&c, &wrong).err(),
        Some(SnapshotError::Malformed { what: "alive" })
    );
}

/// How many bytes [`hand_written`] spends on `enemies`.
fn enemy_bytes(enemies: &[[i64; 5]]) -> usize {
    let all = hand_written(0, &[HERO], [0; 3], enemies).len();
    all - hand_written(0, &[HERO], [0; 3], &[]).len()
}
