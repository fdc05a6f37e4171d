#!/usr/bin/env bash
# The second reference: titiler.application 2.4.0 (pinned) and uvicorn[standard] from PyPI in a
# throw-away venv, .parity/titiler-2.4.0, for the TiTiler 2.x parity suite (issue 37: tessera answers
# 2.x requests beside 0.18's). Test tool only; tessera never needs Python at run time. Idempotent;
# prints the venv's bin folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.parity/titiler-2.4.0
stamp=$venv/.titiler-2.4.0
if [ ! -f "$stamp" ]; then
  mkdir -p "$venv"
  # The physical path: the venv's scripts name it, and .parity may be a link (a worktree sharing it).
  real=$(cd "$venv" && pwd -P)
  python3 -m venv --clear "$real"
  "$real/bin/pip" install --quiet --disable-pip-version-check "titiler.application==2.4.0" "uvicorn[standard]" >&2
  touch "$stamp"
fi
echo "$(cd "$venv" && pwd -P)/bin"
