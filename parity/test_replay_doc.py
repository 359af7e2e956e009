"""Tests of docs/replay-format.md against the Python replay code of format
version 4: the reader printed on the page (what a server author copies) runs
as printed over the hand-written 2-player file and every checked-in replay,
and the byte examples on the page are what the writer gives.

    python3 -m unittest discover -s parity -v        # from the repo root
"""

from __future__ import annotations

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import replay_v4 as v4  # noqa: E402
from test_replay_v4 import (  # noqa: E402
    CP1, checked_in, first_section_at, two_players, two_players_replay)


def doc_reader():
    """The reader of docs/replay-format.md, executed as printed."""
    with open(os.path.join(ROOT, "docs", "replay-format.md"), encoding="utf-8") as f:
        doc = f.read()
    code = doc[doc.index("## A reader in Python"):]
    code = code[code.index("```python") + len("```python"):]
    code = code[:code.index("```")]
    ns: dict = {}
    exec(code, ns)  # noqa: S102 - the documentation's own example
    return ns


def doc_bytes(heading):
    """The bytes of the first ```text block after `heading` in
    docs/replay-format.md: the hex pairs that start each line, up to the
    first word that is not one (placeholders such as <8 bytes> skipped)."""
    with open(os.path.join(ROOT, "docs", "replay-format.md"), encoding="utf-8") as f:
        doc = f.read()
    block = doc[doc.index(heading):]
    block = block[block.index("```text") + len("```text"):]
    block = block[:block.index("```")]
    out = bytearray()
    for line in block.splitlines():
        for word in line.split():
            if len(word) != 2 or any(c not in "0123456789abcdef" for c in word):
                break
            out.append(int(word, 16))
    return bytes(out)


class DocBytes(unittest.TestCase):
    def test_the_two_player_example_is_what_the_writer_gives(self):
        p0 = [1, 0, -1, -1, 0, 1, 1, 1, 0, -1, 0, 1]
        p1 = [0] * 6 + [1] * 6
        rp = two_players_replay()
        rp.ticks, rp.checkpoint_every, rp.checkpoints, rp.host_events = 12, 12, [CP1], []
        rp.players = [v4.merge([(1, v4.i32_input(v)) for v in p]) for p in (p0, p1)]
        buf = v4.write(rp)
        at = first_section_at(buf)
        example = doc_bytes("### Players")
        self.assertEqual(len(example), 18)
        self.assertEqual(buf[at - 1:at + 17], example)

    def test_the_worked_example_shows_version_4_and_one_player(self):
        shown = doc_bytes("## Worked example")
        self.assertEqual(shown[:20], bytes([0x54, 0x57, 0x52, 0x45, 0x50, 0x4C, 0x41, 0x59,
                                            4, 0, 0, 0, 140, 0, 0, 0, 0, 0, 0, 0]))
        rp = two_players_replay()
        rp.players = rp.players[:1]
        buf = v4.write(rp)
        self.assertEqual(len(buf), 140)
        at = first_section_at(buf)
        # T = 5, K = 2, kind 1, P = 1, then player 0's 8 bytes, as the page shows them.
        sequence = bytes([0x05, 0x02, 0x01, 0x01, 0x08,
                          0x05, 0x00, 0x02, 0x02, 0x01, 0x01, 0x02, 0x00])
        self.assertIn(sequence, shown)
        self.assertEqual(buf[at - 4:at + 9], sequence)


class DocReader(unittest.TestCase):
    def test_reads_the_two_player_section_of_the_page(self):
        doc = doc_reader()
        buf = doc_bytes("### Players")   # P, then the two sections
        header = {"ticks": 12, "players": 2, "inputs_at": 1}
        p0 = [1, 0, -1, -1, 0, 1, 1, 1, 0, -1, 0, 1]
        p1 = [0] * 6 + [1] * 6
        for player, expected in ((0, p0), (1, p1)):
            runs = list(doc["read_inputs"](buf, header, player))
            self.assertEqual([v for n, v in runs for _ in range(n)], expected)

    def test_reads_the_hand_written_two_player_file(self):
        doc = doc_reader()
        buf = two_players()
        h = doc["read_header"](buf)
        self.assertEqual((h["sim"], h["ticks"], h["players"], h["input_kind"]),
                         ("ctr", 5, 2, 1))
        for p, expected in ((0, [1, 1, -1, 0, 0]), (1, [0, 0, 0, 1, 1])):
            runs = list(doc["read_inputs"](buf, h, p))
            self.assertEqual([v for n, v in runs for _ in range(n)], expected)
        self.assertEqual(doc["read_host_events"](buf, h), [(3, "time dropped", 300)])

    def test_reads_every_checked_in_replay(self):
        doc = doc_reader()
        for path in checked_in():
            with open(path, "rb") as f:
                buf = f.read()
            h = doc["read_header"](buf)
            rp = v4.read(buf)
            self.assertEqual(h["players"], len(rp.players))
            events = doc["read_host_events"](buf, h)
            self.assertEqual([(t, ns) for t, _, ns in events], rp.host_events, path)
            if h["input_kind"] != 1:
                continue
            for p in range(h["players"]):
                runs = list(doc["read_inputs"](buf, h, p))
                self.assertEqual([v for n, v in runs for _ in range(n)], rp.inputs(p), path)


if __name__ == "__main__":
    unittest.main()
