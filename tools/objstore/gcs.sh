#!/usr/bin/env bash
# A Google Cloud Storage emulator for the gs:// OAuth tests: gcp-storage-emulator 2026.7.19 from PyPI
# (it serves the XML API's GET /bucket/object with Range, and uploads), in a throw-away venv,
# .parity/gcs. It checks no credentials: test/objstore.test.ts puts a proxy in front of it that
# does. Test tools only; tessera never needs Python at run time. Prints the emulator's executable.
# Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/lib/venv.sh
ensure_venv .parity/gcs .gcp-storage-emulator-2026.7.19 "gcp-storage-emulator==2026.7.19"
echo "$(cd .parity/gcs && pwd -P)/bin/gcp-storage-emulator"
