"""Replay format 4, written again in Python from docs/replay-format.md.

An independent reader and writer of whole replay files of format version 4
(one input stream per player), written from the specification, not from the
Rust. The writer follows the reference writer's rules for the input blocks,
so it gives the same bytes as the Rust writer. Used to

* convert a version 3 replay to version 4 (one player: the single input
  stream becomes player 0's; only the version, the player count, the length
  and the integrity checksum change, everything else is the same bytes):

      python3 parity/replay_v4.py convert OLD.twr NEW.twr

* convert every checked-in replay of the repository (what was run when the
  format changed; files kept to be refused as old versions stay as they are):

      python3 parity/replay_v4.py convert-all [--dry-run]

* print a file's header and each player's blocks:

      python3 parity/replay_v4.py blocks FILE.twr

* print each player's input of every tick as JSON, one array per player
  (the shape of a `tickwise record --inputs FILE` inputs file):

      python3 parity/replay_v4.py inputs FILE.twr

`crates/tickwise/tests/replay_blocks.rs` checks that the Rust writer gives
the same bytes for every checked-in replay; `test_replay_v4.py` checks this
module against bytes written out by hand from the specification.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import shutil
import struct
import sys

MAGIC = b"TWREPLAY"
FORMAT_VERSION = 4
MAX_PLAYERS = 4      # the kernel's MAX_PLAYERS
FIXED_HEADER = 20    # magic, version, flags, file length
TRAILER = 8          # integrity checksum
LONG_RUN = 64        # the writer stores runs this long as runs
MAX_PALETTE = 16     # largest palette (4-bit symbols)
MAX_NAME = 64
INPUT_I32 = 1
INPUT_TICK = 2
HOST_TIME_DROPPED = 1
MIN_EVENT_BYTES = 3

# The reference reader's default limits (docs/replay-format.md, "Reading, in order").
LIMITS = dict(
    max_file_bytes=64 * 1024 * 1024,
    max_ticks=10_000_000,
    max_config_bytes=64 * 1024,
    max_fields=1024,
    max_digest_bytes=4096,
)


class ReplayError(ValueError):
    """A file this reader refuses; the message says why and where."""


# ---------------------------------------------------------------- primitives


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def put_varint(v):
    assert 0 <= v < 1 << 64
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return (v << 1) ^ (v >> 63) if v < 0 else v << 1


def unzigzag(z):
    return (z >> 1) ^ -(z & 1)


def put_bytes(b):
    return put_varint(len(b)) + bytes(b)


class Reader:
    """Reads buf[pos:end], every read checked against the bytes left."""

    def __init__(self, buf, pos=0, end=None):
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def left(self):
        return self.end - self.pos

    def take(self, n, what):
        if n > self.left():
            raise ReplayError(
                f"truncated: {what} at offset {self.pos} needs {n} bytes, {self.left()} left")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def u8(self, what):
        return self.take(1, what)[0]

    def fixed(self, fmt, what):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def varint(self, what):
        start, v = self.pos, 0
        for i in range(10):
            b = self.u8(what)
            if i == 9 and b & 0x7F > 1:
                raise ReplayError(f"bad varint: {what} at offset {start} is past 64 bits")
            v |= (b & 0x7F) << (7 * i)
            if b < 0x80:
                if i > 0 and b == 0:
                    raise ReplayError(f"bad varint: {what} at offset {start} is not minimal")
                return v
        raise ReplayError(f"bad varint: {what} at offset {start} is longer than 10 bytes")

    def varint_in(self, what, lo, hi):
        at = self.pos
        v = self.varint(what)
        if not lo <= v <= hi:
            raise ReplayError(f"{what} {v} at offset {at} is outside {lo}..={hi}")
        return v

    def signed_in(self, what, lo, hi):
        at = self.pos
        v = unzigzag(self.varint(what))
        if not lo <= v <= hi:
            raise ReplayError(f"bad input at offset {at}: {what} {v} is outside {lo}..={hi}")
        return v

    def bytes_in(self, what, lo, hi):
        return self.take(self.varint_in(f"{what} length", lo, hi), what)


# ---------------------------------------------------------------- inputs
#
# Inputs are handled as their encoded bytes: every input has exactly one
# encoding, so equal bytes are equal inputs (palettes and runs compare bytes).


def i32_input(v):
    """Kind 1: one svarint in the i32 range."""
    assert -(1 << 31) <= v < 1 << 31
    return put_varint(zigzag(v))


def tick_input(held=0, pressed=0, released=0, axes=(0, 0, 0, 0)):
    """Kind 2: presence byte, then each non-zero part in order."""
    mask, body = 0, b""
    for bit, bits in enumerate((held, pressed, released)):
        if bits:
            mask |= 1 << bit
            body += put_varint(bits)
    for i, a in enumerate(axes):
        assert -(1 << 15) <= a < 1 << 15
        if a:
            mask |= 1 << (3 + i)
            body += put_varint(zigzag(a))
    return bytes([mask]) + body


# The absent-player input: `Default` of each kind (0; idle tick input).
ABSENT = {INPUT_I32: i32_input(0), INPUT_TICK: tick_input()}


def read_input(r, kind):
    """One input at r.pos, checked canonical; returns its bytes."""
    start = r.pos
    if kind == INPUT_I32:
        r.signed_in("input", -(1 << 31), (1 << 31) - 1)
    elif kind == INPUT_TICK:
        mask = r.u8("input presence byte")
        if mask & 0x80:
            raise ReplayError(
                f"bad input at offset {start}: reserved bit 7 of the presence byte is set")
        for bit in range(3):
            if mask & (1 << bit) and r.varint("input buttons") == 0:
                raise ReplayError(f"bad input at offset {start}: a part flagged present is zero")
        for i in range(4):
            if mask & (1 << (3 + i)) and r.signed_in("input axis", -(1 << 15), (1 << 15) - 1) == 0:
                raise ReplayError(f"bad input at offset {start}: a part flagged present is zero")
    else:
        raise ReplayError(f"input kind {kind} is unknown to this reader (1 = i32, 2 = tick input)")
    return bytes(r.buf[start:r.pos])


def input_value(raw, kind):
    """The value of an encoded input: an int (kind 1) or a dict (kind 2)."""
    r = Reader(raw)
    if kind == INPUT_I32:
        return unzigzag(r.varint("input"))
    mask = r.u8("input presence byte")
    parts = {}
    for bit, name in enumerate(("held", "pressed", "released")):
        parts[name] = r.varint(name) if mask & (1 << bit) else 0
    parts["axes"] = tuple(
        unzigzag(r.varint("axis")) if mask & (1 << (3 + i)) else 0 for i in range(4))
    return parts


def merge(runs):
    """Joins equal neighbours: [(len, input)] -> merged runs."""
    out = []
    for length, inp in runs:
        if out and out[-1][1] == inp:
            out[-1] = (out[-1][0] + length, inp)
        else:
            out.append((length, inp))
    return out


def expand(runs):
    """One input per tick."""
    return [inp for length, inp in runs for _ in range(length)]


# ---------------------------------------------------------------- input blocks


def symbol_bits(size):
    return 1 if size <= 2 else 2 if size <= 4 else 4


def iter_blocks(buf, start, end, kind, ticks, player=0):
    """Checks one player's input blocks section buf[start:end] and yields
    (offset, block ticks, mode, pieces) per block, pieces being (len, input)
    as stored. Raises ReplayError on the first fault, naming the player; the
    blocks must cover exactly `ticks` ticks."""
    try:
        yield from _blocks(buf, start, end, kind, ticks)
    except ReplayError as e:
        raise ReplayError(f"player {player}'s input blocks: {e}") from None


def _blocks(buf, start, end, kind, ticks):
    r = Reader(buf, start, end)
    covered = 0
    while r.left():
        at = r.pos
        n = r.varint("block tick count")
        if n == 0:
            raise ReplayError(f"bad input block at offset {at}: the block covers zero ticks")
        if n > ticks - covered:
            raise ReplayError(
                f"bad input block at offset {at}: the block covers {n} ticks "
                f"but only {ticks - covered} of the declared ticks are left")
        mode_at = r.pos
        mode = r.u8("block mode")
        pieces = []
        if mode == 0:
            in_block = 0
            while in_block < n:
                run_at = r.pos
                length = r.varint("run length")
                if length == 0:
                    raise ReplayError(f"empty run at offset {run_at}")
                if in_block + length > n:
                    raise ReplayError(
                        f"bad input block at offset {run_at}: its runs cover "
                        f"{in_block + length} ticks, past the block's {n}")
                in_block += length
                pieces.append((length, read_input(r, kind)))
        elif mode == 1:
            size_at = r.pos
            size = r.varint("palette size")
            if not 2 <= size <= MAX_PALETTE:
                raise ReplayError(
                    f"bad input block at offset {size_at}: palette of {size} inputs, "
                    f"outside 2..={MAX_PALETTE}")
            palette = []
            for index in range(size):
                entry_at = r.pos
                inp = read_input(r, kind)
                if inp in palette:
                    raise ReplayError(
                        f"bad input block at offset {entry_at}: palette entry {index} "
                        "repeats an earlier entry")
                palette.append(inp)
            w = symbol_bits(size)
            sym_at = r.pos
            symbols = r.take((n * w + 7) // 8, "packed input symbols")
            for k in range(n):
                bit = k * w
                sym = (symbols[bit // 8] >> (bit % 8)) & ((1 << w) - 1)
                if sym >= size:
                    raise ReplayError(
                        f"bad input block at offset {sym_at + bit // 8}: symbol {k} "
                        f"is {sym}, outside the palette of {size}")
                pieces.append((1, palette[sym]))
            used = n * w
            if used % 8 and symbols[-1] >> (used % 8):
                raise ReplayError(
                    f"bad input block at offset {sym_at + len(symbols) - 1}: "
                    "the bits after the last symbol are not zero")
        else:
            raise ReplayError(
                f"bad input block at offset {mode_at}: block mode {mode} is not known "
                "(0 = runs, 1 = packed)")
        covered += n
        yield at, n, mode, pieces
    if covered != ticks:
        raise ReplayError(f"the blocks cover {covered} ticks, not the declared {ticks}")


def read_blocks(section, kind, ticks, player=0):
    """Decodes one player's input blocks section (bytes, no length prefix)
    into merged runs [(len, input bytes)]."""
    pieces = []
    for _, _, _, p in iter_blocks(section, 0, len(section), kind, ticks, player):
        pieces += p
    return merge(pieces)


def write_blocks(runs):
    """Encodes one player's runs [(len, input bytes)] as an input blocks
    section (no length prefix), with the reference writer's rules: equal
    neighbours merged; runs of 64 ticks or more stored as runs; each maximal
    stretch of shorter runs whose distinct inputs fit a palette of 16 (first
    appearance order) is packed when that is smaller than its runs, counting
    against it its own header and palette plus one more runs block header for
    all T ticks; consecutive stretches stored as runs share one block."""
    merged = merge(runs)
    total = sum(length for length, _ in merged)
    segments = []  # [start, end, packed]

    def push(start, end, packed):
        if not packed and segments and not segments[-1][2] and segments[-1][1] == start:
            segments[-1][1] = end
        else:
            segments.append([start, end, packed])

    i = 0
    while i < len(merged):
        if merged[i][0] >= LONG_RUN:
            push(i, i + 1, False)
            i += 1
            continue
        palette, j, ticks, as_runs = [], i, 0, 0
        while j < len(merged) and merged[j][0] < LONG_RUN:
            length, inp = merged[j]
            if inp not in palette:
                if len(palette) == MAX_PALETTE:
                    break
                palette.append(inp)
            ticks += length
            as_runs += len(put_varint(length)) + len(inp)
            j += 1
        packed = False
        if len(palette) >= 2:
            symbols = (ticks * symbol_bits(len(palette)) + 7) // 8
            cost = (len(put_varint(ticks)) + 1) + (len(put_varint(total)) + 1) + 1 \
                + sum(map(len, palette)) + symbols
            packed = cost < as_runs
        push(i, j, packed)
        i = j

    out = bytearray()
    for start, end, packed in segments:
        stretch = merged[start:end]
        out += put_varint(sum(length for length, _ in stretch))
        if packed:
            out.append(1)
            palette = []
            for _, inp in stretch:
                if inp not in palette:
                    palette.append(inp)
            out += put_varint(len(palette))
            for inp in palette:
                out += inp
            bits = symbol_bits(len(palette))
            acc = used = 0
            for length, inp in stretch:
                sym = palette.index(inp)
                for _ in range(length):
                    acc |= sym << used
                    used += bits
                    if used == 8:
                        out.append(acc)
                        acc = used = 0
            if used:
                out.append(acc)
        else:
            out.append(0)
            for length, inp in stretch:
                out += put_varint(length) + inp
    return bytes(out)


# ---------------------------------------------------------------- whole files


@dataclasses.dataclass
class Replay:
    """A whole replay file. Inputs are merged runs of encoded inputs, one
    list per player (slot order); checkpoints and the final state are
    (u64 checksum, [u32 field hash, ...])."""

    sim_id: str
    sim_version: int
    config: bytes
    seed: int
    ticks: int
    checkpoint_every: int
    input_kind: int
    players: list
    host_events: list          # [(tick, nanoseconds dropped)]
    field_names: list
    checkpoints: list          # ⌊T / K⌋ of (checksum, [hash] * F)
    final: tuple
    digest: str

    def inputs(self, player):
        """Player `player`'s input of every tick, decoded."""
        return [input_value(i, self.input_kind) for i in expand(self.players[player])]


def unsupported_version(found):
    msg = (f"replay format version {found} is not supported "
           f"(this build reads version {FORMAT_VERSION})")
    if found < FORMAT_VERSION:
        msg += "; the file was written by an older build and must be recorded again"
    return msg


def envelope(buf, limits=LIMITS, version=FORMAT_VERSION):
    """Checks magic, version, flags, declared length and integrity checksum;
    returns a Reader over the body."""
    if len(buf) > limits["max_file_bytes"]:
        raise ReplayError(f"file of {len(buf)} bytes, over the limit of {limits['max_file_bytes']}")
    head = bytes(buf[:8])
    if head != MAGIC[:len(head)]:
        raise ReplayError(f"bad magic {head!r}: not a tickwise replay")
    r = Reader(buf)
    r.take(8, "magic")
    found = r.fixed("<H", "format version")
    if found != version:
        raise ReplayError(unsupported_version(found) if version == FORMAT_VERSION else
                          f"replay format version {found}, expected {version}")
    flags = r.fixed("<H", "flags")
    if flags:
        raise ReplayError(f"unsupported flags {flags:#06x}")
    declared = r.fixed("<Q", "file length")
    if declared < FIXED_HEADER + TRAILER:
        raise ReplayError(f"declared file length {declared} is below {FIXED_HEADER + TRAILER}")
    if len(buf) < declared:
        raise ReplayError(f"truncated: the file has {len(buf)} of its declared {declared} bytes")
    if len(buf) > declared:
        raise ReplayError(
            f"trailing bytes: the file has {len(buf)} bytes, its header declares {declared}")
    (stored,) = struct.unpack_from("<Q", buf, len(buf) - TRAILER)
    computed = fnv1a64(buf[:-TRAILER])
    if stored != computed:
        raise ReplayError(
            f"integrity checksum mismatch: stored {stored:016x}, computed {computed:016x}")
    return Reader(buf, FIXED_HEADER, len(buf) - TRAILER)


def name(r, what):
    at = r.pos
    raw = r.bytes_in(what, 1, MAX_NAME)
    if not all(chr(b).isascii() and (chr(b).isalnum() or chr(b) in "_-.") for b in raw):
        raise ReplayError(f"bad {what} at offset {at}: only a-z A-Z 0-9 _ - . are allowed")
    return bytes(raw).decode("ascii")


def read(buf, limits=LIMITS, version=FORMAT_VERSION):
    """Reads and checks a whole file, in the specification's order. `version`
    3 reads the previous format (no player count, one inputs section), for
    the converter only."""
    buf = bytes(buf)
    r = envelope(buf, limits, version)
    sim_id = name(r, "sim id")
    sim_version = r.fixed("<I", "sim version")
    config = r.bytes_in("config", 0, limits["max_config_bytes"])
    config_hash = r.fixed("<Q", "config hash")
    if config_hash != fnv1a64(config):
        raise ReplayError(f"config hash mismatch: stored {config_hash:016x}, "
                          f"computed {fnv1a64(config):016x}")
    seed = r.fixed("<Q", "seed")
    ticks = r.varint("tick count")
    if ticks > limits["max_ticks"]:
        raise ReplayError(f"{ticks} ticks, over the limit of {limits['max_ticks']}")
    every = r.varint_in("checkpoint interval", 1, (1 << 64) - 1)
    kind = r.u8("input kind")
    if kind not in (INPUT_I32, INPUT_TICK):
        raise ReplayError(f"input kind {kind} is unknown to this reader (1 = i32, 2 = tick input)")
    count = 1
    if version >= 4:
        at = r.pos
        count = r.u8("player count")
        if not 1 <= count <= MAX_PLAYERS:
            raise ReplayError(
                f"player count {count} at offset {at} is outside 1..={MAX_PLAYERS}")
    players = []
    for p in range(count):
        n = r.varint(f"player {p}'s input blocks length")
        start = r.pos
        r.take(n, f"player {p}'s input blocks")
        runs = []
        for _, _, _, pieces in iter_blocks(buf, start, start + n, kind, ticks, p):
            runs.extend(pieces)
        players.append(merge(runs))
    at = r.pos
    n_events = r.varint("host event count")
    if n_events * MIN_EVENT_BYTES > r.left():
        raise ReplayError(f"truncated: {n_events} host events at offset {at} need at least "
                          f"{n_events * MIN_EVENT_BYTES} bytes, {r.left()} left")
    events, tick = [], 0
    for index in range(n_events):
        tick += r.varint("host event tick delta")
        if tick > ticks:
            raise ReplayError(f"host event {index} at tick {tick}, after the last tick {ticks}")
        kind_at = r.pos
        event = r.u8("host event kind")
        if event != HOST_TIME_DROPPED:
            raise ReplayError(f"unknown host event kind {event} at offset {kind_at}")
        events.append((tick, r.varint("time dropped")))
    n_fields = r.varint_in("field count", 1, limits["max_fields"])
    fields = [name(r, "field name") for _ in range(n_fields)]
    n_checkpoints = ticks // every
    need = n_checkpoints * (8 + 4 * n_fields)
    if need > r.left():
        raise ReplayError(f"truncated: {n_checkpoints} checkpoints at offset {r.pos} need "
                          f"{need} bytes, {r.left()} left")

    def state():
        checksum = r.fixed("<Q", "checksum")
        return checksum, [r.fixed("<I", "field hash") for _ in range(n_fields)]

    checkpoints = [state() for _ in range(n_checkpoints)]
    final = state()
    at = r.pos
    try:
        digest = bytes(r.bytes_in("final digest", 0, limits["max_digest_bytes"])).decode("utf-8")
    except UnicodeDecodeError:
        raise ReplayError(f"the final digest at offset {at} is not UTF-8") from None
    if r.left():
        raise ReplayError(f"{r.left()} bytes left after the final digest, before the checksum")
    return Replay(sim_id, sim_version, config, seed, ticks, every, kind, players, events,
                  fields, checkpoints, final, digest)


def write(rp):
    """The file of a Replay, as the reference writer lays it out."""
    assert 1 <= len(rp.players) <= MAX_PLAYERS, "1..=4 players"
    for runs in rp.players:
        assert sum(length for length, _ in runs) == rp.ticks, "a stream must cover T ticks"
    assert len(rp.checkpoints) == rp.ticks // rp.checkpoint_every
    body = bytearray()
    body += put_bytes(rp.sim_id.encode("ascii"))
    body += struct.pack("<I", rp.sim_version)
    body += put_bytes(rp.config)
    body += struct.pack("<QQ", fnv1a64(rp.config), rp.seed)
    body += put_varint(rp.ticks) + put_varint(rp.checkpoint_every)
    body += bytes([rp.input_kind, len(rp.players)])
    for runs in rp.players:
        body += put_bytes(write_blocks(runs))
    body += put_varint(len(rp.host_events))
    previous = 0
    for tick, ns in rp.host_events:
        assert previous <= tick <= rp.ticks
        body += put_varint(tick - previous) + bytes([HOST_TIME_DROPPED]) + put_varint(ns)
        previous = tick
    body += put_varint(len(rp.field_names))
    for f in rp.field_names:
        body += put_bytes(f.encode("ascii"))
    for checksum, hashes in list(rp.checkpoints) + [rp.final]:
        assert len(hashes) == len(rp.field_names)
        body += struct.pack(f"<Q{len(hashes)}I", checksum, *hashes)
    body += put_bytes(rp.digest.encode("utf-8"))
    length = FIXED_HEADER + len(body) + TRAILER
    out = MAGIC + struct.pack("<HHQ", FORMAT_VERSION, 0, length) + bytes(body)
    return out + struct.pack("<Q", fnv1a64(out))


# ---------------------------------------------------------------- conversion


def convert(old):
    """A version 3 file as version 4: one player, whose stream is the old
    single stream. Everything but the version, the player count, the file
    length and the integrity checksum is the same bytes (the input blocks
    are re-coded by the writer, which gives the same bytes for a file the
    reference writer wrote)."""
    rp = read(old, version=3)
    new = write(rp)
    again = read(new)
    assert again == rp, "the converted file reads back to the same replay"
    return new


def version_of(buf):
    return struct.unpack_from("<H", buf, 8)[0] if buf[:8] == MAGIC and len(buf) >= 10 else None


# Checked-in files that exist to be refused as an old format version (and the
# version-3 one made here for version 4): never converted.
KEEP_OLD = {
    "crates/tickwise-catalog/tests/fixtures/horde_v1_format1.twr",
    "crates/tickwise-catalog/tests/fixtures/island_v1_format1.twr",
    "crates/tickwise-catalog/tests/fixtures/island_v1_format2.twr",
    "crates/tickwise-catalog/tests/fixtures/island_v1_format3.twr",
}
# The version-3 refusal fixture is a copy of this file taken before it is converted.
FORMAT3_FIXTURE = ("fuzz/seeds/replay_reader/island_seed_100.twr",
                   "crates/tickwise-catalog/tests/fixtures/island_v1_format3.twr")
# A batch_upload fuzz seed that frames this replay (8 bytes of limits and
# cut points, then a u32 big-endian length and the replay): rewritten with it.
FRAMED = ("fuzz/seeds/batch_upload/one_real_replay", "fuzz/seeds/replay_reader/island_empty.twr")


def convert_all(root, dry_run=False, log=print):
    """Converts every version 3 `*.twr` under `root` (git and build
    directories excluded) but those kept old, keeps a version 3 copy of one
    for the refusal test first, and rewrites the batch seed that frames a
    converted replay. Idempotent: a version 4 file is left alone."""
    fixture_src, fixture_dst = (os.path.join(root, p) for p in FORMAT3_FIXTURE)
    if not os.path.exists(fixture_dst):
        with open(fixture_src, "rb") as f:
            if version_of(f.read()) != 3:
                raise SystemExit(f"{FORMAT3_FIXTURE[0]} is no longer version 3: cannot copy it")
        log(f"keep   {FORMAT3_FIXTURE[1]} (version 3 copy of {FORMAT3_FIXTURE[0]})")
        if not dry_run:
            shutil.copyfile(fixture_src, fixture_dst)
    converted = []
    for path in sorted(glob.glob(os.path.join(root, "**", "*.twr"), recursive=True)):
        rel = os.path.relpath(path, root)
        if rel.split(os.sep)[0] in (".git", "target") or "/target/" in rel:
            continue
        with open(path, "rb") as f:
            buf = f.read()
        v = version_of(buf)
        if rel in KEEP_OLD:
            log(f"keep   {rel} (version {v}: refused by version on purpose)")
            continue
        if v == FORMAT_VERSION:
            log(f"ok     {rel} (already version {FORMAT_VERSION})")
            continue
        if v != 3:
            raise SystemExit(f"{rel}: version {v}: neither kept old nor convertible")
        new = convert(buf)
        log(f"convert {rel}: {len(buf)} -> {len(new)} bytes")
        converted.append(rel)
        if not dry_run:
            with open(path, "wb") as f:
                f.write(new)
    seed, replay = (os.path.join(root, p) for p in FRAMED)
    with open(seed, "rb") as f:
        framed = f.read()
    with open(replay, "rb") as f:
        body = f.read()
    (n,) = struct.unpack_from(">I", framed, 8)
    if framed[12:12 + n] != body or len(framed) != 12 + n:
        inner = framed[12:12 + n]
        if version_of(inner) == 3 and len(framed) == 12 + n and convert(inner) == body:
            log(f"rewrite {FRAMED[0]} (frames {FRAMED[1]})")
            if not dry_run:
                with open(seed, "wb") as f:
                    f.write(framed[:8] + struct.pack(">I", len(body)) + body)
        else:
            raise SystemExit(f"{FRAMED[0]} does not frame {FRAMED[1]}")
    return converted


# ---------------------------------------------------------------- CLI


def describe(buf):
    rp = read(buf)
    lines = [f"{rp.sim_id} version {rp.sim_version}, {rp.ticks} ticks, K = {rp.checkpoint_every}, "
             f"input kind {rp.input_kind}, {len(rp.players)} player(s), "
             f"{len(rp.host_events)} host event(s), {len(buf)} bytes"]
    r = Reader(buf)
    # Walk to the first section again to show each player's blocks as stored.
    r.pos = FIXED_HEADER
    r.take(r.varint("sim id length") + 4, "sim id, version")
    r.take(r.varint("config length") + 16, "config, hash, seed")
    r.varint("T")
    r.varint("K")
    r.take(2, "input kind, player count")
    for p in range(len(rp.players)):
        n = r.varint("section length")
        start = r.pos
        r.take(n, "section")
        lines.append(f"player {p}: {n} bytes of input blocks, {len(rp.players[p])} runs")
        for at, ticks, mode, _ in iter_blocks(buf, start, start + n, rp.input_kind, rp.ticks, p):
            lines.append(f"  block at {at}: {ticks} ticks, {'packed' if mode else 'runs'}")
    return "\n".join(lines)


def inputs_json(buf):
    """Every player's input of every tick, one JSON array per player: kind 1
    as numbers, kind 2 as objects holding only the non-zero parts ({} idle)."""
    import json

    rp = read(buf)

    def shape(v):
        if rp.input_kind == INPUT_I32:
            return v
        out = {k: v[k] for k in ("held", "pressed", "released") if v[k]}
        if any(v["axes"]):
            out["axes"] = list(v["axes"])
        return out

    return json.dumps([[shape(v) for v in rp.inputs(p)] for p in range(len(rp.players))])


def main(argv):
    args = argv[1:]
    if len(args) == 3 and args[0] == "convert":
        with open(args[1], "rb") as f:
            old = f.read()
        new = convert(old)
        with open(args[2], "wb") as f:
            f.write(new)
        print(f"{args[1]} (version 3, {len(old)} bytes) -> {args[2]} (version 4, {len(new)} bytes)")
    elif args and args[0] == "convert-all" and set(args[1:]) <= {"--dry-run"}:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        convert_all(root, dry_run="--dry-run" in args)
    elif len(args) == 2 and args[0] == "inputs":
        with open(args[1], "rb") as f:
            buf = f.read()
        try:
            print(inputs_json(buf))
        except ReplayError as e:
            print(f"{args[1]}: {e}", file=sys.stderr)
            return 1
    elif len(args) == 2 and args[0] == "blocks":
        with open(args[1], "rb") as f:
            buf = f.read()
        try:
            print(describe(buf))
        except ReplayError as e:
            print(f"{args[1]}: {e}", file=sys.stderr)
            return 1
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
