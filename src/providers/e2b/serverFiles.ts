/**
 * What runs the action server in an E2B sandbox: the template's own Node and payload when it was
 * made from the runtime image (docs/image-contract.md: `/opt/effect-sandbox`), else, when allowed,
 * the payload uploaded through the SDK's filesystem and run by the template's Node (22.19 or
 * newer, as the payload needs). A template with neither is a RuntimeStartError naming what it lacks.
 */
import type { Sandbox } from "e2b"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { payloadDirectory, readManifest } from "../../layers/internal/payload.ts"
import { IMAGE_FILES, NODE_MINIMUM, parseProbe, PROBE, recentEnough } from "../../layers/internal/serverProbe.ts"
import { shellQuote } from "../../quoting/shellQuote.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import type { ProviderCall } from "../../services/Driver.ts"

/**
 * Upload the payload under `dir` (one multipart request), for the template's Node to run. The
 * directory is made by root and given to the user first: it is outside the user's home, beside
 * where the runtime image keeps it.
 */
const uploadPayload = (sandbox: Sandbox, dir: string, user: string, call: ProviderCall) =>
  Effect.gen(function*() {
    const local = yield* payloadDirectory
    yield* call(
      `create ${dir} for ${user}`,
      () =>
        sandbox.commands.run(`mkdir -p ${shellQuote(dir)} && chown ${shellQuote(user)} ${shellQuote(dir)}`, {
          user: "root"
        })
    )
    const entries = readManifest(local).files.map((name) => ({
      path: `${dir}/${name}`,
      data: new Blob([readFileSync(join(local, name))])
    }))
    yield* call(`upload the action-server payload to ${dir}`, () => sandbox.files.write(entries, { user }))
  })

/**
 * The server's files in `sandbox` (of `template`), uploading the payload to `uploadDir` when the
 * template lacks it and `upload` allows.
 */
export const serverFiles = Effect.fn("E2BRuntime.serverFiles")(function*(input: {
  readonly sandbox: Sandbox
  readonly template: string
  readonly user: string
  readonly upload: boolean
  readonly uploadDir: string
  readonly call: ProviderCall
}) {
  const { sandbox, template, user } = input
  const probe = yield* input.call(
    `look for the action server in template ${template}`,
    () => sandbox.commands.run(PROBE, { user })
  )
  const probed = parseProbe(probe.stdout)
  if (probed.found === "image") return IMAGE_FILES
  const lacks = `The E2B template ${template} has no action-server payload (${IMAGE_FILES.entry})`
  const howToMake = "make the template from the runtime image (docs/runtimes/e2b.md, \"Making the template\")"
  if (!input.upload) {
    return yield* new RuntimeStartError({ message: `${lacks} and uploadPayload is off: ${howToMake}.` })
  }
  if (probed.found === "none") {
    return yield* new RuntimeStartError({
      message: `${lacks} and no Node.js on its PATH to run an uploaded one: ${howToMake}, or use a template with ` +
        `Node ${NODE_MINIMUM.join(".")} or newer.`
    })
  }
  const { node, version } = probed
  if (!recentEnough(version)) {
    return yield* new RuntimeStartError({
      message: `${lacks}, and its Node.js ${version} (${node}) is older than the ${
        NODE_MINIMUM.join(".")
      } the payload needs: ${howToMake}, or use a template with a newer Node.`
    })
  }
  yield* uploadPayload(sandbox, input.uploadDir, user, input.call)
  return { node, entry: `${input.uploadDir}/server.mjs` }
})
