//! The grid world against hand-worked cases and the all-pairs reference.

use alloc::string::String;

use tickwise::Sim;

use super::*;
use crate::horde::fixed::oct_len;
use crate::horde::reference::NaiveHorde;

/// The shipped config with some keys replaced.
fn cfg(over: &[(&str, i64)]) -> HordeConfig {
    let mut m: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(include_bytes!("../../../../../config/horde.json")).unwrap();
    for &(k, v) in over {
        m.insert(k.into(), v.into());
    }
    HordeConfig::from_json(&serde_json::to_vec(&m).unwrap()).unwrap()
}

/// A world whose enemies are placed by hand, relative to the player, at
/// rest. A fresh world stores enemy `i` in slot `i`.
fn placed(c: &HordeConfig, at: &[(i32, i32)]) -> HordeWorld {
    let mut w = HordeWorld::new(&c.with_enemies(at.len() as u64).unwrap());
    for (i, &(dx, dy)) in at.iter().enumerate() {
        assert_eq!(w.slot_of.of(&w.e.body).get(i), Some(i));
        w.e.body[i].x = w.player_x() + dx;
        w.e.body[i].y = w.player_y() + dy;
    }
    w
}

fn xs(w: &HordeWorld) -> Vec<i32> {
    w.enemies().map(|e| e.x).collect()
}

fn hps(w: &HordeWorld) -> Vec<i32> {
    w.enemies().map(|e| e.hp).collect()
}

const STILL: TickInput = TickInput {
    held: tickwise::Buttons::NONE,
    pressed: tickwise::Buttons::NONE,
    released: tickwise::Buttons::NONE,
    axes: [0; tickwise::AXES],
};

#[test]
fn steering_by_hand() {
    // One enemy 100 px right of the player, at rest, speed 384, shift 2.
    let c = cfg(&[("attackDamage", 0)]);
    let mut w = placed(&c, &[(25_600, 0)]);
    let x0 = w.enemy(0).unwrap().x;
    w.step(core::slice::from_ref(&STILL));
    // k = floor(384 * 2^32 / 25600) = 64424509; desired x = floor(-25600 *
    // 64424509 / 2^32) = floor(-383.99999) = -384; v = 0 + (-384 >> 2) = -96.
    let e = w.enemy(0).unwrap();
    assert_eq!((e.vx, e.vy), (-96, 0));
    assert_eq!(e.x, x0 - 96);
    w.step(core::slice::from_ref(&STILL));
    // desired -384 again (any distance rounds the same way here):
    // v = -96 + ((-384 + 96) >> 2) = -96 - 72 = -168.
    assert_eq!(w.enemy(0).unwrap().vx, -168);
    assert_eq!(w.enemy(0).unwrap().x, x0 - 96 - 168);
}

#[test]
fn speed_cap_by_hand() {
    // Already faster than the cap: (-1000, 0) with desired (-384, 0) and
    // shift 0 becomes the desired velocity at once, then the cap holds it.
    let c = cfg(&[("attackDamage", 0), ("steerShift", 0)]);
    let mut w = placed(&c, &[(25_600, 25_600)]);
    w.e.vel[0][0] = -1000;
    w.step(core::slice::from_ref(&STILL));
    // Diagonal: len = 25600 + 9600 = 35200; k = floor(384*2^32/35200) =
    // 46854188; each desired axis = floor(-25600*46854188/2^32) = -280
    // (-279.27 floored); oct(280, 280) = 385 > 384, so capped:
    // -280 * floor(384 * 2^32 / 385) / 2^32 = -279.27, truncated to -279;
    // oct(279, 279) = 383.
    let e = w.enemy(0).unwrap();
    assert_eq!((e.vx, e.vy), (-279, -279));
}

#[test]
fn separation_by_hand_and_by_reference() {
    // Two enemies 8 px apart (overlap 8 of 16 px), far from the player,
    // not moving: strength 128/256 pushes each 1024 away (kernel docs);
    // maxPush 2048 lets it through.
    let c = cfg(&[("enemySpeed", 0), ("maxPush", 2048), ("attackDamage", 0)]);
    let at = [(100_000, 50_000), (100_000 + 2048, 50_000)];
    let mut w = placed(&c, &at);
    let mut r = NaiveHorde(w.clone());
    let (x0, x1) = (xs(&w)[0], xs(&w)[1]);
    w.step(core::slice::from_ref(&STILL));
    r.step(core::slice::from_ref(&STILL));
    assert_eq!(xs(&w), [x0 - 1024, x1 + 1024]);
    assert_eq!(w.last_pairs, 1);
    assert_eq!(w.checksum(), r.checksum());
    // With the default maxPush 512 the push is clamped.
    let c = cfg(&[("enemySpeed", 0), ("attackDamage", 0)]);
    let mut w = placed(&c, &at);
    w.step(core::slice::from_ref(&STILL));
    assert_eq!(xs(&w), [x0 - 512, x1 + 512]);
}

#[test]
fn coincident_enemies_split_by_index() {
    let c = cfg(&[("enemySpeed", 0), ("maxPush", 4096), ("attackDamage", 0)]);
    let mut w = placed(&c, &[(80_000, 0), (80_000, 0), (80_000, 0)]);
    let x = xs(&w)[0];
    let mut r = NaiveHorde(w.clone());
    w.step(core::slice::from_ref(&STILL));
    r.step(core::slice::from_ref(&STILL));
    // Nudge = R * strength / 512 = 4096 * 128 / 512 = 1024 per pair:
    // enemy 0 gets -1024 twice, enemy 2 +1024 twice, enemy 1 both.
    assert_eq!(xs(&w), [x - 2048, x, x + 2048]);
    assert_eq!(w.last_pairs, 3);
    assert_eq!(w.checksum(), r.checksum());
}

#[test]
fn an_enemy_at_the_edge_rushing_out_stays_on_the_field() {
    // The most a rejoin snapshot (`SnapshotBytes::read_state`) may hold:
    // an enemy on the field's edge, moving out as fast as any run allows
    // (`MAX_ENEMY_VELOCITY`; the reader refuses more). The step keeps it
    // in the corner it points to, without overflowing (a debug build
    // checks every `i32` sum).
    let c = cfg(&[("attackDamage", 0)]);
    let mut w = placed(&c, &[(100_000, 0)]);
    w.e.body[0].x = w.field_width() - 1;
    w.e.body[0].y = 0;
    let fast = crate::horde::rules::MAX_ENEMY_VELOCITY;
    w.e.vel[0] = [fast, -fast];
    w.step(core::slice::from_ref(&STILL));
    let e = w.enemy(0).unwrap();
    assert_eq!((e.x, e.y), (w.field_width() - 1, 0));
    // The speed cap held the velocity to enemySpeed (384), octagonal.
    assert!(oct_len(i64::from(e.vx), i64::from(e.vy)) <= 384);
}

#[test]
fn attack_cooldown_and_kills() {
    // Enemy hp 20, damage 10, every 15 ticks: two hits kill, at ticks 0 and 15.
    let c = cfg(&[("enemySpeed", 0), ("contactDamage", 0)]);
    let mut w = placed(&c, &[(5_000, 0), (18_000, 0), (19_000, 0)]);
    w.step(core::slice::from_ref(&STILL));
    // 72 px = 18432: enemies 0 and 1 are in range, 2 is not.
    assert_eq!(hps(&w), [10, 10, 20]);
    for _ in 1..15 {
        w.step(core::slice::from_ref(&STILL));
    }
    assert_eq!(hps(&w), [10, 10, 20]);
    w.step(core::slice::from_ref(&STILL)); // tick 15
    assert_eq!(hps(&w), [0, 0, 20]);
    assert_eq!((w.kills, w.alive), (2, 1));
}

#[test]
fn contact_damage_invulnerability_and_downs() {
    // Contact radius 12 + 8 = 20 px = 5120. Two enemies touching, damage 1
    // each, then 15 ticks of invulnerability: hits at ticks 0, 16, 32, ...
    let c = cfg(&[
        ("enemySpeed", 0),
        ("attackDamage", 0),
        ("contactDamage", 30),
        ("maxPush", 0),
    ]);
    let mut w = placed(&c, &[(3_000, 0), (-3_000, 0)]);
    w.step(core::slice::from_ref(&STILL));
    let h = w.heroes[0];
    assert_eq!((h.hp, h.invuln, w.last_contacts), (40, 15, 2));
    for _ in 1..16 {
        w.step(core::slice::from_ref(&STILL));
    }
    assert_eq!(w.player_hp(), 40);
    w.step(core::slice::from_ref(&STILL)); // tick 16: 40 - 60 <= 0: downed and restored.
    assert_eq!((w.player_hp(), w.player_downs(), w.wipes), (100, 1, 1));
}

#[test]
fn waves_respawn_every_dead_slot_in_the_band() {
    let c = cfg(&[("waveTicks", 10)]);
    let mut w = HordeWorld::new(&c.with_enemies(50).unwrap());
    for i in (0..50).step_by(2) {
        w.e.hp[i] = 0;
    }
    w.alive = 25;
    for _ in 0..10 {
        w.step(core::slice::from_ref(&STILL));
    }
    assert_eq!((w.alive, w.waves), (25, 0));
    let (px, py) = (i64::from(w.player_x()), i64::from(w.player_y()));
    w.step(core::slice::from_ref(&STILL)); // tick 10: the wave, then one tick of movement.
    assert_eq!((w.alive, w.waves), (50, 1));
    let inner = 400 * 256 - 2 * 384 - 512;
    for i in (0..50).step_by(2) {
        let e = w.enemy(i).unwrap();
        let cheb = (i64::from(e.x) - px).abs().max((i64::from(e.y) - py).abs());
        assert!(cheb >= inner, "enemy {i} spawned {cheb} from the player");
        assert_eq!(e.hp, 20);
    }
}

#[test]
fn a_copy_carries_no_scratch_and_steps_like_the_original() {
    let c = cfg(&[]).with_enemies(500).unwrap();
    let mut w = HordeWorld::new(&c);
    for t in 0..50 {
        w.step(core::slice::from_ref(&crate::horde::scripted_input(t)));
    }
    let mut copy = w.clone();
    assert!(copy.acc.is_empty() && copy.back.body.is_empty());
    // A world of another size takes the state and keeps its own scratch
    // until its next step resizes it.
    let mut other = HordeWorld::new(&c.with_enemies(20).unwrap());
    other.clone_from(&w);
    assert_eq!(other.acc.len(), 20);
    assert_eq!(other.checksum(), w.checksum());
    for t in 50..200 {
        let input = crate::horde::scripted_input(t);
        w.step(core::slice::from_ref(&input));
        copy.step(core::slice::from_ref(&input));
        other.step(core::slice::from_ref(&input));
        assert_eq!(copy.checksum(), w.checksum(), "copy, tick {t}");
        assert_eq!(other.checksum(), w.checksum(), "other, tick {t}");
    }
    assert_eq!(other.acc.len(), 500);
}

#[test]
fn a_grid_that_misses_pairs_is_caught_by_the_reference() {
    // Make the kernel reach further than the grid's cells: the grid now
    // misses pairs two cells apart, and the reference comparison says so.
    let c = cfg(&[]).with_enemies(400).unwrap();
    let mut w = HordeWorld::new(&c);
    w.kernel = SeparationKernel::new(3 * 16 * 256, 128);
    let mut r = NaiveHorde(w.clone());
    let mut diverged = false;
    for t in 0..200 {
        w.step(core::slice::from_ref(&crate::horde::scripted_input(t)));
        r.step(core::slice::from_ref(&crate::horde::scripted_input(t)));
        diverged |= w.checksum() != r.checksum();
    }
    assert!(diverged);
}
