/**
 * The image contract, checked while the runtime image is built: each failed
 * check stops the build with a line saying what the base image lacks. The
 * tools a runtime asks for (the jupyter plugin, the browser) add their own
 * checks, so a missing package is named at build time, not at the first action.
 */
import { shellQuote } from "../quoting/shellQuote.ts"

export const PREFLIGHT_MARK = "PREFLIGHT:"

/** What the runtime's tools need from the image, beyond the base contract. */
export interface ImageRequirements {
  /** The jupyter plugin: this Python must import ipykernel and jupyter_client. */
  readonly ipythonPython?: string
  /** The browser: Chromium at /usr/bin/chromium. */
  readonly chromium?: boolean
}

/** Where the browser tool looks for Chromium in a container (Debian's `chromium` package). */
export const CONTAINER_CHROMIUM = "/usr/bin/chromium"

/**
 * What to do about missing packages, as a user of the installed package can (the repository's
 * `npm run image:tools` is not part of it): put them in the base image.
 */
const toolsHint = (packages: string): string =>
  `add the Debian packages ${packages} to the base image (in a Dockerfile: RUN apt-get install -y ${packages})`

const requirementChecks = (requires: ImageRequirements): string =>
  [
    ...(requires.ipythonPython === undefined ? [] : [
      `${shellQuote(requires.ipythonPython)} -c "import ipykernel, jupyter_client" >/dev/null 2>&1 \\
  || fail ${
        shellQuote(
          `the jupyter plugin needs ipykernel and jupyter_client for ${requires.ipythonPython}: ${
            toolsHint("python3-ipykernel python3-jupyter-client")
          }.`
        )
      }`
    ]),
    ...(requires.chromium !== true ? [] : [
      `${CONTAINER_CHROMIUM} --version >/dev/null 2>&1 \\
  || fail ${
        shellQuote(`the browser needs Chromium at ${CONTAINER_CHROMIUM}: ${toolsHint("chromium fonts-liberation")}.`)
      }`
    ])
  ].map((check) => `${check}\n`).join("")

export const preflightScript = (uid: number, username: string, requires: ImageRequirements = {}): string =>
  `#!/bin/sh
# effect-sandbox image preflight: what a base image must provide.
fail() { echo "${PREFLIGHT_MARK} $1"; exit 1; }
[ -x /bin/bash ] || fail "the base image has no /bin/bash: the sandbox shell is bash."
/opt/effect-sandbox/bin/node -e 0 >/dev/null 2>&1 || fail "Node.js cannot run in the base image: it needs a glibc userland (libc6, libstdc++6, libgcc-s1) for $(uname -m)."
/opt/effect-sandbox/bin/node -e "require('/opt/effect-sandbox/payload/node_modules/node-pty')" >/dev/null 2>&1 \\
  || fail "node-pty's native addon cannot load in the base image (glibc too old or a different architecture)."
${requirementChecks(requires)}if ! getent passwd ${uid} >/dev/null 2>&1; then
  command -v useradd >/dev/null 2>&1 || fail "no user with uid ${uid} and no useradd to create it: use a base image with 'passwd', or run as an existing user."
  getent passwd ${username} >/dev/null 2>&1 \\
    && fail "the base image's user ${username} has uid $(id -u ${username}), not ${uid}: give userId that uid, or another username."
  getent group ${uid} >/dev/null 2>&1 || groupadd --gid ${uid} ${username} || fail "cannot create group ${username} (gid ${uid}): give another username."
  # --no-log-init: lastlog and faillog would grow to a record per uid below a large one.
  useradd --no-log-init --create-home --uid ${uid} --gid ${uid} --shell /bin/bash ${username} || fail "cannot create user ${username} (uid ${uid})."
fi
mkdir -p /workspace && chmod 0777 /workspace
echo "${PREFLIGHT_MARK} ok"
`
