#!/usr/bin/env bash
# Every test tickwise has, in the order CI runs them. Safe to run on a fresh
# Debian machine: the first run installs Chromium, the wasm toolchain and
# playwright-core (cached in ~/.cache/tickwise-tools) and redis-server (apt);
# later runs skip that.
#
#   bash scripts/test-all.sh            # everything
#   TICKWISE_SKIP_BROWSER=1 bash scripts/test-all.sh   # no wasm/browser part
#   TICKWISE_SKIP_CROSS=1   ...   # no aarch64 build under qemu-user
#   TICKWISE_SKIP_FUZZ=1    ...   # no short fuzz run
#
# A skipped step is printed with the variable that skipped it, and the run
# then ends "N step(s) SKIPPED", never "all tests passed". Under CI=true
# (.ci/run sets it) any skip fails the run before anything runs, and the
# steps themselves turn their own skips into failures (the parity tests, the
# duel replay check of the browser tests, the aarch64 parity's speed cases).
# An unknown TICKWISE_SKIP_* variable (a typo) is an error.
#
#   TICKWISE_TEST_ALL_DRY_RUN=1 bash scripts/test-all.sh   # print the steps and
#                                     # their commands, run nothing (the CI
#                                     # script tests use it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each step's wall time is kept and printed at the end, longest first (also
# when a step fails), so a slow CI run shows where its time went.
step_names=()
step_secs=()
cur_step=""
end_step() {
  [ -n "$cur_step" ] || return 0
  step_names+=("$cur_step")
  step_secs+=($((SECONDS - step_t0)))
  cur_step=""
}
step() {
  end_step
  cur_step="$*"
  step_t0=$SECONDS
  printf '\n==> %s\n    (%d s so far, %s free on the disk)\n' "$*" $((SECONDS - started)) "$(disk_free)"
}
step_times() {
  end_step
  [ ${#step_names[@]} -gt 0 ] || return 0
  printf '\nstep times (longest first):\n'
  for i in "${!step_names[@]}"; do
    printf '%6d s  %s\n' "${step_secs[$i]}" "${step_names[$i]}"
  done | sort -rn
  printf 'disk: %s free at the end, %s at the start\n' "$(disk_free)" "$free_at_start"
}
# The free space of the disk the tree is on, in KiB (empty if df fails).
disk_free_kib() {
  df -Pk . 2>/dev/null | awk 'NR == 2 { print $4 }'
}
# KiB for the log: "12.3 GiB" (nothing for an empty figure).
gib() {
  [ -z "$1" ] || awk -v k="$1" 'BEGIN { printf "%.1f GiB", k / 1048576 }'
}
disk_free() { gib "$(disk_free_kib)"; }
trap step_times EXIT
die() { printf '\ntest-all: ERROR: %s\n' "$*" >&2; exit 1; }
DRY="${TICKWISE_TEST_ALL_DRY_RUN:-}"
# Runs a step's command (prints it instead in a dry run).
run() {
  if [ -n "$DRY" ]; then
    printf '    (dry run) %s\n' "$*"
  else
    "$@"
  fi
}
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
started=$SECONDS
free_kib=$(disk_free_kib)
free_at_start=$(gib "$free_kib")

# ------------------------------------------------------------- skips
SKIPPABLE=(TICKWISE_SKIP_BROWSER TICKWISE_SKIP_CROSS TICKWISE_SKIP_FUZZ)
for v in $(compgen -v TICKWISE_SKIP_ || true); do
  case " ${SKIPPABLE[*]} " in
    *" $v "*) ;;
    *) die "unknown skip variable $v (known: ${SKIPPABLE[*]})" ;;
  esac
done
if [ "${CI:-}" = true ]; then
  for v in "${SKIPPABLE[@]}"; do
    [ -z "${!v:-}" ] || die "CI=true and $v=${!v}: CI runs every step, a skip fails the run"
  done
  # CI builds a fresh clone once: incremental compilation only writes
  # caches that nothing reads again (the workspace's crates and test
  # binaries built 218 s -> 168 s without it). A developer's tree keeps it.
  export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
fi
# ------------------------------------------------------------- disk
# Every step that builds a second tree has a target directory of its own
# (target/publish-check, target/outside, target/base-builds, ...), and the
# test binaries alone take 1.3 GB. All of it kept, a fresh clone's run
# wrote 7.5 GB, and a CI machine with less free failed half-way with "No
# space left on device". Under CI=true each step's own build is removed
# once no later step reads it: a fresh clone peaks at about 3.5 GB
# (docs/testing.md). A developer's tree keeps them, as reruns reuse them.
# The free space is printed at every step and at the end, and a disk with
# less than DISK_WANTED_GIB (the peak and some room) is named before
# anything runs.
DISK_WANTED_GIB=5
if [ -n "$free_kib" ] && [ "$free_kib" -lt $((DISK_WANTED_GIB * 1048576)) ]; then
  printf 'test-all: WARNING: %s free on the disk; a fresh run wants about %d GiB, so it may fail with "No space left on device"\n' \
    "$free_at_start" "$DISK_WANTED_GIB" >&2
fi
# done_with DIR...: under CI=true, removes build output no later step reads.
done_with() {
  [ "${CI:-}" = true ] || return 0
  run rm -rf "$@"
}

skipped=()
# wants VAR STEP: true when STEP runs; otherwise prints that STEP is skipped
# and why (VAR is set), and remembers it for the summary.
wants() {
  local var="$1"
  shift
  [ -n "${!var:-}" ] || return 0
  printf '\n==> SKIPPED: %s\n    (because %s=%s)\n' "$*" "$var" "${!var}"
  skipped+=("$* ($var=${!var})")
  return 1
}

# ------------------------------------------------------------- steps
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  step "setup: rustfmt and clippy"
  run rustup component add rustfmt clippy
fi

step "setup: redis-server for the verification service's tests (cached after the first run)"
run bash .ci/setup-redis.sh

if wants TICKWISE_SKIP_BROWSER "setup: Chromium, wasm toolchain, playwright-core"; then
  step "setup: Chromium, wasm toolchain, playwright-core (cached after the first run)"
  run bash .ci/setup-web.sh
fi

step "format"
run cargo fmt --all --check

step "clippy (determinism lints included)"
run cargo clippy --workspace --all-targets --locked -- -D warnings

step "docs"
run env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
# The internals too, as a contributor browses them: every link resolves.
run env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --document-private-items

step "kernel builds without std (no_std + alloc)"
run cargo build -p tickwise --no-default-features --locked

step "sims on their own, without features (no_std, no threads): no warnings"
# In the workspace, features unify (the CLI turns on `parallel`), so code
# used only with a feature on would not warn there.
run cargo clippy -p tickwise-sims --no-default-features --locked -- -D warnings

step "unit, scenario, property and doc tests"
run cargo test --workspace --locked
# The test binaries (1.3 GB): later steps build and run release binaries.
# Cargo relinks a missing one when asked, so removing them costs only time.
if [ "${CI:-}" = true ]; then
  run find target/debug/deps -maxdepth 1 -type f -perm -u+x ! -name '*.so' -delete
fi

step "release binary"
run cargo build --release -p tickwise-cli --locked

step "every crate packs and builds from its tarball (cargo publish --dry-run --workspace)"
run bash scripts/publish-check.sh
done_with target/publish-check

step "a game crate outside the repository: build, record, verify (scripts/outside-crate.sh)"
run bash scripts/outside-crate.sh
done_with target/outside

step "figures quoted in README and docs against the build: horde peak memory"
run python3 scripts/check_figures.py horde-rss

step "performance against round 1: a REPORT, not a gate (never fails; docs/benchmarks.md)"
run bash scripts/bench-compare.sh --quick
# The one-run table of every issue-21 goal (python3 scripts/bench_goals.py)
# takes minutes once its builds are kept; here only its readers of the
# tools' outputs.
run python3 -m unittest scripts/test_bench_goals.py
# How both build their base (scripts/base_build.py), without building one.
run python3 -m unittest scripts/test_base_build.py
# How many timed pairs a small horde gets (scripts/bench_compare.py).
run python3 -m unittest scripts/test_bench_compare.py
# The service with its clients on the other core, a short run: the
# script's path through verifyd, `--inline-work` and the load generator
# (it fails when a replay goes unverified or nothing was verified inline),
# and its instruction counts under valgrind (5 and 15 replays).
run env ROUNDS=1 ISLAND=200 COUNT=5 python3 scripts/bench_service_pinned.py
done_with target/base-builds target/bench-compare

step "the example game's own tools (examples/duel/ci.sh)"
run bash examples/duel/ci.sh

step "every shell block of the README, in order, in a fresh copy (short forms listed in scripts/readme_blocks.py)"
run bash scripts/readme-blocks.sh
done_with target/readme-blocks

step "Python reference parity"
run python3 -m unittest discover -s parity
run python3 parity/run_parity.py --tickwise target/release/tickwise

if wants TICKWISE_SKIP_CROSS "aarch64 build under qemu-user: parity, horde, cross-verified replays"; then
  step "aarch64 build under qemu-user: parity, horde, cross-verified replays (installs once)"
  run bash .ci/cross-aarch64.sh
  done_with target/aarch64-unknown-linux-gnu
fi

step "soak, short, and its self-check (full size: bash scripts/soak.sh)"
run bash scripts/soak.sh --quick

if wants TICKWISE_SKIP_FUZZ "fuzzing: every target for 15 s"; then
  step "fuzzing: every target for 15 s (installs cargo-fuzz once)"
  run bash fuzz/run.sh 15
  done_with fuzz/target
fi

if wants TICKWISE_SKIP_BROWSER "wasm build and headless-Chromium tests"; then
  step "wasm build and headless-Chromium tests"
  run bash .ci/build-web.sh
  run npm --prefix web test
  # The room page: two Chromium processes and `tickwise serve` inside a
  # network namespace of the test's own (WebRTC never leaves it; needs root
  # or user namespaces, as CI has).
  run bash web/tests/netns.sh node --test web/tests/room.mjs
  # The duel's room page (the shared lobby, examples/duel-web's RoomMatch)
  # against the duel's own `duel serve`, in its own namespace the same way.
  run bash web/tests/netns.sh node --test web/tests/duel-room.mjs
  step "figures quoted in README and docs against the build: wasm and island.html sizes"
  run python3 scripts/check_figures.py wasm
  step "a game's page crate outside the repository, built by .ci/build-page.sh (scripts/outside-page.sh)"
  run bash scripts/outside-page.sh
fi

took=$((SECONDS - started))
if [ ${#skipped[@]} -gt 0 ]; then
  printf '\nthe tests that ran passed in %d s, but %d step(s) were SKIPPED (not tested):\n' \
    "$took" "${#skipped[@]}"
  printf '  - %s\n' "${skipped[@]}"
  exit 0
fi
printf '\nall tests passed in %d s\n' "$took"
