#!/usr/bin/env bash
# Every shell block of README.md, run in order in a fresh copy of the
# repository, as a newcomer would (scripts/readme_blocks.py says how, and
# lists beside each slow line what runs instead). Part of scripts/test-all.sh.
#
#   bash scripts/readme-blocks.sh
#   python3 scripts/readme_blocks.py --list     # the blocks, nothing run
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 scripts/readme_blocks.py "$@"
