"""The service's overhead with its clients elsewhere, as far as one
two-core machine allows (issue 21, item 5; see scripts/bench-service.sh).

`bench_service.py` runs the load generator on the same two cores as
verifyd, so every figure it prints also pays the clients' CPU. Here
verifyd (`--jobs 1 --io-threads 1`) and `verify --jobs 1` each get core
0 to themselves, and the load generator core 1. Loopback's receive work
(the TCP stack of the receiving side) is steered to core 0 too, when the
kernel lets us (`/sys/class/net/lo/queues/rx-0/rps_cpus`, root; restored
after), so verifyd pays for receiving its uploads as it would from a
network card; otherwise that work runs on the sender's core, in verifyd's
favour, and the script says so.

Each round times `verify` and four load tests, alternating: one replay
per request and batches, each with the queue's hand-off (the default)
and with `--inline-work` (a lone upload verified on the thread that
received it). Overhead = 1 - replays/s through verifyd / replays/s of
`verify`, both on core 0.
"""

import os
import re
import shutil
import sys
import tempfile
import time
import urllib.request

import bench_service as bs

ROUNDS = int(os.environ.get("ROUNDS", "5"))
ISLAND = int(os.environ.get("ISLAND", "3000"))
CONC = os.environ.get("CONCURRENCY", "8")
BATCH = os.environ.get("BATCH_ISLAND", "8")
# 4·10⁶ units: a 10-minute island replay is 1.44·10⁶.
INLINE_WORK = os.environ.get("INLINE_WORK", "4000000")
SERVER, CLIENT = "0", "1"
RPS = "/sys/class/net/lo/queues/rx-0/rps_cpus"


def steer_loopback():
    """Steers loopback's receive work to the server's core; the old mask,
    or None (with the reason printed) when it cannot."""
    try:
        with open(RPS) as f:
            old = f.read().strip()
        with open(RPS, "w") as f:
            f.write(str(1 << int(SERVER)))
        return old
    except OSError as e:
        print(f"loopback receive NOT steered to core {SERVER} ({e}): the receiving TCP work"
              f" runs on the load generator's core, which flatters verifyd")
        return None


def verify_rate(d):
    return bs.cli_verify(d, jobs="1", prefix=["taskset", "-c", SERVER])["replays_s"]


def served_rate(d, batch, inline):
    extra = ["--inline-work", INLINE_WORK] if inline else []
    v = bs.Proc(["-c", SERVER, bs.BIN, "verifyd", "--bind", "127.0.0.1:0", "--jobs", "1",
                 "--io-threads", "1", "--capacity", "100000", *extra], bin="taskset")
    try:
        rep = bs.loadtest(v.url(), d, conc=CONC, extra=["--batch", BATCH] if batch else [],
                          prefix=["taskset", "-c", CLIENT])
        metrics = urllib.request.urlopen(v.url() + "/metrics").read().decode()
        inlined = int(re.search(r"^tickwise_inline_verifications_total (\d+)$", metrics, re.M)[1])
    finally:
        v.stop()
    if rep["errors"] or rep["ok"] != len(os.listdir(d)):
        sys.exit(f"the load test did not verify every replay: {rep}")
    return rep["replays_s"], inlined


def main():
    if shutil.which("taskset") is None or len(os.sched_getaffinity(0)) < 2:
        sys.exit("needs taskset and two cores")
    if not os.path.exists(bs.BIN):
        sys.exit(f"no {bs.BIN}: cargo build --release -p tickwise-cli first")
    tmp = tempfile.mkdtemp(prefix="tickwise-bench-pinned-")
    d = os.path.join(tmp, "island")
    bs.make(d, "island", 36_000, ISLAND, 1)
    old = steer_loopback()
    modes = [(f"{name}, {way}", batch, inline)
             for name, batch in [("one per request", False), (f"batches of {BATCH}", True)]
             for way, inline in [("queued", False), (f"--inline-work {INLINE_WORK}", True)]]
    rates = {m[0]: [] for m in modes}
    verify = []
    inlined = {m[0]: 0 for m in modes}
    try:
        for r in range(ROUNDS):
            verify.append(verify_rate(d))
            line = f"round {r + 1}: verify {verify[-1]:.0f}/s"
            for name, batch, inline in modes:
                rate, n = served_rate(d, batch, inline)
                rates[name].append(rate / verify[-1])
                inlined[name] = n
                line += f"; {name} {rate:.0f}/s"
            print(line, flush=True)
        if inlined[modes[1][0]] != ISLAND:
            sys.exit(f"--inline-work verified {inlined[modes[1][0]]} of {ISLAND} lone uploads inline")
    finally:
        if old is not None:
            with open(RPS, "w") as f:
                f.write(old)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{ISLAND} ten-minute island replays, {ROUNDS} alternating rounds; verifyd and"
          f" `verify --jobs 1` on core {SERVER}, the load generator on core {CLIENT}"
          f" ({CONC} requests in flight); loopback receive "
          + ("steered to the server's core" if old is not None else "NOT steered"))
    print(f"verify --jobs 1: {sorted(verify)[len(verify) // 2]:.0f} replays/s (median)")
    for name, _, _ in modes:
        xs = sorted(rates[name])
        print(f"{name:45} overhead {(1 - xs[len(xs) // 2]) * 100:5.1f} % (median; rounds "
              + ", ".join(f"{(1 - x) * 100:.1f}" for x in rates[name])
              + f" %); verified inline in the last round: {inlined[name]}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    t = time.time()
    main()
    print(f"took {time.time() - t:.0f} s")
