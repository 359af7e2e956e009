#!/usr/bin/env python3
"""Runs the same horde and island workloads on two `tickwise` binaries, in
turn (base, current, base, current, ...), and prints ratios current/base.

Called by scripts/bench-compare.sh, which builds both binaries; see
docs/benchmarks.md. Standard library only.

What it measures, per workload:

* the horde: `tickwise horde --enemies N --ticks T --json` (the base binary
  is run from its own source tree, where its default config lives, and
  without `--threads` when it has no such flag): the in-process median
  tick time (`medianNs`, spawning excluded), the process's peak RSS, and
  the digest (both builds must end on the same one: a different digest is
  printed as DIFFERENT, the comparison is then meaningless). A small horde
  runs more pairs than `--runs`, until each build has done
  `--min-enemy-ticks` enemies x ticks: a 10,000-enemy run of 100 ticks is
  over in tens of milliseconds, inside one slow or fast phase of a shared
  machine (its 5 pairs read 0.52-1.27 in round 18). More ticks a run
  would steady it too, but change the workload: the horde crowds as it
  runs, so later ticks cost more;
* the island: `tickwise record --sim island --ticks T` to a scratch file,
  the whole process's user + system CPU time;
* island verify: each build records its own replay of T island ticks with
  random inputs (`--inputs random:7`: the input changes almost every tick,
  so decoding the inputs costs as much as the step) and `verify --jobs 1`
  re-simulates it: whole-process CPU time, and cachegrind's instruction
  count per tick (a 1,000,000-tick replay less a 1-tick one);
* instruction counts, simulated branch mispredicts and cache misses
  (valgrind's cachegrind with a fixed cache, D1 32 KiB and LL 16 MiB, and
  its simple branch predictor, so the figures do not depend on the
  machine; a step that trades instructions for fewer mispredicts shows in
  both): the difference between a run of T1 and one of T0 ticks,
  per tick, so spawning and start-up cancel out.

Timings on a shared machine are noisy: each ratio is the median of the
ratios of the pairs run back to back, which holds when the machine's speed
drifts; the instruction counts are exact and repeatable.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field


@dataclass
class Build:
    """One binary and the directory it runs in."""

    name: str
    exe: str
    cwd: str
    threads_flag: bool = False


@dataclass
class Run:
    """One finished process."""

    stdout: str
    cpu_s: float
    wall_s: float
    maxrss_kib: int


@dataclass
class Series:
    """Both builds' figures for one workload, pair by pair."""

    label: str
    unit: str
    base: list = field(default_factory=list)
    cur: list = field(default_factory=list)
    digests: set = field(default_factory=set)
    rss_kib: int = 0
    base_rss_kib: int = 0


def run(cmd: list[str], cwd: str) -> Run:
    """Runs `cmd`, returns its output, CPU time and peak RSS (its own, from wait4)."""
    began = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - began
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.stderr.close() if proc.stderr else None
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.strip()[:400]}")
    return Run(text, usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss)


def has_threads_flag(exe: str, cwd: str) -> bool:
    """Whether this build's `horde` takes `--threads` (round 1's does not)."""
    return "--threads" in run([exe, "horde", "--help"], cwd).stdout


def horde_cmd(b: Build, enemies: int, ticks: int, threads: int | None) -> list[str]:
    cmd = [b.exe, "horde", "--enemies", str(enemies), "--ticks", str(ticks), "--json"]
    if threads is not None and b.threads_flag:
        cmd += ["--threads", str(threads)]
    return cmd


MAX_HORDE_PAIRS = 100


def horde_runs(enemies: int, ticks: int, runs: int, min_enemy_ticks: int) -> int:
    """Pairs of timed horde runs: `runs`, or more so that each build does
    `min_enemy_ticks` enemies x ticks in all, at most MAX_HORDE_PAIRS (an
    empty horde or no ticks: `runs`)."""
    work = enemies * ticks
    if work <= 0:
        return runs
    return max(runs, min(-(-min_enemy_ticks // work), MAX_HORDE_PAIRS))


def horde_series(
    base: Build, cur: Build, enemies: int, ticks: int, runs: int, cur_threads: int
) -> Series:
    """Alternating runs: base on one thread, current on `cur_threads`."""
    s = Series(f"horde {enemies:,} enemies, current --threads {cur_threads}", "ms/tick")
    for _ in range(runs):
        for b, threads, dst in ((base, 1, s.base), (cur, cur_threads, s.cur)):
            r = run(horde_cmd(b, enemies, ticks, threads), b.cwd)
            j = json.loads(r.stdout)
            dst.append(j["medianNs"] / 1e6)
            s.digests.add(j["digest"])
            if b is cur:
                s.rss_kib = max(s.rss_kib, r.maxrss_kib)
            else:
                s.base_rss_kib = max(s.base_rss_kib, r.maxrss_kib)
    return s


def island_series(base: Build, cur: Build, ticks: int, runs: int, scratch: str) -> Series:
    """Alternating `record --sim island` runs, whole-process CPU time."""
    s = Series(f"island record, {ticks:,} ticks (whole process)", "s CPU")
    out = os.path.join(scratch, "island.twr")
    for _ in range(runs):
        for b, dst in ((base, s.base), (cur, s.cur)):
            cmd = [b.exe, "record", "--sim", "island", "--ticks", str(ticks)]
            cmd += ["--max-ticks", str(ticks), "--checkpoint-every", str(max(ticks // 10, 1))]
            cmd += ["--out", out]
            dst.append(run(cmd, b.cwd).cpu_s)
    return s


def record_random_island(b: Build, ticks: int, out: str) -> None:
    """A replay of `ticks` island ticks with random inputs (seed 7), written by `b`.

    Random inputs change almost every tick (runs of 1.5 ticks on average),
    so re-simulating it costs the replay's input decoding as much as the
    island's step: the workload that caught the per-player plumbing
    (issue 21, verify at 1.20x the build before players)."""
    cmd = [b.exe, "record", "--sim", "island", "--ticks", str(ticks), "--inputs", "random:7"]
    cmd += ["--max-ticks", str(ticks), "--out", out]
    run(cmd, b.cwd)


def verify_cmd(b: Build, path: str, ticks: int) -> list[str]:
    """One replay verified on one thread (the summary line only)."""
    return [b.exe, "verify", "-q", "--jobs", "1", "--max-ticks", str(ticks), path]


def verify_series(base: Build, cur: Build, ticks: int, runs: int, scratch: str) -> Series:
    """Alternating `verify` runs of each build's own random-input island
    replay (each build reads its own format), whole-process CPU time."""
    s = Series(f"island verify, {ticks:,} random-input ticks (whole process)", "s CPU")
    files = {}
    for b in (base, cur):
        files[b.name] = os.path.join(scratch, f"verify-{b.name}-{ticks}.twr")
        record_random_island(b, ticks, files[b.name])
    for _ in range(runs):
        for b, dst in ((base, s.base), (cur, s.cur)):
            r = run(verify_cmd(b, files[b.name], ticks), b.cwd)
            if " 0 failed" not in r.stdout:
                raise RuntimeError(f"{b.name}: verify did not pass: {r.stdout.strip()[:400]}")
            dst.append(r.cpu_s)
    return s


def verify_instructions(b: Build, ticks: int, scratch: str) -> float:
    """Instructions per tick of verifying a random-input island replay:
    (verify of `ticks` ticks − verify of 1 tick) / (ticks − 1), so start-up
    and reading the file's header cancel out (cachegrind, no cache model)."""
    total = []
    for t in (1, ticks):
        path = os.path.join(scratch, f"count-{b.name}-{t}.twr")
        record_random_island(b, t, path)
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no"]
        cmd += ["--cachegrind-out-file=/dev/null"] + verify_cmd(b, path, t)
        p = subprocess.run(cmd, cwd=b.cwd, capture_output=True, text=True, check=False)
        m = re.search(CG_FIELDS["I"], p.stderr)
        if p.returncode != 0 or not m:
            raise RuntimeError(f"cachegrind of verify failed: {p.stderr.strip()[-400:]}")
        total.append(int(m.group(1).replace(",", "")))
    return (total[1] - total[0]) / (ticks - 1)


CG_FIELDS = {
    "I": r"I\s+refs:\s+([\d,]+)",
    "D1": r"D1\s+misses:\s+([\d,]+)",
    "LL": r"LLd\s+misses:\s+([\d,]+)",
    "Bm": r"Mispredicts:\s+([\d,]+)",
}


def cachegrind(b: Build, enemies: int, ticks: int) -> dict[str, int]:
    """Cachegrind's totals for one horde run on one thread (fixed cache geometry)."""
    cmd = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=yes",
        "--branch-sim=yes",
        "--I1=32768,8,64",
        "--D1=32768,8,64",
        "--LL=16777216,16,64",
        "--cachegrind-out-file=/dev/null",
    ] + horde_cmd(b, enemies, ticks, 1)
    p = subprocess.run(cmd, cwd=b.cwd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"cachegrind failed: {p.stderr.strip()[-400:]}")
    got = {}
    for k, pat in CG_FIELDS.items():
        m = re.search(pat, p.stderr)
        if not m:
            raise RuntimeError(f"no {k} figure in cachegrind's output")
        got[k] = int(m.group(1).replace(",", ""))
    return got


def per_tick_counts(b: Build, enemies: int, t0: int, t1: int) -> dict[str, float]:
    """(run of t1 ticks − run of t0 ticks) / (t1 − t0): per tick, without start-up."""
    lo, hi = cachegrind(b, enemies, t0), cachegrind(b, enemies, t1)
    return {k: (hi[k] - lo[k]) / (t1 - t0) for k in hi}


def ratio_line(s: Series) -> str:
    """One workload: both medians, the ratio, the digests and the peak RSS."""
    ratios = [c / b for b, c in zip(s.base, s.cur) if b > 0]
    line = (
        f"  {s.label}: base {statistics.median(s.base):.3f} {s.unit}, "
        f"current {statistics.median(s.cur):.3f} {s.unit}, "
        f"ratio {statistics.median(ratios):.2f}x (pairs {min(ratios):.2f}-{max(ratios):.2f})"
    )
    if s.digests:
        if len(s.digests) == 1:
            line += "; same digest"
        else:
            line += "; DIFFERENT digests: " + " / ".join(sorted(s.digests))
    return line


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the base binary")
    ap.add_argument("--base-dir", required=True, help="the base's source tree (its config/)")
    ap.add_argument("--current", required=True, help="the current binary")
    ap.add_argument("--current-dir", required=True, help="the current source tree")
    ap.add_argument("--sizes", default="10000,100000,1000000", help="enemy counts")
    ap.add_argument("--ticks", type=int, default=100, help="horde ticks per timed run")
    ap.add_argument(
        "--min-enemy-ticks",
        type=int,
        default=50_000_000,
        help="a small horde runs more pairs, until each build does this many enemies x ticks",
    )
    ap.add_argument("--runs", type=int, default=3, help="runs of each build per workload")
    ap.add_argument("--island-ticks", type=int, default=30_000_000)
    ap.add_argument(
        "--count-sizes", default="10000,100000", help="enemy counts for cachegrind ('' = none)"
    )
    ap.add_argument("--count-ticks", default="10,30", help="T0,T1 of the cachegrind runs")
    ap.add_argument(
        "--verify-ticks", type=int, default=10_000_000, help="ticks of the timed island verify"
    )
    ap.add_argument(
        "--verify-count-ticks",
        type=int,
        default=1_000_000,
        help="ticks of the island replay whose verify cachegrind counts (0 = none)",
    )
    a = ap.parse_args()

    base = Build("base", a.base, a.base_dir)
    cur = Build("current", a.current, a.current_dir)
    for b in (base, cur):
        b.threads_flag = has_threads_flag(b.exe, b.cwd)
    sizes = [int(x) for x in a.sizes.split(",") if x]
    runs = {n: horde_runs(n, a.ticks, a.runs, a.min_enemy_ticks) for n in sizes}
    more = ", ".join(f"{r} at {n:,}" for n, r in runs.items() if r != a.runs)
    more = f" ({more} enemies)" if more else ""
    print(f"alternating runs, {a.runs} of each build per workload{more}; "
          f"horde {a.ticks} ticks a run")
    print("timings (median of each build; ratio = median of current/base pair by pair):")
    for n in sizes:
        print(ratio_line(horde_series(base, cur, n, a.ticks, runs[n], 1)), flush=True)
        if n >= 100_000 and cur.threads_flag:
            s = horde_series(base, cur, n, a.ticks, runs[n], 2)
            s.label = f"horde {n:,} enemies, current --threads 2 vs base 1 thread"
            print(ratio_line(s), flush=True)
        if n >= 1_000_000:
            m = horde_series(base, cur, n, 1, 1, 1)
            print(
                f"  horde {n:,} enemies, peak RSS / enemies (1 tick): "
                f"base {m.base_rss_kib * 1024 / n:.0f} B, current {m.rss_kib * 1024 / n:.0f} B"
            )
    if a.island_ticks > 0:
        with tempfile.TemporaryDirectory() as scratch:
            print(ratio_line(island_series(base, cur, a.island_ticks, a.runs, scratch)), flush=True)
    if a.verify_ticks > 0:
        with tempfile.TemporaryDirectory() as scratch:
            s = verify_series(base, cur, a.verify_ticks, a.runs, scratch)
            print(ratio_line(s), flush=True)
    count_sizes = [int(x) for x in a.count_sizes.split(",") if x]
    if (count_sizes or a.verify_count_ticks > 1) and shutil.which("valgrind") is None:
        print("instruction counts: skipped (valgrind is not installed)")
        count_sizes, a.verify_count_ticks = [], 0
    if a.verify_count_ticks > 1:
        with tempfile.TemporaryDirectory() as scratch:
            b = verify_instructions(base, a.verify_count_ticks, scratch)
            c = verify_instructions(cur, a.verify_count_ticks, scratch)
        print(
            f"island verify, random inputs: instructions per tick {b:.1f} -> {c:.1f} "
            f"({c / b:.3f}x; cachegrind, {a.verify_count_ticks:,}-tick replay less a 1-tick one)",
            flush=True,
        )
    if count_sizes:
        t0, t1 = (int(x) for x in a.count_ticks.split(","))
        print("instructions, simulated branch mispredicts and cache misses per tick, one")
        print(f"thread (cachegrind, D1 32 KiB, LL 16 MiB; ticks {t0}..{t1}):")
        for n in count_sizes:
            b, c = per_tick_counts(base, n, t0, t1), per_tick_counts(cur, n, t0, t1)
            names = {
                "I": "instructions",
                "Bm": "mispredicts",
                "D1": "D1 misses",
                "LL": "LL misses",
            }
            parts = [
                # A ratio of a few hundred misses says nothing: counts only.
                f"{names[k]} {b[k]:,.0f} -> {c[k]:,.0f}"
                + (f" ({c[k] / b[k]:.2f}x)" if b[k] >= 1000 else "")
                for k in names
            ]
            print(f"  horde {n:,}: " + "; ".join(parts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
