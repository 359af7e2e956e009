#!/usr/bin/env bash
# Measures the verification service against `tickwise verify` on the same
# replay files, in one run, and prints the figures side by side:
#   * replays/s and ticks/s for 10-minute island (60 Hz, 36 000 ticks) and
#     horde-300 (30 Hz, 18 000 ticks) replays: `tickwise verify --jobs 2`
#     vs `verifyd` (memory queue) fed by `tickwise loadtest`, one replay
#     per request and in batches (`--batch`, BATCH_ISLAND / BATCH_HORDE),
#     with the CPU per replay of every process next to the wall rates,
#     and the HTTP floor: uploads as large as the island replays that
#     verifyd refuses at their first bytes, so what is left is the exchange
#     (verifyd's CPU and the load generator's during the run, per request);
#     and verifyd's own CPU during each run, split into its verification
#     threads and its executor (receive, content id, envelope check), next
#     to verify's: the service's cost apart from the load generator's;
#     and the machine's idle share during each run (/proc/stat), which
#     tells cores with nothing to do from cores busy with the exchange;
#   * p50/p99 verdict latency at half the saturating rate;
#   * throughput with 1 and 2 Redis workers, both upload modes;
#   * time for a SIGKILLed worker's job to be finished by another (default
#     5 s claim timeout).
# Everything runs on 127.0.0.1 with a private redis-server in a temp dir.
#
#   bash scripts/bench-service.sh            # ~3 minutes on 2 cores
#   ISLAND=4000 HORDE=40 bash scripts/bench-service.sh
#
# BASE=path/to/an/earlier/tickwise adds that build's verify, verifyd and
# load generator to the throughput part, alternating with this build's in
# every round (before/after in one run); build it from another checkout
# with a target directory of its own, e.g.
#   (cd /path/to/main && CARGO_TARGET_DIR=$PWD/target/base-build \
#      cargo build --release -p tickwise-cli)
# PARTS=throughput,latency,redis,kill and SIMS=island,horde pick what runs.
# CONCURRENCY (default 8) is the uploads in flight one per request, and
# BATCH_CONCURRENCY (default 8) the batches in flight; with 8 uploads one
# per request about 5 % of 2 cores sit idle, with 32 none (docs/benchmarks.md,
# round 22). VERIFYD_FLAGS adds flags to this build's embedded-queue verifyd
# (not BASE's): with BASE a copy of the same binary, an A/B of the flags,
# e.g. VERIFYD_FLAGS="--inline-work 4000000".
#
# Clients elsewhere, as far as two cores allow: scripts/bench_service_pinned.py
# puts verifyd and `verify --jobs 1` on core 0 and the load generator on
# core 1 (loopback receive steered by flow when run as root, so each side
# receives on its own core; STEER=server sends it all to core 0), with and
# without --inline-work, each load test against the verify runs beside it:
#   python3 scripts/bench_service_pinned.py   # ~1 minute; ROUNDS, ISLAND
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash .ci/setup-redis.sh >/dev/null
cargo build --release --quiet -p tickwise-cli
exec python3 scripts/bench_service.py "$@"
