#!/usr/bin/env bash
# Another instruction set: builds the `tickwise` CLI for aarch64 and checks,
# under qemu-user, that it computes exactly what the x86_64 build computes.
#
#   bash .ci/cross-aarch64.sh        (scripts/test-all.sh runs it after the release build;
#                                     TICKWISE_SKIP_CROSS=1 skips it there)
#
# 1. Installs, once: Debian's gcc-aarch64-linux-gnu + libc6-dev-arm64-cross
#    (linker and C library) and qemu-user (qemu-aarch64); the rustup target
#    aarch64-unknown-linux-gnu. Later runs only check they are there.
# 2. Builds the CLI for aarch64 (target/aarch64-unknown-linux-gnu/release/);
#    the linker is set for this build only, through the environment.
# 3. Under `qemu-aarch64 -L /usr/aarch64-linux-gnu`:
#    - the Python-reference parity run (parity/run_parity.py) against it;
#    - horde runs: the whole `horde --json` result except timings equals x86_64's,
#      x86_64 on one thread (the serial path) and aarch64 on four, with one
#      horde big enough for the parallel tick's chunked split (> 2 x 8192);
#    - replays recorded on each side are byte-identical, and each side
#      verifies the other's (island and horde, scripted and random inputs);
#    - a rollback sync test gives the same report.
# Needs the x86_64 release binary (target/release/tickwise); builds it if missing.
#
# Environment: TICKWISE_PARITY_COUNT (random parity scripts, default 300).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET=aarch64-unknown-linux-gnu
SYSROOT=/usr/aarch64-linux-gnu
NATIVE="$ROOT/target/release/tickwise"
ARM="$ROOT/target/$TARGET/release/tickwise"
started=$SECONDS

log() { printf '[cross-aarch64] %s\n' "$*" >&2; }
die() { printf '[cross-aarch64] ERROR: %s\n' "$*" >&2; exit 1; }
phase() { log "$1 ($((SECONDS - started)) s so far)"; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo: cannot apt-get install"
  SUDO=(sudo)
fi

# ---------------------------------------------------------------- 1. tools
apt_missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || printf '%s\n' "$p"
  done
}
missing="$(apt_missing gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)"
if [ -n "$missing" ]; then
  # shellcheck disable=SC2086
  log "apt: installing" $missing
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # shellcheck disable=SC2086
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  log "apt: cross gcc, arm64 libc and qemu-user already installed"
fi
command -v aarch64-linux-gnu-gcc >/dev/null || die "aarch64-linux-gnu-gcc missing after install"
QEMU="$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)"
[ -n "$QEMU" ] || die "qemu-aarch64 missing after installing qemu-user"
[ -d "$SYSROOT/lib" ] || die "$SYSROOT/lib missing (libc6-arm64-cross)"

if rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
  log "rustup: target $TARGET already installed"
else
  log "rustup: target add $TARGET"
  timeout 300 rustup target add "$TARGET" >&2 || die "rustup could not add $TARGET"
fi

# ---------------------------------------------------------------- 2. builds
phase "building the x86_64 and aarch64 release CLIs"
if [ ! -x "$NATIVE" ]; then
  cargo build --release --locked -p tickwise-cli
fi
# Debug info does not change what the code computes and costs build time.
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
CARGO_PROFILE_RELEASE_DEBUG=false \
  cargo build --release --locked -p tickwise-cli --target "$TARGET"
[ -x "$ARM" ] || die "no aarch64 binary at $ARM"
# ELF e_machine (2 bytes at offset 18): 0xB7 is AArch64, 0x3E x86-64.
[ "$(od -An -tx1 -j18 -N2 "$ARM" | tr -d ' \n')" = "b700" ] || die "$ARM is not an AArch64 ELF"
[ "$(od -An -tx1 -j18 -N2 "$NATIVE" | tr -d ' \n')" = "3e00" ] || die "$NATIVE is not an x86-64 ELF"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
WRAP="$WORK/tickwise-aarch64"
cat > "$WRAP" <<EOF
#!/bin/sh
exec "$QEMU" -L "$SYSROOT" "$ARM" "\$@"
EOF
chmod +x "$WRAP"
"$WRAP" --version >/dev/null || die "the aarch64 binary does not run under $QEMU"
log "aarch64 binary runs under $("$QEMU" --version | head -n 1)"

# ---------------------------------------------------------------- 3. checks
phase "parity: Python reference vs the aarch64 CLI"
parity_flags=(--count "${TICKWISE_PARITY_COUNT:-300}")
# Until the CLI's scripts know `speed P Q`, the parity runner must leave it out.
if ! printf 'speed 1 1\n' | "$NATIVE" script - >/dev/null 2>&1; then
  [ "${CI:-}" != true ] || die "CI=true: the CLI does not know 'speed P Q'; the speed parity cases would be skipped"
  log "SKIPPING the speed parity cases: the CLI does not know 'speed P Q'"
  parity_flags+=(--no-speed)
fi
python3 parity/run_parity.py --tickwise "$WRAP" "${parity_flags[@]}"

phase "horde: x86_64 and aarch64 results"
strip_timing() { # the horde --json result without its wall-clock fields
  python3 -c '
import json, sys
r = json.load(sys.stdin)
for k in [k for k in r if k.endswith("Ns")]:
    del r[k]
print(json.dumps(r, sort_keys=True))'
}
# x86_64 runs the serial tick (--threads 1); aarch64 runs four threads, so
# from 2048 enemies (the split threshold, crates/tickwise-sims/src/horde/par.rs)
# its tick takes the parallel path, and above 8192 (one piece) the chunked
# split. 20000 enemies: two full pieces and a short third one; with
# --separation-ticks 2 every other tick strikes in those pieces, no grid.
PARALLEL_MIN=2048
big=0
for args in "--enemies 300 --ticks 600" "--enemies 2000 --ticks 300 --seed 7" \
            "--enemies 40 --ticks 3000 --seed 12345" "--enemies 20000 --ticks 60 --seed 3" \
            "--enemies 20000 --ticks 60 --seed 4 --players 2 --separation-ticks 2"; do
  # shellcheck disable=SC2086
  a="$("$NATIVE" horde $args --threads 1 --json | strip_timing)"
  # shellcheck disable=SC2086
  b="$("$WRAP" horde $args --threads 4 --json | strip_timing)"
  [ "$a" = "$b" ] || die "horde $args differs:
  x86_64 (1 thread):   $a
  aarch64 (4 threads): $b"
  enemies="$(printf '%s' "$a" | python3 -c 'import json,sys; print(json.load(sys.stdin)["enemies"])')"
  [ "$enemies" -ge "$PARALLEL_MIN" ] && big=$((big + 1))
  log "horde $args: same result ($(printf '%s' "$a" | python3 -c 'import json,sys; print(json.load(sys.stdin)["digest"])'))"
done
[ "$big" -gt 0 ] || die "no horde run reached the parallel path ($PARALLEL_MIN enemies)"

phase "replays: recorded on each side, verified by the other"
n=0
for spec in "island scripted 3000" "island random:7 3000" "horde scripted 600" "horde random:5 300"; do
  read -r sim inputs ticks <<<"$spec"
  n=$((n + 1))
  "$NATIVE" record --sim "$sim" --inputs "$inputs" --ticks "$ticks" --checkpoint-every 50 \
    --out "$WORK/x86_$n.twr" >/dev/null
  "$WRAP" record --sim "$sim" --inputs "$inputs" --ticks "$ticks" --checkpoint-every 50 \
    --out "$WORK/arm_$n.twr" >/dev/null
  cmp -s "$WORK/x86_$n.twr" "$WORK/arm_$n.twr" ||
    die "$spec: the two builds recorded different replays"
  "$WRAP" verify --quiet "$WORK/x86_$n.twr" || die "$spec: aarch64 does not verify the x86_64 replay"
  "$NATIVE" verify --quiet "$WORK/arm_$n.twr" || die "$spec: x86_64 does not verify the aarch64 replay"
  log "$spec: identical replays ($(wc -c < "$WORK/x86_$n.twr") bytes), each verified by the other build"
done

phase "sync test (rollback and re-simulate)"
a="$("$NATIVE" sync-test --sim horde --ticks 200 --rollback 8)"
b="$("$WRAP" sync-test --sim horde --ticks 200 --rollback 8)"
[ "$a" = "$b" ] || die "sync-test differs:
  x86_64:  $a
  aarch64: $b"

log "PASS: aarch64 computes what x86_64 computes ($((SECONDS - started)) s)"
