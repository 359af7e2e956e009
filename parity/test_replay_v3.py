"""Tests for the Python replay readers: the one printed in docs/replay-format.md
(what a server author copies) and parity/replay_v3.py (the writer that
converted the checked-in replays to format 3).

    python3 -m unittest discover -s parity -v        # from the repo root
"""

from __future__ import annotations

import glob
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import replay_v3 as v3  # noqa: E402


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


def seeds():
    return sorted(glob.glob(os.path.join(ROOT, "fuzz", "seeds", "replay_reader", "*.twr")))


class DocReader(unittest.TestCase):
    def test_reads_every_checked_in_replay(self):
        doc = doc_reader()
        files = seeds()
        self.assertGreaterEqual(len(files), 5)
        for path in files:
            with open(path, "rb") as f:
                buf = f.read()
            h = doc["read_header"](buf)
            doc["read_host_events"](buf, h)
            if h["input_kind"] != 1:
                continue
            runs = list(doc["read_inputs"](buf, h))
            self.assertEqual(sum(n for n, _ in runs), h["ticks"], path)
            # The same inputs as the converter's reader, tick by tick.
            at, kind = v3.inputs_section_at(buf)
            n, body = v3.varint(buf, at)
            expanded = [v for n_, v in runs for _ in range(n_)]
            other = []
            for length, raw in v3.read_blocks(buf[body:body + n], kind):
                value = v3.varint(raw, 0)[0]
                other += [(value >> 1) ^ -(value & 1)] * length
            self.assertEqual(expanded, other, path)

    def test_packed_block_of_the_worked_example(self):
        # docs/replay-format.md: 12 ticks packed with a palette of +1, 0, -1.
        doc = doc_reader()
        section = bytes([0x09, 0x0C, 0x01, 0x03, 0x02, 0x00, 0x01, 0xA4, 0x01, 0x19])
        runs = list(doc["read_inputs"](section, {"inputs_at": 0}))
        self.assertEqual([v for _, v in runs], [1, 0, -1, -1, 0, 1, 1, 1, 0, -1, 0, 1])


class Writer(unittest.TestCase):
    def test_packs_the_worked_example(self):
        twelve = [1, 0, -1, -1, 0, 1, 1, 1, 0, -1, 0, 1]
        runs = [(1, v3.put_varint((v << 1) ^ (v >> 63))) for v in twelve]
        self.assertEqual(
            v3.write_blocks(runs),
            bytes([0x0C, 0x01, 0x03, 0x02, 0x00, 0x01, 0xA4, 0x01, 0x19]),
        )

    def test_keeps_long_runs_as_runs(self):
        # The island's scripted input: 20 x (+1), 20 x (-1): one runs block.
        runs = [(20, b"\x02"), (20, b"\x01")] * 5
        self.assertEqual(v3.write_blocks(runs), bytes([200, 1, 0]) + bytes([20, 2, 20, 1]) * 5)

    def test_round_trips(self):
        import random

        rng = random.Random(5)
        for _ in range(200):
            alphabet = [bytes([rng.randrange(0, 128)]) for _ in range(rng.randint(1, 20))]
            runs = [
                (rng.choice([1, 1, 2, 3, 70, 200]), rng.choice(alphabet))
                for _ in range(rng.randint(0, 80))
            ]
            merged = []
            for n, v in runs:
                if merged and merged[-1][1] == v:
                    merged[-1] = (merged[-1][0] + n, v)
                else:
                    merged.append((n, v))
            self.assertEqual(v3.read_blocks(v3.write_blocks(runs), 1), merged)


if __name__ == "__main__":
    unittest.main()
