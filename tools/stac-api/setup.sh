#!/usr/bin/env bash
# Real pgSTAC catalogues for the tests, over Debian's PostgreSQL 15 with PostGIS, the Python side
# from PyPI in throw-away venvs: .parity/pgstac holds pypgstac 0.10.0 (the schema's migrations and
# its loader) and stac-fastapi-pgstac 7.2.0 (a STAC API, for test/mosaic-stac.test.ts);
# .parity/titiler-pgstac-3.2.0 holds titiler-pgstac 3.2.0, the reference tessera's /searches and
# /collections are compared with (test/parity/pgstac.test.ts). serve.sh starts either on loopback
# with given items. Test tools only; tessera never needs Python at run time. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
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

# venv STAMP PACKAGE...: a fresh venv with exactly these packages, unless its stamp says it has them.
venv() {
  local dir=$1 stamp=$2
  shift 2
  [ -f "$dir/$stamp" ] && return 0
  mkdir -p "$dir"
  # The physical path: the venv's scripts name it, and .parity may be a link (a worktree sharing it).
  local real
  real=$(cd "$dir" && pwd -P)
  python3 -m venv --clear "$real"
  "$real/bin/pip" install --quiet --disable-pip-version-check "$@"
  touch "$real/$stamp"
}

venv .parity/pgstac .stac-fastapi-pgstac-7.2.0-pypgstac-0.10.0 "stac-fastapi-pgstac==7.2.0" "pypgstac[psycopg]==0.10.0" "uvicorn==0.54.0"
# titiler-pgstac 3.2.0 names no pypgstac (its tests take <= 0.10): the schema is pypgstac 0.10.0's, migrated from .parity/pgstac.
venv .parity/titiler-pgstac-3.2.0 .titiler-pgstac-3.2.0 "titiler.pgstac[psycopg-binary]==3.2.0" "uvicorn==0.54.0"
