"""Replay input codecs and input blocks, written from docs/replay-format.md.

The parts of a replay file that do not depend on its layout: the primitive
encodings (LEB128 varints, zigzag, FNV-1a 64), the two input kinds, and one
player's input blocks section (reader with every check, and the reference
writer's rules). `replay_v4.py` lays them out as whole files.
"""

from __future__ import annotations

import struct

LONG_RUN = 64        # the writer stores runs this long as runs
MAX_PALETTE = 16     # largest palette (4-bit symbols)
INPUT_I32 = 1
INPUT_TICK = 2

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
