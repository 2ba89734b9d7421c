#!/usr/bin/env bash
# `npm run image:base` / `npm run image:tools`: a Debian bookworm image made from
# nothing (no registry is needed): mmdebstrap builds a minimal root filesystem and
# `docker import` turns it into an image. Two variants of one recipe:
#
#   base   (default) bash, coreutils, apt, ca-certificates, procps, passwd;
#   tools  the same plus what the sandbox's tools need: Chromium (with fonts, so
#          pages render) for the browser, Debian's ipykernel and jupyter_client
#          (for /usr/bin/python3) with Pillow for the jupyter plugin, and code-server
#          (npm) in /opt/code-server for the vscode plugin.
#
# code-server's native modules are compiled in a throwaway container of the same root
# filesystem that gets the build tools (they never reach the image), with the Node and npm
# that run this script (code-server wants the major version the runtime image's Node has:
# 24) and this machine's npm settings; only /opt/code-server is copied out.
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
    packages+=,chromium,fonts-liberation,python3-ipykernel,python3-jupyter-client,python3-pil,libgssapi-krb5-2
    ;;
  *) echo "usage: $0 [base|tools]" >&2 && exit 2 ;;
esac
recipe_hash=$( (cat base-image.sh && echo "$variant") | sha256sum | cut -c1-12)
tag="${tag:-$repository:bookworm-$recipe_hash}"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "$tag"
  exit 0
fi
echo "building $tag with mmdebstrap (base: about a minute; tools: two, plus code-server's build)..." >&2
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# The tools variant imports a root filesystem first and adds code-server to it below.
rootfs="$tag"
[ "$variant" = tools ] && rootfs="$repository:rootfs-$recipe_hash"
image_changes=(--change 'ENV LANG=C.UTF-8 LC_ALL=C.UTF-8' --change 'CMD ["/bin/bash"]')
# minbase: bash, coreutils, findutils, util-linux, apt, ... ; no Recommends (mmdebstrap's
# default); docs, man pages and locales left out.
mmdebstrap --variant=minbase --quiet --include="$packages" \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  bookworm - "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
  | docker import "${image_changes[@]}" - "$rootfs" >/dev/null

if [ "$variant" = tools ]; then
  code_server_version=4.139.1
  # The project's Node (npm scripts put it first on PATH; a plain shell may find an older one).
  node_bin=$( (../node_modules/.bin/node -p process.execPath || node -p process.execPath) 2>/dev/null)
  builder="effect-sandbox-code-server-build-$$"
  assembler="effect-sandbox-code-server-image-$$"
  trap 'docker rm -f "$builder" "$assembler" >/dev/null 2>&1; docker image rm "$rootfs" >/dev/null 2>&1' EXIT
  # The npm that runs this script (npm_execpath under `npm run`), with this machine's registry, CA
  # and Node headers (nodedir, when set: nodejs.org may be unreachable); code-server's addons use
  # Node-API, so headers of another Node version build them as well.
  npm_cli=${npm_execpath:-$(readlink -f "$(command -v npm)")}
  npm_root=$(dirname "$(dirname "$npm_cli")")
  build_args=(-v "$node_bin:/opt/node/bin/node:ro" -v "$npm_root:/opt/npm:ro" -e "npm_config_registry=$(npm config get registry)")
  cafile=$(npm config get cafile 2>/dev/null || true)
  if [ -n "$cafile" ] && [ -f "$cafile" ]; then
    build_args+=(-v "$cafile:/etc/npm-ca.crt:ro" -e NODE_EXTRA_CA_CERTS=/etc/npm-ca.crt -e npm_config_cafile=/etc/npm-ca.crt)
  fi
  nodedir=$(npm config get nodedir 2>/dev/null || true)
  if [ -n "$nodedir" ] && [ -f "$nodedir/include/node/common.gypi" ]; then
    build_args+=(-v "$nodedir/include/node:/opt/nodedir/include/node:ro" -e npm_config_nodedir=/opt/nodedir)
  fi
  # A local install, not --global: code-server's postinstall runs `npm install` in lib/vscode,
  # which under a global install inherits --global and puts VS Code's dependencies elsewhere.
  build="set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends build-essential python3 libkrb5-dev >/dev/null
ln -s /opt/npm/bin/npm-cli.js /usr/local/bin/npm
mkdir -p /opt/code-server && cd /opt/code-server && echo '{\"private\": true}' >package.json
PATH=/opt/node/bin:\$PATH npm install --no-audit --no-fund --loglevel=error code-server@$code_server_version"
  echo "building code-server $code_server_version (native modules compiled: several minutes)..." >&2
  docker run --name "$builder" "${build_args[@]}" "$rootfs" /bin/bash -c "$build" >&2
  docker create --name "$assembler" "$rootfs" >/dev/null
  docker cp "$builder:/opt/code-server" - | docker cp - "$assembler:/opt/"
  docker commit "${image_changes[@]}" "$assembler" "$tag" >/dev/null
fi

if [ "$variant" = tools ]; then
  # As the sandbox user would (uid 1000, no home of its own here): a page rendered by
  # headless Chromium, and the modules the jupyter plugin's kernel imports.
  smoke='set -e
chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --dump-dom "data:text/html,<p>chromium-ok</p>" 2>/dev/null | grep -q "<p>chromium-ok</p>"
/usr/bin/python3 -c "import ipykernel, jupyter_client, PIL"
/opt/node/bin/node /opt/code-server/node_modules/code-server/out/node/entry.js --version | grep -q "^'"$code_server_version"' "'
  if ! docker run --rm --user 1000:1000 -e HOME=/tmp -v "$node_bin:/opt/node/bin/node:ro" "$tag" /bin/bash -c "$smoke" >&2; then
    docker image rm "$tag" >/dev/null
    echo "the tools image failed its smoke test (Chromium, ipykernel or code-server cannot run as uid 1000)" >&2
    exit 1
  fi
fi
echo "$tag"
