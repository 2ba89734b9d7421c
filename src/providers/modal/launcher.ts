/**
 * The Modal sandbox's command: the action server itself, behind a few lines of `sh` that check the
 * image carries what the runtime image contract puts under /opt/effect-sandbox (docs/image-contract.md)
 * and make the workspace. A Modal sandbox runs one command for its whole life (its exit ends the
 * sandbox), so starting the server that way needs no exec channel, and an image without the
 * payload ends the sandbox at once with a line saying what it lacks, which the start's failure
 * reads back from the sandbox's logs.
 */

/** The exit code of a launcher that found the image lacking (EX_CONFIG). */
const IMAGE_LACKS_EXIT = 78

/** The sandbox's workspace (made by the launcher: a Modal sandbox has no mounts of ours). */
export const WORKSPACE = "/workspace"

/**
 * `$1` is Node, `$2` the server script, the rest their arguments: each checked, the workspace made,
 * then the server `exec`ed (the sandbox's command is then the server, and its exit code is the
 * sandbox's).
 */
const SCRIPT = [
  `for f in "$1" "$2"; do`,
  `  [ -e "$f" ] || { echo "effect-sandbox: this image has no $f: make it from the runtime image ` +
  `(docs/runtimes/modal.md, \\"Making the image\\")" >&2; exit ${IMAGE_LACKS_EXIT}; }`,
  `done`,
  `mkdir -p ${WORKSPACE} && cd ${WORKSPACE} && exec "$@"`
].join("\n")

/** The sandbox command running `serverArgv` (Node first) in the workspace. */
export const launcherCommand = (
  serverArgv: ReadonlyArray<string>
): Array<string> => ["/bin/sh", "-c", SCRIPT, "effect-sandbox-launcher", ...serverArgv]
