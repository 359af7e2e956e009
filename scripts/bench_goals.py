"""Every goal of issue 21 measured in one run, printed as one table.

    python3 scripts/bench_goals.py [--quick] [--skip PARTS] [--out DIR]

The goals' figures came from separate sessions, and this machine type
varies by about 5 % from one session to the next, so a table assembled
from several sessions can hide a regression or a gain. This script runs
every measurement back to back, each against the build it is judged by,
alternating the two builds where it times them, and prints one table:
goal, before, after, ratio, the goal, and the command that measured it.
It is a report, never a gate.

Parts (all by default; --skip takes a comma-separated list):

* compare: item 2, `scripts/bench-compare.sh` against round 1 (7d19176):
  horde ticks on one thread at 10 k, 100 k and 1 M enemies, two threads at
  100 k and 1 M against round 1's one, peak RSS per enemy at 1 M.
* rollback: item 3, restore + 8 ticks at 10,000 enemies on one thread
  (the netplay bench `horde10000_save_restore_resim8`), this tree
  alternating with the build the issue measured (ISSUE_BUILD, 4d23f02,
  built as it shipped: it had no .cargo/config.toml). The goal is 2 ms,
  0.595x of the 3.36 ms the issue measured.
* browser: item 4, the island in Chromium against native (the web speed
  test, alternating pairs; runs `bash .ci/setup-web.sh` first, which
  installs Chromium, the wasm toolchain and playwright-core on a fresh
  machine and only checks them after, then `bash .ci/build-web.sh`).
* service: item 5, `scripts/bench_service.py` (10-minute island replays),
  this build alternating with the issue's build (BASE), then
  `scripts/bench_service_pinned.py` (the clients on the other core, with
  and without `--inline-work`, and verifyd's instructions per replay
  against `verify`'s, counted by cachegrind).

--quick: small sizes and few pairs, to check the script itself (minutes,
once the issue's build is cached). The issue's build is made by
scripts/base_build.py and kept in target/base-builds/, so a second run
builds only this tree. Logs and the table go to --out (default
out/bench-goals/).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

from base_build import BaseBuild, netplay_bench

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# The build issue 21 measured (restore + 8 ticks 3.36 ms, service 22.6 % /
# 15.9 %).
ISSUE_BUILD = "4d23f02"
ISSUE_RESIM_MS = 3.36
RESIM_GOAL_MS = 2.0
RESIM_BENCH = "horde10000_save_restore_resim8"
PARTS = ("compare", "rollback", "browser", "service")


# ---- parsers of the tools' outputs (unit-tested in test_bench_goals.py) ----

COMPARE_LINE = re.compile(
    r"^\s+(horde [\d,]+ enemies[^:]*): base ([\d.]+) (\S+), current ([\d.]+) \S+, "
    r"ratio ([\d.]+)x \(pairs ([\d.]+)-([\d.]+)\)(.*)$"
)
COMPARE_RSS = re.compile(
    r"^\s+horde ([\d,]+) enemies, peak RSS / enemies[^:]*: base (\d+) B, current (\d+) B"
)


def parse_compare(text):
    """bench-compare.sh's horde lines: {label: {...}} and the RSS line."""
    rows, rss = {}, None
    for line in text.splitlines():
        m = COMPARE_LINE.match(line)
        if m:
            rows[m.group(1)] = {
                "base": float(m.group(2)),
                "unit": m.group(3),
                "current": float(m.group(4)),
                "ratio": float(m.group(5)),
                "pairs": (float(m.group(6)), float(m.group(7))),
                "same_digest": "same digest" in m.group(8),
            }
            continue
        m = COMPARE_RSS.match(line)
        if m:
            rss = {"enemies": int(m.group(1).replace(",", "")),
                   "base": int(m.group(2)), "current": int(m.group(3))}
    return rows, rss


CRITERION_TIME = re.compile(r"time:\s+\[([\d.]+) (\w+) ([\d.]+) (\w+) ([\d.]+) (\w+)\]")
UNIT_MS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}


def parse_criterion_ms(text):
    """The middle of criterion's `time: [lo mid hi]` estimate, in ms."""
    m = CRITERION_TIME.search(text)
    if not m:
        raise ValueError("no `time: [...]` line in criterion's output")
    return float(m.group(3)) * UNIT_MS[m.group(4)]


SERVICE_ROW = re.compile(
    r"^island 10 min\s+(this build|base build)\s+([\d.]+) \([\d.]+\) /s\s+[\d.]+ Mt/s\s+"
    r"([\d.]+) \([\d.]+\) /s\s+[\d.]+ Mt/s\s+(-?[\d.]+) %\s+"
    r"([\d.]+) \([\d.]+\) /s\s+[\d.]+ Mt/s\s+(-?[\d.]+) %"
)
SERVICE_OWN = re.compile(r"^\s+(one per request|batches): verifyd's CPU during the run.*"
                         r"verifyd/verify per round ([\d., ]+)$")
SERVICE_IDLE = re.compile(r"^\s+(one per request|batches): the machine idle during the run.*"
                          r"\(rounds ([\d., nan]+) %\)$")


def parse_service(text):
    """bench_service.py's island rows: {build: {...}}, in the order printed.

    Each build's verifyd/verify CPU ratios per round, and the machine's
    idle share (%) per round, follow its row.
    """
    out, last = {}, None
    for line in text.splitlines():
        m = SERVICE_ROW.match(line)
        if m:
            last = m.group(1)
            out[last] = {
                "verify": float(m.group(2)),
                "one": float(m.group(3)),
                "one_overhead": float(m.group(4)),
                "batches": float(m.group(5)),
                "batches_overhead": float(m.group(6)),
            }
            continue
        for pattern, suffix in ((SERVICE_OWN, "_cpu"), (SERVICE_IDLE, "_idle")):
            m = pattern.match(line)
            if m and last:
                key = ("one" if m.group(1) == "one per request" else "batches") + suffix
                out[last][key] = [float(x) for x in m.group(2).split(",")]
    return out


PINNED_ROW = re.compile(r"^(one per request|batches of \d+), (queued|--inline-work \d+)\s+"
                        r"overhead\s+(-?[\d.]+) % \(median; rounds ([-\d., ]+) %\)")


def pinned_key(m):
    """(mode, way) of a bench_service_pinned.py row matched with the mode
    and the way as its first two groups: mode `one` or `batches`, way
    `queued` or `inline`."""
    return ("one" if m.group(1) == "one per request" else "batches",
            "queued" if m.group(2) == "queued" else "inline")


def parse_pinned(text):
    """bench_service_pinned.py's summary: {(mode, way): (median %, [rounds %])}
    (see pinned_key)."""
    out = {}
    for line in text.splitlines():
        m = PINNED_ROW.match(line)
        if m:
            out[pinned_key(m)] = (float(m.group(3)), [float(x) for x in m.group(4).split(",")])
    return out


PINNED_COUNT = re.compile(r"^(one per request|batches of \d+), (queued|--inline-work \d+)\s+"
                          r"([\d.]+) M, ([\d.]+)x verify's$")
PINNED_VERIFY_COUNT = re.compile(r"^instructions per replay .*: verify ([\d.]+) M$")


def parse_pinned_counts(text):
    """bench_service_pinned.py's instruction counts: (verify's millions per
    replay, {(mode, way): (verifyd's millions, ratio)}), or None when it
    printed none (valgrind missing, or COUNT=0)."""
    verify, out = None, {}
    for line in text.splitlines():
        m = PINNED_VERIFY_COUNT.match(line)
        if m:
            verify = float(m.group(1))
        m = PINNED_COUNT.match(line)
        if m:
            out[pinned_key(m)] = (float(m.group(3)), float(m.group(4)))
    return (verify, out) if verify is not None and len(out) == 4 else None


def parse_browser(report):
    """The island speed test's pairs (native CPU over wasm CPU) from
    out/browser-report.json."""
    ratios = report.get("speed", {}).get("pairRatios")
    if not ratios:
        raise ValueError("the browser report has no island speed pairs")
    return ratios


def span(xs, fmt="{:.2f}"):
    """`lo–hi` of a list of numbers (one number when they are equal)."""
    lo, hi = fmt.format(min(xs)), fmt.format(max(xs))
    return lo if lo == hi else f"{lo}–{hi}"


# ---- running ----

class Run:
    """Runs commands with their output logged to one file each."""

    def __init__(self, out):
        self.out = out
        os.makedirs(out, exist_ok=True)

    def __call__(self, name, cmd, cwd=ROOT, env=None, check=True):
        log = os.path.join(self.out, name + ".log")
        shown = " ".join(cmd)
        print(f"$ {shown}  (log: {os.path.relpath(log, ROOT)})", flush=True)
        with open(log, "w") as f:
            p = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, check=False)
            f.write(p.stdout)
        if check and p.returncode != 0:
            tail = "\n".join(p.stdout.splitlines()[-15:])
            raise RuntimeError(f"{shown} failed ({p.returncode}):\n{tail}")
        return p.stdout


class Missing:
    """Stands for a build that cannot be made: the parts that need it fail,
    the others still run."""

    def __init__(self, why):
        self.why = why

    def executable(self, _what):
        raise RuntimeError(self.why)

    def close(self):
        pass


def part_compare(run, quick):
    env = {"BENCH_SIZES": "10000,100000" if quick else "10000,100000,1000000",
           "BENCH_RUNS": "3" if quick else "5", "BENCH_COUNT_SIZES": "",
           "BENCH_VERIFY_COUNT_TICKS": "0", "BENCH_VERIFY_TICKS": "0"}
    if quick:
        env["BENCH_TICKS"] = "30"
    cmd = " ".join(f"{k}={v}" for k, v in env.items()) + " bash scripts/bench-compare.sh"
    rows, rss = parse_compare(run("compare", ["bash", "scripts/bench-compare.sh"], env=env))
    table = []
    for label, r in rows.items():
        two = "--threads 2" in label
        goal = 0.55 if two else 1.00
        met = r["ratio"] <= goal and r["same_digest"]
        table.append((f"item 2: {label}", f"{r['base']:.3f} {r['unit']} (round 1)",
                      f"{r['current']:.3f} {r['unit']}",
                      f"**{r['ratio']:.2f}×** (pairs {r['pairs'][0]:.2f}–{r['pairs'][1]:.2f})"
                      + ("" if r["same_digest"] else ", DIFFERENT digests"),
                      f"≤ {goal:.2f}×: {'met' if met else 'NOT met'}", cmd))
    if rss:
        table.append((f"item 2: peak RSS / enemy at {rss['enemies']:,}", f"{rss['base']} B (round 1)",
                       f"{rss['current']} B", "", f"≤ 96 B: {'met' if rss['current'] <= 96 else 'NOT met'}",
                       cmd))
    return table


def part_rollback(run, quick, issue):
    pairs = 2 if quick else 9
    secs = "1" if quick else "3"
    old = issue.executable("netplay")
    cur = netplay_bench(run, "bench-build", ROOT, os.path.join(ROOT, "target"))
    args = ["--bench", "--warm-up-time", "1", "--measurement-time", secs, "--exact", RESIM_BENCH]
    times = {"issue": [], "current": []}
    for i in range(pairs):
        for side, exe in (("issue", old), ("current", cur)):
            # Each build's criterion history apart: its "change" lines then
            # compare a build with itself, not with the other one.
            home = {"CRITERION_HOME": os.path.join(run.out, f"criterion-{side}")}
            times[side].append(parse_criterion_ms(run(f"rollback-{side}-{i}", [exe, *args],
                                                      env=home)))
    ratios = [c / o for o, c in zip(times["issue"], times["current"])]
    r = statistics.median(ratios)
    need = RESIM_GOAL_MS / ISSUE_RESIM_MS
    cmd = (f"`netplay-* {' '.join(args)}`, this tree's bench alternating with {ISSUE_BUILD}'s, "
           f"{pairs} pairs")
    return [(f"item 3: restore + 8 ticks, 10,000 enemies, one thread",
             f"{span(times['issue'])} ms ({ISSUE_BUILD}; the issue read {ISSUE_RESIM_MS} ms)",
             f"{span(times['current'])} ms",
             f"**{r:.3f}×** median pair ({span(ratios, '{:.3f}')})",
             f"≤ 2 ms, i.e. ≤ {need:.3f}× of {ISSUE_RESIM_MS} ms: {'met' if r <= need else 'NOT met'}",
             cmd)]


def part_browser(run, quick):
    samples = "3" if quick else "9"
    # A fresh clone has no web/node_modules (playwright-core) and maybe no
    # Chromium; the setup is idempotent, seconds once everything is there.
    run("setup-web", ["bash", ".ci/setup-web.sh"])
    run("build-web", ["bash", ".ci/build-web.sh"])
    run("browser", ["node", "--test-name-pattern=speed: island", "tests/run.mjs"],
        cwd=os.path.join(ROOT, "web"), env={"TICKWISE_SPEED_SAMPLES": samples})
    with open(os.path.join(ROOT, "out", "browser-report.json")) as f:
        ratios = parse_browser(json.load(f))
    r = statistics.median(ratios)
    return [("item 4: island in Chromium / native", "native = 1", f"{len(ratios)} pairs",
             f"**{r:.2f}×** median pair ({span(ratios)})",
             f"≥ 0.80×: {'met' if r >= 0.8 else 'NOT met'}",
             f"`TICKWISE_SPEED_SAMPLES={samples} node --test-name-pattern='speed: island' "
             f"tests/run.mjs` (in web/)")]


def part_service(run, quick, issue):
    env = {"BASE": issue.executable("cli"), "ROUNDS": "1" if quick else "3",
           "ISLAND": "1000" if quick else "9000", "SIMS": "island", "PARTS": "throughput"}
    got = parse_service(run("service", ["python3", "scripts/bench_service.py"], env=env))
    if "this build" not in got or "base build" not in got:
        raise RuntimeError("bench_service.py printed no island rows for both builds")
    cur, old = got["this build"], got["base build"]
    cmd = (f"`BASE=<{ISSUE_BUILD}'s tickwise> ROUNDS={env['ROUNDS']} ISLAND={env['ISLAND']} "
           "SIMS=island PARTS=throughput python3 scripts/bench_service.py`")
    rows = []
    for mode, key in (("one replay per request", "one"), ("batches of 8", "batches")):
        o, c = old[key + "_overhead"], cur[key + "_overhead"]
        own, idle = cur.get(key + "_cpu", []), cur.get(key + "_idle", [])
        notes = ([f"verifyd's own CPU ÷ verify's per round: {span(own)}"] if own else []) + \
            ([f"cores idle during the run: {span(idle, '{:.1f}')} %"] if idle else [])
        rows.append((f"item 5: verifyd overhead, 10-minute island replays, {mode}",
                     f"{o:.1f} % ({ISSUE_BUILD})", f"{c:.1f} %", "; ".join(notes),
                     f"≤ 10 %: {'met' if c <= 10 else 'NOT met'}", cmd))
    # The same with the clients on the other core (verifyd and verify on
    # core 0 alone), with and without --inline-work.
    penv = {"ROUNDS": "1" if quick else "7", "ISLAND": "200" if quick else "3000"}
    pinned_text = run("service-pinned", ["python3", "scripts/bench_service_pinned.py"], env=penv)
    pinned = parse_pinned(pinned_text)
    if len(pinned) != 4:
        raise RuntimeError("bench_service_pinned.py printed no summary for every mode")
    pcmd = f"`ROUNDS={penv['ROUNDS']} ISLAND={penv['ISLAND']} python3 scripts/bench_service_pinned.py`"
    for mode, key in (("one replay per request", "one"), ("batches of 8", "batches")):
        (q, _), (i, rounds) = pinned[(key, "queued")], pinned[(key, "inline")]
        rows.append((f"item 5, clients on the other core: {mode}, `--inline-work`",
                     f"{q:.1f} % (queued)", f"{i:.1f} %",
                     f"rounds {span(rounds, '{:.1f}')} %",
                     f"≤ 10 %: {'met' if i <= 10 else 'NOT met'}", pcmd))
    counts = parse_pinned_counts(pinned_text)
    if counts is None:
        raise RuntimeError("bench_service_pinned.py printed no instruction counts")
    verify, modes = counts
    for mode, key in (("one replay per request", "one"), ("batches of 8", "batches")):
        (q, qr), (i, ir) = modes[(key, "queued")], modes[(key, "inline")]
        rows.append((f"item 5, instructions per replay (cachegrind; verifyd's own code, not the"
                     f" kernel): {mode}",
                     f"{verify:.3f} M (`verify`)", f"{i:.3f} M inline, {q:.3f} M queued",
                     f"**{ir:.3f}×** inline, {qr:.3f}× queued",
                     "no goal of its own: what verifyd's code adds, on any machine", pcmd))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few pairs")
    ap.add_argument("--skip", default="", help="parts to leave out: " + ",".join(PARTS))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "bench-goals"))
    ap.add_argument("--issue-build", default=ISSUE_BUILD)
    a = ap.parse_args()
    skip = {s for s in a.skip.split(",") if s}
    unknown = skip - set(PARTS)
    if unknown:
        ap.error(f"unknown parts {sorted(unknown)}; the parts are {', '.join(PARTS)}")
    run = Run(a.out)
    # The issue's build as it shipped (it had no .cargo/config.toml: plain
    # x86-64), built by scripts/base_build.py and kept in target/base-builds/.
    try:
        issue = BaseBuild(a.issue_build, "as-shipped", run=run)
    except RuntimeError as e:
        issue = Missing(f"the issue's build: {e}")
    rows, failed = [], []
    print(f"load average at start: {os.getloadavg()}", flush=True)
    try:
        run("build", ["cargo", "build", "--release", "--locked", "-p", "tickwise-cli"])
        for part in PARTS:
            if part in skip:
                print(f"{part}: SKIPPED (--skip)", flush=True)
                continue
            try:
                if part == "compare":
                    rows += part_compare(run, a.quick)
                elif part == "rollback":
                    rows += part_rollback(run, a.quick, issue)
                elif part == "browser":
                    rows += part_browser(run, a.quick)
                else:
                    rows += part_service(run, a.quick, issue)
            except (RuntimeError, ValueError, OSError, subprocess.CalledProcessError) as e:
                failed.append(part)
                print(f"{part}: FAILED, no figures: {e}", flush=True)
    finally:
        issue.close()
    print(f"load average at end: {os.getloadavg()}")
    lines = ["| goal | before | after | ratio | target | command |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    table = "\n".join(lines)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table + "\n")
    print("\n" + table)
    if failed:
        print(f"\nparts that failed (see their logs in {a.out}): {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
