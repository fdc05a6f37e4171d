#!/usr/bin/env bash
# Azure's own storage emulator, Azurite 3.37.0 from the npm registry, for the Azure Blob tests:
# installed into .parity/azurite (test tools only, never a dependency of tessera), with the
# project's own Node (.tools/node). Prints the folder of its executables. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=.parity/azurite
stamp=.azurite-3.37.0
export PATH="$PWD/.tools/node/bin:$PATH"
if [ ! -f "$dir/$stamp" ]; then
  mkdir -p "$dir"
  real=$(cd "$dir" && pwd -P)
  npm install --prefix "$real" --no-save --no-audit --no-fund --loglevel=error "azurite@3.37.0" >&2
  touch "$real/$stamp"
fi
echo "$(cd "$dir" && pwd -P)/node_modules/.bin"
