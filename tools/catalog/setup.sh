#!/usr/bin/env bash
# A stac-geoparquet writer for the tests and the benchmark of the catalogue without a database
# (TESSERA_CATALOG): rustac 0.9.18 from PyPI in a throw-away venv, .parity/geoparquet, and
# write.py beside this script. Test tools only: tessera reads stac-geoparquet itself (hyparquet)
# and never needs Python at run time. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.parity/geoparquet
stamp=.rustac-0.9.18
[ -f "$dir/$stamp" ] && exit 0
mkdir -p "$dir"
# The physical path: the venv's scripts name it, and .parity may be a link (a worktree sharing it).
real=$(cd "$dir" && pwd -P)
python3 -m venv --clear "$real"
"$real/bin/pip" install --quiet --disable-pip-version-check "rustac==0.9.18"
touch "$real/$stamp"
