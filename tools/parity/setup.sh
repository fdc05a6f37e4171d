#!/usr/bin/env bash
# Creates the throw-away reference environment: TiTiler 0.18.10 from PyPI in .parity/venv, and
# OWSLib (a WMTS client nobody here wrote, for the client checks) and prometheus-client (the
# reference parser of /metrics). Test tools only; tessera never
# needs Python at run time. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.parity/venv
stamp=$venv/.titiler-0.18.10-owslib-0.35.0-prometheus-0.26.0
if [ -f "$stamp" ]; then exit 0; fi
if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
  echo "parity: installing python3-venv" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -c tools/parity/constraints.txt "titiler.application==0.18.10" "uvicorn[standard]" "OWSLib==0.35.0" "prometheus-client==0.26.0"
touch "$stamp"
