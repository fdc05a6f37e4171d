#!/usr/bin/env bash
# A real STAC API for test/mosaic-stac.test.ts: stac-fastapi-pgstac (the common production backend)
# over Debian's PostgreSQL 15 with PostGIS, the Python side from PyPI in a throw-away venv
# (.parity/pgstac). serve.sh starts one on loopback with given items. Test tool only. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.parity/pgstac
stamp=$venv/.stac-fastapi-pgstac-7.2.0-pypgstac-0.10.0
missing=()
for p in postgresql-15 postgresql-15-postgis-3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "stac-api: apt-get install ${missing[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts a cluster as a service when it installs PostgreSQL; the tests run their own.
  $sudo_cmd systemctl disable --now postgresql >/dev/null 2>&1 || $sudo_cmd service postgresql stop >/dev/null 2>&1 || true
fi
if [ -f "$stamp" ]; then exit 0; fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "stac-fastapi-pgstac==7.2.0" "pypgstac[psycopg]==0.10.0" "uvicorn==0.54.0"
touch "$stamp"
