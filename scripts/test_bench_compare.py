"""scripts/bench_compare.py's number of timed pairs for a horde, by hand.

    python3 -m unittest scripts/test_bench_compare.py
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_compare as bc  # noqa: E402


class HordeRuns(unittest.TestCase):
    def test_a_small_horde_runs_more_pairs(self):
        # 50,000,000 enemy-ticks / (10,000 enemies x 100 ticks) = 50 pairs.
        self.assertEqual(bc.horde_runs(10_000, 100, 5, 50_000_000), 50)
        # --quick: 3,000,000 / (10,000 x 30) = 10.
        self.assertEqual(bc.horde_runs(10_000, 30, 3, 3_000_000), 10)

    def test_a_large_horde_keeps_its_runs(self):
        # 50,000,000 / (100,000 x 100) = 5: not more than --runs.
        self.assertEqual(bc.horde_runs(100_000, 100, 5, 50_000_000), 5)
        self.assertEqual(bc.horde_runs(1_000_000, 100, 5, 50_000_000), 5)

    def test_rounds_up_is_capped_and_zero_turns_it_off(self):
        # 50,000,000 / (30,000 x 100) = 16.7: 17 pairs do at least that much.
        self.assertEqual(bc.horde_runs(30_000, 100, 5, 50_000_000), 17)
        # 50,000,000 / (100 x 100) = 5000, capped.
        self.assertEqual(bc.horde_runs(100, 100, 5, 50_000_000), bc.MAX_HORDE_PAIRS)
        self.assertEqual(bc.MAX_HORDE_PAIRS, 100)
        self.assertEqual(bc.horde_runs(10_000, 100, 5, 0), 5)
        self.assertEqual(bc.horde_runs(0, 100, 5, 50_000_000), 5)
        self.assertEqual(bc.horde_runs(10_000, 0, 5, 50_000_000), 5)


if __name__ == "__main__":
    unittest.main()
