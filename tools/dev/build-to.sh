#!/usr/bin/env bash
# Compiles the project into another directory (default dist), copying the data files the code loads.
# Lets several people (or agents) build and run single test files without touching each other's dist.
# Usage: tools/dev/build-to.sh .build/me/dist && node --test .build/me/dist/test/expression.test.js
set -uo pipefail
out="${1:-dist}"
cd "$(dirname "$0")/../.."
npx tsc -p tsconfig.json --outDir "$out"
status=$?
for dir in src/tms/data src/image/data; do
  [ -d "$dir" ] && mkdir -p "$out/$dir" && cp "$dir"/*.json "$out/$dir/" 2>/dev/null
done
exit $status
