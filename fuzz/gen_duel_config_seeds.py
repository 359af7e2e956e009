#!/usr/bin/env python3
"""Writes the `duel_config` fuzz target's seeds (fuzz/seeds/duel_config/).

    python3 fuzz/gen_duel_config_seeds.py fuzz/seeds/duel_config

From the ranges and cross-key rules documented in
examples/duel/src/config.rs (`DuelConfig::parse`, `check`), not from the
reader: the shipped config, configs with every value at an edge, and
configs one step past a rule. Each file is named `ok-...` (the reader must
take it) or `refused-<key>-...` (the reader must refuse it, naming that
key); examples/duel/tests/fuzz_regressions.rs checks the reader agrees.
"""

import json
import os
import sys

SHIPPED = {"seed": 42, "stepMs": 16, "maxStepsPerFrame": 8, "width": 640,
           "height": 360, "paddleInset": 16, "paddleHalf": 32, "paddleSpeed": 6,
           "ballSpeed": 5, "maxBallSpeed": 12, "maxServeVy": 3, "smashBoost": 3,
           "serveDelay": 30, "winScore": 7}
# The smallest field with every other value at its limit (the snapshot
# target's edge config): paddles one short of half the height, inset and
# top speed at a quarter of the width.
SMALL = {"seed": 2**64 - 1, "stepMs": 1, "maxStepsPerFrame": 1, "width": 64,
         "height": 32, "paddleInset": 16, "paddleHalf": 15, "paddleSpeed": 1000,
         "ballSpeed": 16, "maxBallSpeed": 16, "maxServeVy": 16, "smashBoost": 1000,
         "serveDelay": 1, "winScore": 99}
# The largest field, values at their upper limits where the rules allow.
LARGE = {"seed": 0, "stepMs": 1000, "maxStepsPerFrame": 1000, "width": 10000,
         "height": 10000, "paddleInset": 2500, "paddleHalf": 4999, "paddleSpeed": 1000,
         "ballSpeed": 1000, "maxBallSpeed": 1000, "maxServeVy": 1000, "smashBoost": 1000,
         "serveDelay": 10000, "winScore": 99}
# Lower limits of each key where the rules allow.
LOW = dict(SHIPPED, paddleInset=1, paddleHalf=1, paddleSpeed=0, ballSpeed=1,
           maxBallSpeed=1, maxServeVy=0, smashBoost=0, serveDelay=1, winScore=1)


def with_(base, **kv):
    d = dict(base)
    d.update(kv)
    return d


OK = {
    "ok-shipped": SHIPPED,
    "ok-small": SMALL,
    "ok-large": LARGE,
    "ok-low": LOW,
    "ok-no-paddle-speed-no-smash": with_(SHIPPED, paddleSpeed=0, smashBoost=0),
}
REFUSED = {
    # Cross-key rules (check()).
    "refused-paddleHalf-half-the-height": with_(SHIPPED, paddleHalf=180),
    "refused-paddleInset-past-a-quarter": with_(SHIPPED, paddleInset=161),
    "refused-maxBallSpeed-under-ballSpeed": with_(SHIPPED, maxBallSpeed=4),
    "refused-maxBallSpeed-past-a-quarter-width": with_(SMALL, maxBallSpeed=17, maxServeVy=0),
    "refused-maxServeVy-past-maxBallSpeed": with_(SHIPPED, maxServeVy=13),
    # Ranges of single keys.
    "refused-width-under-64": with_(SHIPPED, width=63),
    "refused-height-past-10000": with_(SHIPPED, height=10001),
    "refused-stepMs-zero": with_(SHIPPED, stepMs=0),
    "refused-winScore-100": with_(SHIPPED, winScore=100),
    "refused-serveDelay-zero": with_(SHIPPED, serveDelay=0),
    "refused-ballSpeed-negative": with_(SHIPPED, ballSpeed=-1),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, cfg in {**OK, **REFUSED}.items():
        with open(os.path.join(out, name), "w") as f:
            json.dump(cfg, f, indent=1)
    # Shapes the reader must refuse before any value: not JSON, a missing
    # key, an unknown key (named "extra").
    raw = {
        "refused-seed-missing": json.dumps({k: v for k, v in SHIPPED.items() if k != "seed"}),
        "refused-extra-unknown-key": json.dumps(with_(SHIPPED, extra=1)),
        "refused-json-not-an-object": "[1, 2, 3]",
    }
    for name, text in raw.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    print(f"{len(OK)} accepted and {len(REFUSED) + len(raw)} refused configs in {out}")


if __name__ == "__main__":
    main()
