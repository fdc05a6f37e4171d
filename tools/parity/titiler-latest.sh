#!/usr/bin/env bash
# A throw-away venv (.parity/titiler-latest) with the newest titiler.application on PyPI and
# uvicorn[standard], for the benchmark: tessera is measured against TiTiler 0.18.10 (the release it
# replaces, .parity/venv) and, beside it, against what a user installing TiTiler today would get.
# Unpinned on purpose; the version installed is written to the stamp file and read back by the
# benchmark's report. Benchmark tool only. Idempotent: once installed it is kept (delete the
# directory to take a newer release).
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.parity/titiler-latest
stamp=$venv/.installed
if [ -f "$stamp" ]; then exit 0; fi
mkdir -p "$venv"
# The physical path: the venv's scripts name it in their first line, and .parity/titiler-latest
# may be a link (a git worktree sharing the main checkout's venvs).
real=$(cd "$venv" && pwd -P)
python3 -m venv --clear "$real"
"$real/bin/pip" install --quiet --disable-pip-version-check --upgrade "titiler.application" "uvicorn[standard]"
"$real/bin/python" -c 'from importlib.metadata import version; print(version("titiler.application"))' >"$real/.installed.tmp"
mv "$real/.installed.tmp" "$stamp"
echo "titiler-latest: titiler.application $(cat "$stamp") in $venv" >&2
