#!/usr/bin/env bash
# The horde and island workloads on an earlier build and on this tree, run in
# turn, with ratios and instruction counts (docs/benchmarks.md).
#
#   bash scripts/bench-compare.sh [--quick] [COMMIT]
#
# COMMIT (default $BENCH_BASE, else the previous release point, round 1:
# 7d19176) is built by scripts/base_build.py: checked out in a temporary git
# worktree outside this tree (removed at the end), built in a target
# directory of its own seeded with this tree's release dependencies, its
# binary kept as target/base-builds/tickwise-<sha>-<flags>, so a second run
# builds only this tree. Then scripts/bench_compare.py runs both binaries
# alternately:
# horde 10k / 100k / 1M enemies on one thread (and 100k / 1M on two threads
# against the base's one), an island recording, an island verify of a
# random-input replay, and cachegrind's instruction counts (and simulated
# cache misses) per tick.
#
# --quick: the short version scripts/test-all.sh runs, under about two
# minutes: 10k and 100k enemies, 30 ticks, 3 runs each (10 at 10k). It is
# a REPORT, not a gate: it never fails the run (a base that cannot be
# built, e.g. in a shallow clone, is reported and skipped), because
# timings on a shared or slow machine say nothing about correctness.
#
# Both builds get the same code generation: the base is built with this
# tree's .cargo/config.toml (x86_64: target-cpu=x86-64-v2), so the ratios
# measure code, not compiler flags. BENCH_BASE_CPU=x86-64 (any target-cpu)
# builds the base for that CPU level instead, e.g. round 1 as it shipped
# (it had no config: plain x86-64). The kept binary's name says which.
#
# Variables: BENCH_BASE (the default commit), BENCH_SIZES (enemy counts,
# comma-separated), BENCH_TICKS, BENCH_RUNS, BENCH_MIN_ENEMY_TICKS (more
# pairs for a small horde, until each build has done this many enemies x
# ticks: default 50000000, i.e. 50 pairs at 10k, 3000000 with --quick; 0:
# BENCH_RUNS only), BENCH_COUNT_SIZES (cachegrind's enemy counts; empty:
# none), BENCH_VERIFY_TICKS (the timed island verify; 0: none),
# BENCH_VERIFY_COUNT_TICKS (the island verify cachegrind counts, default
# 1000000; 0: none).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# The previous release point (round 1): the build the regression report of
# issue 21 measured against. Change it when a new release point is cut.
ROUND1=7d19176
quick=
if [ "${1:-}" = --quick ]; then
  quick=1
  shift
fi
base_ref="${1:-${BENCH_BASE:-$ROUND1}}"
if [ -n "$quick" ]; then
  sizes="${BENCH_SIZES:-10000,100000}" ticks="${BENCH_TICKS:-30}" runs="${BENCH_RUNS:-3}"
  min_work="${BENCH_MIN_ENEMY_TICKS:-3000000}"
  island=10000000 count_sizes="${BENCH_COUNT_SIZES-10000}"
  verify="${BENCH_VERIFY_TICKS:-2000000}"
  echo "bench-compare --quick: a REPORT, not a test; it never fails the run."
else
  sizes="${BENCH_SIZES:-10000,100000,1000000}" ticks="${BENCH_TICKS:-100}" runs="${BENCH_RUNS:-5}"
  min_work="${BENCH_MIN_ENEMY_TICKS:-50000000}"
  island=30000000 count_sizes="${BENCH_COUNT_SIZES-10000,100000}"
  verify="${BENCH_VERIFY_TICKS:-10000000}"
fi

# In quick mode every failure below is reported and the script exits 0,
# the unforeseen ones too (the ERR trap).
if [ -n "$quick" ]; then
  trap 'echo "bench-compare --quick: stopped on an error (a report only, not a failure)."; exit 0' ERR
fi
give_up() {
  echo "bench-compare: $*" >&2
  if [ -n "$quick" ]; then
    echo "bench-compare --quick: no comparison this time (report only, not a failure)."
    exit 0
  fi
  exit 1
}

target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
work="$target/bench-compare"
mkdir -p "$work"
# How the base is compiled (see the top): this tree's config, or a CPU level.
flags=this-config
[ -n "${BENCH_BASE_CPU:-}" ] && flags="cpu=$BENCH_BASE_CPU"
# The base's worktree and build (scripts/base_build.py, shared with
# scripts/bench_goals.py); its binary is kept in target/base-builds/.
base=$(python3 scripts/base_build.py --flags "$flags" --keep-worktree "$base_ref") ||
  give_up "cannot build the base $base_ref"
base_bin=${base%%$'\t'*}
base_src=${base#*$'\t'}
trap 'git worktree remove --force "$base_src" 2>/dev/null || rm -rf "$base_src"; git worktree prune 2>/dev/null || true' EXIT
sha=$(git rev-parse --verify "$base_ref^{commit}")
short=${sha:0:12}
flags_tag=${base_bin##*/tickwise-$short-}
echo "building this tree ..."
cargo build --release --locked -p tickwise-cli || give_up "this tree does not build"
cur_bin="$work/tickwise-current"
cp "$target/release/tickwise" "$cur_bin"

echo "base: $short, $flags_tag ($(git log -1 --format=%s "$sha" | cut -c1-60))"
dirty=$(git diff --quiet HEAD || echo ' + uncommitted changes')
echo "current: $(git rev-parse --short=12 HEAD)$dirty"
python3 scripts/bench_compare.py \
  --base "$base_bin" --base-dir "$base_src" \
  --current "$cur_bin" --current-dir "$root" \
  --sizes "$sizes" --ticks "$ticks" --min-enemy-ticks "$min_work" --runs "$runs" \
  --island-ticks "$island" --count-sizes "$count_sizes" \
  --verify-ticks "$verify" --verify-count-ticks "${BENCH_VERIFY_COUNT_TICKS:-1000000}" ||
  give_up "the comparison failed"
