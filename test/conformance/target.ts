/**
 * What the conformance suite needs to know about a runtime under test.
 */
import type { Layer } from "effect"
import type { Runtime } from "../../src/index.ts"

export interface ConformanceTarget {
  /** Shown in test names: `cli`, `local`, `docker`, ... */
  readonly name: string
  /** A fresh runtime (its own session) with the given soft timeout; every test builds its own. */
  readonly layer: (options: { readonly noChangeTimeoutSeconds: number }) => Layer.Layer<Runtime, unknown>
  /** File actions outside the workspace are refused (CliRuntime), or allowed (a container is the boundary). */
  readonly restrictedToWorkspace: boolean
}
