#!/usr/bin/env python3
"""Parity runner: the Python reference (island_ref.py) against `tickwise script`.

    python3 parity/run_parity.py [--tickwise PATH] [--count N] [--skip NAME ...] [--no-speed]

1. the golden numbers on the Python side alone (test_parity.GoldenTests and SpeedTests);
2. fixed cases (the browser-prototype timeline, the golden schedules, edges) through both sides;
3. random scripts from random.Random(20261012) with random configs and inputs, and
   `speed P Q` lines unless --no-speed is given;
4. malformed scripts, configs and inputs: both sides must exit 2 with empty stdout
   (and, for a bad script line, name that line on stderr).

Prints one summary line; exits 1 on any mismatch (showing the first differing line
of both sides and where the failing case was saved), 0 otherwise.
Standard library only.

The cases live in cases.py and the run-and-compare machinery in harness.py, so
that this runner and the unit tests (test_parity.py) import those two modules
and never each other's.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_parity  # noqa: E402
from cases import all_cases  # noqa: E402
from harness import (  # noqa: E402
    COVERAGE_KEYS,
    DEFAULT_TICKWISE,
    SPEED_COVERAGE_KEYS,
    Stats,
    compare,
    materialize,
    run_cases,
    run_python_cli,
    run_rust,
)


def run_golden() -> bool:
    """The Python-only tests (hand-computed numbers) must hold before any comparison."""
    loader = unittest.defaultTestLoader
    suite = unittest.TestSuite(
        loader.loadTestsFromTestCase(t) for t in (test_parity.GoldenTests, test_parity.SpeedTests)
    )
    res = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    for test, tb in res.failures + res.errors:
        print(f"golden FAILED: {test.id()}\n{tb}", file=sys.stderr)
    return res.wasSuccessful() and res.testsRun > 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tickwise", default=DEFAULT_TICKWISE, help="the Rust CLI (default: %(default)s)")
    ap.add_argument("--count", type=int, default=300, help="random scripts (default: %(default)s)")
    ap.add_argument("--skip", action="append", default=[], metavar="NAME", help="skip a named case")
    ap.add_argument("--keep", metavar="DIR", help="write every case's files under DIR")
    ap.add_argument(
        "--no-speed",
        dest="speed",
        action="store_false",
        help="no `speed P Q` lines in the compared scripts (for a Rust CLI without the command)",
    )
    a = ap.parse_args(argv)
    if not os.access(a.tickwise, os.X_OK):
        print(
            f"run_parity: {a.tickwise} is not an executable; build it with "
            "`cargo build --release -p tickwise-cli` or pass --tickwise PATH",
            file=sys.stderr,
        )
        return 2
    if not run_golden():
        print("run_parity: golden numbers do not hold on the Python side", file=sys.stderr)
        return 1
    cases = [c for c in all_cases(a.count, speed=a.speed) if c.name not in set(a.skip)]
    stats = Stats()
    workdir = a.keep or tempfile.mkdtemp(prefix="tickwise-parity-")
    run_cases(a.tickwise, cases, workdir, stats)
    # The reference's own CLI entry point, as a real process, on a valid and a bad
    # script, each read from stdin (`-`).
    for case in (cases[0], next(c for c in cases if c.expect_error)):
        args = materialize(case, os.path.join(workdir, case.name))[:-1] + ["-"]
        py = run_python_cli(args, case.script)
        diff = compare(case, py, run_rust(a.tickwise, args, case.script), stats)
        if diff:
            stats.failures.append((case, "python CLI subprocess: " + diff))
    print(
        f"parity: {stats.scripts} scripts compared ({stats.rejected} malformed), "
        f"{stats.lines} lines compared, {len(stats.failures)} mismatching"
    )
    keys = COVERAGE_KEYS + (SPEED_COVERAGE_KEYS if a.speed else ())
    missing = [k for k in keys if stats.seen[k] == 0]
    if missing:
        print(f"COVERAGE: no agreed-on script exercised: {', '.join(missing)}")
    for case, diff in stats.failures[:10]:
        print(f"MISMATCH {case.name} (files in {os.path.join(workdir, case.name)}):\n  {diff}")
    if len(stats.failures) > 10:
        print(f"... and {len(stats.failures) - 10} more: " + ", ".join(c.name for c, _ in stats.failures[10:]))
    if a.speed and any("unknown command" in d and "speed" in d for _, d in stats.failures):
        print("HINT: this tickwise does not know `speed P Q` yet; --no-speed leaves it out")
    if not stats.failures and not a.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if stats.failures or missing else 0


if __name__ == "__main__":
    sys.exit(main())
