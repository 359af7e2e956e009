"""The measurements of scripts/bench-service.sh (see there)."""

import json
import os
import resource
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

BIN = os.path.abspath("target/release/tickwise")
# An earlier build to compare with in the same run (its verifyd and its
# load generator, alternating with this build's), e.g. main's binary built
# into target/base/: BASE=target/base/tickwise.
BASE = os.path.abspath(os.environ["BASE"]) if os.environ.get("BASE") else None
# Which parts to run: throughput, latency, redis, kill (all by default).
PARTS = set(os.environ.get("PARTS", "throughput,latency,redis,kill").split(","))
# Which replays the throughput part measures: island, horde.
SIMS = set(os.environ.get("SIMS", "island,horde").split(","))
ISLAND = int(os.environ.get("ISLAND", "2000"))
HORDE = int(os.environ.get("HORDE", "20"))
JOBS = os.environ.get("JOBS", "2")
CONC = os.environ.get("CONCURRENCY", "8")
# Batched mode: replays per request (island / horde) and requests in flight.
BATCH_ISLAND = int(os.environ.get("BATCH_ISLAND", "8"))
BATCH_HORDE = int(os.environ.get("BATCH_HORDE", "2"))
BATCH_CONC = os.environ.get("BATCH_CONCURRENCY", "8")
ROUNDS = int(os.environ.get("ROUNDS", "3"))
# Extra flags for this build's embedded-queue verifyd, not BASE's (e.g. `--inline-work
# 4000000`): with BASE a copy of the same binary, an A/B of the flags.
VERIFYD_FLAGS = os.environ.get("VERIFYD_FLAGS", "").split()


def med(xs, k):
    v = sorted(x[k] for x in xs)
    return v[len(v) // 2]


def best(xs, k):
    return max(x[k] for x in xs)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record(args):
    sim, ticks, seed, path = args
    subprocess.run([BIN, "record", "--sim", sim, "--ticks", str(ticks),
                    "--inputs", f"random:{seed}", "--out", path],
                   check=True, stdout=subprocess.DEVNULL)


def make(dirpath, sim, ticks, n, base):
    os.makedirs(dirpath, exist_ok=True)
    jobs = [(sim, ticks, base + i, os.path.join(dirpath, f"{sim}-{i:05}.twr")) for i in range(n)]
    with ThreadPoolExecutor(2) as ex:
        list(ex.map(record, jobs))


def child_cpu():
    """CPU seconds (user + system) of every child process waited for so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_per_replay(run, n):
    """Runs `run()` (which starts, uses and stops its processes) and adds the
    CPU milliseconds per replay that its processes used, all of them: the
    load generator and verifyd as well as the verification. Wall-clock rates
    on a shared machine swing with other people's builds; CPU per replay
    barely does, so the two ways are also compared by it."""
    before = child_cpu()
    out = run()
    out["cpu_ms"] = (child_cpu() - before) * 1e3 / n
    return out


def threads_cpu(pid):
    """CPU seconds of `pid`'s live threads: (verification threads, the
    rest). The verification threads are named `tickwise-verify-*`; the
    rest are the HTTP executor's (`tickwise-io`), which receive each
    upload, hash it for its content id and check its envelope and header
    before it is queued, and the main thread."""
    tick = os.sysconf("SC_CLK_TCK")
    verify = other = 0.0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        secs = (int(fields[11]) + int(fields[12])) / tick
        if comm.startswith("tickwise-verify"):
            verify += secs
        else:
            other += secs
    return verify, other


def cpu_ticks():
    """(idle, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[3] + v[4], sum(v)


class IdleSampler:
    """Samples the machine's idle time every 20 ms while a load test runs,
    so the idle share of its run window (from the first upload to the last
    verdict, which excludes the load generator reading its files) can be
    told apart from CPU spent: a core with nothing to do lowers the
    throughput as much as a core busy with the exchange does."""

    def __init__(self):
        self.samples = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.is_set():
            self.samples.append((time.monotonic(), *cpu_ticks()))
            self.done.wait(0.02)

    def idle_share(self, run_secs):
        """The idle share of the middle 80 % of the last `run_secs` seconds."""
        end = time.monotonic()
        self.done.set()
        self.thread.join()
        a, b = end - run_secs * 0.9, end - run_secs * 0.1
        w = [s for s in self.samples if a <= s[0] <= b]
        if len(w) < 2 or w[-1][2] == w[0][2]:
            return float("nan")
        return (w[-1][1] - w[0][1]) / (w[-1][2] - w[0][2])


def cli_verify(d, bin=BIN, jobs=JOBS, prefix=()):
    """`verify --jobs N` over `d`, run after `prefix` (e.g. a `taskset`)."""
    out = subprocess.run([*prefix, bin, "verify", "--quiet", "--jobs", jobs, d],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"verified (\d+) files, (\d+) ticks in ([\d.]+) s", out)
    files, ticks, secs = int(m[1]), int(m[2]), float(m[3])
    return {"replays_s": files / secs, "ticks_s": ticks / secs, "secs": secs}


class Proc:
    def __init__(self, args, bin=BIN):
        self.p = subprocess.Popen([bin] + args, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.line = self.p.stdout.readline()

    def url(self):
        return "http://" + re.search(r"http://([\d.:]+)/", self.line)[1]

    def stop(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def loadtest(url, d=None, generate=None, rate=None, seconds=120, conc=CONC, extra=(), bin=BIN,
             prefix=()):
    args = [*prefix, bin, "loadtest", "--url", url, "--concurrency", str(conc),
            "--seconds", str(seconds), "--json", *extra]
    args += ["--replays", d] if d else ["--generate", str(generate)]
    if rate:
        args += ["--rate", str(int(rate))]
    out = subprocess.run(args, capture_output=True, text=True)
    rep = json.loads(out.stdout.strip().splitlines()[-1])
    return {"replays_s": rep["replaysPerSec"], "ticks_s": rep["ticksPerSec"],
            "p50": rep["p50Ms"], "p99": rep["p99Ms"], "errors": rep["errors"],
            "ok": rep["ok"], "secs": rep["seconds"],
            # The generator's own CPU during the run (null from an older
            # build that does not report it).
            "gen_run_s": rep.get("generatorCpuSeconds")}


def verifyd(queue="memory", bin=BIN):
    flags = VERIFYD_FLAGS if bin == BIN and queue == "memory" else []
    return Proc(["verifyd", "--bind", "127.0.0.1:0", "--queue", queue,
                 "--jobs", JOBS, "--capacity", "100000", *flags], bin)


class Redis:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="tickwise-bench-redis-")
        self.port = free_port()
        self.p = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                                   "--dir", self.dir, "--save", "", "--appendonly", "yes",
                                   "--daemonize", "no"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while self.cli("PING").strip() != "PONG":
            time.sleep(0.05)
        self.url = f"redis://127.0.0.1:{self.port}"

    def cli(self, *args):
        return subprocess.run(["redis-cli", "-p", str(self.port), *args],
                              capture_output=True, text=True).stdout

    def stop(self):
        self.p.terminate()
        self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    tmp = tempfile.mkdtemp(prefix="tickwise-bench-")
    island, horde = os.path.join(tmp, "island"), os.path.join(tmp, "horde")
    t = time.time()
    make(island, "island", 36_000, ISLAND, 1)
    make(horde, "horde", 18_000, HORDE, 1)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    print(f"recorded {ISLAND} island x 36000 ticks and {HORDE} horde-300 x 18000 ticks "
          f"in {time.time() - t:.1f} s ({tmp})", flush=True)
    # The machine is shared: alternate the two ways (and the two builds,
    # with BASE) ROUNDS times and compare medians (and bests), so a burst
    # of someone else's load does not land on one side only.
    builds = [("this build", BIN)] + ([("base build", BASE)] if BASE else [])
    rows = []
    sims = [(name, d, batch) for name, d, batch, sim in
            [("island 10 min", island, BATCH_ISLAND, "island"),
             ("horde-300 10 min", horde, BATCH_HORDE, "horde")] if sim in SIMS]
    # The HTTP floor: uploads as large as the island replays that verifyd
    # refuses at their first bytes (no checksum, no simulation), one per
    # request. What is left is the exchange itself (HTTP, loopback TCP, the
    # content id, the verdict record) and the load generator's side of it.
    junk = os.path.join(tmp, "junk")
    floors = []
    if "throughput" in PARTS and "island" in SIMS:
        os.makedirs(junk)
        size = os.path.getsize(os.path.join(island, sorted(os.listdir(island))[0]))
        for i in range(ISLAND):
            with open(os.path.join(junk, f"junk-{i:05}.twr"), "wb") as f:
                f.write(b"NOTATWR!" + os.urandom(size - 8))
    for name, d, batch in sims if "throughput" in PARTS else []:
        runs = {label: ([], [], []) for label, _ in builds}
        for _ in range(ROUNDS):
            for label, bin in builds:
                clis, https, batched = runs[label]
                n = len(os.listdir(d))
                clis.append(cpu_per_replay(lambda: cli_verify(d, bin), n))

                def http_run(extra, conc, src=d):
                    v = verifyd(bin=bin)
                    before = child_cpu()
                    threads = threads_cpu(v.p.pid)
                    idle = IdleSampler()
                    out = loadtest(v.url(), src, conc=conc, extra=extra, bin=bin)
                    out["idle"] = idle.idle_share(out["secs"])
                    # verifyd's own CPU during the run (not its start), by
                    # kind of thread.
                    (v0, o0), (v1, o1) = threads, threads_cpu(v.p.pid)
                    out["verify_threads_ms"] = (v1 - v0) * 1e3 / n
                    out["io_threads_ms"] = (o1 - o0) * 1e3 / n
                    # The load generator alone (verifyd is still running, so
                    # not yet counted): what the clients would spend elsewhere.
                    out["gen_ms"] = (child_cpu() - before) * 1e3 / n
                    v.stop()
                    return out
                https.append(cpu_per_replay(lambda: http_run([], CONC), n))
                if label == "this build" and name.startswith("island"):
                    floors.append(cpu_per_replay(lambda: http_run([], CONC, junk), n))
                batched.append(cpu_per_replay(
                    lambda: http_run(["--batch", str(batch)], BATCH_CONC), n))
        for label, _ in builds:
            rows.append((name, label, batch, *runs[label]))

    if rows:
        print(f"\n{ROUNDS} alternating rounds each; median (best) of the rounds; "
              f"overhead = 1 - service/verify")
        print(f"{'replays':17} {'build':10} {'verify --jobs ' + JOBS:>30}"
              f" {'verifyd, one replay per request':>40} {'verifyd, batches':>40}")
    for name, label, batch, clis, https, batched in rows:
        c, h, b = med(clis, "replays_s"), med(https, "replays_s"), med(batched, "replays_s")
        ct, ht, bt = med(clis, "ticks_s"), med(https, "ticks_s"), med(batched, "ticks_s")
        print(f"{name:17} {label:10} {c:8.1f} ({best(clis, 'replays_s'):.1f}) /s {ct / 1e6:5.1f} Mt/s"
              f" {h:8.1f} ({best(https, 'replays_s'):.1f}) /s {ht / 1e6:5.1f} Mt/s {(1 - h / c) * 100:5.1f} %"
              f" {b:8.1f} ({best(batched, 'replays_s'):.1f}) /s {bt / 1e6:5.1f} Mt/s {(1 - b / c) * 100:5.1f} %"
              f"  (--batch {batch}; errors {sum(x['errors'] for x in https + batched)})")
        for mode, xs in [("one per request", https), ("batches", batched)]:
            ratios = sorted(x["replays_s"] / y["replays_s"] for x, y in zip(xs, clis))
            print(f"{'':28} {mode}: service/verify per round " + ", ".join(f"{r:.3f}" for r in ratios)
                  + f"; CPU per replay: verify {med(clis, 'cpu_ms'):.3f} ms,"
                  f" verifyd + loadtest {med(xs, 'cpu_ms'):.3f} ms (x{med(xs, 'cpu_ms') / med(clis, 'cpu_ms'):.2f}),"
                  f" verifyd alone {med(xs, 'cpu_ms') - med(xs, 'gen_ms'):.3f} ms"
                  f" (x{(med(xs, 'cpu_ms') - med(xs, 'gen_ms')) / med(clis, 'cpu_ms'):.2f})")
            run = [x["verify_threads_ms"] + x["io_threads_ms"] for x in xs]
            own = sorted(r / y["cpu_ms"] for r, y in zip(run, clis))
            print(f"{'':28} {mode}: verifyd's CPU during the run, per replay: verification threads"
                  f" {med(xs, 'verify_threads_ms') * 1e3:.0f} us, executor {med(xs, 'io_threads_ms') * 1e3:.0f} us"
                  f" (receive, content id, envelope and header check, answer); verifyd/verify per round "
                  + ", ".join(f"{r:.3f}" for r in own))
            print(f"{'':28} {mode}: the machine idle during the run (jiffies of /proc/stat, middle 80 %)"
                  f" {med(xs, 'idle') * 100:.1f} % (rounds "
                  + ", ".join(f"{x['idle'] * 100:.1f}" for x in xs) + " %)")
    if floors:
        n = ISLAND
        island_cli = next(r[3] for r in rows if r[0].startswith("island") and r[1] == "this build")
        server = med(floors, "cpu_ms") - med(floors, "gen_ms")
        gen = sorted(x["gen_run_s"] for x in floors if x["gen_run_s"] is not None)
        gen_ms = gen[len(gen) // 2] * 1e3 / n if gen else float("nan")
        verify = med(island_cli, "cpu_ms")
        print(f"{'':28} HTTP floor, one per request (uploads of the same size refused at their first"
              f" bytes, median of {len(floors)}): verifyd {server * 1e3:.1f} us, load generator during"
              f" the run {gen_ms * 1e3:.1f} us per request; with verify's {verify * 1e3:.0f} us per"
              f" replay that is {(server + gen_ms) / (verify + server + gen_ms) * 100:.1f} % overhead"
              f" before any checksum or tick ({server / (verify + server) * 100:.1f} % for verifyd alone)")
    sat = {name: (med(h, "replays_s"), med(b, "replays_s"), batch)
           for name, label, batch, _, h, b in rows if label == "this build"}

    # Latency at half the saturating rate, fresh replays, both modes.
    print()
    for name, sim, n_secs, conc in [("island 10 min", "island", 10, 64),
                                    ("horde-300 10 min", "horde", 20, 16)]:
        if "latency" not in PARTS or name not in sat:
            continue
        one, many, batch = sat[name]
        for mode, s_rate, extra, c in [("one per request", one, [], conc),
                                       (f"batches of {batch}", many, ["--batch", str(batch)], conc)]:
            rate = max(1, s_rate / 2)
            n = max(4, int(rate * n_secs))
            v = verifyd()
            half = loadtest(v.url(), generate=n, rate=rate, seconds=120, conc=c,
                            extra=["--sim", sim, *extra])
            v.stop()
            print(f"verdict latency, {name}, {mode}, {rate:.1f} replays/s (half of {s_rate:.1f}/s),"
                  f" {n} replays: p50 {half['p50']:.1f} ms, p99 {half['p99']:.1f} ms,"
                  f" errors {half['errors']}", flush=True)

    if PARTS & {"redis", "kill"}:
        # Redis: 1 vs 2 workers (one verification thread each).
        r = Redis()
        front = verifyd(r.url)
        if "redis" in PARTS:
            print(f"\nRedis workers (1 verification thread each), same files, Redis flushed between runs,"
                  f" median (best) of {ROUNDS}:")
            for name, d, batch in [("horde-300 10 min", horde, BATCH_HORDE),
                                   ("island 10 min", island, BATCH_ISLAND)]:
                for mode, extra, conc in [("one per request", [], CONC),
                                          (f"batches of {batch}", ["--batch", str(batch)], BATCH_CONC)]:
                    res = {1: [], 2: []}
                    for _ in range(ROUNDS):
                        for k in (1, 2):
                            r.cli("FLUSHALL")
                            ws = [Proc(["worker", "--redis", r.url, "--jobs", "1"]) for _ in range(k)]
                            time.sleep(0.3)
                            res[k].append(loadtest(front.url(), d, conc=conc, extra=extra))
                            for w in ws:
                                w.stop()
                    one, two = med(res[1], "replays_s"), med(res[2], "replays_s")
                    print(f"  {name:17} {mode:18} 1 worker {one:8.1f} ({best(res[1], 'replays_s'):.1f}) replays/s,"
                          f" 2 workers {two:8.1f} ({best(res[2], 'replays_s'):.1f}) replays/s: x{two / one:.2f}"
                          f"  errors {sum(x['errors'] for x in res[1] + res[2])}", flush=True)

        if "kill" in PARTS:
            # A killed worker's job, finished by another (default 5 s claim timeout).
            r.cli("FLUSHALL")
            ws = [Proc(["worker", "--redis", r.url, "--jobs", "1"]) for _ in range(2)]
            time.sleep(0.3)
            job = open(os.path.join(horde, os.listdir(horde)[0]), "rb").read()
            req = urllib.request.Request(front.url() + "/v1/replays", data=job, method="POST")
            jid = json.loads(urllib.request.urlopen(req).read())["id"]
            pids = {w.p.pid: w for w in ws}
            victim = None
            while victim is None:
                pend = r.cli("XPENDING", "tickwise:jobs", "tickwise:workers", "-", "+", "10")
                for pid, w in pids.items():
                    if f"worker-{pid}-" in pend:
                        victim = w
                time.sleep(0.005)
            victim.stop(signal.SIGKILL)
            killed = time.time()
            while True:
                rec = json.loads(urllib.request.urlopen(f"{front.url()}/v1/replays/{jid}").read())
                if rec["status"] not in ("queued", "running"):
                    break
                time.sleep(0.02)
            took = time.time() - killed
            print(f"\nkilled worker's job finished by another {took:.2f} s after SIGKILL "
                  f"(status {rec['status']}, attempts {rec.get('attempts')}, claim timeout 5 s)")
            for w in ws:
                w.stop()
        front.stop()
        r.stop()
    print(f"load average at end: {os.getloadavg()}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
