#!/usr/bin/env bash
# Makes deploy/Dockerfile's base image (node:20-bookworm-slim) when no registry can give it:
# this host's node and npm, the shared libraries `ldd` names, a static busybox for the shell and
# the `node` user (uid 1000) the image runs as. A no-op when the image is already there or can be
# pulled, so a machine that reaches Docker Hub builds on the real one.
# Usage: scripts/ci/local-base-image.sh [IMAGE]   (DOCKER=/path/to/docker to pick a client)
set -euo pipefail
cd "$(dirname "$0")/../.."
DOCKER=${DOCKER:-docker}
BASE=${1:-$(awk '$1 == "FROM" { print $2; exit }' deploy/Dockerfile)}
PULL_TIMEOUT_S=${PULL_TIMEOUT_S:-20}

if "$DOCKER" image inspect "$BASE" >/dev/null 2>&1; then
  echo "base image: $BASE is present"
  exit 0
fi
if timeout "$PULL_TIMEOUT_S" "$DOCKER" pull -q "$BASE" >/dev/null 2>&1; then
  echo "base image: pulled $BASE"
  exit 0
fi

NODE=$(readlink -f "$(command -v node)")
NODE_VERSION=$("$NODE" -p 'process.versions.node')
WANTED_MAJOR=$(sed -n 's/^node:\([0-9]*\).*/\1/p' <<<"${BASE##*/}")
if [ -n "$WANTED_MAJOR" ] && [ "${NODE_VERSION%%.*}" != "$WANTED_MAJOR" ]; then
  echo "base image: $BASE names node $WANTED_MAJOR but this host has node $NODE_VERSION" >&2
  exit 1
fi
NPM_DIR=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/rootfs"
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,usr/local/lib,etc,tmp,root,home/node}
chmod 1777 "$ROOT/tmp"

# busybox-static from Debian's archive (downloaded, not installed on this host).
(cd "$WORK" && { apt-get download busybox-static >/dev/null 2>&1 ||
  { apt-get update -qq && apt-get download busybox-static >/dev/null; }; })
dpkg-deb -x "$WORK"/busybox-static_*.deb "$WORK/busybox"
cp "$WORK/busybox/bin/busybox" "$ROOT/bin/busybox"
for applet in $("$ROOT/bin/busybox" --list-full); do
  [ -e "$ROOT/$applet" ] || ln -s /bin/busybox "$ROOT/$applet"
done

# node, where the official image has it, with every library it loads.
cp "$NODE" "$ROOT/usr/local/bin/node"
for lib in $(ldd "$NODE" | grep -o '/[^ ]*'); do
  mkdir -p "$ROOT$(dirname "$lib")"
  cp -L "$lib" "$ROOT$lib"
done
mkdir -p "$ROOT/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$ROOT/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"

# This host's trust store: where the npm registry is reached through a proxy with its own CA,
# `npm ci` inside the build trusts what the host trusts.
CA_BUNDLE=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
CA_ENV=()
if [ -r "$CA_BUNDLE" ]; then
  mkdir -p "$ROOT/etc/ssl/certs"
  cp -L "$CA_BUNDLE" "$ROOT/etc/ssl/certs/ca-certificates.crt"
  CA_ENV=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt')
fi

printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n' >"$ROOT/etc/passwd"
printf 'root:x:0:\nnode:x:1000:\n' >"$ROOT/etc/group"
chown 1000:1000 "$ROOT/home/node"

tar -C "$ROOT" -c . | "$DOCKER" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' "${CA_ENV[@]}" \
  - "$BASE" >/dev/null
echo "base image: made $BASE locally from this host's node $NODE_VERSION (no registry reached)"
