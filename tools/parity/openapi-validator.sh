#!/usr/bin/env bash
# A second OpenAPI validator for test/openapi.test.ts: openapi-spec-validator (Python, the one
# FastAPI users and openapi-generator's CI reach for), in its own throw-away venv
# .parity/openapi-validator so its pins never meet TiTiler's. Test tool only. Idempotent; prints
# the venv's python.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.parity/openapi-validator
stamp=$venv/.openapi-spec-validator-0.9.0
if [ ! -f "$stamp" ]; then
  rm -rf "$venv"
  mkdir -p .parity
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-spec-validator==0.9.0" >&2
  touch "$stamp"
fi
echo "$PWD/$venv/bin/python"
