"""Running one case through both sides and comparing the outputs.

The Rust CLI runs as a subprocess; the reference runs in this process
(island_ref.main, the same code path as its CLI) or as a real process.
Used by run_parity.py and by test_parity.ParityTests.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import island_ref as ref
from cases import DEFAULT_LIFECYCLE, DEFAULT_LOOP, HERE, ROOT, Case

DEFAULT_TICKWISE = os.path.join(ROOT, "target", "release", "tickwise")
RUST_TIMEOUT_S = 30


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


def same_json(a, b) -> bool:
    """Equality of parsed JSON that also requires equal types and key order:
    Python's == says True == 1 and 1 == 1.0, and ignores dict order, but the
    script contract fixes each key's JSON type and the keys' order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return a == b


# "script line N: ..." names a line; "script: ..." the whole script.
_LINE_RE = re.compile(r"\bscript line (\d+)\b")


def error_problems(case: Case, side: str, r: Result) -> list[str]:
    """What is wrong with one side's refusal of a malformed case."""
    problems = []
    if r.rc != 2:
        problems.append(f"{side}: exit code {r.rc}, expected 2")
    if r.stdout:
        problems.append(f"{side}: stdout not empty: {r.stdout.splitlines()[0]!r}")
    named = [int(n) for n in _LINE_RE.findall(r.stderr)]
    if case.bad_line:
        if named[:1] != [case.bad_line]:
            problems.append(f"{side}: stderr names line {named or 'none'}, expected {case.bad_line}: {r.stderr.strip()!r}")
    elif named:
        # A whole-script error or a bad file must not blame a script line.
        problems.append(f"{side}: stderr names line {named[0]}, expected no line: {r.stderr.strip()!r}")
    if case.bad_line == 0 and "script: " not in r.stderr:
        problems.append(f"{side}: stderr is not a whole-script error: {r.stderr.strip()!r}")
    if case.bad_key is not None and not re.search(rf"[`'\"]{re.escape(case.bad_key)}[`'\"]", r.stderr):
        problems.append(f"{side}: stderr does not name key {case.bad_key!r}: {r.stderr.strip()!r}")
    return problems


def compare(case: Case, py: Result, rs: Result, stats: Stats) -> str | None:
    """None when both sides agree; otherwise a description of the first difference.

    Valid cases: both exit 0 and print the same lines, compared as parsed JSON
    with exact types and key order (same_json). Malformed cases: both exit 2
    with an empty stdout, and the error names the same script line (the first
    `script line N` in stderr; none for bad files and whole-script errors) and,
    for a bad config key, that key."""
    stats.scripts += 1
    if case.expect_error:
        stats.rejected += 1
        problems = error_problems(case, "python", py) + error_problems(case, "rust", rs)
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
        if not same_json(x, y):
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
# Checked only when the scripts contain `speed P Q` lines.
SPEED_COVERAGE_KEYS = (
    "cmd:speed", "frames slower", "frames faster", "step cap hit faster",
    "maxFrameMs clamp faster", "resume slower", "resume faster", "speed set while away",
)


def _speeds_by_line(script: bytes) -> dict[int, tuple[int, int]]:
    """line number -> (P, Q) for the script's `speed P Q` lines."""
    out = {}
    for i, raw in enumerate(script.decode("utf-8", "replace").split("\n")):
        words = raw.split("#", 1)[0].split()
        if len(words) == 3 and words[0] == "speed":
            out[i + 1] = (int(words[1]), int(words[2]))
    return out


def tally(case: Case, outputs: list, seen: dict) -> None:
    """Counts what one agreed-on output exercised, so a weak generator shows up."""
    loop = case.loop if isinstance(case.loop, dict) else {}
    lc = case.lifecycle if isinstance(case.lifecycle, dict) else {}
    policy = lc.get("policy", "capped")
    if isinstance(case.inputs, list):
        seen["random inputs"] += 1
    away, dropped = False, 0
    speeds = _speeds_by_line(case.script) if b"speed" in case.script else {}
    pace = ""  # "", " slower" or " faster" than 1/1
    for o in outputs:
        cmd = o["cmd"]
        seen["cmd:" + cmd] += 1
        if cmd == "speed":
            p, q = speeds[o["line"]]
            pace = "" if p == q else " slower" if p < q else " faster"
            if away:
                seen["speed set while away"] += 1
        if cmd in ("frames", "frame") and pace and not away:
            seen["frames" + pace] += 1
        if cmd in ("pause", "background", "push", "pop") and not o["ok"]:
            seen[cmd + " refused"] += 1
        if cmd in ("pause", "background") and o["ok"]:
            away = True
        if cmd in ("frames", "frame"):
            if away and o["steps"] == 0:
                seen["frames while away"] += 1
            if o["droppedMs"] > dropped:
                what = "maxFrameMs clamp" if "maxFrameMs" in loop else "step cap hit"
                seen[what] += 1
                if pace == " faster":
                    seen[what + pace] += 1
            dropped = o["droppedMs"]
        if cmd == "resume-after":
            if not o["ok"]:
                seen["resume refused"] += 1
                continue
            away = False
            if pace:
                seen["resume" + pace] += 1
            if policy != "capped":
                seen["policy " + policy] += 1
            elif o["catchUpSteps"] < o["wantedSteps"] and o["catchUpSteps"] > 0:
                seen["resume capped"] += 1
            elif 0 < o["elapsedMs"] < lc.get("minCatchUpMs", 32):
                seen["resume under minCatchUpMs"] += 1
            if o["carriedMs"] > 0:
                seen["resume carried ms"] += 1



def run_cases(tickwise: str, cases: list[Case], workdir: str, stats: Stats) -> None:
    argsets = [materialize(c, os.path.join(workdir, c.name)) for c in cases]
    with ThreadPoolExecutor(max_workers=2) as pool:
        rust = [pool.submit(run_rust, tickwise, a) for a in argsets]
        for case, args, fut in zip(cases, argsets, rust):
            py = run_python_inproc(args)
            diff = compare(case, py, fut.result(), stats)
            if diff:
                stats.failures.append((case, diff))

