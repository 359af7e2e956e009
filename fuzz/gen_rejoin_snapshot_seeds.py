# Seeds for the rejoin_snapshot fuzz target, written from the layout in
# crates/tickwise-sims/src/horde/persist.rs (version 1): a player-count byte,
# then u16 LE version 1 and the LEB128 / zig-zag fields.
# Run from the repository root: python3 fuzz/gen_rejoin_snapshot_seeds.py fuzz/seeds/rejoin_snapshot
import random, struct, sys
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f; v >>= 7
        if v: out.append(b | 0x80)
        else: out.append(b); return bytes(out)
def signed(v): return varint((v << 1) ^ (v >> 63) if v < 0 else v << 1)
def snap(players, n, rnd, extreme=False):
    out = bytearray(struct.pack("<H", 1))
    out += varint(rnd.randrange(0, 10**6))           # tick
    out += varint(rnd.getrandbits(64))               # rng state
    out += varint(rnd.getrandbits(64) | 1)           # rng increment (odd)
    out += varint(players)
    big = 2**31 - 1
    for h in range(players):
        # Heroes stand on the field (16384 px of 256 sub-pixels); hit points
        # at either extreme (down, or far above the config's).
        for v in ([0, 16384*256 - 1] if extreme else [rnd.randrange(0, 16384*256), rnd.randrange(0, 16384*256)]):
            out += signed(v)
        out += signed((-(2**63) if h % 2 else 2**63 - 1) if extreme else rnd.randrange(1, 101))   # hp
        out += varint(2**64 - 1 if extreme else rnd.randrange(0, 5))     # downs
        out += varint(2**32 - 1 if extreme else rnd.randrange(0, 16))    # invuln
        out += varint(2**32 - 1 if extreme else rnd.randrange(0, 16))    # attack timer
    for v in ([2**64 - 1] * 3 if extreme else [rnd.randrange(0, 9) for _ in range(3)]):
        out += varint(v)                                                 # wipes, kills, waves
    # alive: the enemies with hit points (half of them in the extreme seeds).
    out += varint(n // 2 if extreme else sum(1 for _ in range(n)))
    out += varint(2**64 - 1 if extreme else rnd.randrange(0, 200))       # last pairs
    out += varint(2**32 - 1 if extreme else rnd.randrange(0, 20))        # last contacts
    out += varint(n)
    ids = list(range(n)); rnd.shuffle(ids)
    cx, cy = rnd.randrange(0, 16384*256), rnd.randrange(0, 16384*256)
    for k in range(n):
        if extreme:
            vals = [(-1)**k * big, big if k % 3 else -big - 1]
        else:
            vals = [cx + rnd.randrange(-4096, 4096), cy + rnd.randrange(-4096, 4096)]
        out += signed(vals[0]) + signed(vals[1]) + varint(ids[k])
        v = [big, -big - 1] if extreme else [rnd.randrange(-384, 385), rnd.randrange(-384, 385)]
        out += signed(v[0]) + signed(v[1])
        out += signed(((-big - 1) if k % 2 else big) if extreme else 20)
        out += varint(65535 if extreme else rnd.randrange(0, 12))
    return bytes(out)
rnd = random.Random(7)
d = sys.argv[1]
for players in (1, 2, 4):
    open(f"{d}/plain-{players}p", "wb").write(bytes([players - 1]) + snap(players, 24, rnd))
    open(f"{d}/extreme-{players}p", "wb").write(bytes([players - 1]) + snap(players, 24, rnd, True))
open(f"{d}/wrong-count", "wb").write(bytes([0]) + snap(1, 23, rnd))
