"""Tests for the Python replay code of format version 4: parity/replay_v4.py
(reader, writer, converter of the checked-in replays). The reader printed in
docs/replay-format.md and the page's byte examples are tested in
test_replay_doc.py.

Expected bytes are written out here by hand from docs/replay-format.md, field
by field, never taken from the writer under test.

    python3 -m unittest discover -s parity -v        # from the repo root
"""

from __future__ import annotations

import glob
import os
import random
import struct
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import replay_v4 as v4  # noqa: E402

SEEDS = os.path.join(ROOT, "fuzz", "seeds", "replay_reader")
FIXTURES = os.path.join(ROOT, "crates", "tickwise-catalog", "tests", "fixtures")


def fnv(data):
    """FNV-1a 64, written again here (docs/checksum.md)."""
    h = 14695981039346656037
    for b in data:
        h ^= b
        h = (h * 1099511628211) % 2**64
    return h


def seal(body_without_trailer):
    """Appends the integrity checksum."""
    return body_without_trailer + struct.pack("<Q", fnv(body_without_trailer))


def refix(buf):
    """The file with its declared length and integrity checksum made right
    (so a test reaches the check after them)."""
    b = bytearray(buf[:-8])
    b[12:20] = struct.pack("<Q", len(b) + 8)
    return seal(bytes(b))


# The hand-written 2-player file: sim "ctr" version 7, config "{}", seed 42,
# T = 5, K = 2, input kind 1 (i32), P = 2; player 0 presses 1, 1, -1, 0, 0,
# player 1 presses 0, 0, 0, 1, 1; 300 ns dropped after tick 3; fields "steps"
# and "total"; two checkpoints and a final state of made-up hashes; digest
# "5|301". 20 + 119 + 8 = 147 bytes.
CP1 = (0x1111111111111111, [0x22222222, 0x33333333])
CP2 = (0x0102030405060708, [0xDEADBEEF, 0x00000001])
FINAL = (0xFFFFFFFFFFFFFFFE, [5, 301])


P0 = bytes([0x08, 0x05, 0x00, 0x02, 0x02, 0x01, 0x01, 0x02, 0x00])  # 2x(+1) 1x(-1) 2x0
P1 = bytes([0x06, 0x05, 0x00, 0x03, 0x00, 0x02, 0x02])              # 3x0 2x(+1)
EVENTS = bytes([0x01, 0x03, 0x01, 0xAC, 0x02])     # 1 event: tick 3, 300 ns dropped


def two_players():
    return two_players_with()


def two_players_with(p0=P0, p1=P1, events=EVENTS, kind=1):
    """The hand-written file with other sections (length and checksum made right)."""
    return refix(two_players_bytes(p0, p1, events, kind))


def two_players_bytes(p0, p1, events, kind):
    body = bytes(
        [0x54, 0x57, 0x52, 0x45, 0x50, 0x4C, 0x41, 0x59,  # TWREPLAY
         0x04, 0x00,                                      # version 4
         0x00, 0x00,                                      # flags
         0x93, 0, 0, 0, 0, 0, 0, 0,                       # length 147
         0x03, 0x63, 0x74, 0x72,                          # sim id "ctr"
         0x07, 0x00, 0x00, 0x00,                          # sim version 7
         0x02, 0x7B, 0x7D]                                # config "{}"
    ) + struct.pack("<Q", fnv(b"{}")) + bytes(
        [0x2A, 0, 0, 0, 0, 0, 0, 0,                       # seed 42
         0x05, 0x02, kind,                                # T = 5, K = 2, input kind
         0x02]                                            # P = 2
    ) + p0 + p1 + events + bytes(
        [0x02, 0x05, 0x73, 0x74, 0x65, 0x70, 0x73,        # 2 fields: "steps"
         0x05, 0x74, 0x6F, 0x74, 0x61, 0x6C]              # "total"
    ) + b"".join(
        struct.pack("<QII", c, *h) for c, h in (CP1, CP2, FINAL)
    ) + bytes([0x05, 0x35, 0x7C, 0x33, 0x30, 0x31])      # digest "5|301"
    return seal(body)


def two_players_replay():
    one, minus, zero = b"\x02", b"\x01", b"\x00"
    return v4.Replay(
        sim_id="ctr", sim_version=7, config=b"{}", seed=42, ticks=5, checkpoint_every=2,
        input_kind=1,
        players=[[(2, one), (1, minus), (2, zero)], [(3, zero), (2, one)]],
        host_events=[(3, 300)], field_names=["steps", "total"],
        checkpoints=[CP1, CP2], final=FINAL, digest="5|301")


def first_section_at(buf):
    """Offset of player 0's input blocks section (its length prefix) in a
    version 4 file, walked by hand; the player count is the byte before."""
    def skip_varint(i):
        n = shift = 0
        while buf[i] & 0x80:
            n |= (buf[i] & 0x7F) << shift
            i, shift = i + 1, shift + 7
        return n | buf[i] << shift, i + 1

    n, i = skip_varint(20)
    i += n + 4                     # sim id, sim version
    n, i = skip_varint(i)
    i += n + 16                    # config, config hash, seed
    _, i = skip_varint(i)          # T
    _, i = skip_varint(i)          # K
    return i + 2                   # input kind, player count


class HandWritten(unittest.TestCase):
    def test_fnv_of_this_test_is_fnv(self):
        # Published FNV-1a 64 test vectors.
        self.assertEqual(fnv(b""), 0xCBF29CE484222325)
        self.assertEqual(fnv(b"a"), 0xAF63DC4C8601EC8C)

    def test_reads_the_two_player_file(self):
        buf = two_players()
        self.assertEqual(len(buf), 147)
        rp = v4.read(buf)
        self.assertEqual(rp, two_players_replay())
        self.assertEqual(rp.inputs(0), [1, 1, -1, 0, 0])
        self.assertEqual(rp.inputs(1), [0, 0, 0, 1, 1])

    def test_writes_the_two_player_file(self):
        self.assertEqual(v4.write(two_players_replay()), two_players())

    def test_one_player_file_is_version_3_plus_the_player_count(self):
        # docs/replay-format.md's worked example, 139 bytes in version 3, is
        # 140 in version 4: the byte P = 1 after the input kind.
        rp = two_players_replay()
        rp.players = rp.players[:1]
        buf = v4.write(rp)
        self.assertEqual(len(buf), 140)
        at = first_section_at(buf)
        self.assertEqual(buf[at - 2:at + 10],
                         bytes([0x01, 0x01, 0x08, 0x05, 0x00, 0x02, 0x02, 0x01, 0x01, 0x02, 0x00,
                                0x01]))

    def test_two_player_section_of_the_docs(self):
        # docs/replay-format.md: 12 ticks; player 0 packed (palette +1, 0, -1),
        # player 1 six ticks of 0 then six of +1, as runs.
        p0 = [1, 0, -1, -1, 0, 1, 1, 1, 0, -1, 0, 1]
        p1 = [0] * 6 + [1] * 6
        sections = b"".join(
            v4.put_bytes(v4.write_blocks([(1, v4.i32_input(v)) for v in p]))
            for p in (p0, p1))
        self.assertEqual(
            sections,
            bytes([0x09, 0x0C, 0x01, 0x03, 0x02, 0x00, 0x01, 0xA4, 0x01, 0x19,
                   0x06, 0x0C, 0x00, 0x06, 0x00, 0x06, 0x02]))

    def test_inputs_as_json(self):
        self.assertEqual(v4.inputs_json(two_players()), "[[1, 1, -1, 0, 0], [0, 0, 0, 1, 1]]")
        idle = bytes([0x04, 0x05, 0x00, 0x05, 0x00])
        # Player 1: 4 idle ticks, then held {0, 2}, pressed {2}, axes (0, -3, 0, 200).
        p1 = bytes([0x0B, 0x05, 0x00, 0x04, 0x00, 0x01, 0x53, 0x05, 0x04, 0x05, 0x90, 0x03])
        self.assertEqual(
            v4.inputs_json(two_players_with(idle, p1, kind=2)),
            '[[{}, {}, {}, {}, {}], [{}, {}, {}, {}, '
            '{"held": 5, "pressed": 4, "axes": [0, -3, 0, 200]}]]')

    def test_forge_changes_one_input_and_keeps_the_rest(self):
        # Player 1's [0, 0, 0, 1, 1]: tick 3's +1 becomes 0 (-1/0/1 -> 0/1/0);
        # everything else, checkpoints included, is as recorded, and the
        # file reads back (its integrity checksum recomputed).
        forged = v4.read(v4.forge(two_players(), 3, 1))
        self.assertEqual(forged.inputs(0), [1, 1, -1, 0, 0])
        self.assertEqual(forged.inputs(1), [0, 0, 0, 0, 1])
        want = two_players_replay()
        self.assertEqual((forged.checkpoints, forged.final, forged.digest),
                         (want.checkpoints, want.final, want.digest))
        self.assertEqual(v4.read(v4.forge(two_players(), 0, 0)).inputs(0), [0, 1, -1, 0, 0])
        # Tick inputs: button 0 toggled, stick axis 0 reversed (or pushed right).
        idle = bytes([0x04, 0x05, 0x00, 0x05, 0x00])
        p1 = bytes([0x0B, 0x05, 0x00, 0x04, 0x00, 0x01, 0x53, 0x05, 0x04, 0x05, 0x90, 0x03])
        buf = two_players_with(idle, p1, kind=2)
        self.assertEqual(v4.read(v4.forge(buf, 4, 1)).inputs(1)[4],
                         {"held": 4, "pressed": 4, "released": 0, "axes": (32767, -3, 0, 200)})
        with self.assertRaises(v4.ReplayError):
            v4.forge(two_players(), 5, 0)
        with self.assertRaises(v4.ReplayError):
            v4.forge(two_players(), 0, 2)

    def test_tick_input_encoding(self):
        # held {0, 2}, pressed {2}, axes (0, -3, 0, 200) -> 53 05 04 05 90 03; idle -> 00.
        self.assertEqual(v4.tick_input(held=0b101, pressed=0b100, axes=(0, -3, 0, 200)),
                         bytes([0x53, 0x05, 0x04, 0x05, 0x90, 0x03]))
        self.assertEqual(v4.ABSENT[2], b"\x00")
        self.assertEqual(v4.ABSENT[1], b"\x00")
        self.assertEqual(v4.input_value(bytes([0x53, 0x05, 0x04, 0x05, 0x90, 0x03]), 2),
                         {"held": 5, "pressed": 4, "released": 0, "axes": (0, -3, 0, 200)})


class Writer(unittest.TestCase):
    def test_packs_the_worked_example(self):
        twelve = [1, 0, -1, -1, 0, 1, 1, 1, 0, -1, 0, 1]
        self.assertEqual(
            v4.write_blocks([(1, v4.i32_input(v)) for v in twelve]),
            bytes([0x0C, 0x01, 0x03, 0x02, 0x00, 0x01, 0xA4, 0x01, 0x19]))

    def test_long_run_then_packed(self):
        # 70 x (+1) then the twelve: merged 71 x (+1) as runs, 11 packed.
        twelve = [1, 0, -1, -1, 0, 1, 1, 1, 0, -1, 0, 1]
        runs = [(70, b"\x02")] + [(1, v4.i32_input(v)) for v in twelve]
        self.assertEqual(v4.write_blocks(runs),
                         bytes([0x47, 0x00, 0x47, 0x02,
                                0x0B, 0x01, 0x03, 0x00, 0x01, 0x02, 0x14, 0x2A, 0x21]))

    def test_packs_only_when_strictly_smaller(self):
        # Four ticks +1, 0, +1, 0: 8 bytes as runs; packed 2 (header) + 2
        # (the runs block header charged for T = 4) + 1 + 2 (palette) + 1
        # (symbols) = 8: not smaller, so runs.
        alternating = [(1, b"\x02"), (1, b"\x00")] * 3
        self.assertEqual(v4.write_blocks(alternating[:4]),
                         bytes([0x04, 0x00, 0x01, 0x02, 0x01, 0x00, 0x01, 0x02, 0x01, 0x00]))
        # Five ticks: 10 against 8, packed; symbols 0 1 0 1 0 -> 0b01010 = 0a.
        self.assertEqual(v4.write_blocks(alternating[:5]),
                         bytes([0x05, 0x01, 0x02, 0x02, 0x00, 0x0A]))

    def test_runs_of_64_ticks_are_runs_and_of_63_may_be_packed(self):
        # 20 ticks +1, 0, +1, 0, ... then a run of +1: a run of 63 ticks
        # joins the packed stretch (83 ticks, 1-bit symbols, 11 bytes: aa aa
        # 0a then zeros), a run of 64 is a runs block of its own.
        singles = [(1, b"\x02"), (1, b"\x00")] * 10
        self.assertEqual(v4.write_blocks(singles + [(63, b"\x02")]),
                         bytes([0x53, 0x01, 0x02, 0x02, 0x00, 0xAA, 0xAA, 0x0A]) + bytes(8))
        self.assertEqual(v4.write_blocks(singles + [(64, b"\x02")]),
                         bytes([0x14, 0x01, 0x02, 0x02, 0x00, 0xAA, 0xAA, 0x0A,
                                0x40, 0x00, 0x40, 0x02]))

    def test_keeps_long_runs_as_runs(self):
        # The island's scripted input: 20 x (+1), 20 x (-1): one runs block.
        runs = [(20, b"\x02"), (20, b"\x01")] * 5
        self.assertEqual(v4.write_blocks(runs), bytes([200, 1, 0]) + bytes([20, 2, 20, 1]) * 5)

    def test_each_player_is_coded_on_its_own(self):
        # Player 0 random (packed), player 1 scripted (runs): each section is
        # what that stream alone gives, whatever the other player does.
        rng = random.Random(3)
        noisy = [(1, v4.i32_input(rng.choice((-1, 0, 1)))) for _ in range(40)]
        scripted = [(20, b"\x02"), (20, b"\x01")]
        rp = two_players_replay()
        rp.ticks, rp.checkpoint_every, rp.checkpoints, rp.host_events = 40, 40, [CP1], []
        rp.players = [v4.merge(noisy), scripted]
        buf = v4.write(rp)
        at = first_section_at(buf)
        expected = bytes([2]) + v4.put_bytes(v4.write_blocks(noisy)) + bytes(
            [6, 40, 0, 20, 2, 20, 1])
        self.assertEqual(buf[at - 1:at - 1 + len(expected)], expected)
        self.assertEqual(buf[at + 1 + 1], 1, "player 0's first block is packed")
        self.assertEqual(v4.read(buf), rp)

    def test_four_random_players_cost_four_times_one(self):
        # docs/replay-format.md, Size: 10 000 random -1/0/1 ticks are one
        # packed block: 3 bytes of header (varint 10 000 = 2, mode), a palette
        # of 3 (1 + 3 bytes), 2 500 bytes of 2-bit symbols = 2 507; with the
        # 2-byte length prefix 2 509 per player.
        rng = random.Random(17)

        def stream():
            return v4.merge([(1, v4.i32_input(rng.choice((-1, 0, 1)))) for _ in range(10_000)])

        fields = [f"f{i}" for i in range(8)]

        def island_like(players):
            return v4.write(v4.Replay("island", 1, b"x" * 453, 1, 10_000, 60, 1, players, [],
                                      fields, [(0, [0] * 8)] * 166, (0, [0] * 8), "d"))

        one, four = island_like([stream()]), island_like([stream() for _ in range(4)])
        self.assertEqual(len(v4.write_blocks(stream())), 2507)
        # 20 + sim id 7 + version 4 + config 455 + hash, seed 16 + T 2 + K 1
        # + kind 1 + P 1 + 2 509 + events 1 + fields 1 + 8 x 3 + 166 x 40
        # + final 40 + digest 2 + trailer 8.
        self.assertEqual(len(one), 9732)
        self.assertEqual(len(four), 9732 + 3 * 2509)
        self.assertLessEqual(len(four), 4.2 * len(one))

    def test_round_trips(self):
        rng = random.Random(5)
        for _ in range(150):
            kind = rng.choice((1, 2))
            if kind == 1:
                alphabet = [v4.i32_input(rng.choice((0, 1, -1, 2, -70, 2**31 - 1, -(2**31))))
                            for _ in range(rng.randint(1, 20))]
            else:
                alphabet = [v4.tick_input(held=rng.randrange(0, 9), pressed=rng.randrange(0, 2),
                                          axes=(rng.randrange(-300, 300), 0, 0,
                                                rng.choice((0, -1))))
                            for _ in range(rng.randint(1, 20))]
            ticks = rng.choice((0, 1, 7, 64, 300))
            players = []
            for _ in range(rng.randint(1, 4)):
                runs, left = [], ticks
                while left:
                    n = min(left, rng.choice((1, 1, 2, 3, 70, 200)))
                    runs.append((n, rng.choice(alphabet)))
                    left -= n
                players.append(v4.merge(runs))
            every = rng.randint(1, 100)
            rp = v4.Replay("s", 1, b"cfg", rng.getrandbits(64), ticks, every, kind, players,
                           [(min(ticks, 3), 9)], ["f"],
                           [(i, [i]) for i in range(ticks // every)], (7, [8]), "d")
            buf = v4.write(rp)
            self.assertEqual(v4.read(buf), rp)
            for p, runs in enumerate(players):
                self.assertEqual(v4.expand(runs), v4.expand(v4.read(buf).players[p]))


def bad(test, buf, *words):
    with test.assertRaises(v4.ReplayError) as e:
        v4.read(buf)
    for w in words:
        test.assertIn(w, str(e.exception))
    return str(e.exception)


class Refusals(unittest.TestCase):
    def test_the_rebuilt_file_is_the_hand_written_one(self):
        self.assertEqual(two_players_with(), two_players())

    def test_every_block_fault(self):
        cases = [
            # zero-tick block before a full one
            (bytes([0x06, 0x00, 0x00, 0x05, 0x00, 0x05, 0x00]), "covers zero ticks"),
            # packed block, palette of 1
            (bytes([0x05, 0x05, 0x01, 0x01, 0x00, 0x00]), "palette of 1 inputs"),
            # packed block, palette of 17
            (bytes([0x16, 0x05, 0x01, 0x11]) + bytes(range(0, 34, 2)) + bytes([0, 0]),
             "palette of 17 inputs"),
            # palette 0, 0: a repeated entry
            (bytes([0x06, 0x05, 0x01, 0x02, 0x00, 0x00, 0x00]), "palette entry 1 repeats"),
            # palette of 3 (2-bit symbols), symbol 3 at tick 2: 0b00_11_00_00 = 0x30
            (bytes([0x08, 0x05, 0x01, 0x03, 0x00, 0x02, 0x01, 0x30, 0x00]),
             "symbol 2 is 3, outside the palette of 3"),
            # 5 one-bit symbols, a padding bit set: 0b0010_0000
            (bytes([0x06, 0x05, 0x01, 0x02, 0x00, 0x02, 0x20]), "bits after the last symbol"),
            # the symbols cut short: 5 ticks of 4-bit symbols need 3 bytes
            (bytes([0x0A, 0x05, 0x01, 0x05, 0x00, 0x02, 0x01, 0x04, 0x03, 0x00, 0x00]),
             "packed input symbols"),
            # a run of zero ticks
            (bytes([0x06, 0x05, 0x00, 0x00, 0x00, 0x05, 0x00]), "empty run"),
            # a non-minimal varint (run length 5 as 85 00)
            (bytes([0x05, 0x05, 0x00, 0x85, 0x00, 0x00]), "not minimal"),
            # an input outside i32: zigzag 2^32 = 2^31
            (bytes([0x08, 0x05, 0x00, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10]), "outside"),
            # an empty section: 0 ticks of 5
            (bytes([0x00]), "cover 0 ticks, not the declared 5"),
        ]
        for section, words in cases:
            bad(self, two_players_with(p1=section), "player 1", words)

    def test_tick_input_faults(self):
        idle = bytes([0x04, 0x05, 0x00, 0x05, 0x00])
        cases = [
            (bytes([0x04, 0x05, 0x00, 0x05, 0x80]), "reserved bit 7"),
            (bytes([0x05, 0x05, 0x00, 0x05, 0x01, 0x00]), "flagged present is zero"),   # held 0
            (bytes([0x05, 0x05, 0x00, 0x05, 0x08, 0x00]), "flagged present is zero"),   # axis 0
            (bytes([0x07, 0x05, 0x00, 0x05, 0x08, 0x80, 0x80, 0x04]), "outside"),  # axis 32768
        ]
        self.assertEqual(v4.read(two_players_with(idle, idle, kind=2)).inputs(1),
                         [{"held": 0, "pressed": 0, "released": 0, "axes": (0, 0, 0, 0)}] * 5)
        for section, words in cases:
            bad(self, two_players_with(idle, section, kind=2), "player 1", words)

    def test_host_event_faults(self):
        bad(self, two_players_with(events=bytes([0x01, 0x06, 0x01, 0x00])), "after the last tick 5")
        bad(self, two_players_with(events=bytes([0x01, 0x03, 0x02, 0x00])),
            "unknown host event kind 2")
        # 200 events declared, fewer than 600 bytes left.
        bad(self, two_players_with(events=bytes([0xC8, 0x01])), "200 host events")

    def test_unknown_input_kind(self):
        bad(self, two_players_with(kind=3), "input kind 3")

    def test_player_count_outside_1_to_4(self):
        good = two_players()
        at = first_section_at(good) - 1
        self.assertEqual(good[at], 2)
        for p in (0, 5, 255):
            b = bytearray(good)
            b[at] = p
            bad(self, refix(bytes(b)), f"player count {p}", "1..=4")

    def test_four_players_read_and_five_do_not(self):
        rp = two_players_replay()
        rp.players = [rp.players[0], rp.players[1], rp.players[0], [(5, b"\x00")]]
        buf = v4.write(rp)
        self.assertEqual(v4.read(buf).players, rp.players)
        at = first_section_at(buf) - 1
        # A fifth section appended and P = 5: refused by the count, not the section.
        b = bytearray(buf[:-8])
        b[at] = 5
        b[at + 1:at + 1] = b"\x04\x05\x00\x05\x00"
        bad(self, refix(bytes(b)), "player count 5")

    def test_fewer_sections_than_players(self):
        # P = 3 with two sections: the third section's length is read from the
        # host events (01 -> 1 byte: 03) and the rest no longer adds up.
        b = bytearray(two_players()[:-8])
        b[first_section_at(b) - 1] = 3
        with self.assertRaises(v4.ReplayError):
            v4.read(refix(bytes(b)))

    def test_a_player_stream_short_of_t(self):
        # Player 1: 3 x 0 then 1 x (+1): 4 ticks of 5. The section and the
        # file shrink by one byte... same length: the run says 1 instead of 2.
        b = bytearray(two_players()[:-8])
        at = first_section_at(b) + 9   # player 1's section: 06 05 00 03 00 02 02
        self.assertEqual(b[at:at + 7], bytes([0x06, 0x05, 0x00, 0x03, 0x00, 0x02, 0x02]))
        b[at + 1] = 4                  # a block of 4 ticks, runs 3 x 0 then 1 x (+1)
        b[at + 5] = 1
        bad(self, refix(bytes(b)), "player 1", "cover 4 ticks, not the declared 5")

    def test_a_player_stream_past_t(self):
        b = bytearray(two_players()[:-8])
        at = first_section_at(b) + 9
        b[at + 1] = 6                  # a block of 6 ticks in a 5-tick replay
        bad(self, refix(bytes(b)), "player 1", "covers 6 ticks but only 5")
        b = bytearray(two_players()[:-8])
        b[at + 5] = 3                  # runs 3 + 3 in a block of 5
        bad(self, refix(bytes(b)), "player 1", "past the block's 5")

    def test_bad_blocks_name_the_player(self):
        b = bytearray(two_players()[:-8])
        at = first_section_at(b) + 1   # player 0: 05 00 ...
        b[at + 1] = 7
        bad(self, refix(bytes(b)), "player 0", "block mode 7")

    def test_trailing_bytes(self):
        bad(self, two_players() + b"\x00", "trailing bytes", "148", "147")
        # ... and with the declared length and checksum made right, the body's check.
        bad(self, refix(two_players()[:-8] + b"\x00" + two_players()[-8:]), "1 bytes left")

    def test_truncation(self):
        good = two_players()
        for n in range(len(good)):
            with self.assertRaises(v4.ReplayError, msg=n):
                v4.read(good[:n])
            if n >= 28:
                # Cut inside the body, length and checksum made right: still refused.
                with self.assertRaises(v4.ReplayError, msg=n):
                    v4.read(refix(good[:n - 8] + good[-8:]) if n > 28 else refix(good[:n]))

    def test_any_corruption_is_a_replay_error(self):
        # Random byte changes, with length and checksum repaired: refused with
        # a ReplayError or read, never another exception.
        rng = random.Random(11)
        good = two_players()
        for _ in range(3000):
            b = bytearray(good)
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(20, len(b) - 8)] = rng.randrange(256)
            try:
                v4.read(refix(bytes(b)))
            except v4.ReplayError:
                pass

    def test_integrity(self):
        b = bytearray(two_players())
        b[40] ^= 1
        bad(self, bytes(b), "integrity checksum mismatch")

    def test_older_versions_are_refused_with_the_wording(self):
        for version in (1, 2, 3):
            b = bytearray(two_players())
            b[8:10] = struct.pack("<H", version)
            msg = bad(self, bytes(b))
            self.assertEqual(
                msg,
                f"replay format version {version} is not supported (this build reads version 4); "
                "the file was written by an older build and must be recorded again")
        b = bytearray(two_players())
        b[8] = 5
        self.assertEqual(bad(self, bytes(b)),
                         "replay format version 5 is not supported (this build reads version 4)")


def checked_in():
    return sorted(glob.glob(os.path.join(SEEDS, "*.twr")))


class CheckedIn(unittest.TestCase):
    def test_every_seed_is_version_4_and_writes_back_to_its_bytes(self):
        files = checked_in()
        self.assertEqual(len(files), 5)
        for path in files:
            with open(path, "rb") as f:
                buf = f.read()
            self.assertEqual(buf[8:10], b"\x04\x00", path)
            rp = v4.read(buf)
            self.assertEqual(len(rp.players), 1, path)
            self.assertEqual(v4.write(rp), buf, path)

    def test_old_fixtures_are_refused_by_version(self):
        for name, version in (("horde_v1_format1.twr", 1), ("island_v1_format1.twr", 1),
                              ("island_v1_format2.twr", 2), ("island_v1_format3.twr", 3)):
            with open(os.path.join(FIXTURES, name), "rb") as f:
                buf = f.read()
            self.assertEqual(struct.unpack_from("<H", buf, 8)[0], version, name)
            msg = bad(self, buf)
            self.assertIn(f"replay format version {version} is not supported "
                          "(this build reads version 4)", msg)

    def test_the_format_3_fixture_converts_to_the_checked_in_seed(self):
        # The version 3 fixture is island_seed_100.twr before conversion:
        # converting it again gives the checked-in version 4 file, which is
        # the old file with 4 for 3, P = 1 after the input kind, and the
        # length and checksum recomputed; the rest is the same bytes.
        with open(os.path.join(FIXTURES, "island_v1_format3.twr"), "rb") as f:
            old = f.read()
        with open(os.path.join(SEEDS, "island_seed_100.twr"), "rb") as f:
            new = f.read()
        self.assertEqual(v4.convert(old), new)
        at = first_section_at(new) - 1
        expected = bytearray(old[:at]) + b"\x01" + old[at:-8]
        expected[8:10] = b"\x04\x00"
        expected[12:20] = struct.pack("<Q", len(old) + 1)
        self.assertEqual(new, seal(bytes(expected)))

    def test_converting_is_lossless(self):
        # A version 3 file made from a version 4 one by hand (drop P, version 3)
        # converts back to it.
        for path in checked_in():
            with open(path, "rb") as f:
                new = f.read()
            at = first_section_at(new) - 1
            old = bytearray(new[:at]) + new[at + 1:-8]
            old[8:10] = b"\x03\x00"
            old[12:20] = struct.pack("<Q", len(new) - 1)
            self.assertEqual(v4.convert(seal(bytes(old))), new, path)
            with self.assertRaises(v4.ReplayError):
                v4.convert(new)

    def test_batch_seed_frames_the_empty_replay(self):
        seed = os.path.join(ROOT, "fuzz", "seeds", "batch_upload", "one_real_replay")
        with open(seed, "rb") as f:
            framed = f.read()
        with open(os.path.join(SEEDS, "island_empty.twr"), "rb") as f:
            replay = f.read()
        self.assertEqual(framed[:8], bytes([3, 0x04, 0x00, 0x08, 0x00, 1, 100, 254]))
        self.assertEqual(framed[8:], struct.pack(">I", len(replay)) + replay)

    def test_convert_all_has_nothing_left_to_do(self):
        logged = []
        self.assertEqual(v4.convert_all(ROOT, dry_run=True, log=logged.append), [])
        self.assertTrue(any("keep   crates/tickwise-catalog/tests/fixtures/island_v1_format3.twr"
                            in line for line in logged), logged)


if __name__ == "__main__":
    unittest.main()
