#!/usr/bin/env bash
# A throw-away venv (.parity/cogeo9) with cogeo-mosaic 9.x from PyPI: the current cogeo-mosaic, whose
# `create`, `footprint` and `info` commands test/mosaic-create.test.ts runs beside `tessera mosaic`
# (the parity venv keeps cogeo-mosaic 7.2, the one TiTiler 0.18.10 pins). Test tool only. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.parity/cogeo9
version=9.2.0
stamp=$venv/.cogeo-mosaic-$version
if [ -f "$stamp" ]; then exit 0; fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "cogeo-mosaic==$version"
touch "$stamp"
