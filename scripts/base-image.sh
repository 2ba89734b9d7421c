#!/usr/bin/env bash
# `npm run image:base` / `npm run image:tools`: a Debian bookworm image made from
# nothing (no registry is needed): mmdebstrap builds a minimal root filesystem and
# `docker import` turns it into an image. Two variants of one recipe:
#
#   base   (default) bash, coreutils, apt, ca-certificates, procps, passwd;
#   tools  the same plus what the sandbox's tools need: Chromium (with fonts, so
#          pages render) for the browser, and Debian's ipykernel and jupyter_client
#          (for /usr/bin/python3) with Pillow for the jupyter plugin.
#
# The tag carries a hash of this script and the variant, so an unchanged recipe is
# never rebuilt. A tools image is smoke-tested (headless Chromium and the kernel
# modules, as uid 1000) before it keeps its tag. Prints the tag on its last line.
set -euo pipefail
cd "$(dirname "$0")"
variant="${1:-base}"
packages=ca-certificates,procps,passwd
case "$variant" in
  base) tag="${EFFECT_SANDBOX_BASE_IMAGE:-}" repository=effect-sandbox/debian ;;
  tools)
    tag="${EFFECT_SANDBOX_TOOLS_IMAGE:-}" repository=effect-sandbox/debian-tools
    packages+=,chromium,fonts-liberation,python3-ipykernel,python3-jupyter-client,python3-pil
    ;;
  *) echo "usage: $0 [base|tools]" >&2 && exit 2 ;;
esac
recipe_hash=$( (cat base-image.sh && echo "$variant") | sha256sum | cut -c1-12)
tag="${tag:-$repository:bookworm-$recipe_hash}"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi
echo "building $tag with mmdebstrap (base: about a minute; tools: about two)..." >&2
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# minbase: bash, coreutils, findutils, util-linux, apt, ... ; no Recommends (mmdebstrap's
# default); docs, man pages and locales left out.
mmdebstrap --variant=minbase --quiet --include="$packages" \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  bookworm - "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
  | docker import --change 'ENV LANG=C.UTF-8 LC_ALL=C.UTF-8' --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null

if [ "$variant" = tools ]; then
  # As the sandbox user would (uid 1000, no home of its own here): a page rendered by
  # headless Chromium, and the modules the jupyter plugin's kernel imports.
  smoke='set -e
chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --dump-dom "data:text/html,<p>chromium-ok</p>" 2>/dev/null | grep -q "<p>chromium-ok</p>"
/usr/bin/python3 -c "import ipykernel, jupyter_client, PIL"'
  if ! docker run --rm --user 1000:1000 -e HOME=/tmp "$tag" /bin/bash -c "$smoke" >&2; then
    docker image rm "$tag" >/dev/null
    echo "the tools image failed its smoke test (Chromium or ipykernel cannot run as uid 1000)" >&2
    exit 1
  fi
fi
echo "$tag"
