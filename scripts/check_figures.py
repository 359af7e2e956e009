#!/usr/bin/env python3
"""Checks measured figures quoted in README.md and docs/ against the build.

    python3 scripts/check_figures.py horde-rss   # after the release build
    python3 scripts/check_figures.py wasm        # after .ci/build-web.sh

Sizes and memory are measured here and compared with the figures the docs
quote; a figure off by more than its tolerance fails with the measured value
and the line to change. scripts/test-all.sh runs both. Counts, defaults and
limits that the code holds as constants are checked by `cargo test`
instead (crates/tickwise-cli/tests/doc_figures.rs).
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def quoted(rel, pattern, what):
    """The groups of `pattern` in file `rel`, as floats; fails if absent."""
    m = re.search(pattern, read(rel))
    if not m:
        sys.exit(f"check-figures: FAILED: {rel} no longer quotes {what} in the checked form "
                 f"(pattern {pattern!r}); update this script with the doc")
    return [float(g.replace(" ", "")) for g in m.groups()]


def within(measured, lo, hi, tolerance):
    return lo * (1 - tolerance) <= measured <= hi * (1 + tolerance)


def horde_rss():
    """Peak RSS of `tickwise horde --enemies 100000 --ticks 300`, three runs,
    against README's and docs/horde.md's range (±15 %: the allocator's and
    the kernel's share vary a little between runs and machines)."""
    exe = os.path.join(ROOT, "target", "release", "tickwise")
    runs = []
    for _ in range(3):
        r = subprocess.run(["/usr/bin/time", "-f", "%M", exe, "horde", "--enemies", "100000",
                            "--ticks", "300"], capture_output=True, text=True, check=True)
        runs.append(int(r.stderr.strip().splitlines()[-1]) / 1000)  # kB -> MB
    runs.sort()
    mid = runs[1]
    bad = []
    for rel, pattern in [
        ("README.md", r"\| horde peak RSS at 100 000 enemies \| ([\d.]+)–([\d.]+) MB"),
        ("docs/horde.md", r"Peak RSS of `tickwise horde --enemies 100000 --ticks 300`: ([\d.]+)–([\d.]+) MB"),
    ]:
        lo, hi = quoted(rel, pattern, "the horde's peak RSS")
        ok = within(mid, lo, hi, 0.15)
        print(f"horde peak RSS: measured {runs[0]:.1f}/{runs[1]:.1f}/{runs[2]:.1f} MB; "
              f"{rel} says {lo}–{hi} MB: {'ok' if ok else 'OFF'}")
        if not ok:
            bad.append(rel)
    return bad


def wasm():
    """The page build's sizes (`bash .ci/build-web.sh` prints the same) against
    the README's and docs/browser.md's figures (±10 %)."""
    dist = os.path.join(ROOT, "web", "dist")
    sizes = {}
    for name, rel in [("wasm", "pkg/tickwise_web_bg.wasm"), ("island", "island.html")]:
        path = os.path.join(dist, rel)
        if not os.path.isfile(path):
            sys.exit(f"check-figures: FAILED: {path} is missing: run `bash .ci/build-web.sh` first")
        with open(path, "rb") as f:
            data = f.read()
        sizes[name] = (len(data), len(gzip.compress(data, 9)))
    bad = []
    raw, gz, hraw, hgz = quoted(
        "README.md",
        r"\| wasm \| (\d+) KB raw, (\d+) KB gzipped; `island\.html` single file (\d+) KB / (\d+) KB",
        "the wasm and island.html sizes")
    for what, measured, quoted_kb in [
        ("wasm raw", sizes["wasm"][0], raw), ("wasm gzip -9", sizes["wasm"][1], gz),
        ("island.html raw", sizes["island"][0], hraw), ("island.html gzip -9", sizes["island"][1], hgz),
    ]:
        ok = within(measured / 1000, quoted_kb, quoted_kb, 0.10)
        print(f"{what}: {measured} bytes; README.md says {quoted_kb:.0f} KB: {'ok' if ok else 'OFF'}")
        if not ok:
            bad.append(f"README.md ({what})")
    braw, bgz = quoted("docs/browser.md",
                       r"\| `tickwise_web_bg\.wasm` \| ([\d ]+) B raw, ([\d ]+) B `gzip -9`",
                       "the wasm size")
    for what, measured, q in [("wasm raw", sizes["wasm"][0], braw),
                              ("wasm gzip -9", sizes["wasm"][1], bgz)]:
        ok = within(measured, q, q, 0.10)
        print(f"{what}: {measured} bytes; docs/browser.md says {q:.0f} B: {'ok' if ok else 'OFF'}")
        if not ok:
            bad.append(f"docs/browser.md ({what})")
    return bad


def main(argv):
    checks = {"horde-rss": horde_rss, "wasm": wasm}
    if len(argv) != 1 or argv[0] not in checks:
        print(__doc__)
        return 2
    bad = checks[argv[0]]()
    if bad:
        print(f"check-figures: FAILED: the figures in {', '.join(bad)} no longer match the build; "
              "update them (with the command and the machine)", file=sys.stderr)
        return 1
    print(f"check-figures: {argv[0]}: the quoted figures match the build")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
