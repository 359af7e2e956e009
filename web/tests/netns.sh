#!/usr/bin/env bash
# Runs a command inside a network namespace of its own, so that WebRTC tests
# never send traffic to the machine's real interfaces.
#
#   bash web/tests/netns.sh COMMAND [ARGS...]
#
# Chromium offers no loopback ICE candidates, and a namespace with only `lo`
# gives none at all, so the namespace gets a veth pair with private addresses
# (10.213.0.1 and 10.213.0.2) that reach nothing outside it; Chromium must run
# with --disable-features=WebRtcHideLocalIpsWithMdns so its host candidates are
# these addresses rather than mDNS names. Needs root (or user namespaces), as
# CI has; see docs/browser.md.
set -euo pipefail
if [ "$#" -eq 0 ]; then
  echo "usage: netns.sh COMMAND [ARGS...]" >&2
  exit 2
fi
if [ "${TICKWISE_IN_NETNS:-}" = 1 ]; then
  exec "$@"
fi
exec unshare -n env TICKWISE_IN_NETNS=1 bash -c '
  set -euo pipefail
  ip link set lo up
  ip link add v0 type veth peer name v1
  ip addr add 10.213.0.1/24 dev v0
  ip addr add 10.213.0.2/24 dev v1
  ip link set v0 up
  ip link set v1 up
  ip route add default via 10.213.0.2 dev v0
  exec "$@"
' netns "$@"
