/** A bash session in a fresh temporary directory (its cwd and state dir), removed afterwards. */
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EnvStore } from "../../../src/executor/env.ts"
import { type BashSession, type BashSessionOptions, makeBashSession } from "../../../src/executor/shell/BashSession.ts"

export const withBashSession = <A, E>(
  options: Pick<BashSessionOptions, "marker" | "noChangeTimeoutSeconds"> & Partial<BashSessionOptions>,
  body: (session: BashSession) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "bash-session-test-"))
    try {
      return yield* Effect.scoped(Effect.gen(function*() {
        const session = yield* makeBashSession({
          cwd: dir,
          stateDir: dir,
          env: new EnvStore(join(dir, "env.sh")),
          ...options
        })
        return yield* body(session)
      }))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
