#!/usr/bin/env bash
# A throw-away venv with one leafmap release from PyPI (.parity/leafmap-VERSION), for the client
# checks of test/titiler2-clients.test.ts: leafmap's TiTiler helpers (cog_tile, stac_tile …) pointed
# at tessera. rasterio and rioxarray are what leafmap's stac_tile imports to look for a colormap (its
# "raster" extra, less the rest of it). Test tool only; tessera never needs Python at run time.
# Idempotent; prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${1:?usage: tools/clients/leafmap.sh VERSION}"
venv=.parity/leafmap-$version
stamp=$venv/.leafmap-$version-rasterio-1.4.4-rioxarray-0.19.0
if [ ! -f "$stamp" ]; then
  mkdir -p "$venv"
  # The physical path: the venv's scripts name it, and .parity may be a link (a worktree sharing it).
  real=$(cd "$venv" && pwd -P)
  python3 -m venv --clear "$real"
  "$real/bin/pip" install --quiet --disable-pip-version-check "leafmap==$version" "rasterio==1.4.4" "rioxarray==0.19.0" >&2
  touch "$stamp"
fi
echo "$(cd "$venv" && pwd -P)/bin/python"
