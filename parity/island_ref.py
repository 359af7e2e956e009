#!/usr/bin/env python3
"""Independent Python reference for the island world and `tickwise script`.

Written from the contract (the island rules and the resume rules, described in
docs/background.md, plus the parity brief), not from
the Rust sources, so that a shared misreading cannot hide: the parity runner
compares this file's output with the Rust CLI line by line.

Python integers are unbounded, so each bound below is a choice this file
states and applies on purpose, not an accident of a machine type:

* world values (positions, velocities, the score) wrap as 64-bit two's
  complement (`wrap_i64`), tick and score as unsigned 64-bit, the LCG mod
  2^32: the contract fixes 64-bit world state, and the `edge-posx-beyond-i64`
  parity case drives posX past the i64 range to check both sides wrap alike;
* `--inputs` values must be integers in the i32 range, anything else is a
  config error (the CLI contract's input type);
* script tokens are split on Unicode White_Space (`WHITESPACE`), and numbers
  are ASCII digits only;
* configs are strict JSON: no duplicate keys, no unknown keys (a string
  `note` / `$comment` is allowed), integers only (`16.0` is refused);
* all time is exact integer nanoseconds; the script limits keep every total
  below 2^64 ns, so no clock value ever needs to saturate.

Anything the contract leaves open is decided here the same way as in the
contract's text, never by reading the Rust.

Usage::

    python3 parity/island_ref.py script [--loop F] [--lifecycle F] [--inputs F] SCRIPT|-

Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from itertools import repeat
from typing import Iterable

# Script limits (from the contract).
MAX_FRAMES_N = 10_000_000
MAX_ADVANCE_N = 100_000_000
MAX_MS = 10**12
MAX_FRAME_LIST = 10_000
MAX_SCRIPT_WORK = 10**9
# All durations of a script (frames and resume-after) add up to at most this
# many ms, so no host clock value can saturate (the Rust kernel keeps u64 ns).
MAX_SCRIPT_TIME_MS = 10**13
# Time scale `speed P Q`: 1 <= P, Q <= MAX_SPEED_TERM and P <= MAX_SPEED * Q.
MAX_SPEED_TERM = 1000
MAX_SPEED = 16
NS_PER_MS = 1_000_000

# Every world value is a two's-complement 64-bit integer: the Rust world wraps
# on overflow in every build, and so does this reference (Python ints are
# unbounded, so wrap explicitly).
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
MASK64 = 2**64 - 1


def wrap_i64(v: int) -> int:
    """Two's-complement wrap to the signed 64-bit range."""
    if I64_MIN <= v <= I64_MAX:
        return v
    v &= MASK64
    return v - 2**64 if v > I64_MAX else v

# Scene stack limits.
MAX_SCENE_DEPTH = 64
MAX_SCENE_NAME = 64
SCENE_NAME_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
)

# Default inputs: the island rules' scripted input for ticks 0..99999.
DEFAULT_INPUT_TICKS = 100_000

# CLI limits on `--inputs` (the Rust CLI reads them as i32; the island rules set none).
I32_MIN = -(2**31)
I32_MAX = 2**31 - 1

U32_MAX = 2**32 - 1
MASK32 = U32_MAX

# Unicode White_Space: what "split on whitespace" means for script tokens
# (Python's str.split() would also split on U+001C..U+001F, which are not
# White_Space).
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

POLICIES = ("capped", "full", "freeze")

# Config keys. A config holds only these keys (plus a free-text note), each at
# most once: a duplicate is read differently by different JSON parsers (this
# one keeps the last, others the first), and an unknown key is usually a typo
# (`stepMS`) that would leave the intended key missing or at its default.
NOTE_KEYS = ("note", "$comment")
LOOP_KEYS = (
    "version", "game", "seed", "stepMs", "accel", "frictionNum", "frictionDen",
    "maxStepsPerFrame", "rngMultiplier", "rngIncrement", "maxFrameMs",
)
LIFECYCLE_KEYS = ("version", "stepMs", "maxCatchUpSteps", "minCatchUpMs", "policy")
INITIAL_SCENES = ("menu", "game")


class ConfigError(Exception):
    """A config or inputs file that cannot be used."""


class ScriptError(Exception):
    """A script line that cannot be parsed; `line` is 1-based (0: whole script)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"script line {line}: {message}" if line else f"script: {message}")
        self.line = line
        self.message = message


# ---------------------------------------------------------------- configs


def scripted_inputs(n: int = DEFAULT_INPUT_TICKS) -> list[int]:
    """The island rules' scripted input: push right 20 ticks, then left 20 ticks."""
    return [1 if t % 40 < 20 else -1 for t in range(n)]


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _strict_json(text: bytes, what: str):
    """JSON with every object's keys unique (json.loads alone keeps the last
    of two equal keys) and without NaN / Infinity."""

    def no_dupes(pairs):
        out = {}
        for k, v in pairs:
            if k in out:
                raise ConfigError(f"{what}: duplicate key {k!r}")
            out[k] = v
        return out

    try:
        return json.loads(
            text.decode("utf-8"),
            object_pairs_hook=no_dupes,
            parse_constant=_reject_constant,
        )
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{what}: not valid JSON: {e}") from None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_key(obj: dict, key: str, lo: int, hi: int | None, what: str) -> int:
    if key not in obj:
        raise ConfigError(f"{what}: missing key {key!r}")
    v = obj[key]
    if not _is_int(v) or v < lo or (hi is not None and v > hi):
        bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"{what}: key {key!r} must be an integer in {bound}, found {v!r}")
    return v


def _check_keys(obj: dict, known: tuple[str, ...], what: str) -> None:
    """Every key known or a note (a string); the first offender in file order."""
    for k, v in obj.items():
        if k in NOTE_KEYS:
            if not isinstance(v, str):
                raise ConfigError(f"{what}: key {k!r} must be a string, found {v!r}")
        elif k not in known:
            raise ConfigError(f"{what}: unknown key {k!r}")


def _check_version(obj: dict, what: str) -> None:
    if "version" in obj and not (_is_int(obj["version"]) and obj["version"] == 1):
        raise ConfigError(f"{what}: key 'version' must be 1, found {obj['version']!r}")


@dataclass(frozen=True)
class LoopConfig:
    """`island_loop.json`."""

    seed: int = 20261012
    step_ms: int = 16
    accel: int = 3
    friction_num: int = 15
    friction_den: int = 16
    max_steps_per_frame: int = 8
    rng_multiplier: int = 1103515245
    rng_increment: int = 12345
    max_frame_ms: int | None = None

    @staticmethod
    def from_obj(obj, what: str = "loop config") -> "LoopConfig":
        if not isinstance(obj, dict):
            raise ConfigError(f"{what}: must be a JSON object")
        _check_keys(obj, LOOP_KEYS, what)
        _check_version(obj, what)
        if "game" in obj and not isinstance(obj["game"], str):
            raise ConfigError(f"{what}: key 'game' must be a string, found {obj['game']!r}")
        max_frame = None
        if "maxFrameMs" in obj:
            max_frame = _int_key(obj, "maxFrameMs", 1, None, what)
        return LoopConfig(
            seed=_int_key(obj, "seed", 0, U32_MAX, what),
            step_ms=_int_key(obj, "stepMs", 1, None, what),
            accel=_int_key(obj, "accel", -(2**63), 2**63 - 1, what),
            friction_num=_int_key(obj, "frictionNum", 0, None, what),
            friction_den=_int_key(obj, "frictionDen", 1, None, what),
            max_steps_per_frame=_int_key(obj, "maxStepsPerFrame", 1, None, what),
            rng_multiplier=_int_key(obj, "rngMultiplier", 0, U32_MAX, what),
            rng_increment=_int_key(obj, "rngIncrement", 0, U32_MAX, what),
            max_frame_ms=max_frame,
        )


@dataclass(frozen=True)
class LifecycleConfig:
    """`island_lifecycle.json`."""

    step_ms: int = 16
    max_catch_up_steps: int = 300
    min_catch_up_ms: int = 32
    policy: str = "capped"

    @staticmethod
    def from_obj(obj, what: str = "lifecycle config") -> "LifecycleConfig":
        if not isinstance(obj, dict):
            raise ConfigError(f"{what}: must be a JSON object")
        _check_keys(obj, LIFECYCLE_KEYS, what)
        _check_version(obj, what)
        policy = obj.get("policy", "capped")
        if policy not in POLICIES:
            raise ConfigError(f"{what}: key 'policy' must be one of {POLICIES}, found {policy!r}")
        step = _int_key(obj, "stepMs", 1, None, what)
        if policy == "capped":
            max_steps = _int_key(obj, "maxCatchUpSteps", 0, None, what)
            min_ms = _int_key(obj, "minCatchUpMs", 0, None, what)
        else:
            # Only the capped policy reads the cap; the others ignore it.
            max_steps, min_ms = 0, 0
        return LifecycleConfig(step, max_steps, min_ms, policy)


def parse_inputs(data: bytes) -> list[int]:
    """A `--inputs` file: a JSON array of integers (i32, like the CLI)."""
    arr = _strict_json(data, "inputs")
    if not isinstance(arr, list):
        raise ConfigError("inputs must be a JSON array of integers")
    for i, v in enumerate(arr):
        if not _is_int(v) or not I32_MIN <= v <= I32_MAX:
            raise ConfigError(f"inputs[{i}] must be an integer in the i32 range, found {v!r}")
    return arr


# ---------------------------------------------------------------- session


def valid_scene_name(name: str) -> bool:
    return 1 <= len(name) <= MAX_SCENE_NAME and all(c in SCENE_NAME_CHARS for c in name)


class Session:
    """World + fixed-step loop + lifecycle + scene stack, driven by script commands."""

    def __init__(
        self,
        cfg: LoopConfig | None = None,
        lc: LifecycleConfig | None = None,
        inputs: list[int] | None = None,
    ) -> None:
        self.cfg = cfg or LoopConfig()
        self.lc = lc or LifecycleConfig()
        if self.lc.step_ms != self.cfg.step_ms:
            # Resume converts elapsed time with the lifecycle's step but runs
            # the loop's steps; two different lengths make that meaningless.
            raise ConfigError(
                f"lifecycle stepMs {self.lc.step_ms} differs from loop stepMs {self.cfg.step_ms}"
            )
        self.inputs = scripted_inputs() if inputs is None else list(inputs)
        # World.
        self.tick = 0
        self.pos_x = 0
        self.pos_y = 0
        self.vel_x = 0
        self.vel_y = 0
        self.score = 0
        self.rng = self.cfg.seed & MASK32
        # Time thrown away (clamp and step cap), exact in ns; the digest shows
        # whole ms, rounded down.
        self.dropped_ns = 0
        # Loop: the accumulator in ns (sim time not yet turned into steps).
        self.acc_ns = 0
        # Time scale P/Q (reduced) and the carried sub-ns remainder, in 1/Q ns.
        self.speed_p = 1
        self.speed_q = 1
        self.speed_rem = 0
        # Lifecycle.
        self.wall = 0
        self.state = "running"
        self.away_since = 0
        # Scenes, bottom first.
        self.scenes: list[str] = list(INITIAL_SCENES)

    @property
    def dropped_ms(self) -> int:
        """The world's dropped time in whole ms (rounded down)."""
        return self.dropped_ns // NS_PER_MS

    @property
    def acc(self) -> int:
        """The accumulator in whole ms (rounded down)."""
        return self.acc_ns // NS_PER_MS

    # -- world

    def digest(self) -> str:
        return "|".join(
            str(v)
            for v in (
                self.tick,
                self.pos_x,
                self.pos_y,
                self.vel_x,
                self.vel_y,
                self.score,
                self.rng,
                self.dropped_ms,
            )
        )

    def step_n(self, n: int) -> None:
        """Run `n` fixed steps, each reading `inputs[tick]` (0 past the end)."""
        c = self.cfg
        accel, fnum, fden = c.accel, c.friction_num, c.friction_den
        mul, inc = c.rng_multiplier, c.rng_increment
        inputs = self.inputs
        n_inputs = len(inputs)
        t, px, py, vx, vy = self.tick, self.pos_x, self.pos_y, self.vel_x, self.vel_y
        score, rng = self.score, self.rng
        for _ in range(n):
            i = inputs[t] if t < n_inputs else 0
            vx = wrap_i64(vx + i * accel)
            vx = (vx * fnum) // fden  # floor division: rounds toward -inf; |result| <= |vx|
            px = wrap_i64(px + vx)
            vy = wrap_i64(vy + 1)
            py = wrap_i64(py + vy)
            rng = (rng * mul + inc) & MASK32
            score = (score + rng % 7) & MASK64
            t = (t + 1) & MASK64
        self.tick, self.pos_x, self.pos_y, self.vel_x, self.vel_y = t, px, py, vx, vy
        self.score, self.rng = score, rng

    # -- time scale

    def set_speed(self, p: int, q: int) -> bool:
        """Sets the time scale to P/Q (already validated by the parser).

        A different speed drops the carried sub-ns remainder (it was in
        units of the old 1/Q ns); the same speed, however written, keeps it."""
        g = math.gcd(p, q)
        p, q = p // g, q // g
        if (p, q) != (self.speed_p, self.speed_q):
            self.speed_p, self.speed_q = p, q
            self.speed_rem = 0
        return True

    def scale_ns(self, host_ns: int) -> int:
        """Host time → sim time at the current speed, carrying the remainder
        so that no time is created or lost by rounding."""
        x = host_ns * self.speed_p + self.speed_rem
        sim, self.speed_rem = divmod(x, self.speed_q)
        return sim

    # -- loop

    def frame(self, ms: int) -> int:
        """One frame of `ms` host milliseconds; returns the steps it ran."""
        self.wall += ms
        if self.state != "running":
            # Time away is scaled at resume, not here.
            return 0
        dt = self.scale_ns(ms * NS_PER_MS)
        cap = self.cfg.max_frame_ms
        if cap is not None and dt > cap * NS_PER_MS:
            self.dropped_ns += dt - cap * NS_PER_MS
            dt = cap * NS_PER_MS
        step = self.cfg.step_ms * NS_PER_MS
        self.acc_ns += dt
        # The contract's "step while acc >= stepMs and steps < cap", in one go.
        steps = min(self.acc_ns // step, self.cfg.max_steps_per_frame)
        self.step_n(steps)
        self.acc_ns -= steps * step
        if self.acc_ns >= step:
            self.dropped_ns += self.acc_ns
            self.acc_ns = 0
        return steps

    def frames(self, durations: Iterable[int]) -> int:
        return sum(self.frame(ms) for ms in durations)

    def frames_repeat(self, n: int, ms: int) -> int:
        if self.state != "running":
            # Nothing can change the state within one command: skip the loop.
            self.wall += n * ms
            return 0
        return self.frames(repeat(ms, n))

    # -- lifecycle

    def _leave(self, state: str) -> bool:
        if self.state != "running":
            return False
        self.state = state
        self.away_since = self.wall
        return True

    def pause(self) -> bool:
        return self._leave("paused")

    def background(self) -> bool:
        return self._leave("background")

    def resume_after(self, ms: int) -> dict:
        if self.state == "running":
            # A resume without a pause is refused and changes nothing: while
            # running, only frames move time.
            return {
                "ok": False,
                "elapsedMs": 0,
                "wantedSteps": 0,
                "catchUpSteps": 0,
                "carriedMs": 0,
                "droppedMs": 0,
            }
        self.wall += ms
        lc = self.lc
        # Host time away (reported as is), then the sim time it is worth at
        # the current speed: every decision below is about the sim time.
        elapsed = max(0, self.wall - self.away_since)
        sim = self.scale_ns(elapsed * NS_PER_MS)
        step = lc.step_ms * NS_PER_MS
        wanted = sim // step
        rem = sim - wanted * step
        if lc.policy == "full":
            catch, carried = wanted, rem
        elif lc.policy == "freeze":
            catch, carried = 0, 0
        elif sim < lc.min_catch_up_ms * NS_PER_MS:
            catch, carried = 0, 0
        elif wanted > lc.max_catch_up_steps:
            catch, carried = lc.max_catch_up_steps, 0
        else:
            catch, carried = wanted, rem
        dropped = sim - catch * step - carried
        self.step_n(catch)
        self.acc_ns += carried
        self.state = "running"
        # The resume's dropped time is reported, not added to the world's.
        return {
            "ok": True,
            "elapsedMs": elapsed,
            "wantedSteps": wanted,
            "catchUpSteps": catch,
            "carriedMs": carried // NS_PER_MS,
            "droppedMs": dropped // NS_PER_MS,
        }

    # -- scenes

    def push(self, name: str) -> bool:
        if not valid_scene_name(name) or len(self.scenes) >= MAX_SCENE_DEPTH:
            return False
        self.scenes.append(name)
        return True

    def pop(self) -> bool:
        if not self.scenes:
            return False
        self.scenes.pop()
        return True

    def scene_dump(self) -> str:
        top = len(self.scenes) - 1
        return ",".join(
            f"{n}={'active' if i == top else 'paused'}" for i, n in enumerate(self.scenes)
        )


# ---------------------------------------------------------------- script


def _tokens(line: str) -> list[str]:
    out, cur = [], []
    for ch in line:
        if ch in WHITESPACE:
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


_ASCII_DIGITS = frozenset("0123456789")


def _number(tok: str, what: str, limit: int) -> int:
    # str.isdigit() would accept non-ASCII digits such as '١' or '²'.
    if not tok or any(c not in _ASCII_DIGITS for c in tok):
        raise ValueError(f"{what} must be a non-negative integer, found {tok!r}")
    v = int(tok)
    if v > limit:
        raise ValueError(f"{what} must be at most {limit}, found {tok}")
    return v


def _arity(args: list[str], n: int, usage: str) -> None:
    if len(args) != n:
        raise ValueError(f"expected `{usage}`")


def _parse_command(words: list[str]):
    """One non-blank line's tokens → (cmd, args, work, time_ms)."""
    cmd, args = words[0], words[1:]
    if cmd == "frames":
        _arity(args, 2, "frames N MS")
        n = _number(args[0], "N", MAX_FRAMES_N)
        ms = _number(args[1], "MS", MAX_MS)
        return cmd, (n, ms), n, n * ms
    if cmd == "frame":
        if not 1 <= len(args) <= MAX_FRAME_LIST:
            raise ValueError(f"expected `frame MS [MS ...]` with 1 to {MAX_FRAME_LIST} durations")
        durations = tuple(_number(a, "MS", MAX_MS) for a in args)
        return cmd, durations, len(args), sum(durations)
    if cmd == "advance":
        _arity(args, 1, "advance N")
        n = _number(args[0], "N", MAX_ADVANCE_N)
        return cmd, (n,), n, 0
    if cmd in ("pause", "background", "pop"):
        _arity(args, 0, cmd)
        return cmd, (), 0, 0
    if cmd == "resume-after":
        _arity(args, 1, "resume-after MS")
        ms = _number(args[0], "MS", MAX_MS)
        return cmd, (ms,), 0, ms
    if cmd == "speed":
        _arity(args, 2, "speed P Q")
        p = _number(args[0], "P", MAX_SPEED_TERM)
        q = _number(args[1], "Q", MAX_SPEED_TERM)
        if p == 0 or q == 0:
            raise ValueError(f"P and Q must be at least 1, found {p} {q}")
        if p > MAX_SPEED * q:
            raise ValueError(f"speed {p}/{q} is faster than {MAX_SPEED}")
        return cmd, (p, q), 0, 0
    if cmd == "push":
        _arity(args, 1, "push NAME")
        if not valid_scene_name(args[0]):
            raise ValueError(
                f"invalid scene name {args[0]!r}: use 1 to {MAX_SCENE_NAME} "
                "ASCII letters, digits, '_', '-' or '.'"
            )
        return cmd, (args[0],), 0, 0
    raise ValueError(f"unknown command {cmd!r}")


def parse_script(text: str, lc: "LifecycleConfig | None" = None) -> list[tuple[int, str, tuple]]:
    """The whole script → [(line, cmd, args)]; raises ScriptError on the first bad line.

    Time limit: all durations (host ms) add up to at most MAX_SCRIPT_TIME_MS.
    From the first `speed` line on, that sum counts MAX_SPEED (16) times,
    earlier lines included, so the speed line itself can be the one named:
    every ms of host time may become up to 16 ms of sim time, and sim-time
    totals (the world's dropped ns, a resume's scaled absence) must stay
    below 2^64 ns on the Rust side too.

    With a `full` lifecycle policy and at least one resume-after, every ms of
    the script could become catch-up work: total_time × factor // stepMs
    counts toward MAX_SCRIPT_WORK (a whole-script error, line 0), where the
    factor is 16 when the script has a `speed` line and 1 otherwise."""
    out = []
    work = 0
    time = 0
    factor = 1
    for idx, raw in enumerate(text.split("\n")):
        line_no = idx + 1
        words = _tokens(raw.split("#", 1)[0])
        if not words:
            continue
        try:
            cmd, args, w, ms = _parse_command(words)
        except ValueError as e:
            raise ScriptError(line_no, str(e)) from None
        work += w
        if work > MAX_SCRIPT_WORK:
            raise ScriptError(
                line_no, f"the script asks for more than {MAX_SCRIPT_WORK} frames and steps"
            )
        time += ms
        if cmd == "speed":
            factor = MAX_SPEED
        if time * factor > MAX_SCRIPT_TIME_MS:
            raise ScriptError(
                line_no,
                f"the script's durations add up to more than {MAX_SCRIPT_TIME_MS} ms"
                + (f" (counted {MAX_SPEED} times once a speed is set)" if factor > 1 else ""),
            )
        out.append((line_no, cmd, args))
    if lc is not None and lc.policy == "full" and any(c == "resume-after" for _, c, _ in out):
        if work + time * factor // lc.step_ms > MAX_SCRIPT_WORK:
            raise ScriptError(0, "with the full policy the catch-up work could exceed the limit")
    return out


def execute(s: Session, line_no: int, cmd: str, args: tuple) -> dict:
    """Run one parsed command; returns its output object (key order as printed)."""
    extra: dict = {}
    if cmd == "frames":
        extra["steps"] = s.frames_repeat(*args)
        extra["droppedMs"] = s.dropped_ms
    elif cmd == "frame":
        extra["steps"] = s.frames(args)
        extra["droppedMs"] = s.dropped_ms
    elif cmd == "advance":
        s.step_n(args[0])
        extra["steps"] = args[0]
        extra["droppedMs"] = s.dropped_ms
    elif cmd == "pause":
        extra["ok"] = s.pause()
    elif cmd == "background":
        extra["ok"] = s.background()
    elif cmd == "resume-after":
        extra = s.resume_after(args[0])
    elif cmd == "speed":
        extra["ok"] = s.set_speed(*args)
    elif cmd == "push":
        extra["ok"] = s.push(args[0])
        extra["scenes"] = s.scene_dump()
    elif cmd == "pop":
        extra["ok"] = s.pop()
        extra["scenes"] = s.scene_dump()
    else:  # pragma: no cover - parse_script only yields the commands above
        raise AssertionError(cmd)
    return {"line": line_no, "cmd": cmd, "tick": s.tick, "digest": s.digest(), **extra}


def run_script(text: str, session: Session | None = None) -> list[dict]:
    """Parse then run a whole script; raises ScriptError before running anything."""
    s = session or Session()
    parsed = parse_script(text, s.lc)
    return [execute(s, *p) for p in parsed]


def dumps(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _read(path: str, what: str) -> bytes:
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ConfigError(f"cannot read {what} {path}: {e.strerror}") from None


def load_session(loop_path: str, lc_path: str, inputs_path: str | None) -> Session:
    cfg = LoopConfig.from_obj(_strict_json(_read(loop_path, "loop config"), loop_path), loop_path)
    lc = LifecycleConfig.from_obj(
        _strict_json(_read(lc_path, "lifecycle config"), lc_path), lc_path
    )
    inputs = None
    if inputs_path is not None:
        inputs = parse_inputs(_read(inputs_path, "inputs"))
    return Session(cfg, lc, inputs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="island_ref.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sp = sub.add_parser("script", help="drive the island world from a text script")
    sp.add_argument("--loop", default="config/island_loop.json", metavar="FILE")
    sp.add_argument("--lifecycle", default="config/island_lifecycle.json", metavar="FILE")
    sp.add_argument("--inputs", default=None, metavar="FILE")
    sp.add_argument("script", metavar="SCRIPT|-")
    a = ap.parse_args(argv)
    try:
        session = load_session(a.loop, a.lifecycle, a.inputs)
        raw = _read(a.script, "script")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConfigError(f"script {a.script} is not UTF-8: {e}") from None
        out = run_script(text, session)
    except (ConfigError, ScriptError) as e:
        print(f"island_ref: {e}", file=sys.stderr)
        return 2
    sys.stdout.write("".join(dumps(o) + "\n" for o in out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
