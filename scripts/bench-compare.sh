#!/usr/bin/env bash
# The horde and island workloads on an earlier build and on this tree, run in
# turn, with ratios and instruction counts (docs/benchmarks.md).
#
#   bash scripts/bench-compare.sh [--quick] [COMMIT]
#
# COMMIT (default $BENCH_BASE, else the previous release point, round 1:
# 7d19176) is checked out in a temporary git worktree outside this tree
# (removed at the end) and built in a target directory of its own (cargo
# names a workspace crate's artifacts by its path inside the workspace, so
# two trees must never share one), seeded with a copy of this tree's release
# dependencies (scripts/seed-target.sh); its binary is kept as
# target/bench-compare/tickwise-<sha>, so a second run builds only this tree.
# Then scripts/bench_compare.py runs both binaries alternately:
# horde 10k / 100k / 1M enemies on one thread (and 100k / 1M on two threads
# against the base's one), an island recording, an island verify of a
# random-input replay, and cachegrind's instruction counts (and simulated
# cache misses) per tick.
#
# --quick: the short version scripts/test-all.sh runs, under about two
# minutes: 10k and 100k enemies, 30 ticks, 3 runs each. It is a REPORT, not
# a gate: it never fails the run (a base that cannot be built, e.g. in a
# shallow clone, is reported and skipped), because timings on a shared or
# slow machine say nothing about correctness.
#
# Both builds get the same code generation: the base is built with this
# tree's .cargo/config.toml (x86_64: target-cpu=x86-64-v2), so the ratios
# measure code, not compiler flags. BENCH_BASE_CPU=x86-64 (any target-cpu)
# builds the base for that CPU level instead, e.g. round 1 as it shipped
# (it had no config: plain x86-64). The kept binary's name says which.
#
# Variables: BENCH_BASE (the default commit), BENCH_SIZES (enemy counts,
# comma-separated), BENCH_TICKS, BENCH_RUNS, BENCH_COUNT_SIZES (cachegrind's
# enemy counts; empty: none), BENCH_VERIFY_TICKS (the timed island verify;
# 0: none), BENCH_VERIFY_COUNT_TICKS (the island verify cachegrind counts,
# default 1000000; 0: none).
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
  island=10000000 count_sizes="${BENCH_COUNT_SIZES-10000}"
  verify="${BENCH_VERIFY_TICKS:-2000000}"
  echo "bench-compare --quick: a REPORT, not a test; it never fails the run."
else
  sizes="${BENCH_SIZES:-10000,100000,1000000}" ticks="${BENCH_TICKS:-100}" runs="${BENCH_RUNS:-5}"
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
sha=$(git rev-parse --verify --quiet "$base_ref^{commit}") ||
  give_up "cannot resolve $base_ref (a shallow clone? fetch it first)"
short=${sha:0:12}
# How the base is compiled (see the top): this tree's config, or a CPU level.
config="$root/.cargo/config.toml"
if [ -n "${BENCH_BASE_CPU:-}" ]; then
  flags_tag="cpu-$BENCH_BASE_CPU"
  base_build=(env "RUSTFLAGS=-C target-cpu=$BENCH_BASE_CPU" cargo)
elif [ -f "$config" ]; then
  flags_tag="config-$(sha256sum "$config" | cut -c1-8)"
  base_build=(cargo --config "$config")
else
  flags_tag=plain
  base_build=(cargo)
fi
base_bin="$work/tickwise-$short-$flags_tag"
# The base's worktree lies outside this tree: cargo reads every
# .cargo/config.toml from the working directory up, so a worktree inside
# target/ would get this tree's rustflags twice (discovered, and --config),
# which changes every artifact's hash and defeats the seeding below. Older
# runs kept it in target/bench-compare/src-*: those are removed.
for old in "$work"/src-*; do
  [ -d "$old" ] || continue
  git worktree remove --force "$old" 2>/dev/null || rm -rf "$old"
done
git worktree prune || true
base_src=$(mktemp -d "${TMPDIR:-/tmp}/tickwise-bench-base-XXXXXX")
case "$base_src" in "$root"/*) give_up "the temporary directory $base_src is inside $root" ;; esac
trap 'git worktree remove --force "$base_src" 2>/dev/null || rm -rf "$base_src"; git worktree prune 2>/dev/null || true' EXIT
git worktree add --detach "$base_src" "$sha" >/dev/null ||
  give_up "cannot make a worktree of $short"
base_target="$work/target-$short"
if [ ! -x "$base_bin" ]; then
  # Dependencies from crates.io are the same artifacts in both trees; the
  # workspace's own crates are rebuilt from the base's sources.
  bash scripts/seed-target.sh "$target" "$base_target"
  echo "building $short (the base, $flags_tag) in $base_src ..."
  (cd "$base_src" && "${base_build[@]}" build --release --locked -p tickwise-cli --target-dir "$base_target") ||
    give_up "the base $short does not build"
  cp "$base_target/release/tickwise" "$base_bin"
fi
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
  --sizes "$sizes" --ticks "$ticks" --runs "$runs" \
  --island-ticks "$island" --count-sizes "$count_sizes" \
  --verify-ticks "$verify" --verify-count-ticks "${BENCH_VERIFY_COUNT_TICKS:-1000000}" ||
  give_up "the comparison failed"
