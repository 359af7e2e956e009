//! The world's hero steps: moving each hero by its own player's input, the
//! damage bookkeeping and getting up. The rules about a single hero live in
//! `hero.rs`; these are the steps that change the world's heroes together.

use tickwise::TickInput;

use super::HordeWorld;
use crate::horde::grid::Body;
use crate::horde::hero::{Hero, MAX_HEROES};
use crate::horde::input::{STICK_MAX, move_vector};
use crate::horde::par;
use crate::horde::rules::{Tally, clamp_i32 as clamp, strike_enemy};

impl HordeWorld {
    /// Step 1: every hero that is up moves by its own player's input
    /// (`inputs[p]` for hero `p`; a missing input stands still).
    pub(in crate::horde) fn move_heroes(&mut self, inputs: &[TickInput]) {
        let (speed, max_x, max_y) = (self.p.player_speed, self.p.max_x, self.p.max_y);
        let still = TickInput::default();
        for (p, hero) in self.heroes[..self.players].iter_mut().enumerate() {
            if !hero.is_up() {
                continue;
            }
            let (sx, sy) = move_vector(inputs.get(p).unwrap_or(&still));
            let v = |s: i32| i64::from(s) * speed / i64::from(STICK_MAX);
            hero.x = clamp(i64::from(hero.x) + v(sx), max_x);
            hero.y = clamp(i64::from(hero.y) + v(sy), max_y);
        }
    }

    /// A hero gets up: full hit points, `invulnTicks` of invulnerability.
    fn get_up(hero: &mut Hero, hp: i64, invuln: u32) {
        hero.hp = hp;
        hero.invuln = invuln;
    }

    /// At a wave every hero that is down gets up.
    pub(in crate::horde) fn heroes_get_up(&mut self) {
        let (hp, invuln) = (self.p.player_hp, self.p.invuln_ticks);
        for hero in self.heroes[..self.players].iter_mut() {
            if !hero.is_up() {
                HordeWorld::get_up(hero, hp, invuln);
            }
        }
    }

    /// Step 6 on a tick without separation, which builds no grid:
    /// contacts and the auto-attacks over every enemy, enemy by enemy (each
    /// against every hero that is up), in pieces of [`par::CHUNK`] on
    /// several threads when `par`. An enemy's outcome depends on itself and
    /// the heroes only, and the tallies are sums, so any pool gives the
    /// same; it is also the reference's outcome. Returns each hero's
    /// contacts.
    pub(in crate::horde) fn strike_every_enemy(&mut self, par: bool) -> [u32; MAX_HEROES] {
        let heroes = &self.heroes[..self.players];
        let p = &self.p;
        let e = &mut self.e;
        let n = e.hp.len();
        let tally = par::pieces(
            par,
            (&e.body[..n], &mut e.hp[..n]),
            0,
            n,
            &|_, (body, hp): (&[Body], &mut [i32])| {
                let mut tally = [Tally::default(); MAX_HEROES];
                for (pos, hp) in body.iter().zip(hp.iter_mut()) {
                    strike_enemy(p, heroes, *pos, hp, &mut tally);
                }
                tally
            },
            &|a: [Tally; MAX_HEROES], b: [Tally; MAX_HEROES]| {
                core::array::from_fn(|h| a[h].plus(b[h]))
            },
        );
        self.book_kills(tally.iter().map(|t| t.kills).sum());
        tally.map(|t| t.contacts)
    }

    /// Step 7: each hero's attack timer, invulnerability and contact damage
    /// (`contacts[h]` are hero `h`'s own); a hero at 0 hit points is down.
    /// When none is left standing, a wipe: counted, and all get up at once
    /// (with one hero: version 2's "downed and restored").
    pub(in crate::horde) fn take_contacts(&mut self, contacts: &[u32; MAX_HEROES]) {
        let p = self.p;
        self.last_contacts = contacts.iter().sum();
        for (hero, &c) in self.heroes[..self.players].iter_mut().zip(contacts) {
            hero.attack_timer = match hero.attack_timer {
                0 => p.attack_cooldown - 1,
                t => t - 1,
            };
            if !hero.is_up() {
                continue;
            }
            if hero.invuln > 0 {
                hero.invuln -= 1;
            } else if c > 0 && p.contact_damage > 0 {
                hero.hp -= p.contact_damage * i64::from(c);
                hero.invuln = p.invuln_ticks;
                if hero.hp <= 0 {
                    hero.hp = 0;
                    hero.downs = hero.downs.wrapping_add(1);
                }
            }
        }
        if !self.heroes[..self.players].iter().any(Hero::is_up) {
            self.wipes = self.wipes.wrapping_add(1);
            for hero in self.heroes[..self.players].iter_mut() {
                HordeWorld::get_up(hero, p.player_hp, p.invuln_ticks);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use tickwise::{Sim, TickInput};

    use super::*;
    use crate::horde::hero::Targets;
    use crate::horde::{HordeConfig, NaiveHorde, RIGHT};

    /// The shipped config with `players` heroes and some keys replaced.
    fn cfg(players: u64, over: &[(&str, i64)]) -> HordeConfig {
        let mut m: serde_json::Map<alloc::string::String, serde_json::Value> =
            serde_json::from_slice(include_bytes!("../../../../../config/horde.json")).unwrap();
        for &(k, v) in over {
            m.insert(k.into(), v.into());
        }
        HordeConfig::from_json(&serde_json::to_vec(&m).unwrap())
            .unwrap()
            .with_players(players)
            .unwrap()
    }

    /// A world whose enemies stand where given (absolute sub-pixels), at
    /// rest. A fresh world stores enemy `i` in slot `i`.
    fn placed(c: &HordeConfig, at: &[(i32, i32)]) -> HordeWorld {
        let mut w = HordeWorld::new(&c.with_enemies(at.len() as u64).unwrap());
        for (i, &(x, y)) in at.iter().enumerate() {
            assert_eq!(w.slot_of.of(&w.e.body).get(i), Some(i));
            w.e.body[i].x = x;
            w.e.body[i].y = y;
        }
        w
    }

    const RIGHT_HELD: TickInput = TickInput {
        held: tickwise::Buttons::NONE.with(RIGHT),
        pressed: tickwise::Buttons::NONE,
        released: tickwise::Buttons::NONE,
        axes: [0; tickwise::AXES],
    };

    #[test]
    fn heroes_start_spread_around_the_centre() {
        // 16384 px field: maxX = 4194303, centre 2097151; 24 px = 6144.
        let c = 2_097_151;
        for (n, xs) in [
            (1, &[c][..]),
            (2, &[c - 6144, c + 6144]),
            (3, &[c - 12_288, c, c + 12_288]),
            (4, &[c - 18_432, c - 6144, c + 6144, c + 18_432]),
        ] {
            let w = HordeWorld::new(&cfg(n, &[]));
            let got: Vec<i32> = w.heroes().iter().map(|h| h.x).collect();
            assert_eq!(got, xs, "{n} heroes");
            assert!(w.heroes().iter().all(|h| h.y == c && h.hp == 100));
            assert_eq!(w.players(), n as usize);
        }
        // A 16 px field (maxX 4095) clamps them to its edges.
        let small = cfg(
            4,
            &[
                ("fieldWidth", 16),
                ("fieldHeight", 16),
                ("attackRadius", 8),
                ("playerRadius", 4),
            ],
        );
        let got: Vec<i32> = HordeWorld::new(&small)
            .heroes()
            .iter()
            .map(|h| h.x)
            .collect();
        assert_eq!(got, [0, 0, 4095, 4095]);
    }

    #[test]
    fn each_player_moves_only_its_own_hero() {
        let mut w = HordeWorld::new(&cfg(3, &[("enemySpeed", 0)]).with_enemies(3).unwrap());
        let before: Vec<Hero> = w.heroes().to_vec();
        // Player 2 gives no input: it stands still.
        w.step_players(&[TickInput::default(), RIGHT_HELD]);
        assert_eq!(w.heroes()[0].x, before[0].x);
        assert_eq!(w.heroes()[1].x, before[1].x + 768);
        assert_eq!(w.heroes()[2].x, before[2].x);
        // Sim::step is player 0's input; the others stand still.
        w.step(core::slice::from_ref(&RIGHT_HELD));
        assert_eq!(w.heroes()[0].x, before[0].x + 768);
        assert_eq!(w.heroes()[1].x, before[1].x + 768);
    }

    #[test]
    fn enemies_chase_the_nearest_hero_and_a_tie_goes_to_the_lowest_index() {
        // Heroes at c -/+ 6144 (y = c). Enemy 0 on the bisector, 25600 below:
        // a tie, so it chases hero 0 (left): oct_len(6144, 25600) = 27904,
        // k = floor(384 * 2^32 / 27904); desired x = floor(-6144 k / 2^32) =
        // floor(-84.55) = -85, y = floor(-352.29) = -353 (steerShift 0).
        // Enemy 1, one sub-pixel right of the bisector and 25600 above,
        // chases hero 1: (84, 352). Enemy 2, far left, chases hero 0 (to
        // its right).
        let c = 2_097_151;
        let conf = cfg(
            2,
            &[("steerShift", 0), ("attackDamage", 0), ("contactDamage", 0)],
        );
        let mut w = placed(
            &conf,
            &[(c, c + 25_600), (c + 1, c - 25_600), (c - 60_000, c)],
        );
        let mut r = NaiveHorde(w.clone());
        w.step_players(&[]);
        r.step_players(&[]);
        let v: Vec<(i32, i32)> = w.enemies().map(|e| (e.vx, e.vy)).collect();
        assert_eq!(v[0], (-85, -353));
        assert_eq!(v[1], (84, 352));
        // 53856 * floor(384 * 2^32 / 53856) / 2^32 = 383.99...: 383.
        assert_eq!(v[2], (383, 0));
        assert_eq!(w.checksum(), r.checksum());
        // Hero 0 down: everyone chases hero 1, the tie is gone.
        let mut w = placed(&conf, &[(c, c + 25_600)]);
        w.heroes[0].hp = 0;
        w.step_players(&[]);
        assert_eq!(w.enemy(0).map(|e| (e.vx, e.vy)), Some((84, -353)));
    }

    #[test]
    fn targets_pick_by_squared_distance_without_overflow() {
        // Opposite corners of the largest field: squared distances near
        // 2 * (2.56e8)^2 = 1.3e17 still compare correctly.
        let far = i32::try_from(crate::horde::MAX_FIELD_PX * 256 - 1).unwrap();
        let heroes = [
            Hero {
                x: 0,
                y: 0,
                hp: 1,
                ..Hero::default()
            },
            Hero {
                x: far,
                y: far,
                hp: 1,
                ..Hero::default()
            },
        ];
        let t = Targets::of(&heroes);
        assert_eq!(t.nearest(far - 1, far), (far, far));
        assert_eq!(t.nearest(1, 0), (0, 0));
        assert_eq!(t.nearest(far / 2, far / 2), (0, 0), "a tie: hero 0");
        // Nobody up: the enemy's own spot (it stands still).
        assert_eq!(Targets::of(&[]).nearest(5, 7), (5, 7));
    }

    #[test]
    fn contact_damage_hits_the_hero_touched_and_two_heroes_both_strike() {
        let c = 2_097_151;
        // Contact radius 20 px = 5120; enemy 0 touches hero 1 only.
        let conf = cfg(
            2,
            &[
                ("enemySpeed", 0),
                ("attackDamage", 0),
                ("contactDamage", 7),
                ("maxPush", 0),
            ],
        );
        let mut w = placed(&conf, &[(c + 6144 + 3000, c), (c + 200_000, c)]);
        w.step_players(&[]);
        let hp: Vec<i64> = w.heroes().iter().map(|h| h.hp).collect();
        assert_eq!(hp, [100, 93]);
        assert_eq!((w.heroes()[0].invuln, w.heroes()[1].invuln), (0, 15));
        assert_eq!(w.last_contacts(), 1);
        // An enemy between both heroes within both attack radii (72 px):
        // 20 - 10 - 10 = 0, one kill, never two.
        let conf = cfg(
            2,
            &[("enemySpeed", 0), ("contactDamage", 0), ("maxPush", 0)],
        );
        let mut w = placed(&conf, &[(c, c + 4000), (c, c + 300_000)]);
        let mut r = NaiveHorde(w.clone());
        w.step_players(&[]);
        r.step_players(&[]);
        assert_eq!(w.enemy(0).map(|e| e.hp), Some(0));
        assert_eq!((w.kills(), w.alive()), (1, 1));
        assert_eq!(w.checksum(), r.checksum());
    }

    #[test]
    fn a_downed_hero_waits_for_the_wave_and_a_wipe_gets_everyone_up() {
        let c = 2_097_151;
        let conf = cfg(
            2,
            &[
                ("enemySpeed", 0),
                ("attackDamage", 0),
                ("contactDamage", 100),
                ("maxPush", 0),
                ("waveTicks", 10),
                ("invulnTicks", 3),
            ],
        );
        // Touches hero 0 only.
        let mut w = placed(&conf, &[(c - 6144, c + 1000)]);
        w.step_players(&[]);
        let h = w.heroes();
        assert_eq!((h[0].hp, h[0].downs, h[1].hp, w.wipes()), (0, 1, 100, 0));
        let x0 = h[0].x;
        for _ in 1..10 {
            // Down: its input does nothing.
            w.step_players(&[RIGHT_HELD]);
        }
        assert_eq!((w.heroes()[0].hp, w.heroes()[0].x, w.tick()), (0, x0, 10));
        w.step_players(&[]); // tick 10: the wave gets it up, invulnerable.
        assert_eq!((w.heroes()[0].hp, w.heroes()[0].invuln), (100, 2));
        // Hero 1, the last one standing, goes down: a wipe, both get up.
        w.heroes[0].hp = 0;
        let h1 = w.heroes[1];
        w.e.body[0].x = h1.x;
        w.e.body[0].y = h1.y + 1000;
        w.step_players(&[]);
        assert_eq!(w.wipes(), 1);
        let after: Vec<(i64, u32)> = w.heroes().iter().map(|h| (h.hp, h.invuln)).collect();
        assert_eq!(after, [(100, 3), (100, 3)]);
        assert_eq!(w.heroes()[1].downs, 1);
        assert!(
            w.digest().starts_with("12|1|0|100,100|1,1|"),
            "{}",
            w.digest()
        );
    }

    #[test]
    fn waves_deal_enemies_out_to_the_heroes_in_turn() {
        // 4 heroes 48 px apart, a 10 px spawn distance and 1 px spacing: the
        // band is 10..=11 px, so enemy j lies within 11 px of hero j mod 4
        // and at least 10 px from it.
        let w = HordeWorld::new(
            &cfg(4, &[("spawnDistance", 10), ("spawnSpacing", 1)])
                .with_enemies(8)
                .unwrap(),
        );
        for (j, e) in w.enemies().enumerate() {
            let h = w.heroes()[j % 4];
            let cheb = (e.x - h.x).abs().max((e.y - h.y).abs());
            assert!((10 * 256..=11 * 256).contains(&cheb), "enemy {j}: {cheb}");
        }
    }

    #[test]
    fn one_hero_state_is_version_2s_and_more_heroes_add_named_fields() {
        let names = |w: &HordeWorld| -> Vec<&'static str> {
            w.field_hashes().iter().map(|f| f.name).collect()
        };
        let one = HordeWorld::new(&cfg(1, &[]).with_enemies(5).unwrap());
        let n1 = names(&one);
        assert_eq!(
            &n1[..10],
            [
                "tick",
                "rng",
                "hero0.x",
                "hero0.y",
                "hero0.hp",
                "hero0.downs",
                "hero0.invuln",
                "hero0.attackTimer",
                "kills",
                "waves"
            ]
        );
        assert!(!n1.contains(&"wipes"));
        let two = HordeWorld::new(&cfg(2, &[]).with_enemies(5).unwrap());
        let n2 = names(&two);
        assert!(n2.contains(&"hero1.attackTimer") && n2.contains(&"wipes"));
        assert_eq!(n2.len(), n1.len() + 7);
        assert!(
            two.digest().starts_with("0|5|0|100,100|0,0|"),
            "{}",
            two.digest()
        );
        assert!(one.digest().starts_with("0|5|0|100|0|"), "{}", one.digest());
    }
}
