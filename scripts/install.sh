#!/usr/bin/env bash
# Installs everything tessera needs on a Debian 12 machine, skipping what is already there:
# Debian packages (GDAL headers, a C++ toolchain, Chromium for the page tests), Node.js (the pinned
# LTS, from the npm registry), the npm packages from the lock file, and gdal-async built from source
# against the system GDAL.
#
# TESSERA_INSTALL=runtime installs only what a built tessera runs on: GDAL's runtime library and
# Node.js, no compiler, no npm packages (they come built from elsewhere: the Dockerfile's build
# stage). TESSERA_INSTALL_BROWSER=0 skips the test tools.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${TESSERA_INSTALL:-full}
case "$mode" in
  full) apt_packages=(libgdal-dev gdal-bin build-essential python3 python3-venv pkg-config) ;;
  runtime) apt_packages=(libgdal32 ca-certificates) ;;
  *) echo "install: TESSERA_INSTALL must be full or runtime, got '$mode'" >&2; exit 1 ;;
esac
# Test tools: Chromium for the page tests, nginx and redis-server for the deployment tests, podman
# (with runc, debootstrap for its base image, podman-compose) for the container test
# (TESSERA_INSTALL_BROWSER=0 skips them). Podman's network stack is named, not left to apt: with
# --no-install-recommends apt satisfies podman's `container-network-stack` with the CNI plugins,
# which give containers no DNS, so compose services cannot find each other by name. netavark with
# aardvark-dns (and iptables, which netavark drives) does; deploy/containers.conf selects it.
if [ "$mode" = full ] && [ "${TESSERA_INSTALL_BROWSER:-1}" = 1 ]; then
  apt_packages+=(chromium nginx redis-server podman netavark aardvark-dns iptables runc debootstrap podman-compose uidmap fuse-overlayfs slirp4netns)
fi
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install: apt-get install ${missing[*]}" >&2
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts nginx and Redis as services when it installs them; the tests run their own.
  for service in nginx redis-server; do
    if printf '%s\n' "${missing[@]}" | grep -qx "$service"; then
      $sudo_cmd systemctl disable --now "$service" >/dev/null 2>&1 || $sudo_cmd service "$service" stop >/dev/null 2>&1 || true
    fi
  done
fi

# Node.js and npm: the pinned LTS in .tools/ (scripts/node.sh), first on PATH from here on; it also
# points node-gyp at that Node's headers.
source scripts/node.sh
if [ "$mode" = runtime ]; then exit 0; fi

stamp=node_modules/.tessera-install
# Rebuilt when the lock file's content changes (not its date: a fresh checkout or another worktree of
# the same commit needs nothing), when the modules were built for another Node, or do not load.
want="node $TESSERA_NODE_VERSION lock $(sha256sum package-lock.json | cut -c1-16)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || ! node -e "require('gdal-async')" >/dev/null 2>&1; then
  echo "install: npm ci" >&2
  # Scripts are skipped on the first pass so that only gdal-async is built from source;
  # sharp ships its own libvips binaries as optional packages.
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  npm rebuild sharp --loglevel=error
  echo "install: building gdal-async against the system GDAL $(gdal-config --version)" >&2
  npm_config_build_from_source=true npm_config_shared_gdal=true \
    npm rebuild gdal-async --loglevel=error
  node -e "const g=require('gdal-async'); if(!g.version.startsWith('3.')) process.exit(1)"
  echo "$want" > "$stamp"
elif [ package-lock.json -nt "$stamp" ]; then
  # Up to date: the stamp is made newer than the lock file, so that make stops asking.
  touch "$stamp"
fi
