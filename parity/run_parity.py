#!/usr/bin/env python3
"""Parity runner: the Python reference (island_ref.py) against `tickwise script`.

    python3 parity/run_parity.py [--tickwise PATH] [--count N] [--skip NAME ...]

1. the golden numbers of seeds 000/002 on the Python side alone (test_parity.GoldenTests);
2. fixed cases (the seed timeline, the golden schedules, edges) through both sides;
3. random scripts from random.Random(20261012) with random configs and inputs;
4. malformed scripts, configs and inputs: both sides must exit 2 with empty stdout
   (and, for a bad script line, name that line on stderr).

Prints one summary line; exits 1 on any mismatch (showing the first differing line
of both sides and where the failing case was saved), 0 otherwise.
Standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import island_ref as ref  # noqa: E402

DEFAULT_TICKWISE = os.path.join(ROOT, "target", "release", "tickwise")
DEFAULT_LOOP = os.path.join(ROOT, "config", "island_loop.json")
DEFAULT_LIFECYCLE = os.path.join(ROOT, "config", "island_lifecycle.json")
RANDOM_SEED = 20261012
RUST_TIMEOUT_S = 30
# Wall-time budget of a random script under the full policy, in steps.
FULL_POLICY_MAX_STEPS = 20_000


@dataclass
class Case:
    """One script plus the files it runs with (None: the repo's defaults)."""

    name: str
    script: bytes
    loop: dict | bytes | None = None
    lifecycle: dict | bytes | None = None
    inputs: list | bytes | None = None
    # For malformed cases: the line the error must name (0: any / whole file).
    bad_line: int | None = None
    expect_error: bool = False


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str


@dataclass
class Stats:
    scripts: int = 0
    lines: int = 0
    rejected: int = 0
    failures: list = field(default_factory=list)
    seen: Counter = field(default_factory=Counter)


# ---------------------------------------------------------------- running


def _write(path: str, content) -> None:
    if isinstance(content, (dict, list)):
        content = json.dumps(content).encode()
    with open(path, "wb") as f:
        f.write(content)


def materialize(case: Case, directory: str) -> list[str]:
    """Write the case's files into `directory`; returns the CLI arguments after `script`."""
    os.makedirs(directory, exist_ok=True)
    args = []
    for flag, content, default, fname in (
        ("--loop", case.loop, DEFAULT_LOOP, "loop.json"),
        ("--lifecycle", case.lifecycle, DEFAULT_LIFECYCLE, "lifecycle.json"),
        ("--inputs", case.inputs, None, "inputs.json"),
    ):
        if content is None:
            if default is not None:
                args += [flag, default]
            continue
        path = os.path.join(directory, fname)
        _write(path, content)
        args += [flag, path]
    script = os.path.join(directory, "script.tw")
    _write(script, case.script)
    return args + [script]


def run_rust(tickwise: str, args: list[str], stdin: bytes | None = None) -> Result:
    try:
        p = subprocess.run(
            [tickwise, "script", *args],
            cwd=ROOT,
            input=stdin,
            capture_output=True,
            timeout=RUST_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return Result(-1, "", f"timed out after {RUST_TIMEOUT_S} s")
    return Result(p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"))


def run_python_inproc(args: list[str]) -> Result:
    """island_ref.main in this process (same code path as the CLI, no interpreter start-up)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = ref.main(["script", *args])
        except SystemExit as e:  # argparse
            rc = e.code if isinstance(e.code, int) else 2
    return Result(rc, out.getvalue(), err.getvalue())


def run_python_cli(args: list[str], stdin: bytes | None = None) -> Result:
    p = subprocess.run(
        [sys.executable, os.path.join(HERE, "island_ref.py"), "script", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
    )
    return Result(p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"))


def _parse_lines(text: str) -> list:
    out = []
    for ln in text.splitlines():
        try:
            out.append(json.loads(ln))
        except ValueError:
            out.append(f"<not JSON> {ln}")
    return out


def compare(case: Case, py: Result, rs: Result, stats: Stats) -> str | None:
    """None when both sides agree; otherwise a description of the first difference."""
    stats.scripts += 1
    if case.expect_error:
        stats.rejected += 1
        problems = []
        for side, r in (("python", py), ("rust", rs)):
            if r.rc != 2:
                problems.append(f"{side}: exit code {r.rc}, expected 2")
            if r.stdout:
                problems.append(f"{side}: stdout not empty: {r.stdout.splitlines()[0]!r}")
            if case.bad_line and not re.search(rf"\b{case.bad_line}\b", r.stderr):
                problems.append(f"{side}: stderr does not name line {case.bad_line}: {r.stderr.strip()!r}")
        return "\n".join(problems) or None
    if py.rc != 0 or rs.rc != 0:
        return (
            f"exit codes python={py.rc} rust={rs.rc}\n"
            f"  python stderr: {py.stderr.strip()}\n  rust   stderr: {rs.stderr.strip()}"
        )
    a, b = _parse_lines(py.stdout), _parse_lines(rs.stdout)
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<missing>"
        y = b[i] if i < len(b) else "<missing>"
        if x != y:
            return (
                f"output line {i + 1} differs\n"
                f"  python: {json.dumps(x, separators=(',', ':'))}\n"
                f"  rust:   {json.dumps(y, separators=(',', ':'))}"
            )
    stats.lines += len(a)
    tally(case, a, stats.seen)
    return None


# ---------------------------------------------------------------- coverage

COVERAGE_KEYS = (
    "cmd:frames", "cmd:frame", "cmd:advance", "cmd:pause", "cmd:background",
    "cmd:resume-after", "cmd:push", "cmd:pop",
    "pause refused", "background refused", "resume refused", "push refused", "pop refused",
    "frames while away", "step cap hit", "resume capped", "resume under minCatchUpMs",
    "resume carried ms", "policy full", "policy freeze", "maxFrameMs clamp", "random inputs",
)


def tally(case: Case, outputs: list, seen: dict) -> None:
    """Counts what one agreed-on output exercised, so a weak generator shows up."""
    loop = case.loop if isinstance(case.loop, dict) else {}
    lc = case.lifecycle if isinstance(case.lifecycle, dict) else {}
    policy = lc.get("policy", "capped")
    if isinstance(case.inputs, list):
        seen["random inputs"] += 1
    away, dropped = False, 0
    for o in outputs:
        cmd = o["cmd"]
        seen["cmd:" + cmd] += 1
        if cmd in ("pause", "background", "push", "pop") and not o["ok"]:
            seen[cmd + " refused"] += 1
        if cmd in ("pause", "background") and o["ok"]:
            away = True
        if cmd in ("frames", "frame"):
            if away and o["steps"] == 0:
                seen["frames while away"] += 1
            if o["droppedMs"] > dropped:
                seen["maxFrameMs clamp" if "maxFrameMs" in loop else "step cap hit"] += 1
            dropped = o["droppedMs"]
        if cmd == "resume-after":
            if not o["ok"]:
                seen["resume refused"] += 1
                continue
            away = False
            if policy != "capped":
                seen["policy " + policy] += 1
            elif o["catchUpSteps"] < o["wantedSteps"] and o["catchUpSteps"] > 0:
                seen["resume capped"] += 1
            elif 0 < o["elapsedMs"] < lc.get("minCatchUpMs", 32):
                seen["resume under minCatchUpMs"] += 1
            if o["carriedMs"] > 0:
                seen["resume carried ms"] += 1


# ---------------------------------------------------------------- fixed cases


SEED_TIMELINE = """\
# seed 002: the browser prototype's timeline
frames 100 16
pause
resume-after 5000
pause
resume-after 3600000
push popup
pop
pop
pop
pop
"""


def _lines(*cmds: str) -> bytes:
    return ("\n".join(cmds) + "\n").encode()


def fixed_cases() -> list[Case]:
    irregular = " ".join(["3 7 13 29 48"] * 16)
    deep = [f"push s{i}" for i in range(70)] + ["pop"] * 70
    return [
        Case("seed-timeline", SEED_TIMELINE.encode()),
        Case("golden-16ms", _lines("frames 100 16")),
        Case("golden-32ms", _lines("frames 50 32")),
        Case("golden-irregular", _lines(f"frame {irregular}")),
        Case("golden-advance", _lines("advance 100")),
        Case("big-frame-cap", _lines("frame 100000", "frames 3 100000")),
        Case("accumulator-15-1", _lines("frame 15", "frame 1")),
        Case("zero-frames", _lines("frames 0 16", "frames 5 0", "frame 0 0 0", "advance 0")),
        Case(
            "lifecycle-refusals",
            _lines(
                "resume-after 10", "pause", "pause", "background", "frames 10 16",
                "resume-after 0", "background", "pause", "resume-after 31", "pause",
                "resume-after 32", "background", "frames 2 16", "resume-after 5",
                "resume-after 7",
            ),
        ),
        Case("advance-while-paused", _lines("pause", "advance 50", "frames 4 16", "resume-after 100")),
        Case("scene-depth", _lines(*deep)),
        Case(
            "whitespace-comments",
            b"  # leading comment\n\n\tframes\t3  16 # trailing\r\nframe 0016 017\n"
            b"push a.b-c_D9\npop#glued comment\n   \n#\nadvance 007",
        ),
        Case("inputs-past-end", _lines("advance 150", "frames 20 16"), inputs=[1, -1, 2, -2, 5] * 20),
        Case("empty-inputs", _lines("frames 30 16", "advance 10"), inputs=[]),
        Case("empty-script", b""),
        Case("comments-only", b"# nothing\n\n   # at all\n"),
        Case(
            "max-frame-clamp",
            _lines("frame 100 5 250", "frames 3 1000", "pause", "frames 2 5000", "resume-after 40"),
            loop={**default_loop_obj(), "maxFrameMs": 50},
        ),
        Case(
            "policy-full",
            _lines("frames 3 10", "pause", "resume-after 5007", "background", "resume-after 20"),
            lifecycle={"stepMs": 16, "maxCatchUpSteps": 300, "minCatchUpMs": 32, "policy": "full"},
        ),
        Case(
            "policy-freeze",
            _lines("frames 3 10", "pause", "resume-after 5007", "frames 1 10"),
            lifecycle={"stepMs": 16, "maxCatchUpSteps": 300, "minCatchUpMs": 32, "policy": "freeze"},
        ),
        # Durations adding up past 10^13 ms are refused before anything runs, so
        # no clock value can saturate (both sides name the line that crosses).
        Case("edge-wall-clock-1e19", _lines("pause", "frames 10000000 1000000000000", "resume-after 0"),
             expect_error=True, bad_line=2),
        Case("edge-dropped-1e13", _lines("frames 19 1000000000000", "frames 1 1000000000000"),
             expect_error=True, bad_line=1),
        Case(
            "edge-resume-chain-1e12",
            _lines("pause", *(["resume-after 1000000000000", "pause"] * 20), "resume-after 0"),
            expect_error=True, bad_line=22,
        ),
        Case("edge-time-at-limit", _lines("pause", *(["resume-after 1000000000000", "pause"] * 10))),
        # Under the full policy every ms could become catch-up work: bounded up front.
        Case(
            "edge-full-policy-unbounded",
            _lines("pause", "resume-after 1000000000000"),
            lifecycle={"stepMs": 16, "maxCatchUpSteps": 300, "minCatchUpMs": 32, "policy": "full"},
            expect_error=True, bad_line=0,
        ),
        # i32 inputs with the largest accel make posX leave the i64 range: both
        # sides wrap (two's complement), as the contract says.
        Case(
            "edge-posx-beyond-i64",
            _lines("advance 10", "frame 10000 5000"),
            loop={
                "seed": 1, "stepMs": 1, "accel": 1000000, "frictionNum": 1000000,
                "frictionDen": 1000000, "maxStepsPerFrame": 10000,
                "rngMultiplier": 4294967295, "rngIncrement": 4294967295,
            },
            lifecycle={"stepMs": 1, "maxCatchUpSteps": 0, "minCatchUpMs": 0},
            inputs=[2**31 - 1] * 5 + [-(2**31)],
        ),
    ]


def default_loop_obj() -> dict:
    with open(DEFAULT_LOOP, "rb") as f:
        return json.load(f)


# ---------------------------------------------------------------- random cases

NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."


def random_configs(r: random.Random) -> tuple[dict | None, dict | None]:
    if r.random() < 0.4:
        return None, None
    step = r.choice([16, 16, 1, 5, 7, 10, 33, 50])
    num, den = r.choice([(15, 16), (0, 1), (1, 1), (7, 8), (3, 5), (99, 100), (1, 3)])
    loop = {
        "seed": r.choice([20261012, 0, 1, 2**32 - 1, r.randrange(2**32)]),
        "stepMs": step,
        "accel": r.choice([3, 0, 1, 5, -2, 10, 1000]),
        "frictionNum": num,
        "frictionDen": den,
        "maxStepsPerFrame": r.choice([8, 1, 2, 3, 5, 20]),
        "rngMultiplier": r.choice([1103515245, 1664525, 22695477, 0, 1, r.randrange(2**32)]),
        "rngIncrement": r.choice([12345, 1013904223, 0, 1, 2**32 - 1]),
    }
    if r.random() < 0.35:
        loop["maxFrameMs"] = r.choice([1, 20, 50, 100, 250, 1000])
    if r.random() < 0.5:
        loop["version"] = 1
    if r.random() < 0.3:
        loop["note"] = "random variant"
        loop["game"] = "merge-island"
    lc = {
        "stepMs": step,
        "maxCatchUpSteps": r.choice([300, 0, 1, 5, 50, 1000]),
        "minCatchUpMs": r.choice([32, 0, 1, 100, 500]),
    }
    policy = r.choice(["capped", "capped", "full", "freeze", None])
    if policy is not None:
        lc["policy"] = policy
    if r.random() < 0.5:
        lc["version"] = 1
    return loop, lc


def random_inputs(r: random.Random) -> list | None:
    if r.random() < 0.6:
        return None
    n = r.choice([0, 1, 10, 100, r.randint(0, 800)])
    kind = r.random()
    if kind < 0.6:
        return [r.choice([-1, 0, 1]) for _ in range(n)]
    if kind < 0.9:
        return [r.randint(-10, 10) for _ in range(n)]
    return [r.choice([2**31 - 1, -(2**31), 1000, -1000, 0]) for _ in range(n)]


def random_name(r: random.Random) -> str:
    n = 64 if r.random() < 0.1 else r.randint(1, 10)
    return "".join(r.choice(NAME_CHARS) for _ in range(n))


def random_ms(r: random.Random, step: int, cap: int) -> int:
    k = r.random()
    if k < 0.45:
        return r.choice([step, 2 * step, step // 2, step + 1, 0, 1, 8, 16, 17, 32, 33])
    if k < 0.75:
        return r.randint(0, 3 * step)
    if k < 0.95:
        return r.randint(step * cap, step * cap + 5000)  # hits maxStepsPerFrame
    return r.choice([100000, 10**6, 10**9])


def random_case(r: random.Random, idx: int) -> Case:
    loop, lc = random_configs(r)
    inputs = random_inputs(r)
    step = (loop or {}).get("stepMs", 16)
    cap = (loop or {}).get("maxStepsPerFrame", 8)
    # Under the full policy a resume replays the whole absence, paused frames
    # included: bound the script's total wall time to keep both sides quick.
    wall_budget = [FULL_POLICY_MAX_STEPS * step if (lc or {}).get("policy") == "full" else None]

    def ms_of(ms: int) -> int:
        if wall_budget[0] is None:
            return ms
        ms = min(ms, wall_budget[0])
        wall_budget[0] -= ms
        return ms

    lines = []
    for _ in range(r.randint(3, 40)):
        k = r.random()
        if k < 0.20:
            n = r.randint(0, 60)
            ms = random_ms(r, step, cap)
            if wall_budget[0] is not None:
                ms = ms_of(n * ms) // max(n, 1)
            lines.append(f"frames {n} {ms}")
        elif k < 0.32:
            lines.append("frame " + " ".join(str(ms_of(random_ms(r, step, cap))) for _ in range(r.randint(1, 12))))
        elif k < 0.40:
            lines.append(f"advance {r.randint(0, 400)}")
        elif k < 0.52:
            lines.append("pause")
        elif k < 0.60:
            lines.append("background")
        elif k < 0.76:
            c = r.random()
            if c < 0.3:
                ms = r.randint(0, 600)  # around minCatchUpMs
            elif c < 0.85:
                ms = r.randint(0, 8000)
            else:
                ms = r.choice([3600000, 600000, 10**12])
            lines.append(f"resume-after {ms_of(ms)}")
        elif k < 0.88:
            lines.append(f"push {random_name(r)}")
        else:
            lines.append("pop")
        # Decoration the parser must ignore.
        d = r.random()
        if d < 0.05:
            lines[-1] += "   # note"
        elif d < 0.08:
            lines.append("")
        elif d < 0.10:
            lines.append("# comment line")
        elif d < 0.12:
            lines[-1] = "\t" + lines[-1].replace(" ", " \t ")
    return Case(f"random-{idx:03d}", _lines(*lines), loop, lc, inputs)


# ---------------------------------------------------------------- malformed

MALFORMED_LINES = [
    ("unknown-command", "jump 3"),
    ("upper-case", "PAUSE"),
    ("frames-arity-1", "frames 10"),
    ("frames-arity-3", "frames 1 2 3"),
    ("frame-empty", "frame"),
    ("frame-too-many", "frame " + " ".join(["1"] * 10001)),
    ("advance-arity", "advance"),
    ("advance-arity-2", "advance 1 2"),
    ("pause-arg", "pause now"),
    ("background-arg", "background 1"),
    ("pop-arg", "pop menu"),
    ("resume-arity", "resume-after"),
    ("resume-arity-2", "resume-after 1 2"),
    ("push-arity", "push"),
    ("push-arity-2", "push a b"),
    ("negative", "frames -1 16"),
    ("decimal", "frames 1 16.5"),
    ("plus-sign", "advance +5"),
    ("hex", "advance 0x10"),
    ("exponent", "resume-after 1e3"),
    ("arabic-digits", "advance \u0661\u0662"),
    ("fullwidth-digits", "advance \uff11"),
    ("superscript", "advance \u00b2"),
    ("u64-overflow", "frames 18446744073709551616 1"),
    ("frames-n-limit", "frames 10000001 16"),
    ("advance-limit", "advance 100000001"),
    ("ms-limit", "frames 1 1000000000001"),
    ("frame-ms-limit", "frame 1 1000000000001"),
    ("resume-ms-limit", "resume-after 1000000000001"),
    ("scene-equals", "push a=b"),
    ("scene-slash", "push a/b"),
    ("scene-unicode", "push caf\u00e9"),
    ("scene-too-long", "push " + "x" * 65),
    ("semicolon", "pause;"),
    ("unit-suffix", "frames 10 16ms"),
]


def malformed_cases(r: random.Random, randoms: list[Case]) -> list[Case]:
    cases = []
    for name, bad in MALFORMED_LINES:
        # Good lines first: nothing may run or print before the bad line is found.
        script = f"frames 10 16\n# ok so far\n\npush fine\n{bad}\npop\n"
        cases.append(Case(f"bad-{name}", script.encode(), bad_line=5, expect_error=True))
    cases += [
        Case("bad-work-limit", _lines(*["frames 10000000 16"] * 101), bad_line=101, expect_error=True),
        Case(
            "bad-work-limit-advance",
            _lines("frame 1", *["advance 100000000"] * 10),
            bad_line=11,
            expect_error=True,
        ),
        Case("bad-utf8", b"frames 1 16\npush \xff\xfe\n", expect_error=True),
        Case("bad-first-line", _lines("resume 5", "frames 1 16"), bad_line=1, expect_error=True),
        # Bad configs and inputs are rejected before anything runs.
        Case("bad-loop-version", _lines("frames 1 16"), loop={**default_loop_obj(), "version": 2}, expect_error=True),
        Case("bad-loop-json", _lines("frames 1 16"), loop=b"{\"seed\": 1,", expect_error=True),
        Case(
            "bad-step-mismatch",
            _lines("frames 1 16"),
            lifecycle={"stepMs": 15, "maxCatchUpSteps": 300, "minCatchUpMs": 32},
            expect_error=True,
        ),
        Case(
            "bad-policy",
            _lines("frames 1 16"),
            lifecycle={"stepMs": 16, "maxCatchUpSteps": 300, "minCatchUpMs": 32, "policy": "sometimes"},
            expect_error=True,
        ),
        Case("bad-inputs-float", _lines("frames 1 16"), inputs=b"[1, 2.5]", expect_error=True),
        Case("bad-inputs-object", _lines("frames 1 16"), inputs=b"{\"a\": 1}", expect_error=True),
        Case("bad-inputs-bool", _lines("frames 1 16"), inputs=b"[1, true]", expect_error=True),
        Case("bad-inputs-nan", _lines("frames 1 16"), inputs=b"[NaN]", expect_error=True),
        Case("bad-inputs-i32", _lines("frames 1 16"), inputs=b"[3000000000]", expect_error=True),
    ]
    # A bad line spliced into random valid scripts.
    for i, base in enumerate(r.sample(randoms, min(40, len(randoms)))):
        lines = base.script.decode().split("\n")
        at = r.randint(0, len(lines) - 1)
        lines.insert(at, r.choice(MALFORMED_LINES)[1])
        cases.append(
            Case(
                f"bad-spliced-{i:02d}",
                "\n".join(lines).encode(),
                base.loop,
                base.lifecycle,
                base.inputs,
                bad_line=at + 1,
                expect_error=True,
            )
        )
    return cases


# ---------------------------------------------------------------- main


def all_cases(count: int) -> list[Case]:
    r = random.Random(RANDOM_SEED)
    randoms = [random_case(r, i) for i in range(count)]
    return fixed_cases() + randoms + malformed_cases(r, randoms)


def run_golden() -> bool:
    import test_parity

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(test_parity.GoldenTests)
    res = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    for test, tb in res.failures + res.errors:
        print(f"golden FAILED: {test.id()}\n{tb}", file=sys.stderr)
    return res.wasSuccessful() and res.testsRun > 0


def run_cases(tickwise: str, cases: list[Case], workdir: str, stats: Stats) -> None:
    argsets = [materialize(c, os.path.join(workdir, c.name)) for c in cases]
    with ThreadPoolExecutor(max_workers=2) as pool:
        rust = [pool.submit(run_rust, tickwise, a) for a in argsets]
        for case, args, fut in zip(cases, argsets, rust):
            py = run_python_inproc(args)
            diff = compare(case, py, fut.result(), stats)
            if diff:
                stats.failures.append((case, diff))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tickwise", default=DEFAULT_TICKWISE, help="the Rust CLI (default: %(default)s)")
    ap.add_argument("--count", type=int, default=300, help="random scripts (default: %(default)s)")
    ap.add_argument("--skip", action="append", default=[], metavar="NAME", help="skip a named case")
    ap.add_argument("--keep", metavar="DIR", help="write every case's files under DIR")
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
    cases = [c for c in all_cases(a.count) if c.name not in set(a.skip)]
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
    missing = [k for k in COVERAGE_KEYS if stats.seen[k] == 0]
    if missing:
        print(f"COVERAGE: no agreed-on script exercised: {', '.join(missing)}")
    for case, diff in stats.failures[:10]:
        print(f"MISMATCH {case.name} (files in {os.path.join(workdir, case.name)}):\n  {diff}")
    if len(stats.failures) > 10:
        print(f"... and {len(stats.failures) - 10} more: " + ", ".join(c.name for c, _ in stats.failures[10:]))
    if not stats.failures and not a.keep:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if stats.failures or missing else 0


if __name__ == "__main__":
    sys.exit(main())
