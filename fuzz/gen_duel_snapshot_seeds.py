# Seeds for the duel_snapshot fuzz target, written from the layout in the
# module docs of examples/duel/src/persist.rs (snapshot version 1) and the
# ranges its check_reachable docs give, not from the Rust writer:
#
#   config byte (fuzz/src/duel.rs: even = the shipped config, odd = EDGE_CONFIG)
#   u16 LE version 1
#   tick (varint); ball x, y; velocity x, y; paddles left, right (zig-zag
#   varints, each an i32); charged left, right (one byte each, 0 or 1);
#   scores left, right, serve wait (varints, each a u32); rng state,
#   rng increment (varints; the increment is odd)
#
# A state is read when the ball is on the field (0..=width, 0..=height), each
# speed is at most maxBallSpeed, each paddle's centre is in
# paddleHalf..=height-paddleHalf, no score is past winScore and the serve
# wait is at most serveDelay. Each file is named <config>-<ok|refused>-<what>
# [-<detail>]; for a refused one, <what> is the field the reader must name
# (`_` for a space): examples/duel/tests/fuzz_regressions.rs checks both.
#
# Run from the repository root:
#   python3 fuzz/gen_duel_snapshot_seeds.py fuzz/seeds/duel_snapshot
import os, random, struct, sys

def varint(v):
    assert 0 <= v < 2**64
    out = bytearray()
    while True:
        b = v & 0x7f; v >>= 7
        if v: out.append(b | 0x80)
        else: out.append(b); return bytes(out)

def signed(v):
    assert -2**63 <= v < 2**63
    return varint((v << 1) ^ (v >> 63) if v < 0 else v << 1)

# The two configs of fuzz/src/duel.rs (DEFAULT_CONFIG of examples/duel/src/config.rs
# and EDGE_CONFIG), the keys the ranges use.
CONFIGS = {
    "default": dict(byte=0, width=640, height=360, half=32, max=12, win=7, delay=30),
    "edge": dict(byte=1, width=64, height=32, half=15, max=16, win=99, delay=1),
}

def snapshot(c, tick, ball, vel, paddles, charged, score, wait, rng, trailing=b""):
    out = bytearray([c["byte"]]) + struct.pack("<H", 1)
    out += varint(tick)
    for v in ball + vel + paddles:
        out += signed(v)
    out += bytes(charged)
    for v in score + [wait]:
        out += varint(v)
    out += varint(rng[0]) + varint(rng[1])
    return bytes(out + trailing)

def reachable(c, ball, vel, paddles, charged, score, wait, rng):
    """The field the reader refuses first, or None: the reader's own order
    (charged and the increment are read before the range checks)."""
    if any(x not in (0, 1) for x in charged): return "charged"
    if rng[1] % 2 == 0: return "rng increment"
    w, h = c["width"], c["height"]
    if not (0 <= ball[0] <= w and 0 <= ball[1] <= h): return "ball"
    if any(abs(v) > c["max"] for v in vel): return "velocity"
    if not all(c["half"] <= p <= h - c["half"] for p in paddles): return "paddle"
    if any(s > c["win"] for s in score): return "score"
    if wait > c["delay"]: return "serve wait"
    return None

rnd = random.Random(11)
out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
written = {"ok": 0, "refused": 0}
for name, c in CONFIGS.items():
    w, h, half, mx, win, delay = (c[k] for k in ("width", "height", "half", "max", "win", "delay"))

    def plain():
        return dict(
            tick=rnd.randrange(0, 10**5),
            ball=[rnd.randrange(0, w + 1), rnd.randrange(0, h + 1)],
            vel=[rnd.randrange(-mx, mx + 1), rnd.randrange(-mx, mx + 1)],
            paddles=[rnd.randrange(half, h - half + 1) for _ in range(2)],
            charged=[rnd.randrange(2), rnd.randrange(2)],
            score=[rnd.randrange(0, win), rnd.randrange(0, win)],
            wait=rnd.randrange(0, delay + 1),
            rng=[rnd.getrandbits(64), rnd.getrandbits(64) | 1],
        )

    cases = []
    for i in range(3):
        cases.append((f"ok-plain-{i}", plain()))
    # Every field at the low and at the high end of what is read.
    cases.append(("ok-edges-low", dict(tick=0, ball=[0, 0], vel=[-mx, -mx],
        paddles=[half, half], charged=[0, 0], score=[0, 0], wait=0, rng=[0, 1])))
    cases.append(("ok-edges-high", dict(tick=2**64 - 1, ball=[w, h], vel=[mx, mx],
        paddles=[h - half, h - half], charged=[1, 1], score=[win, win], wait=delay,
        rng=[2**64 - 1, 2**64 - 1])))
    # A serve due next tick, the ball just past a paddle's face, a player one
    # point from winning.
    s = plain(); s.update(wait=1, score=[win - 1, 0])
    cases.append(("ok-serve-due", s))
    s = plain(); s.update(ball=[w - 1, h // 2], vel=[mx, 0], wait=0, score=[0, win - 1])
    cases.append(("ok-ball-at-the-wall", s))
    # One field just past what is read, the rest plain.
    for what, detail, field, value in [
        ("ball", "x-below-0", "ball", lambda s: [-1, s["ball"][1]]),
        ("ball", "x-past-width", "ball", lambda s: [w + 1, s["ball"][1]]),
        ("ball", "y-below-0", "ball", lambda s: [s["ball"][0], -1]),
        ("ball", "y-past-height", "ball", lambda s: [s["ball"][0], h + 1]),
        ("ball", "x-i32-max", "ball", lambda s: [2**31 - 1, s["ball"][1]]),
        ("velocity", "x-past-top-speed", "vel", lambda s: [mx + 1, s["vel"][1]]),
        ("velocity", "y-below-minus-top-speed", "vel", lambda s: [s["vel"][0], -mx - 1]),
        ("velocity", "y-i32-min", "vel", lambda s: [s["vel"][0], -2**31]),
        ("paddle", "left-above-range", "paddles", lambda s: [half - 1, s["paddles"][1]]),
        ("paddle", "right-below-range", "paddles", lambda s: [s["paddles"][0], h - half + 1]),
        ("score", "past-win", "score", lambda s: [s["score"][0], win + 1]),
        ("serve_wait", "past-delay", "wait", lambda s: delay + 1),
        ("charged", "two", "charged", lambda s: [2, 0]),
        ("rng_increment", "even", "rng", lambda s: [s["rng"][0], s["rng"][1] - 1]),
    ]:
        s = plain()
        s[field] = value(s)
        cases.append((f"refused-{what}-{detail}", s))
    for label, s in cases:
        fields = {k: s[k] for k in ("ball", "vel", "paddles", "charged", "score", "wait", "rng")}
        refused = reachable(c, **fields)
        kind, what = label.split("-")[:2]
        # The name says what the ranges above make of the state.
        if kind == "ok":
            assert refused is None, (name, label, refused)
        else:
            assert refused == what.replace("_", " "), (name, label, refused)
        written[kind] += 1
        with open(f"{out_dir}/{name}-{label}", "wb") as f:
            f.write(snapshot(c, **s))
# A state the reader takes with one byte after it: refused as trailing bytes.
c = CONFIGS["default"]
with open(f"{out_dir}/default-refused-trailing_bytes", "wb") as f:
    f.write(snapshot(c, 5, [320, 180], [5, 0], [180, 180], [0, 0], [0, 0], 0, [7, 9], b"\0"))
written["refused"] += 1
print(f"wrote {written['ok']} seeds the reader must accept, {written['refused']} it must refuse")
