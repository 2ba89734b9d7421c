/**
 * A runtime image's build context, for every builder of one (the local engine's ImageBuilder, a
 * runtime API's `/build`): the action server payload and a Node binary under /opt/effect-sandbox
 * over any glibc base, the preflight that checks the base can host the sandbox, and the tag's hash.
 */
import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { pack } from "tar-stream"
import { DEFAULT_PYTHON } from "../executor/ActionExecutor.ts"
import { startupEnv } from "../runtime/options.ts"
import type { SandboxConfig } from "../schema/SandboxConfig.ts"
import { PYTHON_VARIABLE, serverToolEnv } from "../server/commandLine.ts"
import { COMPILE_CACHE_VARIABLE } from "../server/compileCache.ts"
import type { Manifest } from "../serverStart/payload.ts"
import { toolCapabilities } from "../serverStart/serverTools.ts"
import type { RuntimeOptions, RuntimeTools } from "../services/RuntimeOptions.ts"
import { type ImageRequirements, preflightScript } from "./preflight.ts"

/** Every runtime image carries its own tag under this label (found again when the tag moves on). */
export const TAG_LABEL = "effect-sandbox.runtime-image"

/** What a runtime image is built for beyond its base: the sandbox's user and what its tools need. */
export interface ImageContextOptions {
  readonly userId: number
  readonly username: string
  readonly requires?: ImageRequirements
}

/**
 * Every runtime image carries the digest of what its build context is made from under this label
 * (set by the engine's build options). DockerRuntime reuses an image found under the tag only when
 * the label matches, so a tag moved to another image is built again rather than run.
 */
export const CONTEXT_LABEL = "effect-sandbox.runtime-context"

/** Where a runtime image keeps V8's compile cache of the server's modules (server/compileCache.ts). */
const IMAGE_COMPILE_CACHE = "/opt/effect-sandbox/compile-cache"

/**
 * The server booted once while the image is built, as the sandbox's user (Node keeps a cache per
 * uid, its files readable by that user only), in a directory of its own that is then removed: it
 * listens, writes the cache of what its boot compiled, and stops as its stdin is already closed
 * (exit code 130, as on a signal: whether the cache was written is what tells).
 * A boot that fails here leaves no cache (every start then compiles, as without one) and does
 * not fail the build: the preflight has said what the base lacks, and a start says the rest.
 */
const warmCompileCache = (uid: number) => {
  const dir = "/tmp/effect-sandbox-compile-cache-warm"
  return [
    `USER ${uid}:${uid}`,
    `RUN ${COMPILE_CACHE_VARIABLE}=${IMAGE_COMPILE_CACHE} TMPDIR=${dir} EFFECT_SANDBOX_FILE_VIEWER_URL_FILE=${dir}/url ` +
    `/opt/effect-sandbox/bin/node /opt/effect-sandbox/payload/server.mjs 0 --working-dir ${dir} ` +
    `--exit-on-stdin-close </dev/null >/dev/null; rm -rf ${dir}; ` +
    `[ -n "$(ls -A ${IMAGE_COMPILE_CACHE})" ] || echo "compile cache not made: the server did not boot"`,
    "USER root",
    `ENV ${COMPILE_CACHE_VARIABLE}=${IMAGE_COMPILE_CACHE}`
  ]
}

/** The Dockerfile of a runtime image `FROM` the base. */
const dockerfile = (from: string, tag: string, uid: number) =>
  [
    `FROM ${from}`,
    // Node and the payload first: runtime images that differ only in their preflight share these layers.
    "COPY opt/bin /opt/effect-sandbox/bin",
    "COPY opt/payload /opt/effect-sandbox/payload",
    "COPY opt/preflight.sh /opt/effect-sandbox/preflight.sh",
    "USER root",
    // The compile cache's directory is made in the same step (one step less to build), for the
    // sandbox user the preflight has made sure of.
    `RUN /bin/sh /opt/effect-sandbox/preflight.sh && mkdir -p ${IMAGE_COMPILE_CACHE} && chown ${uid}:${uid} ${IMAGE_COMPILE_CACHE}`,
    ...warmCompileCache(uid),
    `LABEL ${TAG_LABEL}="${tag}"`,
    ""
  ].join("\n")

/**
 * The digest of what the build context is made from: its Dockerfile, its preflight script, the
 * payload (by its manifest's hash and file list) and the Node binary (by its version; hashing the
 * 120 MB binary would cost every first start of a process).
 */
export const contextDigest = (
  from: string,
  manifest: Manifest,
  options: ImageContextOptions,
  tag: string
): string =>
  createHash("sha256")
    .update(JSON.stringify([
      dockerfile(from, tag, options.userId),
      preflightScript(options.userId, options.username, options.requires),
      manifest.hash,
      manifest.files,
      process.version
    ]))
    .digest("hex")

/**
 * The build context (a tar stream): Dockerfile, preflight script, Node binary and payload, `FROM`
 * the base (an image id on a local engine, a reference for a remote builder).
 */
export const buildContext = (
  from: string,
  payload: string,
  manifest: Manifest,
  options: ImageContextOptions,
  tag: string
) => {
  const tar = pack()
  const file = (name: string, content: Buffer | string, mode = 0o644) => tar.entry({ name, mode }, content)
  file("Dockerfile", dockerfile(from, tag, options.userId))
  file("opt/preflight.sh", preflightScript(options.userId, options.username, options.requires), 0o755)
  file("opt/bin/node", readFileSync(process.execPath), 0o755)
  for (const name of manifest.files) {
    const path = join(payload, name)
    file(`opt/payload/${name}`, readFileSync(path), statSync(path).mode & 0o777)
  }
  tar.finalize()
  // A streamx Readable: it pipes into dockerode's request like a Node stream.
  return tar
}

/** The requirements as part of the tag (nothing when none, so such tags do not change). */
const requirementKey = (requires: ImageRequirements = {}): Array<string | boolean> =>
  requires.ipythonPython === undefined && requires.chromium !== true
    ? []
    : [requires.ipythonPython ?? "", requires.chromium === true]

/**
 * The tag's hash: the base, the payload, the Node version and the build options, so an unchanged
 * input is never rebuilt.
 */
export const runtimeImageHash = (base: string, manifest: Manifest, options: ImageContextOptions): string =>
  createHash("sha256")
    .update(JSON.stringify([
      base,
      manifest.hash,
      process.version,
      options.userId,
      options.username,
      ...requirementKey(options.requires)
    ]))
    .digest("hex")
    .slice(0, 16)

/** What the image must carry for the tools asked for (the preflight names what it lacks). */
export const imageRequirements = (
  options: RuntimeTools & Pick<RuntimeOptions, "env">,
  sandbox: SandboxConfig
): ImageRequirements => {
  const capabilities = toolCapabilities(options, { pause: true })
  return {
    ...(capabilities.ipython
      // The interpreter the server will run: the tools' setting, else one the environment names.
      ? {
        ipythonPython: { ...startupEnv(sandbox, options), ...serverToolEnv(options) }[PYTHON_VARIABLE] ?? DEFAULT_PYTHON
      }
      : {}),
    ...(capabilities.browser ? { chromium: true } : {})
  }
}
