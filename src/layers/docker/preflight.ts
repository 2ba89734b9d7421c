/**
 * The image contract, checked while the runtime image is built: each failed
 * check stops the build with a line saying what the base image lacks.
 */
export const PREFLIGHT_MARK = "PREFLIGHT:"

export const preflightScript = (uid: number, username: string): string =>
  `#!/bin/sh
# effect-sandbox image preflight: what a base image must provide.
fail() { echo "${PREFLIGHT_MARK} $1"; exit 1; }
[ -x /bin/bash ] || fail "the base image has no /bin/bash: the sandbox shell is bash."
/opt/effect-sandbox/bin/node -e 0 >/dev/null 2>&1 || fail "Node.js cannot run in the base image: it needs a glibc userland (libc6, libstdc++6, libgcc-s1) for $(uname -m)."
/opt/effect-sandbox/bin/node -e "require('/opt/effect-sandbox/payload/node_modules/node-pty')" >/dev/null 2>&1 \\
  || fail "node-pty's native addon cannot load in the base image (glibc too old or a different architecture)."
if ! getent passwd ${uid} >/dev/null 2>&1; then
  command -v useradd >/dev/null 2>&1 || fail "no user with uid ${uid} and no useradd to create it: use a base image with 'passwd', or run as an existing user."
  useradd --create-home --uid ${uid} --shell /bin/bash ${username} || fail "cannot create user ${username} (uid ${uid})."
fi
mkdir -p /workspace && chmod 0777 /workspace
echo "${PREFLIGHT_MARK} ok"
`
