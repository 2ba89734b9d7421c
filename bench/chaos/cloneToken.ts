/**
 * Part of group 7, secrets: `cloneOrInitRepo` with a `Redacted` token against remotes that fail in
 * different ways (nothing listening, a server answering 401 and one closing the connection). No
 * piece of the token (8 characters or more) may show in an error, in the sandbox's answers to
 * `printenv`/`cat .git/config`, or in a log line.
 */
import { Effect, Logger, ManagedRuntime, Redacted, References } from "effect"
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import { CliRuntime, cloneOrInitRepo, Runtime } from "../../src/index.ts"
import { atMost, type Row } from "./rows.ts"

const PIECE = 8

export const cloneTokenRows = async (): Promise<ReadonlyArray<Row>> => {
  const token = randomBytes(16).toString("hex")
  const pieces = Array.from({ length: token.length - PIECE + 1 }, (_, i) => token.slice(i, i + PIECE))
  const server = createServer((request, response) => {
    if (request.url?.includes("hangup") === true) request.socket.destroy()
    else {response.writeHead(401, { "www-authenticate": "Basic realm=\"x\"" }).end(
        `denied ${request.headers.authorization}`
      )}
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  const logged: Array<string> = []
  const logger = Logger.make((options) => void logged.push(Logger.formatJson.log(options)))
  const runtime = ManagedRuntime.make(CliRuntime.layer())
  const seen: Array<string> = []
  try {
    const rt = await runtime.runPromise(Runtime)
    for (
      const url of ["http://127.0.0.1:1/a.git", `http://127.0.0.1:${port}/b.git`, `http://127.0.0.1:${port}/hangup.git`]
    ) {
      const result = await runtime.runPromise(
        cloneOrInitRepo({ repository: url, token: Redacted.make(token) }).pipe(
          Effect.result,
          Effect.provide(Logger.layer([logger])),
          Effect.provideService(References.MinimumLogLevel, "All")
        )
      )
      seen.push(JSON.stringify(result))
      seen.push(JSON.stringify(await runtime.runPromise(rt.runCommand("printenv GIT_TOKEN; cat */.git/config"))))
    }
  } finally {
    await runtime.dispose()
    server.close()
  }
  const leaks = [...seen, ...logged].filter((text) => pieces.some((piece) => text.includes(piece))).length
  return [
    atMost(
      `secrets: clone-token pieces in set-up errors, outputs or logs (of ${seen.length + logged.length})`,
      leaks,
      "texts",
      0
    )
  ]
}
