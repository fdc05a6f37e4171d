#!/usr/bin/env bash
# An S3-compatible server that checks signatures, for the object-store tests: moto 5.2.5's server
# mode from PyPI in a throw-away venv, .parity/objstore (test/objstore.test.ts starts it on
# loopback with authentication on, INITIAL_NO_AUTH_ACTION_COUNT=0). Test tools only; tessera never
# needs Python at run time. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.parity/objstore
stamp=.moto-5.2.5
[ -f "$dir/$stamp" ] && exit 0
if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
  echo "objstore: installing python3-venv" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
mkdir -p "$dir"
# The physical path: the venv's scripts name it, and .parity may be a link (a worktree sharing it).
real=$(cd "$dir" && pwd -P)
python3 -m venv --clear "$real"
"$real/bin/pip" install --quiet --disable-pip-version-check "moto[server]==5.2.5"
touch "$real/$stamp"
