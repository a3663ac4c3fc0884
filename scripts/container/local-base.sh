#!/usr/bin/env bash
# Builds, from Debian's packages alone, the image the Dockerfile starts FROM
# (docker.io/library/node:20-bookworm-slim), for machines that can reach Debian's mirrors and the
# npm registry but no image registry. Elsewhere `docker build` / `podman build` pull the real one
# and this script is not needed.
#
# What it makes stands in for the official image where the Dockerfile relies on it: Debian 12
# (bookworm, debootstrap's minbase: apt, no documentation), Node.js 20 and npm in /usr/local (copied
# from this host's Node.js 20, as the official image has them), and the user `node` (uid 1000).
# It also trusts what this host trusts (its CA bundle, through NODE_EXTRA_CA_CERTS): a machine whose
# way out goes through a TLS-inspecting proxy reaches the npm registry from the build only so.
#
# Needs: root, debootstrap, podman. Usage: scripts/container/local-base.sh [--force]
set -euo pipefail

IMAGE=docker.io/library/node:20-bookworm-slim
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [[ "${1:-}" != "--force" ]] && podman image exists "$IMAGE"; then
  echo "local-base: $IMAGE is there"
  exit 0
fi

node_bin=$(command -v node)
node_major=$("$node_bin" -p 'process.versions.node.split(".")[0]')
if [[ "$node_major" != 20 ]]; then
  echo "local-base: this host's node is $("$node_bin" --version); the image needs Node.js 20" >&2
  exit 1
fi
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")

root=$(mktemp -d "${TMPDIR:-/tmp}/tributary-base-XXXXXX")
trap 'rm -rf "$root"' EXIT

echo "local-base: debootstrap bookworm (minbase) from $MIRROR"
debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/dev/null

# As slim as the official -slim images: no package lists, caches, documentation or locales.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
  "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*

echo "local-base: Node.js $("$node_bin" --version) and npm $(npm --version) into /usr/local"
install -D -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
fi
chroot "$root" /usr/sbin/groupadd --gid 1000 node
chroot "$root" /usr/sbin/useradd --uid 1000 --gid node --shell /bin/bash --create-home node

echo "local-base: importing as $IMAGE"
tar -C "$root" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"$("$node_bin" -p process.versions.node)" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' - "$IMAGE" >/dev/null
podman image ls "$IMAGE"
