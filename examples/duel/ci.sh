#!/usr/bin/env bash
# The duel's own tool binary, end to end, as a game's CI would run it:
# play a live session and write its replay, then verify, compare and
# sync-test it with `duel` (src/bin/duel.rs, three lines over
# tickwise_cli::main_with), record and verify random inputs, budget the
# sim, and prove that a build changing one rule without bumping the sim's
# version fails `verify` at the first checkpoint, naming the field.
# Called from scripts/test-all.sh after the release build; runs alone too:
#
#   bash examples/duel/ci.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
checks=0

fail() {
  printf 'duel ci: FAILED: %s\n' "$*" >&2
  exit 1
}

# run CODE CMD...: runs CMD, prints its output, keeps it in $out, and fails
# unless it exits with CODE.
run() {
  local want=$1 rc=0
  shift
  printf '$ %s\n' "$*"
  out=$("$@" 2>&1) || rc=$?
  printf '%s\n' "$out"
  [ "$rc" -eq "$want" ] || fail "exit $rc, expected $want: $*"
  checks=$((checks + 1))
}

# expect TEXT: the last command's output contains TEXT.
expect() {
  grep -qF -- "$1" <<<"$out" || fail "output lacks \"$1\""
  checks=$((checks + 1))
}

printf '==> build: the duel with one rule changed (paddles 1 unit faster, version still 2)\n'
cargo build --release --locked -q -p tickwise-example-duel --features cli,rule-change --bin duel
cp target/release/duel "$work/duel-rule-change"
printf '==> build: the duel tools\n'
cargo build --release --locked -q -p tickwise-example-duel --features cli
cargo clippy --locked -q -p tickwise-example-duel --features cli --all-targets -- -D warnings
duel=target/release/duel
cd "$work"
duel="$OLDPWD/$duel"
live="$OLDPWD/target/release/duel-live"

printf '\n==> a live session: irregular frames, a sub-tick tap, pause, hide, capped catch-up, a capped frame\n'
run 0 "$live" live.twr
digest=$(sed -n 's/^final digest: //p' <<<"$out")
[ -n "$digest" ] || fail "duel-live printed no final digest"
expect "143 ticks, 2 resumes, frames at the step cap: 1, ms dropped by frames: 72"

printf '\n==> verify, compare, sync-test\n'
run 0 "$duel" verify live.twr
expect "OK        live.twr (143 ticks, digest $digest)"
run 0 "$duel" compare live.twr live.twr
expect "duel: no divergence in 143 ticks"
# The scripted bots against the live players: the right bot's stick moves
# the right paddle on the first step, the live right player (player 1) waits.
run 1 "$duel" compare live.twr --live --inputs scripted
expect "B: live run (inputs scripted) (143 ticks)"
expect "first divergent tick 1 ("
expect "fields differ: paddles; inputs first differ at tick 0 (player 1)"
run 0 "$duel" sync-test --ticks 2000 --rollback 8
expect "sync test passed: duel 2000 ticks, rollback 8"

printf '\n==> record random inputs and verify\n'
run 0 "$duel" record --ticks 1000 --inputs random:7 --out r.twr
expect "wrote r.twr: duel 1000 ticks, 2 players,"
recorded=$(sed -n 's/.*, digest //p' <<<"$out")
run 0 "$duel" verify r.twr
expect "OK        r.twr (1000 ticks, digest $recorded)"

printf '\n==> budget\n'
run 0 "$duel" budget --hz 30,60
expect "sim: duel version 2"
expect "work units per tick on this machine (the mean in ns; median "
run 0 "$duel" budget --hz 30,60 --json
python3 - "$out" <<'PY' || fail "budget --json lacks keys"
import json, sys
r = json.loads(sys.argv[1])
for key in ["sim", "simVersion", "workPerTick", "medianNs", "p99Ns", "rates",
            "recommendedHz", "catchUp", "digest"]:
    assert key in r, key
assert (r["sim"], r["simVersion"], r["workPerTick"]) == ("duel", 2, 1), r
assert [x["hz"] for x in r["rates"]] == [30, 60], r["rates"]
for x in r["rates"]:
    assert set(x) >= {"budgetNs", "headroomP99", "verdict"}, x
PY
checks=$((checks + 1))

printf '\n==> a version-1 replay (one input for both paddles) is refused by version\n'
run 2 "$duel" verify "$OLDPWD/examples/duel/tests/fixtures/duel-v1.twr"
expect "replay was recorded by duel version 1; this build runs version 2"

printf '\n==> one rule changed, version not bumped: verify must fail at the first checkpoint\n'
run 1 "$work/duel-rule-change" verify live.twr
expect "DIVERGED  live.twr: checkpoint 1 at tick 30 diverges (last match at tick 0, so within ticks 1..=30); fields differ: paddles"
expect "1 failed (1 diverged, 0 refused)"

printf '\n==> a room: the duel'"'"'s own serve hosts it, two duel peers play through its relay\n'
mkdir -p www && echo '<h1>duel</h1>' > www/index.html
"$duel" serve --port 0 --dir www > serve.out 2>/dev/null &
serve_pid=$!
for _ in $(seq 100); do grep -q serving serve.out 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's#.*http://127.0.0.1:\([0-9]*\)/.*#\1#p' serve.out)
[ -n "$port" ] || { kill "$serve_pid"; fail "duel serve printed no port"; }
path=$(curl -fsS -H 'content-type: application/json' -d '{"sim":"duel","players":2,"ticks":600}' \
  "http://127.0.0.1:$port/v1/rooms" | python3 -c 'import json,sys; print(json.load(sys.stdin)["path"])')
"$duel" peer --room "ws://127.0.0.1:$port$path" --json --out room0 > room0.json 2>/dev/null &
peer0=$!
run 0 "$duel" peer --room "ws://127.0.0.1:$port$path" --json --out room1
wait "$peer0" || { kill "$serve_pid"; fail "the first room peer failed"; }
kill "$serve_pid"
python3 - room0.json "$out" <<'PY' || fail "the room match did not end clean"
import json, sys
a, b = json.load(open(sys.argv[1])), json.loads(sys.argv[2].strip().splitlines()[-1])
for v in (a, b):
    assert v["confirmedTick"] == 600 and v["desyncs"] == 0, v
    assert v["room"]["sim"] == "duel" and v["room"]["relaySent"] >= 600, v
assert a["confirmedChecksum"] == b["confirmedChecksum"], (a, b)
assert sorted([a["room"]["slot"], b["room"]["slot"]]) == [0, 1]
PY
checks=$((checks + 1))
run 0 "$duel" verify room0/session.twr
expect "OK        room0/session.twr (600 ticks"

printf '\nduel ci: %d checks passed (live digest %s)\n' "$checks" "$digest"
