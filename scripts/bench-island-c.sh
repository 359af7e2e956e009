#!/usr/bin/env bash
# Island steps as a whole process, side by side with the same step as a plain
# C loop (scripts/bench/island_c.c, gcc -O2): `tickwise script` running
# `advance N` against `island_c N`, run in turn (A B A B ...) so that a drift
# in the machine's speed hits both alike. Prints each run's seconds (CPU, from
# /usr/bin/time), the medians and the ratio, and checks that both digests agree.
#
# Usage: scripts/bench-island-c.sh [STEPS] [RUNS]     (default 100000000 7)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-100000000}
runs=${2:-7}
src=scripts/bench/island_c.c
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/island_c" "$src"
cargo build --release --quiet -p tickwise-cli
tw=target/release/tickwise
echo "advance $steps" > "$work/script.txt"

c_digest=$("$work/island_c" "$steps" | cut -d' ' -f2)
rs_digest=$("$tw" script "$work/script.txt" | sed -E 's/.*"digest":"([^"]*)".*/\1/')
if [[ $c_digest != "$rs_digest" ]]; then
  echo "digests differ: C $c_digest, tickwise $rs_digest" >&2
  exit 1
fi
echo "digest (both): $rs_digest"

cpu() { # user + sys seconds of one run
  /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.3f", $1 + $2}'
}
"$work/island_c" "$steps" >/dev/null # warm-up
"$tw" script "$work/script.txt" >/dev/null
a=() b=()
for _ in $(seq "$runs"); do
  a+=("$(cpu "$tw" script "$work/script.txt")")
  b+=("$(cpu "$work/island_c" "$steps")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ma=$(median "${a[@]}")
mb=$(median "${b[@]}")
echo "tickwise script (advance $steps): ${a[*]} s; median $ma s"
echo "plain C loop (gcc -O2):          ${b[*]} s; median $mb s"
awk -v a="$ma" -v b="$mb" -v n="$steps" 'BEGIN {
  printf "ns/step: tickwise %.2f, C %.2f; ratio tickwise/C %.3f\n", a * 1e9 / n, b * 1e9 / n, a / b }'
