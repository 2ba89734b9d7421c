/**
 * A build through the Engine API (src/engines/docker/engineBuild.ts) keeps its log a line at a
 * time, whatever pieces the engine sends: what a step prints in one write is several lines, and a
 * line printed in two writes, a moment apart, is one.
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { pack } from "tar-stream"
import { DockerEngine } from "../../src/engines/docker/engine.ts"
import { engineBuild } from "../../src/engines/docker/engineBuild.ts"
import { dockerCli } from "./helpers.ts"
import { baseImage, describeDocker } from "./infra.ts"

/** A build context of only `dockerfile`. */
const contextOf = (dockerfile: string) => {
  const tar = pack()
  tar.entry({ name: "Dockerfile" }, dockerfile)
  tar.finalize()
  return tar as unknown as NodeJS.ReadableStream
}

describeDocker("an image build's log", () => {
  const image = baseImage()

  it.live("is the build's lines, however the engine cut them", () =>
    Effect.gen(function*() {
      // A unique step, so the engine runs it instead of taking it from its cache.
      const run = `printf 'one\\ntwo\\n'; printf 'thr'; sleep 0.5; printf 'ee\\n' # ${Date.now()}-${process.pid}`
      const built = yield* engineBuild(contextOf(`FROM ${image}\nRUN ${run}\n`))
      try {
        const at = built.log.indexOf("one")
        assert.notStrictEqual(at, -1, JSON.stringify(built.log))
        assert.deepStrictEqual(built.log.slice(at, at + 3), ["one", "two", "three"])
        for (const line of built.log) assert.notInclude(line, "\n")
      } finally {
        dockerCli("image", "rm", built.imageId)
      }
    }).pipe(Effect.provide(DockerEngine.layer)), 120_000)
})
