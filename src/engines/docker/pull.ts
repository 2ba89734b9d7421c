/**
 * Pull an image through the Engine API, followed to its end. The runtime API pulls a `/build`'s
 * base images itself, before the build, so that it can read their ONBUILD triggers first.
 */
import type Docker from "dockerode"
import { Effect } from "effect"
import { dockerClient } from "./client.ts"
import { engineCall } from "./engine.ts"

export const pullImage = Effect.fn("DockerEngine.pullImage")(function*(image: string) {
  const docker: Docker = yield* dockerClient
  const output = yield* engineCall(`pull ${image}`, () => docker.pull(image))
  yield* engineCall(
    `pull ${image}`,
    () =>
      new Promise<void>((resolve, reject) =>
        docker.modem.followProgress(output, (error) => error ? reject(error) : resolve())
      )
  )
})
