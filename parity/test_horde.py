"""Tests for the Python horde reference (horde_ref.py) and its golden file.

    python3 -m unittest discover -s parity -v        # from the repo root

The golden file parity/horde_golden.json holds the reference's per-tick
checksums; crates/tickwise-sims/tests/horde_frozen.rs checks the Rust horde
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
            for t in range(sc["ticks"]):
                w.step(h.demo_move(t))
                seen["contacts"] += w.last_contacts
                seen["pairs"] += w.last_pairs
                seen["wall"] += w.px in (0, w.max_x) or w.py in (0, w.max_y)
            seen["kills"] += w.kills
            seen["waves"] += w.waves
            seen["downs"] += w.downs
            seen["nudges"] += w.nudges
        for k, v in seen.items():
            self.assertGreater(v, 0, f"no scenario exercises {k}")


if __name__ == "__main__":
    unittest.main()
