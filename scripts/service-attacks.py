#!/usr/bin/env python3
"""The attacks of issue 20 against a `tickwise` binary, on loopback only,
each bounded in time, printing the figures of the closing note's table.

    python3 scripts/service-attacks.py BINARY [ATTACK...]

ATTACK: memory, cpu, bytes, slow, serve, sigterm, small (default: all).
`cpu` needs the forged replay: cargo run --release -p tickwise-service
--example forge_idle_replay -- /tmp/forged.twr 3500000 (path in FORGED).
Every server is started on a free port and killed at the end of its attack.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1]
WANT = set(sys.argv[2:]) or {"memory", "cpu", "bytes", "slow", "serve", "sigterm", "small"}
FORGED = os.environ.get("FORGED", "/tmp/forged.twr")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(args, ready=b"listening"):
    port = free_port()
    p = subprocess.Popen([BIN] + args + (["--bind", f"127.0.0.1:{port}"] if args[0] == "verifyd" else ["--port", str(port)]),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = p.stdout.readline()
    assert ready in line or b"serving" in line, line
    return p, port


def rss(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def request(port, raw, timeout=10.0, source="127.0.0.1"):
    """Sends raw bytes, reads one answer: (status, seconds, body)."""
    t = time.monotonic()
    s = socket.socket()
    s.settimeout(timeout)
    data = b""
    try:
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(raw)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        s.close()
    took = time.monotonic() - t
    try:
        status = int(data.split(b" ", 2)[1])
    except (IndexError, ValueError):
        status = 0
    body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
    return status, took, body


def post(port, path, body, timeout=30.0, headers=""):
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{headers}"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    return request(port, head + body, timeout)


def get(port, path, timeout=10.0):
    return request(port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode(), timeout)


def record(ticks, seed, path):
    subprocess.run([BIN, "record", "--sim", "island", "--ticks", str(ticks), "--inputs", f"random:{seed}",
                    "--out", path], check=True, stdout=subprocess.DEVNULL)
    with open(path, "rb") as f:
        return f.read()


def attack_memory():
    """32 connections each send 60 MiB of a declared 64 MiB batch and withhold the rest."""
    p, port = start(["verifyd", "--jobs", "2"])
    socks, answered = [], 0
    # Four frames of 16 MiB - 4 bytes each (64 MiB in all), of which the
    # first 60 MiB are sent.
    frame = (16 * 2**20 - 4).to_bytes(4, "big") + b"\0" * (16 * 2**20 - 4)
    body = (frame * 4)[: 60 * 2**20]
    chunks = [body[i:i + 2**20] for i in range(0, len(body), 2**20)]
    head = (b"POST /v1/batches HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-tickwise-batch\r\n"
            b"Content-Length: 67108864\r\n\r\n")
    for _ in range(32):
        s = socket.socket()
        s.connect(("127.0.0.1", port))
        s.sendall(head)
        s.settimeout(0.05)
        try:
            for chunk in chunks:
                s.sendall(chunk)
        except OSError:
            pass
        try:
            if s.recv(1024):
                answered += 1
        except OSError:
            pass
        socks.append(s)
    time.sleep(1)
    peak = rss(p.pid, "VmHWM")
    for s in socks:
        s.close()
    time.sleep(3)
    after = rss(p.pid)
    p.kill()
    print(f"memory: 32 withheld 64 MiB batches: peak RSS {peak / 1e6:.0f} MB, "
          f"{after / 1e6:.0f} MB 3 s after they closed; {answered} answered before the end of their body")


def attack_cpu():
    """Two forged idle-tick horde uploads, then an honest 36 000-tick island replay with ?wait=10."""
    p, port = start(["verifyd", "--jobs", "2"])
    # Two forgeries (FORGED and FORGED.2, e.g. 3 500 000 and 3 499 999
    # ticks): the same bytes twice would be one job.
    codes = [post(port, "/v1/replays", open(path, "rb").read(), 10)[0] for path in (FORGED, FORGED + ".2")]
    time.sleep(1)
    honest = record(36000, 7, tempfile.mktemp(suffix=".twr"))
    status, took, body = post(port, "/v1/replays?wait=10", honest, 15)
    health = get(port, "/healthz")[2]
    # A third forgery from the same address (a fresh one: 3 499 998 ticks
    # in FORGED.3, if present).
    third = FORGED + ".3"
    code3 = post(port, "/v1/replays", open(third, "rb").read(), 10)[0] if os.path.exists(third) else None
    p.kill()
    v = json.loads(body or b"{}")
    print(f"cpu: forged uploads {codes}; {json.loads(health or b'{}').get('running')} running; "
          f"honest island 36000 ticks: HTTP {status} {v.get('status')} after {took:.2f} s; third forgery -> {code3}")


def attack_bytes():
    """100 uploads of a 10^7-tick island replay (the tick limit, about 9 MiB), one byte of the body flipped."""
    path = tempfile.mktemp(suffix=".twr")
    good = record(10_000_000, 3, path)
    p, port = start(["verifyd", "--jobs", "2"])
    before = rss(p.pid)
    codes = {}
    t = time.monotonic()
    for i in range(100):
        bad = bytearray(good)
        bad[len(bad) // 2 + i] ^= 0x10
        status, _, body = post(port, "/v1/replays", bytes(bad), 30)
        st = json.loads(body or b"{}").get("status", "")
        codes[(status, st)] = codes.get((status, st), 0) + 1
    took = time.monotonic() - t
    peak = rss(p.pid, "VmHWM")
    health = json.loads(get(port, "/healthz")[2] or b"{}")
    p.kill()
    print(f"bytes: 100 corrupt uploads of {len(good) / 2**20:.1f} MiB in {took:.1f} s: {codes}; "
          f"queued {health.get('queued')} running {health.get('running')}; RSS {before / 1e6:.0f} -> peak {peak / 1e6:.0f} MB")


def trickle(port, n, head, drip, period, stop, sources):
    """n clients from `sources`: head at once, then one byte every `period`, reconnecting when closed."""
    def client(i):
        src = sources[i % len(sources)]
        while not stop.is_set():
            s = socket.socket()
            s.settimeout(period)
            try:
                s.bind((src, 0))
                s.connect(("127.0.0.1", port))
                if head:
                    s.sendall(head)
                while not stop.is_set():
                    s.sendall(drip)
                    try:
                        if not s.recv(512):
                            break
                        break
                    except socket.timeout:
                        pass
            except OSError:
                pass
            finally:
                s.close()
            stop.wait(0.2)
    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    return threads


def probe(port, path, stop_after, sample, upload=None):
    worst, fails, n = 0.0, 0, 0
    end = time.monotonic() + stop_after
    while time.monotonic() < end:
        status, took, _ = get(port, path, 10) if upload is None else post(port, path, upload, 10)
        n += 1
        worst = max(worst, took)
        if status != 200:
            fails += 1
        time.sleep(sample)
    return worst, fails, n


def attack_slow():
    """512 clients, each sending a body byte every 2 s, against verifyd's defaults."""
    p, port = start(["verifyd", "--jobs", "2"])
    stop = threading.Event()
    head = b"POST /v1/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n"
    trickle(port, 512, head, b"x", 2.0, stop, ["127.0.0.1"])
    time.sleep(3)
    h = probe(port, "/healthz", 15, 1.0)
    up = probe(port, "/v1/replays?wait=5", 10, 1.0, record(600, 9, tempfile.mktemp(suffix=".twr")))
    # An upload larger than what is looked at on accept (16 KiB): it needs
    # a slot like any slow client, by shedding one.
    big = record(100_000, 10, tempfile.mktemp(suffix=".twr"))
    up2 = probe(port, "/v1/replays?wait=5", 10, 1.0, big)
    stop.set()
    p.kill()
    print(f"slow: 512 body tricklers from 127.0.0.1: /healthz worst {h[0]:.2f} s, {h[1]}/{h[2]} not 200; "
          f"1.2 KB upload worst {up[0]:.2f} s, {up[1]}/{up[2]} not 200; "
          f"{len(big) // 1024} KiB upload worst {up2[0]:.2f} s, {up2[1]}/{up2[2]} not 200")


def attack_serve():
    """300 clients trickling a request head (one byte a second) against `serve`."""
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("<h1>page</h1>")
    p, port = start(["serve", "--dir", d], b"serving")
    stop = threading.Event()
    trickle(port, 300, b"", b"G", 1.0, stop, ["127.0.0.1"])
    time.sleep(3)
    h = probe(port, "/", 15, 1.0)
    stop.set()
    p.kill()
    shutil.rmtree(d)
    print(f"serve: 300 head tricklers: GET / worst {h[0]:.2f} s, {h[1]}/{h[2]} not 200")


def attack_sigterm():
    """SIGTERM one second into a forged long job."""
    p, port = start(["verifyd", "--jobs", "1"])
    post(port, "/v1/replays", open(FORGED, "rb").read(), 10)
    time.sleep(1)
    t = time.monotonic()
    p.send_signal(signal.SIGTERM)
    refused = None
    while p.poll() is None and time.monotonic() - t < 90:
        if refused is None:
            s = socket.socket()
            s.settimeout(0.2)
            try:
                s.connect(("127.0.0.1", port))
            except OSError:
                refused = time.monotonic() - t
            s.close()
        time.sleep(0.05)
    exited = time.monotonic() - t
    if p.poll() is None:
        p.kill()
        exited = None
    if refused is None:
        refused = exited
    print(f"sigterm: port refused after {refused if refused is None else f'{refused:.2f} s'}, "
          f"process exited after {exited if exited is None else f'{exited:.2f} s'}")


def attack_small():
    """A declared oversize upload: the 413's body and counter; a batch without its type."""
    p, port = start(["verifyd", "--jobs", "1"])
    st, _, body = request(port, b"POST /v1/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000000\r\n\r\n", 5)
    metrics = get(port, "/metrics")[2].decode()
    count = [l for l in metrics.splitlines() if 'result="too_large"' in l]
    st2 = post(port, "/v1/batches", b"\0\0\0\1x", 5)[0]
    p.kill()
    print(f"small: declared 100 MB -> {st} {body[:60]!r}; {count}; batch without Content-Type -> {st2}")


for name in ["small", "bytes", "memory", "slow", "serve", "sigterm", "cpu"]:
    if name in WANT:
        globals()[f"attack_{name}"]()
