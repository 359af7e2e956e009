"""The parsers of scripts/bench_goals.py against real outputs of the tools
it runs (captured from runs on this project's machines; the expected
figures are read off those outputs by hand).

    python3 -m unittest scripts/test_bench_goals.py
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_goals as bg  # noqa: E402

COMPARE = """\
base: 7d19176be4d8, config-720e59ee (One definition of the resume report contract (ResumeSummary))
current: 04f26ab1691a
alternating runs, 3 of each build per workload; horde 30 ticks a run
timings (median of each build; ratio = median of current/base pair by pair):
  horde 10,000 enemies, current --threads 1: base 0.377 ms/tick, current 0.275 ms/tick, ratio 0.74x (pairs 0.70-0.75); same digest
  horde 100,000 enemies, current --threads 1: base 5.436 ms/tick, current 3.003 ms/tick, ratio 0.71x (pairs 0.54-0.76); same digest
  horde 100,000 enemies, current --threads 2 vs base 1 thread: base 4.228 ms/tick, current 2.115 ms/tick, ratio 0.53x (pairs 0.34-0.54); same digest
  horde 1,000,000 enemies, current --threads 1: base 39.8 ms/tick, current 28.9 ms/tick, ratio 0.73x (pairs 0.70-0.77); DIFFERENT digests: a / b
  horde 1,000,000 enemies, peak RSS / enemies (1 tick): base 88 B, current 90 B
  island record, 30,000,000 ticks (whole process): base 0.287 s CPU, current 0.230 s CPU, ratio 0.85x (pairs 0.62-1.07)
"""

CRITERION = """\
Benchmarking horde10000_save_restore_resim8: Analyzing
horde10000_save_restore_resim8
                        time:   [3.6837 ms 3.7755 ms 3.8762 ms]
                        change: [+66.401% +70.792% +75.051%] (p = 0.00 < 0.05)
                        Performance has regressed.
"""

SERVICE = """\
3 alternating rounds each; median (best) of the rounds; overhead = 1 - service/verify
replays           build                     verify --jobs 2          verifyd, one replay per request                         verifyd, batches
island 10 min     this build   4608.3 (4782.1) /s 165.9 Mt/s   3484.6 (3631.7) /s 125.4 Mt/s  24.4 %   4118.8 (4389.8) /s 148.3 Mt/s  10.6 %  (--batch 8; errors 0)
                             one per request: service/verify per round 0.647, 0.756, 0.870; CPU per replay: verify 0.413 ms, verifyd + loadtest 0.583 ms (x1.41), verifyd alone 0.485 ms (x1.17)
                             one per request: verifyd's CPU during the run, per replay: verification threads 419 us, executor 89 us (receive, content id, envelope and header check, answer); verifyd/verify per round 1.043, 1.247, 1.297
                             one per request: the machine idle during the run (jiffies of /proc/stat, middle 80 %) 5.1 % (rounds 5.1, 5.5, 4.8 %)
                             batches: service/verify per round 0.731, 0.918, 0.987; CPU per replay: verify 0.413 ms, verifyd + loadtest 0.509 ms (x1.23), verifyd alone 0.455 ms (x1.10)
                             batches: verifyd's CPU during the run, per replay: verification threads 372 us, executor 71 us (receive, content id, envelope and header check, answer); verifyd/verify per round 0.979, 1.020, 1.294
                             batches: the machine idle during the run (jiffies of /proc/stat, middle 80 %) 0.3 % (rounds 0.3, 0.6, 0.3 %)
island 10 min     base build   4500.0 (4600.0) /s 162.0 Mt/s   3400.5 (3500.0) /s 122.4 Mt/s  -1.5 %   3900.0 (4000.0) /s 140.4 Mt/s  13.3 %  (--batch 8; errors 0)
"""


PINNED = """\
round 1: verify 2490/s; one per request, queued 2185/s; one per request, --inline-work 4000000 2273/s
verify --jobs 1: 2504 replays/s (median)
one per request, queued                       overhead  12.7 % (median; rounds 12.1, 13.4, 12.7 %); verified inline in the last round: 0
one per request, --inline-work 4000000        overhead   8.4 % (median; rounds 8.1, 6.7, 8.4 %); verified inline in the last round: 3000
batches of 8, queued                          overhead   6.2 % (median; rounds 4.2, 4.4, 6.4 %); verified inline in the last round: 0
batches of 8, --inline-work 4000000           overhead   6.3 % (median; rounds -0.5, 7.0, 6.0 %); verified inline in the last round: 0
instructions per replay (cachegrind, 150 less 50 replays; verifyd's threads, not the kernel): verify 4.827 M
one per request, queued                       5.033 M, 1.043x verify's
one per request, --inline-work 4000000        5.008 M, 1.038x verify's
batches of 8, queued                          5.011 M, 1.038x verify's
batches of 8, --inline-work 4000000           5.010 M, 1.037x verify's
"""

class Parsers(unittest.TestCase):
    def test_compare_rows_and_rss(self):
        rows, rss = bg.parse_compare(COMPARE)
        self.assertEqual(len(rows), 4)  # the island line is not a horde goal
        one = rows["horde 10,000 enemies, current --threads 1"]
        self.assertEqual((one["base"], one["current"], one["ratio"]), (0.377, 0.275, 0.74))
        self.assertEqual((one["unit"], one["pairs"], one["same_digest"]), ("ms/tick", (0.70, 0.75), True))
        two = rows["horde 100,000 enemies, current --threads 2 vs base 1 thread"]
        self.assertEqual((two["ratio"], two["pairs"]), (0.53, (0.34, 0.54)))
        self.assertFalse(rows["horde 1,000,000 enemies, current --threads 1"]["same_digest"])
        self.assertEqual(rss, {"enemies": 1_000_000, "base": 88, "current": 90})

    def test_criterion_middle_estimate(self):
        self.assertAlmostEqual(bg.parse_criterion_ms(CRITERION), 3.7755)
        self.assertAlmostEqual(bg.parse_criterion_ms("time:   [950.1 µs 990.5 µs 1.01 ms]"), 0.9905)
        with self.assertRaises(ValueError):
            bg.parse_criterion_ms("Benchmarking horde10000_save_restore_resim8: Analyzing")

    def test_service_rows_and_cpu_ratios(self):
        got = bg.parse_service(SERVICE)
        cur, base = got["this build"], got["base build"]
        self.assertEqual((cur["verify"], cur["one"], cur["one_overhead"]), (4608.3, 3484.6, 24.4))
        self.assertEqual((cur["batches"], cur["batches_overhead"]), (4118.8, 10.6))
        self.assertEqual(cur["one_cpu"], [1.043, 1.247, 1.297])
        self.assertEqual(cur["batches_cpu"], [0.979, 1.020, 1.294])
        self.assertEqual(cur["one_idle"], [5.1, 5.5, 4.8])
        self.assertEqual(cur["batches_idle"], [0.3, 0.6, 0.3])
        self.assertEqual((base["one_overhead"], base["batches_overhead"]), (-1.5, 13.3))
        self.assertNotIn("one_cpu", base)
        self.assertNotIn("one_idle", base)

    def test_pinned_summary(self):
        got = bg.parse_pinned(PINNED)
        self.assertEqual(got[("one", "queued")], (12.7, [12.1, 13.4, 12.7]))
        self.assertEqual(got[("one", "inline")], (8.4, [8.1, 6.7, 8.4]))
        self.assertEqual(got[("batches", "queued")][0], 6.2)
        self.assertEqual(got[("batches", "inline")], (6.3, [-0.5, 7.0, 6.0]))
        self.assertEqual(bg.parse_pinned("round 1: verify 2490/s; one per request, queued 2185/s"), {})

    def test_pinned_counts(self):
        verify, modes = bg.parse_pinned_counts(PINNED)
        self.assertEqual(verify, 4.827)
        self.assertEqual(modes[("one", "queued")], (5.033, 1.043))
        self.assertEqual(modes[("one", "inline")], (5.008, 1.038))
        self.assertEqual(modes[("batches", "inline")], (5.010, 1.037))
        # The timed rows are not counts, and a run without counts has none.
        no_counts = PINNED.split("instructions per replay")[0]
        self.assertIsNone(bg.parse_pinned_counts(no_counts))
        self.assertEqual(len(bg.parse_pinned(PINNED)), 4)

    def test_browser_pairs(self):
        self.assertEqual(bg.parse_browser({"speed": {"pairRatios": [0.9, 1.0]}}), [0.9, 1.0])
        with self.assertRaises(ValueError):
            bg.parse_browser({"speed": {}})


if __name__ == "__main__":
    unittest.main()
