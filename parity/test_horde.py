"""Tests for the Python horde reference (horde_ref.py) and its golden file.

    python3 -m unittest discover -s parity -v        # from the repo root

The golden file parity/horde_golden.json holds the reference's per-tick
checksums; crates/tickwise-sims/tests/suite/horde_frozen.rs checks the Rust horde
against it. These tests make sure the file is the reference's output (so the
Rust test compares against an independent computation, not a copy of its own
output), that the reference's building blocks match hand calculations and
published vectors, and that the scenarios reach every rule.
"""

from __future__ import annotations

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import horde_ref as h  # noqa: E402


class BuildingBlocks(unittest.TestCase):
    def test_pcg32_reference_vectors(self):
        # pcg32-global demo, seed 42, stream 54 (pcg-random.org).
        r = h.Pcg32(42, 54)
        self.assertEqual(
            [r.next_u32() for _ in range(6)],
            [0xA15C02B7, 0x7B47F409, 0xBA1D3330, 0x83D2F293, 0xBFA4784B, 0xCBED606E],
        )

    def test_oct_len_by_hand(self):
        self.assertEqual(h.oct_len(3, -4), 4 + 9 // 8)
        self.assertEqual(h.oct_len(800, 800), 1100)
        self.assertEqual(h.oct_len(0, -7), 7)

    def test_kernel_by_hand(self):
        # R = 4096 (two 8 px radii), strength 128: at |d| = 2048 the overlap is
        # 2048 and half of it is pushed: w = 2048*128*256/2048 = 32768,
        # push = 2048*32768/65536 = 1024. Same-spot nudge = 4096*128/512.
        k = h.Kernel(4096, 128)
        self.assertEqual((k.shift, len(k.weights)), (12, 4096))
        self.assertEqual(k.push(2048, 0, 2048 * 2048), (1024, 0))
        self.assertEqual(k.push(-2048, 0, 2048 * 2048), (-1024, 0))
        self.assertEqual(k.push(4096, 0, 4096 * 4096), (0, 0))
        self.assertEqual(k.nudge, 1024)

    def test_trunc_div_rounds_toward_zero(self):
        self.assertEqual((h.trunc_div(-7, 2), h.trunc_div(7, 2), h.trunc_div(-7, -2)), (-3, 3, 3))

    def test_spawn_band_by_hand(self):
        # 300 enemies 16 px apart outside 400 px: need 300*256/4 = 19200,
        # isqrt(160000 + 19200) = 423, + 1 = 424.
        w = h.Horde({**h.shipped_config(), "enemies": 300})
        self.assertEqual((w.inner, w.outer), (400, 424))
        for x, y in zip(w.x, w.y):
            cheb = max(abs(x - w.px), abs(y - w.py))
            self.assertTrue(400 * 256 <= cheb <= 424 * 256, (x, y))

    def test_checksum_is_docs_checksum_md(self):
        # docs/checksum.md's island vector, through this file's FNV-1a code.
        class Fake(h.Horde):
            def __init__(self):
                pass

            def values(self):
                return [100, -131, 5050, 18, 100, 323, 3492529440, 0]

        self.assertEqual(Fake().checksum(), 0xDC0B35DF9A388D3A)

    def test_demo_walk(self):
        self.assertEqual(h.demo_move(0), (32767, 0))
        self.assertEqual(h.demo_move(90), (0, 32767))
        self.assertEqual(h.demo_move(200), (-32767, 0))
        self.assertEqual(h.demo_move(359), (0, -32767))
        self.assertEqual(h.move_vector({h.UP, h.LEFT}), (-23170, -23170))
        self.assertEqual(h.move_vector(set(), (32767, 32767)), (23830, 23830))

    def test_strict_config(self):
        with self.assertRaises(h.ConfigError):
            h.load_config(b'{"seed": 1, "seed": 2}')
        with self.assertRaises(h.ConfigError):
            h.load_config(b'{"enemySped": 1}')


class Golden(unittest.TestCase):
    def test_golden_file_is_the_references_output(self):
        with open(h.GOLDEN) as f:
            stored = json.load(f)
        self.assertEqual(
            stored, h.golden(),
            "parity/horde_golden.json is stale: run `python3 parity/horde_ref.py golden`",
        )

    def test_scenarios_reach_every_rule(self):
        seen = {"kills": 0, "waves": 0, "downs": 0, "contacts": 0, "pairs": 0, "nudges": 0, "wall": 0}
        for sc in h.scenarios():
            w = h.Horde(sc["config"])
            self.assertTrue(3 <= len(w.hp) <= 20, sc["name"])
            inputs = h.scenario_inputs(sc)
            for t in range(sc["ticks"]):
                w.step(h.moves_at(inputs, t))
                seen["contacts"] += w.last_contacts
                seen["pairs"] += w.last_pairs
                seen["wall"] += w.px in (0, w.max_x) or w.py in (0, w.max_y)
            seen["kills"] += w.kills
            seen["waves"] += w.waves
            seen["downs"] += w.downs
            seen["nudges"] += w.nudges
        for k, v in seen.items():
            self.assertGreater(v, 0, f"no scenario exercises {k}")

    def test_coop_scenarios_reach_every_coop_rule(self):
        # 2, 3 and 4 heroes, each player its own pattern; between them: a hero
        # down while another stands (it gets up at a wave), wipes, enemies
        # chasing different heroes in the same tick, every hero touched.
        counts = set()
        for sc in h.scenarios():
            inputs = h.scenario_inputs(sc)
            if inputs is None:
                continue
            n = sc["config"]["players"]
            counts.add(n)
            self.assertEqual(len(inputs), n)
            self.assertEqual(len(set(inputs)), n, f"{sc['name']}: two players share a pattern")
            w = h.Horde(sc["config"])
            split = 0
            touched = [0] * n
            for t in range(sc["ticks"]):
                w.step(h.moves_at(inputs, t))
                targets = {w.targets[k] for k in range(len(w.hp)) if w.hp[k] > 0}
                split += len(targets) > 1
                for i, hero in enumerate(w.heroes):
                    touched[i] += hero.contacts
            self.assertGreater(w.revivals, 0, sc["name"])
            self.assertGreater(w.wipes, 0, sc["name"])
            self.assertGreater(split, sc["ticks"] // 4, sc["name"])
            self.assertTrue(all(touched), (sc["name"], touched))
        self.assertTrue({2, 4} <= counts, counts)

    def test_swapping_two_players_changes_the_run(self):
        # The golden pins which player moves which hero: the same patterns
        # given to the other heroes give other checksums.
        sc = next(s for s in h.scenarios() if s["name"] == "coop-2")
        inputs = h.scenario_inputs(sc)
        _, straight = h.run(sc["config"], 60, inputs)
        _, swapped = h.run(sc["config"], 60, inputs[::-1])
        self.assertNotEqual(straight, swapped)


def world(players: int, **over) -> h.Horde:
    return h.Horde({**h.shipped_config(), "players": players, **over})


class Coop(unittest.TestCase):
    """The co-op rules of docs/horde.md, by hand."""

    def test_start_positions(self):
        # 16384 px field: maxX = 4194303, centre 2097151; 24 px = 6144.
        c = 2097151
        for n, xs in [(1, [c]), (2, [c - 6144, c + 6144]),
                      (4, [c - 18432, c - 6144, c + 6144, c + 18432])]:
            w = world(n, enemies=3)
            self.assertEqual([hero.x for hero in w.heroes], xs)
            self.assertEqual({hero.y for hero in w.heroes}, {c})
        # A 16 px field clamps them to its edges.
        w = world(4, enemies=1, fieldWidth=16, fieldHeight=16, gridCell=16, playerRadius=4,
                  attackRadius=8)
        self.assertEqual([hero.x for hero in w.heroes], [0, 0, 4095, 4095])

    def test_each_player_moves_its_own_hero(self):
        w = world(3, enemies=3, enemySpeed=0)
        before = [(hero.x, hero.y) for hero in w.heroes]
        w.step([(0, 0), (32767, 0)])  # player 2 gives no input: still
        after = [(hero.x, hero.y) for hero in w.heroes]
        self.assertEqual(after[0], before[0])
        self.assertEqual(after[1], (before[1][0] + 768, before[1][1]))
        self.assertEqual(after[2], before[2])

    def place(self, w: h.Horde, k: int, x: int, y: int) -> None:
        w.x[k], w.y[k], w.vx[k], w.vy[k], w.crowd[k] = x, y, 0, 0, 0

    def test_nearest_hero_and_the_tie_break(self):
        # Heroes at c -/+ 6144. Enemy 0 on the bisector, 25600 below: a tie,
        # so it chases hero 0 (to its left): desired (-6144, -25600) scaled,
        # vx < 0. Enemy 1 a bit right of the bisector (25600 above, away from
        # enemy 0) chases hero 1 (vx > 0). Enemy 2 far left chases hero 0.
        w = world(2, enemies=3, steerShift=0, attackDamage=0, contactDamage=0)
        c = w.heroes[0].x + 6144
        y = w.heroes[0].y + 25600
        self.place(w, 0, c, y)
        self.place(w, 1, c + 1, y - 51200)
        self.place(w, 2, c - 60000, w.heroes[0].y)
        w.step([])
        self.assertEqual(w.targets, [0, 1, 0])
        self.assertEqual(w.ties, 1)
        # oct_len(6144, 25600) = 25600 + 2304 = 27904; f = 384 * 2^32 // 27904;
        # desired x = -6144 * f >> 32 = floor(-84.55) = -85, y = floor(-352.29) = -353.
        self.assertEqual((w.vx[0], w.vy[0]), (-85, -353))
        self.assertEqual((w.vx[1], w.vy[1]), (84, 352))  # floor(6143 f / 2^32), floor(25600 f / 2^32)

    def test_contact_hits_the_hero_touched(self):
        # Contact radius (12 + 8) px = 5120. Enemy 0 touches hero 1 only.
        w = world(2, enemies=2, enemySpeed=0, attackDamage=0, contactDamage=7, maxPush=0)
        h1 = w.heroes[1]
        self.place(w, 0, h1.x + 3000, h1.y)
        self.place(w, 1, h1.x + 200000, h1.y)
        w.step([])
        self.assertEqual([hero.hp for hero in w.heroes], [100, 93])
        self.assertEqual([hero.invuln for hero in w.heroes], [0, 15])
        self.assertEqual(w.last_contacts, 1)

    def test_two_heroes_hit_the_same_enemy(self):
        # Both heroes' attack radius (72 px) reaches an enemy between them:
        # 20 hp - 10 - 10 = 0, one kill.
        w = world(2, enemies=2, enemySpeed=0, contactDamage=0, maxPush=0)
        c = w.heroes[0].x + 6144
        self.place(w, 0, c, w.heroes[0].y + 4000)
        self.place(w, 1, c, w.heroes[0].y + 300000)
        w.step([])
        self.assertEqual((w.hp[0], w.kills, w.alive), (0, 1, 1))

    def test_a_downed_hero_waits_for_the_wave_and_a_wipe_restores_all(self):
        w = world(2, enemies=1, enemySpeed=0, attackDamage=0, contactDamage=100, maxPush=0,
                  waveTicks=10, invulnTicks=3)
        h0, h1 = w.heroes
        self.place(w, 0, h0.x, h0.y + 1000)  # touches hero 0 only
        w.step([(0, 0), (0, 0)])
        self.assertEqual((h0.hp, h0.downs, h1.hp, w.wipes), (0, 1, 100, 0))
        x0 = h0.x
        for _ in range(9):  # ticks 1..9: hero 0 stays down and does not move
            w.step([(32767, 0), (0, 0)])
        self.assertEqual((h0.hp, h0.x), (0, x0))
        self.assertEqual(w.tick, 10)
        w.step([(0, 0), (0, 0)])  # tick 10: the wave; up, invulnerable
        self.assertEqual((h0.hp, h0.invuln), (100, 2))
        # Now only hero 1 is touched, and it is the last one standing: down
        # means a wipe, and both get up at once.
        w.heroes[0].hp = 0
        self.place(w, 0, h1.x, h1.y + 1000)
        w.step([(0, 0), (0, 0)])
        self.assertEqual(w.wipes, 1)
        self.assertEqual([(x.hp, x.invuln) for x in w.heroes], [(100, 3), (100, 3)])
        self.assertEqual(h1.downs, 1)

    def test_waves_deal_enemies_out_to_the_heroes_in_turn(self):
        # 4 heroes 200 px apart... at spawnDistance 10 px and a 2 px band, the
        # j-th enemy lands within ~12 px of hero j mod 4.
        w = world(4, enemies=8, spawnDistance=10, spawnSpacing=1)
        for k in range(8):
            hero = w.heroes[k % 4]
            cheb = max(abs(w.x[k] - hero.x), abs(w.y[k] - hero.y))
            self.assertTrue(10 * 256 <= cheb <= w.outer * 256, (k, cheb))

    def test_digest_lists_every_hero(self):
        w = world(3, enemies=2)
        self.assertTrue(w.digest().startswith("0|2|0|100,100,100|0,0,0|"), w.digest())
        self.assertTrue(world(1, enemies=2).digest().startswith("0|2|0|100|0|"))


if __name__ == "__main__":
    unittest.main()
