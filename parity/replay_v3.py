"""Replay format 3 input blocks, written again in Python from docs/replay-format.md.

An independent implementation of the input blocks section (reader and
writer), used to

* convert a version-2 replay to version 3 (only the inputs section and the
  header's version, length and integrity checksum change; the checkpoints
  are the same states), which is how the checked-in seed replays were
  regenerated when the format changed:

      python3 parity/replay_v3.py convert OLD.twr NEW.twr

* print the blocks of a version-3 file:

      python3 parity/replay_v3.py blocks FILE.twr

The Rust tests check that the Rust writer produces the same bytes as this
writer for every checked-in replay (crates/tickwise/tests/replay_blocks.rs).
"""

import struct
import sys

LONG_RUN = 64        # runs this long are always stored as runs
WRITER_PALETTE = 16  # the writer's largest palette (4-bit symbols)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def put_varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def input_end(buf, i, kind):
    """The end of one encoded input at i (inputs are compared as their bytes:
    every input has one encoding)."""
    if kind == 1:
        return varint(buf, i)[1]
    if kind == 2:
        mask = buf[i]
        i += 1
        for bit in range(7):
            if mask & (1 << bit):
                i = varint(buf, i)[1]
        return i
    raise ValueError(f"input kind {kind} unknown to this script")


def symbol_bits(size):
    assert 2 <= size <= 16, "palette size"
    return 1 if size <= 2 else 2 if size <= 4 else 4


def iter_blocks(section, kind):
    """Yields (offset, ticks, mode, pieces) per block; pieces are (len, input bytes)."""
    i = 0
    while i < len(section):
        start = i
        n, i = varint(section, i)
        mode = section[i]
        i += 1
        pieces = []
        if mode == 0:
            covered = 0
            while covered < n:
                length, i = varint(section, i)
                end = input_end(section, i, kind)
                pieces.append((length, section[i:end]))
                i = end
                covered += length
            assert covered == n, "run past the block"
        elif mode == 1:
            size, i = varint(section, i)
            palette = []
            for _ in range(size):
                end = input_end(section, i, kind)
                palette.append(section[i:end])
                i = end
            bits = symbol_bits(size)
            nbytes = (n * bits + 7) // 8
            symbols = section[i:i + nbytes]
            i += nbytes
            for k in range(n):
                bit = k * bits
                sym = (symbols[bit // 8] >> (bit % 8)) & ((1 << bits) - 1)
                pieces.append((1, palette[sym]))
        else:
            raise ValueError(f"block mode {mode}")
        yield start, n, mode, pieces


def read_blocks(section, kind):
    """Decodes an input blocks section into merged runs [(len, input bytes)]."""
    runs = []
    for _, _, _, pieces in iter_blocks(section, kind):
        for length, inp in pieces:
            if runs and runs[-1][1] == inp:
                runs[-1] = (runs[-1][0] + length, inp)
            else:
                runs.append((length, inp))
    return runs


def write_blocks(runs):
    """Encodes runs [(len, input bytes)] as an input blocks section, choosing
    per stretch of short runs between runs and packed symbols by size."""
    merged = []
    for length, inp in runs:
        if merged and merged[-1][1] == inp:
            merged[-1] = (merged[-1][0] + length, inp)
        else:
            merged.append((length, inp))
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
                if len(palette) == WRITER_PALETTE:
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
                for _ in range(length):
                    acc |= palette.index(inp) << used
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


def inputs_section_at(buf):
    """(start of the inputs section's length prefix, input kind) of a version 2 or 3 file."""
    n, i = varint(buf, 20)
    i += n + 4                      # sim id, sim version
    n, i = varint(buf, i)
    i += n + 16                     # config, config hash, seed
    _, i = varint(buf, i)           # T
    _, i = varint(buf, i)           # K
    return i + 1, buf[i]


def convert(old):
    """A version 2 file as version 3: the inputs re-encoded as blocks."""
    assert old[:8] == b"TWREPLAY" and struct.unpack_from("<HH", old, 8) == (2, 0)
    assert struct.unpack_from("<Q", old, len(old) - 8)[0] == fnv1a64(old[:-8])
    at, kind = inputs_section_at(old)
    n, body = varint(old, at)
    section, i, runs = old[body:body + n], 0, []
    while i < len(section):
        length, i = varint(section, i)
        end = input_end(section, i, kind)
        runs.append((length, section[i:end]))
        i = end
    blocks = write_blocks(runs)
    as_one_block = put_varint(sum(length for length, _ in runs)) + b"\x00" + section
    assert read_blocks(blocks, kind) == read_blocks(as_one_block, kind)
    new = bytearray(old[:at]) + put_varint(len(blocks)) + blocks + old[body + n:-8]
    new[8:10] = struct.pack("<H", 3)
    new[12:20] = struct.pack("<Q", len(new) + 8)
    new += struct.pack("<Q", fnv1a64(new))
    return bytes(new)


def main(argv):
    if len(argv) == 4 and argv[1] == "convert":
        with open(argv[2], "rb") as f:
            old = f.read()
        with open(argv[3], "wb") as f:
            f.write(convert(old))
    elif len(argv) == 3 and argv[1] == "blocks":
        with open(argv[2], "rb") as f:
            buf = f.read()
        assert struct.unpack_from("<H", buf, 8)[0] == 3
        at, kind = inputs_section_at(buf)
        n, body = varint(buf, at)
        section = buf[body:body + n]
        for start, ticks, mode, _ in iter_blocks(section, kind):
            print(f"block at +{start}: {ticks} ticks, {'packed' if mode else 'runs'}")
        runs = read_blocks(section, kind)
        print(f"{len(section)} bytes of input blocks, {len(runs)} runs, "
              f"{sum(r[0] for r in runs)} ticks")
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
