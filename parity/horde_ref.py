#!/usr/bin/env python3
"""Independent Python reference for the horde sim (tickwise_sims::horde).

Written from docs/horde.md and docs/checksum.md, with the integer details
(rounding directions, table sizes, the order of RNG draws) read from the
Rust source's comments where the docs leave them open. It shares no code
with the Rust: neighbours are found by comparing every pair, positions are
Python integers, and the checksum is computed here from the field list.
It is meant for a few enemies (O(n^2) per tick), to pin the Rust horde's
per-tick checksums to values computed another way.

Version 3 (co-op): one to four heroes, written from docs/horde.md ("Heroes",
"One tick") and issue 17, not from the Rust. Each hero is a `Hero` object;
enemies pick their target hero by trying every hero that is up.

The optional key `separationTicks` (default 1, still version 3): the
separation runs only on ticks t with t % separationTicks == 0, and its
clamped push is multiplied by separationTicks. Written from docs/horde.md.

    python3 parity/horde_ref.py [--config F] [--enemies N] [--players N] [--ticks T] [--every]

prints the digest after T ticks of the demo walk (with --every: after each
tick; with --players N, heroes 1.. stand still). `python3 parity/horde_ref.py golden` rewrites parity/horde_golden.json.

Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_CONFIG = os.path.join(ROOT, "config", "horde.json")
GOLDEN = os.path.join(HERE, "horde_golden.json")

MASK32 = 2**32 - 1
MASK64 = 2**64 - 1
SUBPX = 256
STICK_MAX = 32767
DIAGONAL = 23170  # floor(32767 / sqrt 2)
RNG_STREAM = 0x0004_4F52_4445
PCG_MULT = 6364136223846793005
KERNEL_BUCKETS = 4096

# Buttons 0..3.
UP, DOWN, LEFT, RIGHT = 0, 1, 2, 3

REQUIRED = (
    "seed", "fieldWidth", "fieldHeight", "enemies", "gridCell", "playerRadius",
    "playerSpeed", "playerHp", "invulnTicks", "attackRadius", "attackDamage",
    "attackCooldownTicks", "enemyRadius", "enemySpeed", "enemyHp", "contactDamage",
    "steerShift", "crowdLimit", "separationStrength", "maxPush", "waveTicks",
    "spawnDistance", "spawnSpacing",
)
OPTIONAL = {"version": 1, "sim": "horde", "tickHz": 30, "maxCatchUpSteps": 300,
            "minCatchUpMs": 32, "maxStepsPerFrame": 8, "players": 1}
# Optional keys whose default is not written into a loaded config (so the
# golden file's older scenarios keep their configs as they were).
OPTIONAL_UNMERGED = {"separationTicks": 1}
MAX_PLAYERS = 4
HERO_SPREAD_PX = 24  # hero i of n starts (2i - (n - 1)) * 24 px right of the centre
NOTE_KEYS = ("note", "$comment")


class ConfigError(Exception):
    """A horde config that cannot be used."""


def load_config(data: bytes) -> dict:
    """The config's keys (strict: no duplicate, unknown or non-integer keys).
    Ranges are the Rust side's business; this reference trusts them."""

    def no_dupes(pairs):
        out = {}
        for k, v in pairs:
            if k in out:
                raise ConfigError(f"duplicate key {k!r}")
            out[k] = v
        return out

    obj = json.loads(data.decode("utf-8"), object_pairs_hook=no_dupes)
    if not isinstance(obj, dict):
        raise ConfigError("config must be a JSON object")
    for k, v in obj.items():
        if k in NOTE_KEYS or k in ("sim",):
            continue
        if k not in REQUIRED and k not in OPTIONAL and k not in OPTIONAL_UNMERGED:
            raise ConfigError(f"unknown key {k!r}")
        if not isinstance(v, int) or isinstance(v, bool):
            raise ConfigError(f"key {k!r} must be an integer, found {v!r}")
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise ConfigError(f"missing key {missing[0]!r}")
    if not 1 <= obj.get("players", 1) <= MAX_PLAYERS:
        raise ConfigError(f"players must be 1..={MAX_PLAYERS}, found {obj['players']}")
    return {**OPTIONAL, **obj}


# ---------------------------------------------------------------- arithmetic


def trunc_div(a: int, b: int) -> int:
    """Division rounding toward zero (Rust's `/` on integers)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def wrap_i32(v: int) -> int:
    v &= MASK32
    return v - 2**32 if v >= 2**31 else v


def clamp_field(v: int, hi: int) -> int:
    return 0 if v < 0 else hi if v > hi else v


def oct_len(dx: int, dy: int) -> int:
    """max + floor(3 * min / 8) of the absolute values."""
    a, b = abs(dx), abs(dy)
    hi, lo = (a, b) if a >= b else (b, a)
    return hi + (lo * 3 >> 3)


class Pcg32:
    """PCG-XSH-RR 64/32 with the reference implementation's seeding."""

    def __init__(self, seed: int, stream: int) -> None:
        self.state = 0
        self.inc = ((stream << 1) | 1) & MASK64
        self.next_u32()
        self.state = (self.state + seed) & MASK64
        self.next_u32()

    def next_u32(self) -> int:
        old = self.state
        self.state = (old * PCG_MULT + self.inc) & MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & MASK32
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & MASK32

    def below(self, bound: int) -> int:
        """Uniform in 0..bound by rejecting the low word (Lemire's method)."""
        if bound == 0:
            return 0
        threshold = ((1 << 32) - bound) % bound
        while True:
            m = self.next_u32() * bound
            if m & MASK32 >= threshold:
                return m >> 32


# ---------------------------------------------------------------- the world


class Kernel:
    """The separation push: a table of w ~ 65536 * strength/256 * (R - L) / L
    indexed by d^2 >> shift, each bucket using the isqrt of its upper end."""

    def __init__(self, radius: int, strength: int) -> None:
        radius = min(max(radius, 1), 1 << 15)
        strength = min(strength, 256)
        self.radius_sq = radius * radius
        last = self.radius_sq - 1
        shift = 0
        while (last >> shift) >= KERNEL_BUCKETS:
            shift += 1
        self.shift = shift
        self.weights = []
        for b in range((last >> shift) + 1):
            length = max(math.isqrt((b + 1) << shift), 1)
            overlap = max(radius - length, 0)
            self.weights.append(overlap * strength * 256 // length)
        self.nudge = (radius * strength) >> 9

    def push(self, dx: int, dy: int, d2: int) -> tuple[int, int]:
        idx = d2 >> self.shift
        w = self.weights[idx] if idx < len(self.weights) else 0
        return trunc_div(dx * w, 65536), trunc_div(dy * w, 65536)


class Hero:
    """One hero: where it is, its hit points and its two timers."""

    def __init__(self, x: int, y: int, hp: int) -> None:
        self.x, self.y = x, y
        self.hp = hp
        self.downs = 0
        self.invuln = 0
        self.attack_timer = 0
        self.contacts = 0  # this tick's

    @property
    def up(self) -> bool:
        return self.hp > 0


class Horde:
    """One horde world: the heroes, enemies by id, counters."""

    def __init__(self, cfg: dict) -> None:
        self.max_x = cfg["fieldWidth"] * SUBPX - 1
        self.max_y = cfg["fieldHeight"] * SUBPX - 1
        self.player_speed = cfg["playerSpeed"]
        self.player_hp_full = cfg["playerHp"]
        self.invuln_ticks = cfg["invulnTicks"]
        self.contact_r = (cfg["playerRadius"] + cfg["enemyRadius"]) * SUBPX
        self.attack_r = cfg["attackRadius"] * SUBPX
        self.attack_damage = cfg["attackDamage"]
        self.attack_cooldown = max(cfg["attackCooldownTicks"], 1)
        self.enemy_speed = cfg["enemySpeed"]
        self.enemy_hp = cfg["enemyHp"]
        self.contact_damage = cfg["contactDamage"]
        self.steer_shift = cfg["steerShift"]
        self.max_push = cfg["maxPush"]
        self.separation_ticks = cfg.get("separationTicks", OPTIONAL_UNMERGED["separationTicks"])
        self.wave_ticks = max(cfg["waveTicks"], 1)
        k = cfg["crowdLimit"]
        # The speed an enemy with c overlapping neighbours steers for.
        self.want = [self.enemy_speed] if k == 0 else [self.enemy_speed * (k - c) // k for c in range(k + 1)]
        self.kernel = Kernel(2 * cfg["enemyRadius"] * SUBPX, cfg["separationStrength"])
        # Spawn band: inner = spawnDistance; outer just holds the horde at spawnSpacing.
        n = cfg["enemies"]
        need = -(-(n * cfg["spawnSpacing"] ** 2) // 4)
        self.inner = cfg["spawnDistance"]
        self.outer = math.isqrt(self.inner**2 + need) + 1
        self.rng = Pcg32(cfg["seed"], RNG_STREAM)
        self.tick = 0
        players = cfg.get("players", 1)
        cx, cy = self.max_x // 2, self.max_y // 2
        self.heroes = [
            Hero(clamp_field(cx + (2 * i - (players - 1)) * HERO_SPREAD_PX * SUBPX, self.max_x), cy,
                 self.player_hp_full)
            for i in range(players)
        ]
        self.wipes = 0
        self.kills = 0
        self.waves = 0
        self.alive = 0
        self.last_pairs = 0
        self.last_contacts = 0
        self.x = [0] * n
        self.y = [0] * n
        self.vx = [0] * n
        self.vy = [0] * n
        self.hp = [0] * n
        self.crowd = [0] * n
        # What the tick did, for the tests' coverage checks.
        self.nudges = 0
        self.ties = 0
        self.targets = [0] * n  # each enemy's hero in the last steering
        self.revivals = 0
        self.respawn_dead()

    # The first hero, under version 2's names (one-hero code and tests).
    @property
    def px(self) -> int:
        return self.heroes[0].x

    @property
    def py(self) -> int:
        return self.heroes[0].y

    @property
    def downs(self) -> int:
        return sum(h.downs for h in self.heroes)

    # -- one tick

    def step(self, moves: list[tuple[int, int]]) -> None:
        """One tick; moves[p] is player p's stick vector (absent: still)."""
        for p, hero in enumerate(self.heroes):
            if not hero.up:
                continue
            sx, sy = moves[p] if p < len(moves) else (0, 0)
            hero.x = clamp_field(hero.x + trunc_div(sx * self.player_speed, STICK_MAX), self.max_x)
            hero.y = clamp_field(hero.y + trunc_div(sy * self.player_speed, STICK_MAX), self.max_y)
        if self.tick > 0 and self.tick % self.wave_ticks == 0:
            for hero in self.heroes:
                if not hero.up:
                    self.get_up(hero)
                    self.revivals += 1
            self.respawn_dead()
            self.waves += 1
        self.steer()
        if self.tick % self.separation_ticks == 0:
            self.separate()
        self.strike()
        self.take_contacts()
        self.tick += 1

    def get_up(self, hero: Hero) -> None:
        hero.hp = self.player_hp_full
        hero.invuln = self.invuln_ticks

    def spawn_offset(self) -> tuple[int, int]:
        """A point of the square ring inner..outer px around a hero: a side
        (chance by length: north/south 2*outer, west/east 2*inner), a place
        along it, a depth across it. Three draws, in the order side, across,
        along."""
        i, o = self.inner, self.outer
        side = self.rng.below(4 * (o + i))
        across = self.rng.below((o - i) * SUBPX) + i * SUBPX
        long, half = (2 * o * SUBPX, o) if side < 4 * o else (2 * i * SUBPX, i)
        along = self.rng.below(long) - half * SUBPX
        if side < 2 * o:
            return along, -across
        if side < 4 * o:
            return along, across
        if side < 4 * o + 2 * i:
            return -across, along
        return across, along

    def respawn_dead(self) -> None:
        """Dead enemies in id order; the j-th of them goes around hero j mod n."""
        dealt = 0
        for k in range(len(self.hp)):
            if self.hp[k] <= 0:
                hero = self.heroes[dealt % len(self.heroes)]
                dealt += 1
                dx, dy = self.spawn_offset()
                self.x[k] = clamp_field(hero.x + dx, self.max_x)
                self.y[k] = clamp_field(hero.y + dy, self.max_y)
                self.vx[k] = self.vy[k] = 0
                self.crowd[k] = 0
                self.hp[k] = self.enemy_hp
                self.alive += 1

    def target(self, k: int) -> Hero:
        """The nearest hero that is up (squared distance; a tie: lowest index)."""
        best = None
        best_d2 = None
        for hero in self.heroes:
            if not hero.up:
                continue
            d2 = (hero.x - self.x[k]) ** 2 + (hero.y - self.y[k]) ** 2
            if best_d2 is None or d2 < best_d2:
                best, best_d2 = hero, d2
            elif d2 == best_d2:
                self.ties += 1
        assert best is not None, "no hero up while steering"
        return best

    def steer(self) -> None:
        speed, shift = self.enemy_speed, self.steer_shift
        for k in range(len(self.hp)):
            if self.hp[k] <= 0:
                continue
            hero = self.target(k)
            self.targets[k] = self.heroes.index(hero)
            want = self.want[min(self.crowd[k], len(self.want) - 1)]
            dx, dy = hero.x - self.x[k], hero.y - self.y[k]
            length = oct_len(dx, dy)
            if length == 0:
                wx = wy = 0
            else:
                # want/length as a 32.32 fraction; >> floors.
                f = (want << 32) // length
                wx, wy = (dx * f) >> 32, (dy * f) >> 32
            vx = self.vx[k] + ((wx - self.vx[k]) >> shift)
            vy = self.vy[k] + ((wy - self.vy[k]) >> shift)
            vlen = oct_len(vx, vy)
            if vlen > speed:
                f = (speed << 32) // vlen
                vx, vy = trunc_div(vx * f, 1 << 32), trunc_div(vy * f, 1 << 32)
            self.vx[k], self.vy[k] = vx, vy
            self.x[k] = clamp_field(self.x[k] + vx, self.max_x)
            self.y[k] = clamp_field(self.y[k] + vy, self.max_y)

    def separate(self) -> None:
        n = len(self.hp)
        ax, ay, near = [0] * n, [0] * n, [0] * n
        pairs = 0
        live = [k for k in range(n) if self.hp[k] > 0]
        for a_idx, i in enumerate(live):
            for j in live[a_idx + 1:]:
                dx, dy = self.x[i] - self.x[j], self.y[i] - self.y[j]
                d2 = dx * dx + dy * dy
                if d2 >= self.kernel.radius_sq:
                    continue
                pairs += 1
                if d2 == 0:
                    # Same spot: the lower id (i < j) goes toward -x.
                    fx, fy = -self.kernel.nudge, 0
                    self.nudges += 1
                else:
                    fx, fy = self.kernel.push(dx, dy, d2)
                ax[i], ay[i] = wrap_i32(ax[i] + fx), wrap_i32(ay[i] + fy)
                ax[j], ay[j] = wrap_i32(ax[j] - fx), wrap_i32(ay[j] - fy)
                near[i] += 1
                near[j] += 1
        self.last_pairs = pairs
        m = self.max_push
        for k in live:
            self.crowd[k] = min(near[k], 65535)
            # Clamped, then times separationTicks: one pass pushes for them all.
            n_ticks = self.separation_ticks
            fx, fy = max(-m, min(m, ax[k])) * n_ticks, max(-m, min(m, ay[k])) * n_ticks
            self.x[k] = clamp_field(self.x[k] + fx, self.max_x)
            self.y[k] = clamp_field(self.y[k] + fy, self.max_y)
            self.vx[k] += fx
            self.vy[k] += fy

    def strike(self) -> None:
        """Contacts per hero and the heroes' attacks, over the enemies alive
        when the step begins."""
        live = [k for k in range(len(self.hp)) if self.hp[k] > 0]
        for hero in self.heroes:
            hero.contacts = 0
        for hero in self.heroes:
            if not hero.up:
                continue
            attacking = hero.attack_timer == 0
            for k in live:
                dx, dy = self.x[k] - hero.x, self.y[k] - hero.y
                d2 = dx * dx + dy * dy
                if attacking and d2 < self.attack_r**2 and self.hp[k] > 0:
                    self.hp[k] = max(self.hp[k] - self.attack_damage, 0)
                    if self.hp[k] == 0:
                        self.kills += 1
                        self.alive -= 1
                # A contact counts even for an enemy killed in this step.
                if d2 < self.contact_r**2:
                    hero.contacts += 1

    def take_contacts(self) -> None:
        self.last_contacts = sum(h.contacts for h in self.heroes)
        for hero in self.heroes:
            hero.attack_timer = self.attack_cooldown - 1 if hero.attack_timer == 0 else hero.attack_timer - 1
            if not hero.up:
                continue
            if hero.invuln > 0:
                hero.invuln -= 1
            elif hero.contacts > 0 and self.contact_damage > 0:
                hero.hp -= self.contact_damage * hero.contacts
                hero.invuln = self.invuln_ticks
                if hero.hp <= 0:
                    hero.hp = 0
                    hero.downs += 1
        if not any(h.up for h in self.heroes):
            self.wipes += 1
            for hero in self.heroes:
                self.get_up(hero)

    # -- digest

    def values(self) -> list[int]:
        """docs/checksum.md's value stream: the fields in visiting order."""
        out = [self.tick, self.rng.state, self.rng.inc]
        for h in self.heroes:
            out += [h.x, h.y, h.hp, h.downs, h.invuln, h.attack_timer]
        out += [self.kills, self.waves, self.alive, self.last_pairs, self.last_contacts]
        if len(self.heroes) > 1:
            out.append(self.wipes)
        return out + self.x + self.y + self.vx + self.vy + self.hp + self.crowd

    def checksum(self) -> int:
        h = 0xCBF29CE484222325
        for b in b"".join(struct.pack("<Q", v & MASK64) for v in self.values()):
            h = ((h ^ b) * 0x100000001B3) & MASK64
        return h

    def digest(self) -> str:
        hps = ",".join(str(h.hp) for h in self.heroes)
        downs = ",".join(str(h.downs) for h in self.heroes)
        return f"{self.tick}|{self.alive}|{self.kills}|{hps}|{downs}|{self.checksum():016x}"


# ---------------------------------------------------------------- input


def move_vector(held: set[int], axes: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """The stick, capped at octagonal length 32767; else buttons (opposites cancel)."""
    ax, ay = max(axes[0], -STICK_MAX), max(axes[1], -STICK_MAX)
    if ax or ay:
        length = oct_len(ax, ay)
        if length > STICK_MAX:
            return trunc_div(ax * STICK_MAX, length), trunc_div(ay * STICK_MAX, length)
        return ax, ay
    dx = (RIGHT in held) - (LEFT in held)
    dy = (DOWN in held) - (UP in held)
    unit = DIAGONAL if dx and dy else STICK_MAX
    return dx * unit, dy * unit


def demo_move(tick: int) -> tuple[int, int]:
    """The demo walk: right, down, left, up, 90 ticks each."""
    return move_vector({(RIGHT, DOWN, LEFT, UP)[(tick // 90) % 4]})


def held_pattern(seed: int, player: int, ticks: int) -> str:
    """Player `player`'s own seeded button pattern, one hex digit per tick:
    the held mask of buttons 0..3 (up, down, left, right). Every 8 to 39
    ticks the player picks a new mask from 0..15 (opposites cancel), from a
    generator of its own (stream 100 + player), so no two players share a
    pattern and a swap of two players' inputs changes the run."""
    rng = Pcg32(seed, 100 + player)
    out = []
    while len(out) < ticks:
        mask = rng.below(16)
        out += ["%x" % mask] * (8 + rng.below(32))
    return "".join(out[:ticks])


def mask_move(digit: str) -> tuple[int, int]:
    mask = int(digit, 16)
    return move_vector({b for b in (UP, DOWN, LEFT, RIGHT) if mask >> b & 1})


# ---------------------------------------------------------------- golden values


def shipped_config() -> dict:
    with open(DEFAULT_CONFIG, "rb") as f:
        return load_config(f.read())


def scenarios() -> list[dict]:
    """Small hordes that reach every rule within a few hundred ticks: the
    shipped rules on a small field (kills, waves, contacts, downs, walls),
    a crowd with full-strength separation, and a corner pile where spawns
    clamp onto the same spot (the by-id split), all with one hero and the
    demo walk; then co-op worlds of 2, 3 and 4 heroes, each player with its
    own seeded button pattern (`inputs`: one string per player), where
    heroes go down, get up at a wave, wipe, and enemies split between
    targets."""
    base = shipped_config()
    small = {**base, "enemies": 12, "fieldWidth": 256, "fieldHeight": 256, "spawnDistance": 40,
             "waveTicks": 60, "attackCooldownTicks": 7, "attackRadius": 40, "playerHp": 30,
             "contactDamage": 4, "invulnTicks": 5, "enemySpeed": 512}
    coop = {**base, "fieldWidth": 320, "fieldHeight": 320, "spawnDistance": 60, "waveTicks": 50,
            "attackCooldownTicks": 9, "attackRadius": 36, "playerHp": 24, "contactDamage": 4,
            "invulnTicks": 6, "enemySpeed": 480, "playerSpeed": 640}
    return [
        {
            "name": "small-field",
            "ticks": 400,
            "config": small,
        },
        {
            "name": "crowd",
            "ticks": 300,
            "config": {**base, "enemies": 20, "seed": 77, "spawnDistance": 8, "spawnSpacing": 4,
                       "separationStrength": 256, "crowdLimit": 0, "steerShift": 0, "attackDamage": 0,
                       "maxPush": 2048, "playerSpeed": 300},
        },
        {
            "name": "corner-pile",
            "ticks": 200,
            "config": {**base, "enemies": 6, "seed": 5, "fieldWidth": 64, "fieldHeight": 64, "gridCell": 16,
                       "spawnDistance": 200, "enemySpeed": 0, "attackDamage": 0, "attackRadius": 30, "maxPush": 4096},
        },
        {
            "name": "shipped-3",
            "ticks": 300,
            "config": {**base, "enemies": 3},
        },
        {
            "name": "coop-2",
            "ticks": 400,
            "config": {**coop, "players": 2, "enemies": 14, "seed": 202},
            "inputs_seed": 2,
        },
        {
            "name": "coop-3",
            "ticks": 300,
            "config": {**coop, "players": 3, "enemies": 16, "seed": 303, "contactDamage": 6},
            "inputs_seed": 3,
        },
        {
            "name": "crowd-every-2",
            "ticks": 300,
            "config": {**base, "enemies": 20, "seed": 78, "spawnDistance": 8, "spawnSpacing": 4,
                       "separationStrength": 256, "crowdLimit": 4, "steerShift": 1, "attackDamage": 0,
                       "maxPush": 1024, "playerSpeed": 300, "separationTicks": 2},
        },
        {
            "name": "small-field-every-5",
            "ticks": 400,
            "config": {**small, "separationTicks": 5},
        },
        {
            "name": "coop-3-every-3",
            "ticks": 300,
            "config": {**coop, "players": 3, "enemies": 16, "seed": 313, "contactDamage": 6,
                       "separationTicks": 3},
            "inputs_seed": 5,
        },
        {
            "name": "coop-4",
            "ticks": 400,
            "config": {**coop, "players": 4, "enemies": 20, "seed": 404, "fieldWidth": 384, "fieldHeight": 384},
            "inputs_seed": 4,
        },
    ]


def scenario_inputs(sc: dict) -> list[str] | None:
    """Each player's held pattern, or None for the one-hero demo walk."""
    if "inputs_seed" not in sc:
        return None
    return [held_pattern(sc["inputs_seed"], p, sc["ticks"]) for p in range(sc["config"]["players"])]


def moves_at(inputs: list[str] | None, t: int) -> list[tuple[int, int]]:
    if inputs is None:
        return [demo_move(t)]
    return [mask_move(pattern[t]) for pattern in inputs]


def run(cfg: dict, ticks: int, inputs: list[str] | None = None) -> tuple[Horde, list[str]]:
    """The world after `ticks` ticks (the demo walk, or each player's
    pattern) and the checksum after each."""
    w = Horde(cfg)
    sums = []
    for t in range(ticks):
        w.step(moves_at(inputs, t))
        sums.append(f"{w.checksum():016x}")
    return w, sums


def golden() -> dict:
    out = []
    for sc in scenarios():
        inputs = scenario_inputs(sc)
        w, sums = run(sc["config"], sc["ticks"], inputs)
        entry = {"name": sc["name"], "ticks": sc["ticks"], "config": sc["config"]}
        if inputs is not None:
            entry["inputs"] = inputs
        entry.update({"initial": f"{Horde(sc['config']).checksum():016x}", "checksums": sums,
                      "digest": w.digest()})
        out.append(entry)
    return {
        "about": "Per-tick horde checksums from parity/horde_ref.py (horde version 3). One-hero scenarios "
                 "play the demo walk; co-op ones give each player its own button pattern (`inputs`: one "
                 "string per player, one hex digit per tick, the held mask of buttons 0-3 = up, down, "
                 "left, right). Regenerate with `python3 parity/horde_ref.py golden`; "
                 "crates/tickwise-sims/tests/suite/horde_frozen.rs checks the Rust horde against them.",
        "scenarios": out,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="horde_ref.py", description=__doc__.split("\n")[0])
    ap.add_argument("command", nargs="?", choices=["run", "golden"], default="run")
    ap.add_argument("--config", default=DEFAULT_CONFIG)
    ap.add_argument("--enemies", type=int)
    ap.add_argument("--players", type=int)
    ap.add_argument("--ticks", type=int, default=100)
    ap.add_argument("--every", action="store_true")
    a = ap.parse_args(argv)
    if a.command == "golden":
        with open(GOLDEN, "w") as f:
            json.dump(golden(), f, indent=1)
            f.write("\n")
        print(f"wrote {GOLDEN}")
        return 0
    try:
        with open(a.config, "rb") as f:
            cfg = load_config(f.read())
    except (OSError, ValueError, ConfigError) as e:
        print(f"horde_ref: {a.config}: {e}", file=sys.stderr)
        return 2
    if a.enemies is not None:
        cfg["enemies"] = a.enemies
    if a.players is not None:
        cfg["players"] = a.players
    w = Horde(cfg)
    for t in range(a.ticks):
        # Player 0 walks the demo walk; the others stand still.
        w.step([demo_move(t)])
        if a.every:
            print(w.digest())
    if not a.every:
        print(w.digest())
    return 0


if __name__ == "__main__":
    sys.exit(main())
