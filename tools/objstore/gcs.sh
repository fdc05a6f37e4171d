#!/usr/bin/env bash
# A Google Cloud Storage emulator for the gs:// OAuth tests: gcp-storage-emulator 2026.7.19 from PyPI
# (it serves the XML API's GET /bucket/object with Range, and uploads), in a throw-away venv,
# .parity/gcs. It checks no credentials: test/objstore.test.ts puts a proxy in front of it that
# does. Test tools only; tessera never needs Python at run time. Prints the emulator's executable.
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.parity/gcs
stamp=.gcp-storage-emulator-2026.7.19
if [ ! -f "$dir/$stamp" ]; then
  if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
    echo "gcs: installing python3-venv" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  mkdir -p "$dir"
  # The physical path: the venv's scripts name it, and .parity may be a link (a worktree sharing it).
  real=$(cd "$dir" && pwd -P)
  python3 -m venv --clear "$real"
  "$real/bin/pip" install --quiet --disable-pip-version-check "gcp-storage-emulator==2026.7.19" >&2
  touch "$real/$stamp"
fi
echo "$(cd "$dir" && pwd -P)/bin/gcp-storage-emulator"
