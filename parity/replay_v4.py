"""Replay format 4, written again in Python from docs/replay-format.md.

An independent reader and writer of whole replay files of format version 4
(one input stream per player), written from the specification, not from the
Rust. The writer follows the reference writer's rules for the input blocks,
so it gives the same bytes as the Rust writer. The input codecs and one
player's input blocks section are in `replay_blocks.py`. Used to

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

* forge a replay, as a cheater would: change one player's input at one tick
  and write the file again with a valid integrity checksum, keeping the
  recorded checkpoints, so that only re-simulation can tell (`tickwise
  verify` reports DIVERGED at the first checkpoint after TICK):

      python3 parity/replay_v4.py forge IN.twr OUT.twr TICK [PLAYER]

`crates/tickwise/tests/suite/replay_blocks.rs` checks that the Rust writer gives
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

from replay_blocks import (  # noqa: F401 - re-exported: one module to import
    ABSENT, INPUT_I32, INPUT_TICK, LONG_RUN, MAX_PALETTE, Reader, ReplayError, expand,
    fnv1a64, i32_input, input_value, iter_blocks, merge, put_bytes, put_varint, read_blocks,
    read_input, symbol_bits, tick_input, unzigzag, write_blocks, zigzag)


MAGIC = b"TWREPLAY"
FORMAT_VERSION = 4
MAX_PLAYERS = 4      # the kernel's MAX_PLAYERS
FIXED_HEADER = 20    # magic, version, flags, file length
TRAILER = 8          # integrity checksum
MAX_NAME = 64
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


def forge(buf, tick, player=0):
    """The file with player `player`'s input at `tick` changed (an i32 input
    -1/0/1 becomes 0/1/0; a tick input toggles button 0 and reverses stick
    axis 0, or pushes it right when centred), its checksum
    recomputed: a forgery that every structural check accepts."""
    rp = read(buf)
    if not 0 <= player < len(rp.players):
        raise ReplayError(f"player {player} is not in this {len(rp.players)}-player replay")
    if not 0 <= tick < rp.ticks:
        raise ReplayError(f"tick {tick} is not in this {rp.ticks}-tick replay")
    raw = expand(rp.players[player])
    value = input_value(raw[tick], rp.input_kind)
    if rp.input_kind == INPUT_I32:
        raw[tick] = i32_input(1 if value <= 0 else 0)
    else:
        # Both the first button and the first stick axis change, so the
        # forgery moves something whichever of the two the sim reads.
        value["held"] ^= 1
        a = value["axes"][0]
        value["axes"] = (32767 if a == 0 else max(-32767, min(32767, -a)),) + tuple(value["axes"][1:])
        raw[tick] = tick_input(**value)
    rp.players[player] = merge([(1, r) for r in raw])
    return write(rp)


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
    elif len(args) in (4, 5) and args[0] == "forge":
        with open(args[1], "rb") as f:
            buf = f.read()
        tick, player = int(args[3]), int(args[4]) if len(args) == 5 else 0
        try:
            out = forge(buf, tick, player)
        except ReplayError as e:
            print(f"{args[1]}: {e}", file=sys.stderr)
            return 1
        with open(args[2], "wb") as f:
            f.write(out)
        print(f"{args[2]}: {args[1]} with player {player}'s input at tick {tick} changed, "
              "checksum recomputed")
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
