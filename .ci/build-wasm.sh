#!/usr/bin/env bash
# Builds a cdylib crate for wasm32-unknown-unknown (release) and runs
# wasm-bindgen --target web on it.
#
#   bash .ci/build-wasm.sh CRATE OUTDIR [-- EXTRA_CARGO_ARGS...]
#
# CRATE is a workspace member's package name, or the path of a crate's folder
# (one holding a Cargo.toml: a game's page crate anywhere, in or outside this
# repository). A folder is built with `--manifest-path`, from its own folder,
# so its own workspace and lock file apply.
#
# Builds CRATE's lib, or, when EXTRA_CARGO_ARGS name `--example NAME`, that
# example (which must have crate-type = ["cdylib"]). Feature flags such as
# `--no-default-features` go in EXTRA_CARGO_ARGS too.
#
# Needs `bash .ci/setup-web.sh` first: it records in $TICKWISE_TOOLS/wasm-env.sh
# which compiler route works here (rustup target, or Debian's rustc-web with
# -Zbuild-std). The build uses its own target dir, target/wasm, so it never
# invalidates the native build's cache.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${TICKWISE_TOOLS:-$HOME/.cache/tickwise-tools}"
ENV_FILE="$TOOLS/wasm-env.sh"

log() { printf '[build-wasm] %s\n' "$*" >&2; }
die() { printf '[build-wasm] ERROR: %s\n' "$*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: $0 CRATE OUTDIR [-- EXTRA_CARGO_ARGS...]"
CRATE="$1"; OUTDIR="$2"; shift 2
if [ $# -gt 0 ]; then
  [ "$1" = "--" ] || die "unexpected argument '$1' (extra cargo args go after --)"
  shift
fi
EXTRA=("$@")

[ -f "$ENV_FILE" ] || die "$ENV_FILE not found: run 'bash .ci/setup-web.sh' first"
# shellcheck source=/dev/null
. "$ENV_FILE"
[ -x "$TICKWISE_WASM_BINDGEN" ] || die "$TICKWISE_WASM_BINDGEN missing: rerun .ci/setup-web.sh"

mkdir -p "$OUTDIR"
OUTDIR="$(cd "$OUTDIR" && pwd)"
TARGET_DIR="${TICKWISE_WASM_TARGET_DIR:-$ROOT/target/wasm}"

# A crate folder: its package name from its Cargo.toml, built from there.
BUILD_DIR="$ROOT"
SELECT=(-p "$CRATE")
if [ -f "$CRATE/Cargo.toml" ]; then
  CRATE_DIR="$(cd "$CRATE" && pwd)"
  CRATE="$(sed -n '/^\[package\]/,/^\[/s/^name *= *"\([^"]*\)".*/\1/p' "$CRATE_DIR/Cargo.toml" | head -n 1)"
  [ -n "$CRATE" ] || die "no [package] name in $CRATE_DIR/Cargo.toml"
  BUILD_DIR="$CRATE_DIR"
  SELECT=(--manifest-path "$CRATE_DIR/Cargo.toml")
elif [ -e "$CRATE" ] || [[ "$CRATE" == */* ]]; then
  die "$CRATE: not a crate folder (no Cargo.toml in it) and not a package name"
fi

WHAT=(--lib)
EXAMPLE=""
prev=""
for a in "${EXTRA[@]}"; do
  case "$a" in
    --example=*) WHAT=(); EXAMPLE="${a#--example=}" ;;
    *) [ "$prev" = --example ] && { WHAT=(); EXAMPLE="$a"; } ;;
  esac
  prev="$a"
done
CARGO_ARGS=(build --release --target "$TICKWISE_WASM_TARGET" "${SELECT[@]}" "${WHAT[@]}"
            --target-dir "$TARGET_DIR" --message-format=json-render-diagnostics)
# The workspace's release profile keeps debug info (debug = 1) for native
# profiling; in wasm that is ~1.5 MB of DWARF that wasm-bindgen strips anyway.
# Drop it here unless the caller asks otherwise.
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-false}"
case "$TICKWISE_WASM_ROUTE" in
  rustup)
    # rustup's cargo/rustc (first on PATH); drop any Debian-route overrides.
    RUN=(env -u RUSTC -u RUSTDOC -u RUSTC_BOOTSTRAP "$TICKWISE_WASM_CARGO" "${CARGO_ARGS[@]}")
    ;;
  debian)
    # Debian's cargo + rustc 1.96 rebuilding std from /usr/lib/rustlib/src/rust.
    # RUSTC must point at Debian's rustc, or rustup's (first on PATH) is used and fails.
    RUN=(env RUSTC="$TICKWISE_WASM_RUSTC" RUSTDOC="$TICKWISE_WASM_RUSTDOC" RUSTC_BOOTSTRAP=1
         CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="$TICKWISE_WASM_LINKER"
         "$TICKWISE_WASM_CARGO" "${CARGO_ARGS[@]}" "-Zbuild-std=$TICKWISE_WASM_BUILD_STD")
    ;;
  *) die "unknown TICKWISE_WASM_ROUTE '$TICKWISE_WASM_ROUTE' in $ENV_FILE" ;;
esac

log "route: $TICKWISE_WASM_ROUTE; building $CRATE -> $TARGET_DIR"
log "+ ${RUN[*]} ${EXTRA[*]:-}"
JSON="$(mktemp)"
trap 'rm -f "$JSON"' EXIT
(cd "$BUILD_DIR" && "${RUN[@]}" "${EXTRA[@]}") > "$JSON"

# The cdylib's .wasm, from cargo's own artifact messages (robust to lib renames).
WASM="$(node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
  const example = process.argv[2];
  const crate = process.argv[3];
  // Only the artifacts of CRATE itself: a dependency that is a cdylib too
  // (a page crate of a game depends on tickwise-web) reports a .wasm as well.
  // package_id: "path+file:///…/dir#name@version" or "…/name#version".
  const ours = (id) => id.includes(`#${crate}@`) || new RegExp(`/${crate}#[^#@]*$`).test(id);
  const out = new Set();
  for (const l of lines) {
    if (!l.startsWith("{")) continue;
    const m = JSON.parse(l);
    if (m.reason !== "compiler-artifact" || !ours(m.package_id || "")) continue;
    // The lib reports "cdylib" in kind; an example reports "example" in kind
    // and "cdylib" in crate_types (and its crate lib may be a cdylib too).
    const wanted = example === ""
      ? m.target.kind.includes("cdylib")
      : m.target.kind.includes("example") && m.target.name === example &&
        (m.target.crate_types || []).includes("cdylib");
    if (wanted) for (const f of m.filenames) if (f.endsWith(".wasm")) out.add(f);
  }
  console.log([...out].join("\n"));
' "$JSON" "$EXAMPLE" "$CRATE")"
[ -n "$WASM" ] || die "no .wasm produced: is '$CRATE'${EXAMPLE:+ (example $EXAMPLE)} a cdylib (crate-type = [\"cdylib\", ...])?"
[ "$(printf '%s\n' "$WASM" | wc -l)" -eq 1 ] || die "several .wasm artifacts: $WASM"

log "wasm-bindgen --target web --out-dir $OUTDIR"
"$TICKWISE_WASM_BINDGEN" --target web --out-dir "$OUTDIR" "$WASM" ||
  die "wasm-bindgen failed (the crate must depend on wasm-bindgen =$TICKWISE_WASM_BINDGEN_VERSION, same as the CLI)"

size_line() { # LABEL FILE
  local raw gz
  raw=$(wc -c < "$2"); gz=$(gzip -9 -c "$2" | wc -c)
  printf '[build-wasm] %-22s %9d bytes raw, %9d bytes gzip -9  (%s)\n' "$1" "$raw" "$gz" "$2" >&2
}
size_line "cargo output:" "$WASM"
BG="$OUTDIR/$(basename "$WASM" .wasm)_bg.wasm"
[ -f "$BG" ] && size_line "after wasm-bindgen:" "$BG"
log "done: $OUTDIR"
