#!/usr/bin/env bash
# A Debian 12 base image for machines that reach Debian's mirrors but no container registry: made by
# debootstrap (minbase) from deb.debian.org and imported into podman's local store, where it stays
# (a second call finds it there and returns at once). Its apt sources are the official
# debian:bookworm-slim image's: bookworm, bookworm-updates and bookworm-security.
#   bash scripts/container-base.sh [IMAGE]     prints the image name (default localhost/tessera-debian:bookworm)
# then: podman build --format docker --pull=never --build-arg BASE=<that name> -t tessera .
set -euo pipefail
image=${1:-localhost/tessera-debian:bookworm}
mirror=${TESSERA_DEBIAN_MIRROR:-http://deb.debian.org}
if podman image exists "$image"; then echo "$image"; exit 0; fi
for tool in debootstrap podman; do
  command -v "$tool" >/dev/null || { echo "container-base: $tool is missing (make install installs it)" >&2; exit 1; }
done
root=$(mktemp -d /var/tmp/tessera-debootstrap.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "container-base: debootstrap --variant=minbase bookworm from $mirror/debian" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror/debian" >/dev/null
rm -f "$root/etc/apt/sources.list"
cat > "$root/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $mirror/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $mirror/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
# Certificate authorities this machine added to its own trust (e.g. a TLS-intercepting egress proxy's):
# the images built on it reach the npm registry through the same network, so they trust them too
# (ca-certificates, once installed in an image, adds them; Node reads the bundle it makes).
changes=()
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  changes+=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt')
  echo "container-base: added this machine's $(ls /usr/local/share/ca-certificates/*.crt | wc -l) local CA certificate(s)" >&2
fi
# What a container image leaves out: package caches, the build host's name and resolver.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*.log
: > "$root/etc/hostname"; rm -f "$root/etc/resolv.conf"
tar -C "$root" -c . | podman import --quiet "${changes[@]}" --change 'CMD ["bash"]' \
  --change 'LABEL org.opencontainers.image.description="Debian 12 minbase made by debootstrap (tessera scripts/container-base.sh)"' - "$image" >/dev/null
echo "$image"
