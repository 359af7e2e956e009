"""Tests for the Python reference and its parity with `tickwise script`.

    python3 -m unittest discover -s parity -v        # from the repo root

GoldenTests check the seeds' numbers on the Python side alone (the expected
values come from seeds 000 and 002, not from running either implementation).
ParityTests run the Rust CLI (TICKWISE env var, default target/release/tickwise)
and are skipped, loudly, when it has not been built.
"""

from __future__ import annotations

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import island_ref as ref  # noqa: E402
import run_parity  # noqa: E402

GOLDEN_100 = "100|-131|5050|18|100|323|3492529440|0"


def seed_session(n_inputs: int | None = None) -> ref.Session:
    """The seeds' configs; seed 000 uses 100 inputs, seed 002 uses 100000."""
    inputs = ref.seed_inputs(n_inputs) if n_inputs is not None else None
    return ref.Session(ref.LoopConfig(), ref.LifecycleConfig(), inputs)


def schedule(frame_ms: int, total_ms: int) -> list[int]:
    """Seed 000's schedule(): whole frames, then the remainder."""
    out, t = [], 0
    while t + frame_ms <= total_ms:
        out.append(frame_ms)
        t += frame_ms
    if t < total_ms:
        out.append(total_ms - t)
    return out


class GoldenTests(unittest.TestCase):
    """Seeds 000 and 002, on the Python reference alone."""

    def test_repo_configs_are_the_seed_configs(self):
        s = ref.load_session(run_parity.DEFAULT_LOOP, run_parity.DEFAULT_LIFECYCLE, None)
        self.assertEqual(s.cfg, ref.LoopConfig())
        self.assertEqual(s.lc, ref.LifecycleConfig())

    def test_three_frame_rates_one_digest(self):
        irregular = [3, 7, 13, 29, 48] * 16
        self.assertEqual(sum(irregular), 1600)
        for dts in (schedule(16, 1600), schedule(32, 1600), irregular):
            s = seed_session(100)
            self.assertEqual(s.frames(dts), 100, dts[:5])
            self.assertEqual(s.tick, 100)
            self.assertEqual(s.digest(), GOLDEN_100)

    def test_advance_equals_frames(self):
        s = seed_session(100)
        s.step_n(100)
        self.assertEqual(s.digest(), GOLDEN_100)

    def test_digest_is_sensitive_to_inputs_and_seed(self):
        flipped = seed_session()
        flipped.inputs = [-v for v in flipped.inputs]
        flipped.frames(schedule(16, 1600))
        self.assertNotEqual(flipped.digest(), GOLDEN_100)
        other = ref.Session(ref.LoopConfig(seed=20261013), ref.LifecycleConfig(), ref.seed_inputs(100))
        other.frames(schedule(16, 1600))
        self.assertNotEqual(other.digest(), GOLDEN_100)

    def test_one_huge_frame_is_capped(self):
        s = seed_session(100)
        self.assertEqual(s.frame(100000), 8)
        self.assertEqual(s.tick, 8)
        self.assertGreater(s.dropped_ms, 0)
        self.assertEqual(s.acc, 0)
        # By hand: 100000 - 8*16 ms stay in the accumulator and are dropped.
        self.assertEqual(s.dropped_ms, 100000 - 128)

    def test_accumulator_15_then_1(self):
        s = seed_session(100)
        self.assertEqual(s.frame(15), 0)
        self.assertEqual(s.tick, 0)
        self.assertEqual(s.frame(1), 1)
        self.assertEqual(s.tick, 1)
        self.assertEqual(s.acc, 0)

    def test_floor_division_of_negative_velocity(self):
        # velX = -1 → floor(-15/16) = -1, not 0 (truncation would give 0).
        s = seed_session()
        s.vel_x = -1
        s.inputs = []
        s.step_n(1)
        self.assertEqual(s.vel_x, -1)

    def test_browser_timeline(self):
        out = ref.run_script(run_parity.SEED_TIMELINE, seed_session())
        by_line = {o["line"]: o for o in out}
        self.assertEqual(by_line[2]["tick"], 100)
        self.assertTrue(by_line[3]["ok"])
        r5 = by_line[4]
        self.assertEqual(
            (r5["elapsedMs"], r5["wantedSteps"], r5["catchUpSteps"], r5["droppedMs"], r5["tick"]),
            (5000, 312, 300, 200, 400),
        )
        r1h = by_line[6]
        self.assertEqual((r1h["wantedSteps"], r1h["catchUpSteps"], r1h["tick"]), (225000, 300, 700))
        self.assertEqual(by_line[7]["scenes"], "menu=paused,game=paused,popup=active")
        self.assertEqual(by_line[8]["scenes"], "menu=paused,game=active")
        self.assertEqual(by_line[10]["scenes"], "")
        self.assertFalse(by_line[11]["ok"])
        self.assertTrue(all(by_line[n]["ok"] for n in (7, 8, 9, 10)))
        # Seed 002 shows the end digest as "700|-4331|...".
        self.assertTrue(by_line[11]["digest"].startswith("700|-4331|"))
        # Two fresh runs end on the same digest.
        again = ref.run_script(run_parity.SEED_TIMELINE, seed_session())
        self.assertEqual(again[-1]["digest"], out[-1]["digest"])

    def test_uncapped_resume_equals_staying_online(self):
        # Seed 002's alignment rule: a resume that is not capped equals running online.
        a = seed_session()
        a.frames([16] * 100)
        a.pause()
        r = a.resume_after(500)  # 31 steps + 4 ms carried
        self.assertEqual((r["catchUpSteps"], r["carriedMs"], r["droppedMs"]), (31, 4, 0))
        b = seed_session()
        b.frames([16] * 131)
        self.assertEqual(a.digest(), b.digest())
        self.assertEqual(a.acc, 4)

    def test_policies(self):
        for policy, want in (("full", (312, 8, 0)), ("freeze", (0, 0, 5000)), ("capped", (300, 0, 200))):
            s = ref.Session(lc=ref.LifecycleConfig(policy=policy))
            s.pause()
            r = s.resume_after(5000)
            self.assertEqual((r["catchUpSteps"], r["carriedMs"], r["droppedMs"]), want, policy)
            self.assertEqual(s.tick, want[0])
            self.assertEqual(s.dropped_ms, 0, "a resume's dropped time stays out of the world")
        s = seed_session()
        s.pause()
        r = s.resume_after(31)  # under minCatchUpMs: jitter
        self.assertEqual((r["wantedSteps"], r["catchUpSteps"], r["droppedMs"]), (1, 0, 31))

    def test_paused_frames_do_nothing_but_move_the_wall(self):
        s = seed_session()
        s.frame(10)
        self.assertTrue(s.background())
        self.assertFalse(s.pause())
        self.assertEqual(s.frames([16] * 10), 0)
        self.assertEqual((s.tick, s.acc), (0, 10))
        r = s.resume_after(40)  # away 200 ms: 12 steps + 8 carried, acc 10 + 8
        self.assertEqual((r["elapsedMs"], r["catchUpSteps"], r["carriedMs"]), (200, 12, 8))
        self.assertEqual((s.tick, s.acc), (12, 18))

    def test_refused_resume_still_moves_the_wall(self):
        s = seed_session()
        r = s.resume_after(1000)
        self.assertFalse(r["ok"])
        self.assertEqual(set(v for k, v in r.items() if k != "ok"), {0})
        s.pause()
        self.assertEqual(s.resume_after(100)["elapsedMs"], 100)

    def test_max_frame_clamp(self):
        s = ref.Session(ref.LoopConfig(max_frame_ms=50), ref.LifecycleConfig())
        self.assertEqual(s.frame(100), 3)  # clamped to 50: 3 steps, 2 ms left
        self.assertEqual((s.dropped_ms, s.acc), (50, 2))

    def test_scene_stack_depth(self):
        s = seed_session()
        for i in range(62):
            self.assertTrue(s.push(f"s{i}"))
        self.assertFalse(s.push("one-too-many"))
        self.assertEqual(len(s.scenes), 64)

    def test_parser_rejects_and_names_the_line(self):
        for script, line in (
            ("frames 1 16\nframes 10\n", 2),
            ("\n\npush a=b\n", 3),
            ("advance \u0661\n", 1),
            ("frame\n", 1),
            ("frames 10000000 16\n" * 101, 101),
        ):
            with self.assertRaises(ref.ScriptError) as cm:
                ref.parse_script(script)
            self.assertEqual(cm.exception.line, line, script[:30])
            self.assertIn(f"line {line}", str(cm.exception))


@unittest.skipUnless(
    os.access(os.environ.get("TICKWISE", run_parity.DEFAULT_TICKWISE), os.X_OK),
    "Rust CLI not built: cargo build --release -p tickwise-cli (or set TICKWISE)",
)
class ParityTests(unittest.TestCase):
    """Both implementations on the same scripts; a small version of run_parity.py."""

    tickwise = os.environ.get("TICKWISE", run_parity.DEFAULT_TICKWISE)

    def run_cases(self, cases):
        import tempfile

        stats = run_parity.Stats()
        with tempfile.TemporaryDirectory() as d:
            run_parity.run_cases(self.tickwise, cases, d, stats)
        msg = "\n".join(f"{c.name}: {diff}" for c, diff in stats.failures[:5])
        self.assertEqual(stats.failures, [], msg)
        self.assertEqual(stats.scripts, len(cases))
        return stats

    def test_seed_timeline(self):
        stats = self.run_cases([run_parity.fixed_cases()[0]])
        self.assertEqual(stats.lines, 10)

    def test_random_scripts(self):
        r = random.Random(run_parity.RANDOM_SEED)
        self.run_cases([run_parity.random_case(r, i) for i in range(40)])

    def test_malformed_scripts(self):
        cases = run_parity.malformed_cases(random.Random(1), [])
        stats = self.run_cases(cases)
        self.assertEqual(stats.rejected, len(cases))


if __name__ == "__main__":
    unittest.main()
