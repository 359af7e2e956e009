#!/usr/bin/env bash
# The relay's cost on this machine (docs/netplay.md, "Rooms and the relay"):
# `tickwise serve` hosts N rooms, each a 2-player horde match at 60 Hz
# between two native `tickwise peer --room` processes (every datagram
# through the relay), and the server's CPU time is read from /proc over
# the match.
#
#   bash scripts/measure-rooms.sh [ROOMS] [TICKS]     (default 4 rooms, 3600 ticks = 60 s)
#
# Prints serve's CPU seconds over the match, per room and per room-second,
# the rooms a core could relay at that rate, the relay's counters from
# /metrics, and each match's outcome. Loopback only; everything it starts
# it stops.
set -euo pipefail

rooms="${1:-4}"
ticks="${2:-3600}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --locked -q -p tickwise-cli --bin tickwise
bin=target/release/tickwise
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/www" && echo '<h1>rooms</h1>' > "$work/www/index.html"

"$bin" serve --port 0 --dir "$work/www" > "$work/serve.out" 2>/dev/null &
serve_pid=$!
for _ in $(seq 100); do grep -q serving "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's#.*http://127.0.0.1:\([0-9]*\)/.*#\1#p' "$work/serve.out")
base="http://127.0.0.1:$port"

config=$(python3 -c 'import json; c=json.load(open("config/horde.json")); c["tickHz"]=60; print(json.dumps(json.dumps(c)))')
urls=()
for _ in $(seq "$rooms"); do
  path=$(curl -fsS -X POST -H 'content-type: application/json' \
    -d "{\"sim\":\"horde\",\"players\":2,\"ticks\":$ticks,\"config\":$config}" \
    "$base/v1/rooms" | python3 -c 'import json,sys; print(json.load(sys.stdin)["path"])')
  urls+=("ws://127.0.0.1:$port$path")
done

cpu() { awk '{print $14 + $15}' "/proc/$serve_pid/stat"; }
hz=$(getconf CLK_TCK)
before=$(cpu)
start=$(date +%s.%N)
pids=()
for i in "${!urls[@]}"; do
  for p in 0 1; do
    "$bin" peer --room "${urls[$i]}" --player "$p" --json > "$work/room$i-p$p.json" 2>/dev/null &
    pids+=($!)
  done
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
end=$(date +%s.%N)
after=$(cpu)

python3 - "$work" "$rooms" "$hz" "$before" "$after" "$start" "$end" "$failed" <<'EOF'
import json, sys, glob
work, rooms, hz, before, after, start, end, failed = sys.argv[1:]
rooms, hz = int(rooms), int(hz)
cpu = (int(after) - int(before)) / hz
wall = float(end) - float(start)
print(f"rooms: {rooms}, wall {wall:.1f} s, serve CPU {cpu:.2f} s "
      f"({100 * cpu / wall:.2f} % of a core)")
per_room = cpu / wall / rooms
print(f"per active room: {1000 * per_room:.2f} ms of CPU per second "
      f"({100 * per_room:.3f} % of a core) -> about {int(1 / per_room) if per_room else 'inf'} rooms per core")
outcomes = []
for f in sorted(glob.glob(f"{work}/room*-p*.json")):
    v = json.load(open(f))
    r = v.get("room", {})
    outcomes.append((f.split("/")[-1], v["confirmedTick"], v["confirmedChecksum"], v["desyncs"],
                     r.get("relaySent"), r.get("relayBytesSent")))
for o in outcomes:
    print("  %-14s tick %s checksum %s desyncs %s relay sent %s datagrams, %s bytes" % o)
print(f"peers that failed: {failed}")
EOF
curl -fsS "$base/metrics" | grep -E '^tickwise_(relay|room_starts|rooms_created)'
