#!/usr/bin/env bash
# Fuzzes every parser tickwise has (fuzz/README.md lists the targets and
# what each asserts), each for a bounded time, and prints exec counts.
#
#   bash fuzz/run.sh [SECONDS] [TARGET...]   (default: 60 s, every target)
#
#   bash fuzz/run.sh 15       CI's short run (scripts/test-all.sh), ~2 min + build
#   bash fuzz/run.sh 3600     the long run: an hour per target (>= 10 M execs each)
#
# Targets run FUZZ_JOBS at a time (default: one per core), each on a core of
# its own for SECONDS, so the whole run takes SECONDS x targets / FUZZ_JOBS.
#
# Installs what it needs: cargo-fuzz (pinned below) from crates.io into
# $TICKWISE_TOOLS/bin (default ~/.cache/tickwise-tools), once; later runs
# reuse it. libFuzzer comes with the libfuzzer-sys crate (built by its build
# script with the machine's C++ compiler).
#
# cargo-fuzz passes nightly-only rustc flags (sanitizer coverage);
# RUSTC_BOOTSTRAP=1 lets the stable compiler accept them. The address
# sanitizer is off: the crates forbid unsafe code, so coverage guidance is
# what matters. Debug assertions are on (`-a`): an integer overflow panics
# and is a finding, as it would be in a test build.
#
# The corpus grows in fuzz/corpus/<target>/ (git-ignored), starting from
# fuzz/seeds/<target>/ (checked in). A finding is written to
# fuzz/artifacts/<target>/, makes this script exit 1 after all targets ran,
# and belongs in fuzz/regressions/<target>/ once fixed (see fuzz/README.md).
# The per-target exec counts go to fuzz/artifacts/summary.txt as well.
#
# Environment:
#   TICKWISE_TOOLS   where cargo-fuzz is cached (default ~/.cache/tickwise-tools)
#   FUZZ_RSS_MB      libFuzzer's memory limit per target (default 2048)
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2
ALL_TARGETS=(replay_reader replay_header script_parser island_loop_config
             island_lifecycle_config horde_config inputs_file net_datagram
             batch_upload room_message rejoin_snapshot duel_snapshot duel_config)

secs="${1:-60}"
shift || true
case "$secs" in '' | *[!0-9]*) echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2 ;; esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")

cd "$(dirname "${BASH_SOURCE[0]}")"
TOOLS="${TICKWISE_TOOLS:-$HOME/.cache/tickwise-tools}"
log() { printf '[fuzz] %s\n' "$*" >&2; }

# ------------------------------------------------------------- cargo-fuzz
CF="$TOOLS/bin/cargo-fuzz"
cf_ok() { [ -x "$CF" ] && "$CF" --version 2>/dev/null | grep -qx "cargo-fuzz $CARGO_FUZZ_VERSION"; }
if cf_ok; then
  log "cargo-fuzz: cached $CF ($CARGO_FUZZ_VERSION)"
else
  log "cargo-fuzz: cargo install cargo-fuzz =$CARGO_FUZZ_VERSION into $TOOLS (once, ~1-3 min)"
  started=$SECONDS
  mkdir -p "$TOOLS"
  ( cd "$TOOLS" &&
    env -u RUSTC -u RUSTC_BOOTSTRAP -u RUSTFLAGS -u CARGO_BUILD_TARGET \
      cargo install --quiet --locked --force cargo-fuzz --version "=$CARGO_FUZZ_VERSION" \
        --root "$TOOLS" ) >&2
  cf_ok || { log "ERROR: cargo-fuzz $CARGO_FUZZ_VERSION did not install"; exit 1; }
  log "cargo-fuzz: installed in $((SECONDS - started)) s"
fi
export PATH="$TOOLS/bin:$PATH"

# ------------------------------------------------------------- build
export RUSTC_BOOTSTRAP=1
BUILD=(--sanitizer none --debug-assertions)
started=$SECONDS
log "building ${#targets[@]} targets (release, coverage, debug assertions)"
cargo fuzz build "${BUILD[@]}" >&2
log "built in $((SECONDS - started)) s"

# ------------------------------------------------------------- run
max_len() {
  case "$1" in
    replay_*) echo 8192 ;;   # seeds are under 2 KB; the limits are tested with small values
    *) echo 4096 ;;
  esac
}
seed_dirs() {
  echo "seeds/$1"
  # The header reader reads the same files as the full reader.
  [ "$1" = replay_header ] && echo "seeds/replay_reader"
  return 0
}

mkdir -p artifacts
summary=artifacts/summary.txt
: > "$summary"

# One target's run: its log in artifacts/<target>/last-run.log, its summary
# line in .../result and its exit code in .../rc.
fuzz_one() {
  local target=$1 out="artifacts/$1/last-run.log" rc=0 execs rate cov corpus
  cargo fuzz run "${BUILD[@]}" "$target" "corpus/$target" -- \
    -max_total_time="$secs" -max_len="$(max_len "$target")" \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -timeout=10 -print_final_stats=1 \
    > "$out" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out" | tail -n 1)
  cov=$(grep -Eo 'cov: [0-9]+' "$out" | tail -n 1 | grep -Eo '[0-9]+' || true)
  corpus=$(find "corpus/$target" -type f | wc -l)
  printf '%-24s %12s execs %9s execs/s  cov %6s  corpus %5s  exit %s\n' \
    "$target" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$corpus" "$rc" > "artifacts/$target/result"
  echo "$rc" > "artifacts/$target/rc"
}

# FUZZ_JOBS targets at once (see the top).
jobs_max="${FUZZ_JOBS:-$(nproc)}"
case "$jobs_max" in '' | *[!0-9]* | 0) echo "FUZZ_JOBS must be a positive number, not '$jobs_max'" >&2; exit 2 ;; esac
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target" "artifacts/$target"
  rm -f "artifacts/$target/result" "artifacts/$target/rc"
  for d in $(seed_dirs "$target"); do
    cp -n "$d"/* "corpus/$target/" 2>/dev/null || true
  done
  # A target fuzzed from nothing (its seeds moved or lost) finds far less in
  # the same time: an empty corpus is an error, not a quiet weak run.
  if [ -z "$(find "corpus/$target" -type f -print -quit)" ]; then
    log "ERROR: $target: empty corpus (no seeds in $(seed_dirs "$target" | tr '\n' ' '))"
    wait
    exit 1
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  log "== $target: ${secs} s"
  fuzz_one "$target" &
done
wait
failed=()
for target in "${targets[@]}"; do
  if [ ! -f "artifacts/$target/rc" ]; then
    echo "$target: no result (its run did not finish)" | tee -a "$summary"
    failed+=("$target")
    continue
  fi
  tee -a "$summary" < "artifacts/$target/result"
  if [ "$(cat "artifacts/$target/rc")" -ne 0 ]; then
    failed+=("$target")
    tail -n 40 "artifacts/$target/last-run.log" >&2
  fi
done

echo "--- fuzz summary (${secs} s per target) ---"
cat "$summary"
if [ ${#failed[@]} -gt 0 ]; then
  log "FINDINGS in: ${failed[*]} (inputs in fuzz/artifacts/<target>/; logs in last-run.log)"
  exit 1
fi
log "no findings"
