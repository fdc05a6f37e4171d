#!/usr/bin/env bash
# TiTiler's own route tests, run over HTTP against tessera: a measurement, not part of `make test`
# (the tests are not on PyPI, and nothing here downloads them). Give it a git checkout of TiTiler
# you already have and a tag or commit; it takes src/titiler/application/tests from it into a
# temporary folder, points their `app` fixture at a tessera it starts (route_tests_conftest.py),
# serves their fixtures on loopback and runs pytest from the parity venv (tools/parity/setup.sh).
#
#   bash tools/parity/route-tests.sh /path/to/titiler 0.18.10        # TESSERA_TITILER_API=0.18
#   bash tools/parity/route-tests.sh /path/to/titiler 2.2.1 2        # TESSERA_TITILER_API=2
set -euo pipefail
repo=${1:?usage: route-tests.sh TITILER_GIT_DIR REV [API]}
rev=${2:?usage: route-tests.sh TITILER_GIT_DIR REV [API]}
api=${3:-0.18}
here=$(cd "$(dirname "$0")/../.." && pwd)
venv="$here/.parity/venv"
[ -x "$venv/bin/python" ] || bash "$here/tools/parity/setup.sh"
"$venv/bin/python" -c 'import pytest' 2>/dev/null || "$venv/bin/pip" install -q pytest
export PATH="$here/.tools/node/bin:$PATH"
work=$(mktemp -d)
cleanup() { kill "${files_pid:-}" "${tessera_pid:-}" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
git -C "$repo" archive "$rev" src/titiler/application/tests 2>/dev/null | tar x -C "$work" || true
tests="$work/src/titiler/application/tests"
[ -f "$tests/conftest.py" ] || { echo "no src/titiler/application/tests at $rev in $repo" >&2; exit 1; }
rm -f "$tests/routes/test_zarr.py" # tessera reads no Zarr
cat "$here/tools/parity/route_tests_conftest.py" >> "$tests/conftest.py"
node "$here/dist/tools/parity/route-tests-files.js" "$tests/fixtures" > "$work/files.url" &
files_pid=$!
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TESSERA_TITILER_API=$api TESSERA_ALLOWED_NETWORKS=127.0.0.0/8 TESSERA_ALLOWED_LOCAL_ROOTS="$tests/fixtures" \
  TESSERA_CACHE_CONTROL='private, max-age=3600' TESSERA_LOG_LEVEL=warn \
  "$here/bin/tessera" serve --host 127.0.0.1 --port "$port" > "$work/tessera.log" 2>&1 &
tessera_pid=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && [ -s "$work/files.url" ] && break; sleep 0.2; done
cd "$work/src/titiler/application"
TESSERA_URL="http://127.0.0.1:$port" FILES_URL=$(head -1 "$work/files.url") \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider -rf tests | grep -E '^(FAILED|ERROR)|passed|failed' || true
