/**
 * What a `/build` Dockerfile may not do though its steps have no network: `ADD <url>` is fetched by
 * the engine itself, from the host's network (its loopback, the sandboxes' addresses, a cloud's
 * metadata service), and so is an `ADD` in a base image's `ONBUILD` triggers, and a pull from a
 * registry on the host's loopback or at an address. Such builds are refused; a source with a
 * variable is refused too, since it could expand to a URL.
 */
import type Docker from "dockerode"
import { Effect } from "effect"
import type { Readable } from "node:stream"
import { extract } from "tar-stream"
import { dockerClient } from "../engines/docker/client.ts"
import { BuildFailed } from "../engines/docker/engineBuild.ts"
import { pullImage } from "../engines/docker/pull.ts"
import type { UploadedContext } from "./images.ts"
import { unpackedContext } from "./unpackedContext.ts"

export interface Instruction {
  readonly keyword: string
  readonly args: string
}

/** The Dockerfile's instructions: comments dropped, continued lines joined, the escape directive honoured. */
export const instructions = (text: string): Array<Instruction> => {
  const escape = /^#\s*escape\s*=\s*`/im.test(text.split("\n").slice(0, 5).join("\n")) ? "`" : "\\"
  const result: Array<Instruction> = []
  let pending = ""
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line.startsWith("#")) continue
    if (line.endsWith(escape)) {
      pending += `${line.slice(0, -1)} `
      continue
    }
    const whole = (pending + line).trim()
    pending = ""
    const match = /^(\S+)\s*(.*)$/.exec(whole)
    if (match !== null) result.push({ keyword: match[1]!.toUpperCase(), args: match[2]! })
  }
  if (pending.trim() !== "") {
    const match = /^(\S+)\s*(.*)$/.exec(pending.trim())
    if (match !== null) result.push({ keyword: match[1]!.toUpperCase(), args: match[2]! })
  }
  return result
}

/** An instruction's words: its JSON form, or its shell form split at spaces, without `--flags`. */
const words = (args: string): Array<string> => {
  if (args.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(args)
      if (Array.isArray(parsed)) return parsed.map(String)
    } catch {
      // Not JSON: the shell form.
    }
  }
  return args.split(/\s+/).filter((word) => word !== "" && !word.startsWith("--"))
}

/** Why `instruction` makes the engine fetch something itself, or undefined. */
const fetches = (instruction: Instruction): string | undefined => {
  if (instruction.keyword === "ONBUILD") {
    const inner = instructions(instruction.args)[0]
    return inner === undefined ? undefined : fetches(inner)
  }
  if (instruction.keyword !== "ADD") return undefined
  const sources = words(instruction.args).slice(0, -1)
  const remote = sources.find((source) => /^[a-z][a-z0-9+.-]*:\/\//i.test(source) || source.includes("$"))
  return remote === undefined
    ? undefined
    : `ADD ${remote}: the engine would fetch it itself, from the host's network; download it in a RUN step (or COPY it from the context)`
}

/** Why these instructions (a Dockerfile's, or a base image's ONBUILD triggers) cannot be built here. */
export const remoteFetch = (list: ReadonlyArray<Instruction>): string | undefined => {
  for (const instruction of list) {
    const why = fetches(instruction)
    if (why !== undefined) return why
  }
  return undefined
}

/**
 * The images a Dockerfile needs from the engine: its stages' bases (not `scratch`, not an earlier
 * stage's name) and the images `COPY --from=` names.
 */
export const baseImages = (list: ReadonlyArray<Instruction>): Array<string> => {
  const stages = new Set<string>(["scratch"])
  const images: Array<string> = []
  const need = (image: string) => {
    if (!stages.has(image.toLowerCase()) && !/^\d+$/.test(image) && !images.includes(image)) images.push(image)
  }
  for (const { keyword, args } of list) {
    if (keyword === "FROM") {
      const [image, as, name] = words(args)
      if (image !== undefined) need(image)
      if (as?.toUpperCase() === "AS" && name !== undefined) stages.add(name.toLowerCase())
    }
    const from = keyword === "COPY" ? /--from=(\S+)/.exec(args)?.[1] : undefined
    if (from !== undefined) need(from)
  }
  return images
}

/**
 * Why the engine may not pull `image`, if it may not: from a registry on the host's loopback or at
 * an address (a sandbox's, the host's), which the engine would contact from the host's network.
 */
export const localRegistry = (image: string): string | undefined => {
  const first = image.split("/")[0]!
  const host = first.replace(/:\d+$/, "").replace(/^\[|\]$/g, "")
  const registry = image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost")
  return registry && (host === "localhost" || /^[\d.]+$/.test(host) || host.includes(":"))
    ? `${image}: the engine would pull it from ${first}, on the host's network; pull it onto the engine first`
    : undefined
}

/** Most bytes of a Dockerfile read from a context (the engine's own limit is far below). */
const MAX_DOCKERFILE_BYTES = 1024 * 1024

/** The Dockerfile of a context (an uncompressed tar): `Dockerfile`, else `dockerfile`, as the engine picks it. */
export const readDockerfile = (tar: Readable): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const found = new Map<string, string>()
    const reader = extract()
    reader.on("entry", (header, stream, next) => {
      const name = header.name.replace(/^\.\//, "")
      if ((name !== "Dockerfile" && name !== "dockerfile") || header.size! > MAX_DOCKERFILE_BYTES) {
        stream.on("end", next)
        stream.resume()
        return
      }
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: unknown) => chunks.push(chunk as Buffer))
      stream.on("end", () => {
        found.set(name, Buffer.concat(chunks).toString("utf8"))
        // The engine's choice is found: the rest of the context need not be read.
        if (name === "Dockerfile") {
          resolve(found.get(name))
          tar.destroy()
        }
        next()
      })
    })
    reader.on("finish", () => resolve(found.get("Dockerfile") ?? found.get("dockerfile")))
    reader.on("error", reject)
    tar.on("error", reject)
    tar.pipe(reader)
  })

const refuse = (error: string) => Effect.fail(new BuildFailed({ error, log: [] }))

/**
 * Refuse a context whose Dockerfile makes the engine fetch something from the host's network (its
 * own `ADD <url>`, its base images' ONBUILD ones, a pull from a loopback or address registry),
 * pulling its base images first to read their triggers.
 */
export const checkDockerfile = Effect.fn("dockerfileCheck.checkDockerfile")(
  function*(context: UploadedContext, maxUploadBytes: number) {
    const docker: Docker = yield* dockerClient
    const inspect = (image: string) =>
      Effect.promise(() => docker.getImage(image).inspect().catch((): Docker.ImageInspectInfo | undefined => undefined))
    const unpacked = unpackedContext(context, maxUploadBytes)
    const text = yield* Effect.tryPromise({
      try: () => readDockerfile(unpacked.stream),
      catch: () => unpacked.explain(new BuildFailed({ error: "The build context is not a gzip tar", log: [] }))
    })
    if (text === undefined) return yield* refuse("The build context has no Dockerfile")
    const list = instructions(text)
    const own = remoteFetch(list)
    if (own !== undefined) return yield* refuse(own)
    for (const image of baseImages(list)) {
      if (image.includes("$")) {
        return yield* refuse(`FROM ${image}: name the base image, whose ONBUILD triggers /build reads first`)
      }
      if ((yield* inspect(image)) === undefined) {
        const local = localRegistry(image)
        if (local !== undefined) return yield* refuse(local)
        yield* pullImage(image)
      }
      const triggers = (yield* inspect(image))?.Config.OnBuild ?? []
      const inherited = remoteFetch(instructions(triggers.join("\n")))
      if (inherited !== undefined) return yield* refuse(`${image} has ONBUILD ${inherited}`)
    }
  }
)
