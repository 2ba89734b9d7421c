#!/usr/bin/env bash
# `npm run image:base`: a Debian bookworm base image made from nothing (no registry
# is needed): mmdebstrap builds a minimal root filesystem and `docker import` turns
# it into an image. The tag carries a hash of this script, so an unchanged recipe
# is never rebuilt. Prints the tag on its last line.
set -euo pipefail
cd "$(dirname "$0")"
recipe_hash=$(sha256sum base-image.sh | cut -c1-12)
tag="${EFFECT_SANDBOX_BASE_IMAGE:-effect-sandbox/debian:bookworm-${recipe_hash}}"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi
echo "building $tag with mmdebstrap (about a minute)..." >&2
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# minbase: bash, coreutils, findutils, util-linux, apt, ... ; docs, man pages and locales left out.
mmdebstrap --variant=minbase --quiet \
  --include=ca-certificates,procps,passwd \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  bookworm - "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
  | docker import --change 'ENV LANG=C.UTF-8 LC_ALL=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "$tag"
