#!/usr/bin/env bash
# An S3-compatible server that checks signatures, for the object-store tests: moto 5.2.5's server
# mode from PyPI in a throw-away venv, .parity/objstore (test/objstore.test.ts starts it on
# loopback with authentication on, INITIAL_NO_AUTH_ACTION_COUNT=0). Test tools only; tessera never
# needs Python at run time. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/lib/venv.sh
ensure_venv .parity/objstore .moto-5.2.5 "moto[server]==5.2.5"
