#!/usr/bin/env bash
# Installs the WebAssembly + headless-browser toolchain for tickwise.
# Idempotent: a second run only verifies what is already there (a few seconds).
#
#   bash .ci/setup-web.sh
#
# What it does:
#   1. apt: chromium (for headless browser tests through playwright-core).
#   2. wasm32-unknown-unknown compiler, one of two routes:
#        rustup  - `rustup target add wasm32-unknown-unknown` (tried with a timeout)
#        debian  - Debian's rustc-web/cargo-web/rust-web-src + lld-22, used with
#                  -Zbuild-std and RUSTC_BOOTSTRAP=1 (only when rustup cannot fetch the target)
#   3. wasm-bindgen-cli =0.2.130 via `cargo install` into $TICKWISE_TOOLS (cached).
#   4. npm ci in web/ (playwright-core; never downloads a browser).
#   5. writes $TICKWISE_TOOLS/wasm-env.sh recording the route, for .ci/build-wasm.sh.
#
# Environment knobs:
#   TICKWISE_TOOLS           cache dir (default ~/.cache/tickwise-tools)
#   TICKWISE_WASM_ROUTE      force "rustup" or "debian" (default: auto)
#   TICKWISE_RUSTUP_TIMEOUT  seconds for `rustup target add` (default 60)
set -euo pipefail

WASM_BINDGEN_VERSION=0.2.130
TARGET=wasm32-unknown-unknown
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${TICKWISE_TOOLS:-$HOME/.cache/tickwise-tools}"
ENV_FILE="$TOOLS/wasm-env.sh"
ROUTE_WANTED="${TICKWISE_WASM_ROUTE:-auto}"
RUSTUP_TIMEOUT="${TICKWISE_RUSTUP_TIMEOUT:-60}"

log() { printf '[setup-web] %s\n' "$*" >&2; }
die() { printf '[setup-web] ERROR: %s\n' "$*" >&2; exit 1; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo: cannot apt-get install"
  SUDO=(sudo)
fi

APT_UPDATED=0
apt_missing() { # prints the packages among "$@" that are not installed
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || printf '%s\n' "$p"
  done
}
apt_ensure() {
  local missing
  missing="$(apt_missing "$@")"
  if [ -z "$missing" ]; then
    log "apt: already installed: $*"
    return 0
  fi
  # shellcheck disable=SC2086
  set -- $missing
  if [ "$APT_UPDATED" -eq 0 ]; then
    log "apt: apt-get update"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    APT_UPDATED=1
  fi
  log "apt: installing $*"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

mkdir -p "$TOOLS"

# ---------------------------------------------------------------- 1. chromium
apt_ensure chromium
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after install"

# ---------------------------------------------------------------- 2. wasm route
rustup_has_target() {
  # Run from the repo root so a rust-toolchain.toml there picks the toolchain.
  command -v rustup >/dev/null 2>&1 &&
    (cd "$ROOT" && rustup target list --installed 2>/dev/null) | grep -qx "$TARGET"
}

ROUTE=""
if [ "$ROUTE_WANTED" = rustup ] || [ "$ROUTE_WANTED" = auto ]; then
  if rustup_has_target; then
    log "wasm: rustup target $TARGET already installed"
    ROUTE=rustup
  elif [ "$ROUTE_WANTED" = auto ] && [ -f "$ENV_FILE" ] &&
       grep -qx 'TICKWISE_WASM_ROUTE=debian' "$ENV_FILE" &&
       [ -z "$(apt_missing rustc-web cargo-web rust-web-src lld-22)" ]; then
    # An earlier run fell back to Debian: keep it, so reruns stay fast
    # (delete $ENV_FILE or set TICKWISE_WASM_ROUTE=rustup to probe rustup again).
    log "wasm: keeping the Debian route recorded in $ENV_FILE"
  elif command -v rustup >/dev/null 2>&1; then
    log "wasm: trying 'rustup target add $TARGET' (timeout ${RUSTUP_TIMEOUT}s)"
    RUSTUP_LOG="$(mktemp)"
    if (cd "$ROOT" && RUST_BACKTRACE=0 timeout "$RUSTUP_TIMEOUT" rustup target add "$TARGET") \
         >"$RUSTUP_LOG" 2>&1 && rustup_has_target; then
      log "wasm: rustup target $TARGET added"
      ROUTE=rustup
    else
      log "wasm: rustup could not add $TARGET (exit/timeout); its last words:"
      grep -v '^\s*$' "$RUSTUP_LOG" | tail -n 4 | sed 's/^/    /' >&2 || true
    fi
    rm -f "$RUSTUP_LOG"
  else
    log "wasm: rustup not found"
  fi
  if [ -z "$ROUTE" ] && [ "$ROUTE_WANTED" = rustup ]; then
    die "TICKWISE_WASM_ROUTE=rustup but the rustup target is unavailable"
  fi
fi
if [ -z "$ROUTE" ]; then
  [ "$ROUTE_WANTED" = auto ] || [ "$ROUTE_WANTED" = debian ] ||
    die "TICKWISE_WASM_ROUTE must be auto, rustup or debian (got '$ROUTE_WANTED')"
  log "wasm: using Debian's rustc-web with -Zbuild-std"
  apt_ensure rustc-web cargo-web rust-web-src lld-22
  for f in /usr/bin/cargo /usr/bin/rustc /usr/bin/rustdoc; do
    [ -x "$f" ] || die "$f missing after installing rustc-web/cargo-web"
  done
  command -v wasm-ld-22 >/dev/null 2>&1 || die "wasm-ld-22 missing after installing lld-22"
  [ -d /usr/lib/rustlib/src/rust/library ] || die "std sources missing (rust-web-src)"
  ROUTE=debian
fi

# ---------------------------------------------------------------- 3. wasm-bindgen-cli
WB="$TOOLS/bin/wasm-bindgen"
wb_ok() { [ -x "$WB" ] && "$WB" --version 2>/dev/null | grep -qx "wasm-bindgen $WASM_BINDGEN_VERSION"; }
if wb_ok; then
  log "wasm-bindgen: cached $WB ($WASM_BINDGEN_VERSION)"
else
  command -v cargo >/dev/null 2>&1 || die "cargo (rustup) not on PATH"
  log "wasm-bindgen: cargo install wasm-bindgen-cli =$WASM_BINDGEN_VERSION into $TOOLS (takes ~4 min)"
  # Host build with rustup's toolchain: drop overrides meant for the Debian wasm route.
  # No --locked: a version pinned by the CLI's own lockfile is missing from the registry.
  ( cd "$TOOLS" &&
    env -u RUSTC -u RUSTDOC -u RUSTC_BOOTSTRAP -u RUSTFLAGS -u CARGO_BUILD_TARGET \
      cargo install --quiet --force wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" \
        --root "$TOOLS" ) >&2
  wb_ok || die "wasm-bindgen install did not produce version $WASM_BINDGEN_VERSION"
  log "wasm-bindgen: installed $("$WB" --version)"
fi

# ---------------------------------------------------------------- 4. npm (playwright-core)
WEB="$ROOT/web"
if [ -f "$WEB/package.json" ]; then
  command -v npm >/dev/null 2>&1 || die "npm not found"
  npm_in_sync() { # every package in package-lock.json is installed at its locked version
    [ -f "$WEB/package-lock.json" ] && [ -d "$WEB/node_modules" ] &&
      (cd "$WEB" && node -e '
        const fs = require("fs");
        const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8"));
        for (const [p, e] of Object.entries(lock.packages || {})) {
          if (!p || !e.version) continue;
          let got;
          try { got = JSON.parse(fs.readFileSync(p + "/package.json", "utf8")).version; }
          catch { process.exit(1); }
          if (got !== e.version) process.exit(1);
        }')
  }
  export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
  if npm_in_sync; then
    log "npm: web/node_modules matches package-lock.json"
  elif [ -f "$WEB/package-lock.json" ]; then
    log "npm: npm ci in web/"
    (cd "$WEB" && npm ci --no-audit --no-fund --loglevel=error) >&2
  else
    log "npm: npm install in web/ (no package-lock.json)"
    (cd "$WEB" && npm install --no-audit --no-fund --loglevel=error) >&2
  fi
else
  log "npm: no web/package.json, skipping"
fi

# ---------------------------------------------------------------- 5. env file
TMP_ENV="$(mktemp "$TOOLS/.wasm-env.XXXXXX")"
{
  echo "# Written by .ci/setup-web.sh; sourced by .ci/build-wasm.sh."
  echo "# Only TICKWISE_* variables: safe to source in any shell."
  echo "TICKWISE_WASM_ROUTE=$ROUTE"
  echo "TICKWISE_WASM_TARGET=$TARGET"
  echo "TICKWISE_WASM_BINDGEN=$WB"
  echo "TICKWISE_WASM_BINDGEN_VERSION=$WASM_BINDGEN_VERSION"
  echo "TICKWISE_CHROMIUM=/usr/bin/chromium"
  if [ "$ROUTE" = debian ]; then
    echo "TICKWISE_WASM_CARGO=/usr/bin/cargo"
    echo "TICKWISE_WASM_RUSTC=/usr/bin/rustc"
    echo "TICKWISE_WASM_RUSTDOC=/usr/bin/rustdoc"
    echo "TICKWISE_WASM_LINKER=wasm-ld-22"
    echo "TICKWISE_WASM_BUILD_STD=std,panic_abort"
  else
    echo "TICKWISE_WASM_CARGO=cargo"
  fi
} > "$TMP_ENV"
mv -f "$TMP_ENV" "$ENV_FILE"
log "env: wrote $ENV_FILE (route: $ROUTE)"
log "done"
