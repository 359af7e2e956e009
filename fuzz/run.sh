#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time on the stable toolchain.
#
#   fuzz/run.sh [SECONDS]     (default 60 per target)
#
# cargo-fuzz needs nightly-only rustc flags; RUSTC_BOOTSTRAP=1 lets the
# stable compiler accept them. The sanitizer is off: the crates forbid
# unsafe code, so coverage guidance is what matters here. Findings are
# written to fuzz/artifacts/<target>/ and make this script exit non-zero.
set -euo pipefail
secs="${1:-60}"
cd "$(dirname "$0")"
if ! command -v cargo-fuzz >/dev/null; then
    cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1
for target in replay_reader script_parser; do
    mkdir -p "corpus/$target"
    cp -n seeds/"$target"/* "corpus/$target/" 2>/dev/null || true
    echo "== $target: ${secs}s"
    cargo fuzz run --sanitizer none "$target" "corpus/$target" -- \
        -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
done
