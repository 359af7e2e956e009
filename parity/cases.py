"""The parity cases, shared by the runner (run_parity.py) and the unit tests.

Every case is a script plus the config and inputs files it runs with:

- fixed cases: the browser-prototype timeline, the golden schedules and edges;
- random scripts from random.Random(RANDOM_SEED) with random configs and inputs
  (and, unless turned off, `speed P Q` lines);
- malformed scripts, configs and inputs, which both sides must refuse.

This module imports only the standard library and island_ref, so both the
runner and the tests can import it without importing each other.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass

import island_ref as ref

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_LOOP = os.path.join(ROOT, "config", "island_loop.json")
DEFAULT_LIFECYCLE = os.path.join(ROOT, "config", "island_lifecycle.json")
RANDOM_SEED = 20261012
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
    # For malformed cases: the script line the error must name (0: the whole
    # script; None: no script line, e.g. a bad config or inputs file).
    bad_line: int | None = None
    expect_error: bool = False
    # For malformed configs: the key both sides' errors must name.
    bad_key: str | None = None



# ---------------------------------------------------------------- fixed cases


RESUME_RULES_TIMELINE = """\
# the resume rules' browser timeline (docs/background.md)
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


def fixed_cases(speed: bool = True) -> list[Case]:
    """The fixed cases; with `speed`, also the ones using `speed P Q`."""
    return _plain_fixed_cases() + strict_config_valid_cases() + (speed_fixed_cases() if speed else [])


def speed_fixed_cases() -> list[Case]:
    """`speed P Q` cases whose numbers are worked out by hand in test_parity.SpeedTests."""
    lc_16 = {"stepMs": 16, "maxCatchUpSteps": 300, "minCatchUpMs": 32}
    return [
        Case("speed-half-16ms", _lines("speed 1 2", "frames 100 16", "speed 1 1", "frames 100 16")),
        Case("speed-double-cap", _lines("speed 2 1", "frame 100", "frames 3 64", "speed 16 1", "frame 16")),
        Case("speed-third-remainder", _lines("speed 1 3", "frames 3 10", "frame 10 10 10", "frames 999 10")),
        Case(
            "speed-same-value-keeps-remainder",
            _lines("speed 1 3", "frame 1", "speed 2 6", "frame 1 1", "speed 1 2", "frame 1", "speed 1 3",
                   "frames 48 1", "frame 16"),
        ),
        Case("speed-resume-capped", _lines("speed 1 2", "pause", "resume-after 5000", "frames 10 16")),
        Case(
            "speed-changed-while-away",
            _lines("frames 10 16", "pause", "frames 5 100", "speed 1 4", "resume-after 100", "frame 6",
                   "background", "speed 4 1", "resume-after 7", "speed 1000 63", "pause", "resume-after 1001"),
        ),
        Case(
            "speed-max-frame-clamp",
            _lines("speed 4 1", "frame 20", "frame 10 13", "speed 1 1000", "frames 100 1", "frame 999999"),
            loop={**default_loop_obj(), "maxFrameMs": 50},
        ),
        Case(
            "speed-policy-full",
            _lines("speed 3 2", "frames 3 10", "pause", "resume-after 5007", "speed 1 7", "background",
                   "resume-after 20"),
            lifecycle={**lc_16, "policy": "full"},
        ),
        Case(
            "speed-policy-freeze",
            _lines("speed 1 3", "frame 1", "pause", "resume-after 5000", "frame 1 1"),
            lifecycle={**lc_16, "policy": "freeze"},
        ),
        Case(
            "speed-min-catch-up",
            # 40 ms away at 1/2 is 20 ms of sim time: under minCatchUpMs (32), dropped.
            _lines("speed 1 2", "pause", "resume-after 40", "speed 2 1", "pause", "resume-after 17"),
        ),
        # At the time limit with the 16x count: 6.25e11 ms x 16 = 1e13 ms = 1e19 ns of
        # sim time, which still fits a u64 of ns (1.8e19).
        Case("edge-speed-frame-at-limit", _lines("speed 16 1", "frames 1 625000000000")),
        Case("edge-speed-resume-at-limit", _lines("speed 16 1", "pause", "resume-after 625000000000")),
    ]


def _plain_fixed_cases() -> list[Case]:
    irregular = " ".join(["3 7 13 29 48"] * 16)
    deep = [f"push s{i}" for i in range(70)] + ["pop"] * 70
    return [
        Case("resume-rules-timeline", RESUME_RULES_TIMELINE.encode()),
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
        # The capped policy's boundaries on both sides (test_parity.GoldenTests.
        # test_capped_resume_boundaries has the numbers by hand).
        Case(
            "lifecycle-cap-boundaries",
            _lines("pause", "resume-after 4810", "pause", "resume-after 4815", "pause", "resume-after 4816",
                   "pause", "resume-after 4800", "pause", "resume-after 31", "pause", "resume-after 32",
                   "frame 5", "pause", "resume-after 33"),
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


def raw_object(pairs: list[tuple[str, object]]) -> bytes:
    """A JSON object written pair by pair, so that it can repeat a key (a dict
    cannot); values are JSON-encoded unless already bytes (raw JSON text)."""
    def enc(v):
        return v.decode() if isinstance(v, bytes) else json.dumps(v)
    return ("{" + ", ".join(f"{json.dumps(k)}: {enc(v)}" for k, v in pairs) + "}").encode()


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


# Speeds the random scripts use: slow and fast, reduced and not, the bounds.
SPEEDS = [
    (1, 1), (1, 2), (2, 1), (1, 4), (4, 1), (1, 3), (2, 3), (3, 2), (16, 1), (1, 1000),
    (1000, 1000), (1000, 63), (7, 5), (2, 4), (999, 1000), (160, 10), (3, 9), (5, 1),
]
# With a speed line every duration counts 16 times toward the time limit.
SPEED_TIME_BUDGET_MS = ref.MAX_SCRIPT_TIME_MS // ref.MAX_SPEED


def script_time_ms(lines: list[str]) -> int:
    """The host ms a list of valid script lines adds up to."""
    total = 0
    for ln in lines:
        words = ref._tokens(ln.split("#", 1)[0])
        if words:
            total += ref._parse_command(words)[3]
    return total


def add_speed_lines(lines: list[str], r: random.Random) -> list[str]:
    """`speed P Q` lines inserted at random places (none when the script is too
    long for the 16x time count)."""
    if r.random() < 0.3 or script_time_ms(lines) > SPEED_TIME_BUDGET_MS:
        return lines
    out = list(lines)
    for _ in range(r.randint(1, 5)):
        if r.random() < 0.8:
            p, q = r.choice(SPEEDS)
        else:
            q = r.randint(1, 1000)
            p = r.randint(1, min(1000, 16 * q))
        out.insert(r.randint(0, len(out)), f"speed {p} {q}")
    return out


def random_case(r: random.Random, idx: int, speed: bool = True) -> Case:
    """A random valid script. The speed lines come from their own generator, so
    that `speed=False` gives exactly the scripts made before speed existed."""
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
    if speed:
        lines = add_speed_lines(lines, random.Random(f"speed-{RANDOM_SEED}-{idx}"))
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
    ("speed-p-zero", "speed 0 1"),
    ("speed-q-zero", "speed 1 0"),
    ("speed-both-zero", "speed 0 0"),
    ("speed-p-1001", "speed 1001 1000"),
    ("speed-q-1001", "speed 1 1001"),
    ("speed-too-fast", "speed 17 1"),
    ("speed-too-fast-2", "speed 1000 62"),
    ("speed-arity-0", "speed"),
    ("speed-arity-1", "speed 2"),
    ("speed-arity-3", "speed 1 2 3"),
    ("speed-decimal", "speed 1.5 1"),
    ("speed-negative", "speed -1 2"),
    ("speed-fraction", "speed 1/2"),
    ("speed-hex", "speed 0x2 1"),
    ("speed-word", "speed fast 1"),
    ("speed-u64-overflow", "speed 18446744073709551617 1"),
    ("speed-upper-case", "SPEED 1 2"),
]


def speed_malformed_cases() -> list[Case]:
    """Scripts refused because of what a valid `speed` line does to the limits."""
    lc_16 = {"stepMs": 16, "maxCatchUpSteps": 300, "minCatchUpMs": 32}
    return [
        # 10^12 ms is fine alone; the speed line makes it count 16 times: named there.
        Case("bad-speed-time-limit-at-speed-line", _lines("pause", "resume-after 1000000000000", "speed 1 2"),
             bad_line=3, expect_error=True),
        Case("bad-speed-time-limit-after", _lines("speed 1 1", "frames 1 625000000000", "frame 1"),
             bad_line=3, expect_error=True),
        # Full policy: 1_000_000_001 ms x 16 / 16 ms > 10^9 possible catch-up steps.
        Case("bad-speed-full-policy-work", _lines("speed 2 1", "pause", "resume-after 1000000001"),
             lifecycle={**lc_16, "policy": "full"}, bad_line=0, expect_error=True),
    ]


def strict_config_cases() -> list[Case]:
    """Configs refused for their keys: duplicates (JSON readers disagree on
    which value counts), unknown keys (typos), notes that are not strings, and
    integers written as floats. Each has one defect, named by both sides."""
    loop = list(default_loop_obj().items())
    lc = [("stepMs", 16), ("maxCatchUpSteps", 300), ("minCatchUpMs", 32), ("policy", "capped")]
    script = _lines("frames 10 16", "pause", "resume-after 100")

    def replaced(pairs, key, value):
        return [(k, value if k == key else v) for k, v in pairs]

    def renamed(pairs, key, new):
        return [(new if k == key else k, v) for k, v in pairs]

    def bad(name, key, loop_pairs=None, lc_pairs=None):
        return Case(
            f"bad-config-{name}", script,
            loop=raw_object(loop_pairs) if loop_pairs is not None else None,
            lifecycle=raw_object(lc_pairs) if lc_pairs is not None else None,
            expect_error=True, bad_key=key,
        )

    return [
        # "stepMs": 16 then 32: serde_json's Value and json.loads would both use 32.
        bad("loop-duplicate", "stepMs", loop_pairs=loop + [("stepMs", 32)]),
        bad("loop-duplicate-same-value", "seed", loop_pairs=[("seed", 20261012)] + loop),
        # `"\u0073eed"` is "seed" once decoded: a duplicate that comparing raw bytes misses.
        Case("bad-config-loop-duplicate-escaped", script,
             loop=raw_object(loop)[:-1] + b', "\\u0073eed": 1}', expect_error=True, bad_key="seed"),
        bad("loop-duplicate-note", "note", loop_pairs=loop + [("note", "again")]),
        bad("loop-typo-case", "stepMS", loop_pairs=renamed(loop, "stepMs", "stepMS")),
        bad("loop-typo-letter", "frictonNum", loop_pairs=renamed(loop, "frictionNum", "frictonNum")),
        bad("loop-unknown-extra", "colour", loop_pairs=loop + [("colour", 3)]),
        bad("loop-lifecycle-key", "policy", loop_pairs=loop + [("policy", "capped")]),
        bad("loop-note-number", "note", loop_pairs=replaced(loop, "note", 5)),
        bad("loop-comment-object", "$comment", loop_pairs=loop + [("$comment", {"a": 1})]),
        bad("loop-game-number", "game", loop_pairs=replaced(loop, "game", 1)),
        bad("loop-float-step", "stepMs", loop_pairs=replaced(loop, "stepMs", b"16.0")),
        bad("loop-exponent-seed", "seed", loop_pairs=replaced(loop, "seed", b"2e7")),
        bad("lifecycle-duplicate", "policy", lc_pairs=lc + [("policy", "full")]),
        bad("lifecycle-typo", "maxCatchupSteps", lc_pairs=renamed(lc, "maxCatchUpSteps", "maxCatchupSteps")),
        bad("lifecycle-loop-key", "seed", lc_pairs=lc + [("seed", 1)]),
        bad("lifecycle-float", "minCatchUpMs", lc_pairs=replaced(lc, "minCatchUpMs", b"32.5")),
    ]


def strict_config_valid_cases() -> list[Case]:
    """Configs with the allowed free-text keys: accepted by both sides."""
    loop = {**default_loop_obj(), "$comment": "a second note"}
    lc = {"$comment": "c", "stepMs": 16, "maxCatchUpSteps": 300, "minCatchUpMs": 32, "note": "n"}
    return [Case("config-notes-allowed", _lines("frames 10 16", "pause", "resume-after 100"), loop, lc)]


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
    cases += strict_config_cases()
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



def all_cases(count: int, speed: bool = True) -> list[Case]:
    """Every case the runner compares; `speed=False` leaves out valid `speed` lines
    (malformed ones stay: a CLI without the command refuses them too)."""
    r = random.Random(RANDOM_SEED)
    randoms = [random_case(r, i, speed) for i in range(count)]
    bad = malformed_cases(r, randoms) + (speed_malformed_cases() if speed else [])
    return fixed_cases(speed) + randoms + bad
