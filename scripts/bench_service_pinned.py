"""The service's overhead with its clients elsewhere, as far as one
two-core machine allows (issue 21, item 5; see scripts/bench-service.sh).

`bench_service.py` runs the load generator on the same two cores as
verifyd, so every figure it prints also pays the clients' CPU. Here
verifyd (`--jobs 1 --io-threads 1`) and `verify --jobs 1` each get core
0 to themselves, and the load generator core 1.

Loopback's receive work (the receiving side's TCP stack) runs on the
sender's core unless steered, which would hand verifyd's receive work to
the load generator's core. When the kernel lets us (root), it is steered
by flow (RFS: `rps_cpus` of `lo` set to both cores, with a flow table), so
each packet is received on the core of the thread that reads its socket:
the uploads on core 0, where verifyd pays for them as it would from a
network card, and the answers and acknowledgements on core 1, where a
client on its own machine would pay for them. `STEER=server` sends all
of loopback's receive work to core 0 instead (rounds 22 and 23), which
also charges verifyd's core with the clients' receive work. Every setting
is restored afterwards.

Each round times `verify` between every two load tests, and each load
test is compared with the mean of the `verify` runs just before and just
after it, so that a slow or fast phase of the machine (a shared VM's
speed drifts by several percent over seconds) weighs on both sides of a
ratio. The load tests: one replay per request and batches, each with the
queue's hand-off (the default) and with `--inline-work` (a lone upload
verified on the thread that received it). Overhead = 1 - replays/s
through verifyd / replays/s of `verify`, both on core 0.

Then, when valgrind is installed, the same comparison in instructions,
which neither the machine's drift nor its speed changes: cachegrind counts
`verify`'s instructions and verifyd's (every thread of it) for COUNT and
3·COUNT replays (default 50; 0 leaves the part out), and the difference
over 2·COUNT gives each one's instructions per replay. This counts
verifyd's own code (HTTP, the content id, the queue, the verdict's JSON),
not the kernel's work of receiving and answering, which the timed rounds
include.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import bench_service as bs
from bench_compare import CG_FIELDS

ROUNDS = int(os.environ.get("ROUNDS", "5"))
ISLAND = int(os.environ.get("ISLAND", "3000"))
CONC = os.environ.get("CONCURRENCY", "8")
BATCH = os.environ.get("BATCH_ISLAND", "8")
# 4·10⁶ units: a 10-minute island replay is 1.44·10⁶.
INLINE_WORK = os.environ.get("INLINE_WORK", "4000000")
SERVER, CLIENT = "0", "1"
COUNT = int(os.environ.get("COUNT", "50"))
LO = "/sys/class/net/lo/queues/rx-0/"
RPS_CPUS, FLOW_CNT = LO + "rps_cpus", LO + "rps_flow_cnt"
FLOW_ENTRIES = "/proc/sys/net/core/rps_sock_flow_entries"
STEER = os.environ.get("STEER", "flow")


def steer_loopback():
    """Steers loopback's receive work (see the module's text); the old
    settings to restore, or None (with the reason printed) when it cannot."""
    if STEER == "flow":
        wanted = {RPS_CPUS: str((1 << int(SERVER)) | (1 << int(CLIENT))),
                  FLOW_ENTRIES: "32768", FLOW_CNT: "32768"}
    else:  # "server"; main() refuses any other value
        wanted = {RPS_CPUS: str(1 << int(SERVER)), FLOW_ENTRIES: "0", FLOW_CNT: "0"}
    old = {}
    try:
        for path, value in wanted.items():
            with open(path) as f:
                was = f.read().strip()
            with open(path, "w") as f:
                f.write(value)
            old[path] = was
        return old
    except OSError as e:
        restore(old)
        print(f"loopback receive NOT steered ({e}): the receiving TCP work runs on the"
              f" sender's core, so verifyd's receive work is paid by the load generator's core")
        return None


def restore(old):
    for path, value in (old or {}).items():
        with open(path, "w") as f:
            f.write(value)


def instructions(log):
    """The instruction count ("I refs") of a valgrind log file."""
    with open(log) as f:
        m = re.search(CG_FIELDS["I"], f.read())
    if m is None:
        sys.exit(f"no instruction count in {log}")
    return int(m[1].replace(",", ""))


def counted(cmd, log):
    return ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
            f"--log-file={log}", *cmd]


def count_verify(d, log):
    subprocess.run(counted([bs.BIN, "verify", "--jobs", "1", "--quiet", d], log), check=True,
                   stdout=subprocess.DEVNULL)
    return instructions(log)


def count_served(d, batch, inline, log):
    v = bs.Proc(["-c", SERVER, *counted(verifyd_cmd(inline), log)], bin="taskset")
    try:
        load(v.url(), d, batch)
    finally:
        v.stop(signal.SIGINT)
    return instructions(log)


def count_part(src, tmp, modes):
    """Instructions per replay of `verify` and of each mode (see the module's
    text), or None with the reason printed."""
    if COUNT <= 0:
        print("instruction counts: left out (COUNT=0)")
        return None
    if shutil.which("valgrind") is None:
        print("instruction counts: skipped (valgrind is not installed)")
        return None
    files = sorted(os.listdir(src))
    if len(files) < 3 * COUNT:
        sys.exit(f"COUNT={COUNT} needs {3 * COUNT} replays; ISLAND is {len(files)}")
    dirs = []
    for n in (COUNT, 3 * COUNT):
        d = os.path.join(tmp, f"count-{n}")
        os.makedirs(d)
        for f in files[:n]:
            os.link(os.path.join(src, f), os.path.join(d, f))
        dirs.append(d)
    log = os.path.join(tmp, "valgrind.log")

    def per_replay(count):
        return (count(dirs[1]) - count(dirs[0])) / (2 * COUNT)

    out = {"verify": per_replay(lambda d: count_verify(d, log))}
    for name, batch, inline in modes:
        out[name] = per_replay(lambda d: count_served(d, batch, inline, log))
    return out


def verify_rate(d):
    return bs.cli_verify(d, jobs="1", prefix=["taskset", "-c", SERVER])["replays_s"]


def verifyd_cmd(inline):
    """verifyd with one verification thread and one executor thread."""
    extra = ["--inline-work", INLINE_WORK] if inline else []
    return [bs.BIN, "verifyd", "--bind", "127.0.0.1:0", "--jobs", "1", "--io-threads", "1",
            "--capacity", "100000", *extra]


def load(url, d, batch):
    """The load test of `d` from the client's core; exits unless every
    replay was verified."""
    rep = bs.loadtest(url, d, conc=CONC, extra=["--batch", BATCH] if batch else [],
                      prefix=["taskset", "-c", CLIENT])
    if rep["errors"] or rep["ok"] != len(os.listdir(d)):
        sys.exit(f"the load test did not verify every replay: {rep}")
    return rep


def served_rate(d, batch, inline):
    v = bs.Proc(["-c", SERVER, *verifyd_cmd(inline)], bin="taskset")
    try:
        rep = load(v.url(), d, batch)
        metrics = urllib.request.urlopen(v.url() + "/metrics").read().decode()
        inlined = int(re.search(r"^tickwise_inline_verifications_total (\d+)$", metrics, re.M)[1])
    finally:
        v.stop()
    return rep["replays_s"], inlined


def main():
    if shutil.which("taskset") is None or len(os.sched_getaffinity(0)) < 2:
        sys.exit("needs taskset and two cores")
    if not os.path.exists(bs.BIN):
        sys.exit(f"no {bs.BIN}: cargo build --release -p tickwise-cli first")
    if STEER not in ("flow", "server"):
        sys.exit(f"STEER must be flow or server, not {STEER!r}")
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
                verify.append(verify_rate(d))
                rates[name].append(rate / ((verify[-2] + verify[-1]) / 2))
                inlined[name] = n
                line += f"; {name} {rate:.0f}/s; verify {verify[-1]:.0f}/s"
            print(line, flush=True)
        if inlined[modes[1][0]] != ISLAND:
            sys.exit(f"--inline-work verified {inlined[modes[1][0]]} of {ISLAND} lone uploads inline")
        counts = count_part(d, tmp, modes)
    finally:
        restore(old)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{ISLAND} ten-minute island replays, {ROUNDS} alternating rounds; verifyd and"
          f" `verify --jobs 1` on core {SERVER}, the load generator on core {CLIENT}"
          f" ({CONC} requests in flight); loopback receive "
          + {None: "NOT steered", "flow": "steered by flow (each side receives on its own core)",
             "server": "all steered to the server's core"}[STEER if old is not None else None]
          + "; each load test against the mean of the verify runs beside it")
    print(f"verify --jobs 1: {sorted(verify)[len(verify) // 2]:.0f} replays/s (median of"
          f" {len(verify)}, {min(verify):.0f}–{max(verify):.0f})")
    for name, _, _ in modes:
        xs = sorted(rates[name])
        print(f"{name:45} overhead {(1 - xs[len(xs) // 2]) * 100:5.1f} % (median; rounds "
              + ", ".join(f"{(1 - x) * 100:.1f}" for x in rates[name])
              + f" %); verified inline in the last round: {inlined[name]}")
    if counts:
        print(f"instructions per replay (cachegrind, {3 * COUNT} less {COUNT} replays; verifyd's"
              f" threads, not the kernel): verify {counts['verify'] / 1e6:.3f} M")
        for name, _, _ in modes:
            print(f"{name:45} {counts[name] / 1e6:.3f} M, {counts[name] / counts['verify']:.3f}x verify's")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    t = time.time()
    main()
    print(f"took {time.time() - t:.0f} s")
