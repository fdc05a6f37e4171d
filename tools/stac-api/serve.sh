#!/usr/bin/env bash
# Serves a pgSTAC catalogue on loopback until it is sent SIGTERM: a PostgreSQL cluster of its own in
# DIR (listening on 127.0.0.1:PG_PORT only, trust authentication for user postgres), pgSTAC's schema
# migrated into it by pypgstac, the collections (one JSON file each) and items (newline-delimited
# JSON) loaded by pypgstac, and in front of it on 127.0.0.1:API_PORT the application STAC_APP names:
#   stac-fastapi     stac-fastapi-pgstac 7.2.0, a STAC API (the default)
#   titiler-pgstac   titiler-pgstac 3.2.0, the tiler tessera's /searches routes are compared with
#   none             nothing: the database alone (API_PORT unused); "ready" in DIR/ready once loaded
# Usage: [STAC_APP=…] serve.sh DIR PG_PORT API_PORT ITEMS.ndjson COLLECTION.json...   (setup.sh first)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir=$1 pg_port=$2 api_port=$3 items=$4
shift 4
app=${STAC_APP:-stac-fastapi}
bin=/usr/lib/postgresql/15/bin
venv=$root/.parity/pgstac
# PostgreSQL does not run as root: its files belong to the postgres user Debian's package made.
as_pg=(); [ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)
mkdir -p "$dir/pg"
if [ "$(id -u)" = 0 ]; then chown postgres "$dir/pg"; chmod a+x "$dir"; fi
"${as_pg[@]}" "$bin/initdb" -D "$dir/pg/data" -A trust -U postgres >"$dir/initdb.log"
stop() {
  [ -n "${api:-}" ] && kill "$api" 2>/dev/null
  "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/pg/data" -m fast stop >/dev/null 2>&1 || true
}
trap stop EXIT
trap 'exit 0' TERM INT
"${as_pg[@]}" "$bin/pg_ctl" -D "$dir/pg/data" -o "-p $pg_port -k $dir/pg -c listen_addresses=127.0.0.1" -l "$dir/pg/log" -w start >/dev/null
export PGHOST=127.0.0.1 PGPORT=$pg_port PGUSER=postgres PGPASSWORD=unused PGDATABASE=postgres
# Through the venv's python, not its scripts: a script's first line names the folder the venv was
# made in, which a shared .parity (worktrees) may no longer have.
pypgstac=("$venv/bin/python" -m pypgstac.pypgstac)
"${pypgstac[@]}" migrate >/dev/null
for collection in "$@"; do "${pypgstac[@]}" load collections "$collection" --method upsert >/dev/null; done
"${pypgstac[@]}" load items "$items" --method upsert >/dev/null
case "$app" in
  stac-fastapi)
    "$venv/bin/python" -m uvicorn stac_fastapi.pgstac.app:create_app --factory --host 127.0.0.1 --port "$api_port" --log-level warning &
    ;;
  titiler-pgstac)
    DATABASE_URL="postgresql://postgres@127.0.0.1:$pg_port/postgres" \
      "$root/.parity/titiler-pgstac-3.2.0/bin/python" -m uvicorn titiler.pgstac.main:app --host 127.0.0.1 --port "$api_port" --log-level warning --no-access-log &
    ;;
  none)
    echo ready >"$dir/ready"
    sleep infinity &
    ;;
  *)
    echo "serve.sh: unknown STAC_APP '$app'" >&2
    exit 2
    ;;
esac
api=$!
wait "$api"
