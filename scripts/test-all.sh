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
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
started=$SECONDS

if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  step "setup: rustfmt and clippy"
  rustup component add rustfmt clippy
fi

step "setup: redis-server for the verification service's tests (cached after the first run)"
bash .ci/setup-redis.sh

if [ -z "${TICKWISE_SKIP_BROWSER:-}" ]; then
  step "setup: Chromium, wasm toolchain, playwright-core (cached after the first run)"
  bash .ci/setup-web.sh
fi

step "format"
cargo fmt --all --check

step "clippy (determinism lints included)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

step "kernel builds without std (no_std + alloc)"
cargo build -p tickwise --no-default-features --locked

step "sims on their own, without features (no_std, no threads): no warnings"
# In the workspace, features unify (the CLI turns on `parallel`), so code
# used only with a feature on would not warn there.
cargo clippy -p tickwise-sims --no-default-features --locked -- -D warnings

step "unit, scenario, property and doc tests"
cargo test --workspace --locked

step "release binary"
cargo build --release -p tickwise-cli --locked

step "the example game's own tools (examples/duel/ci.sh)"
bash examples/duel/ci.sh

step "Python reference parity"
python3 -m unittest discover -s parity
python3 parity/run_parity.py --tickwise target/release/tickwise

if [ -z "${TICKWISE_SKIP_CROSS:-}" ]; then
  step "aarch64 build under qemu-user: parity, horde, cross-verified replays (installs once)"
  bash .ci/cross-aarch64.sh
fi

step "soak, short (full size: bash scripts/soak.sh)"
bash scripts/soak.sh --quick

if [ -z "${TICKWISE_SKIP_FUZZ:-}" ]; then
  step "fuzzing: every target for 15 s (installs cargo-fuzz once)"
  bash fuzz/run.sh 15
fi

if [ -z "${TICKWISE_SKIP_BROWSER:-}" ]; then
  step "wasm build and headless-Chromium tests"
  bash .ci/build-web.sh
  npm --prefix web test
fi

printf '\nall tests passed in %d s\n' $((SECONDS - started))
