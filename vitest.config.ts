import { defineConfig } from "vitest/config"
import { SlowestFirst } from "./test/sequencer.ts"

/**
 * Two groups, one after the other. The conformance suites (one file per runtime) spend their time
 * waiting on servers and containers, not on the CPU, and share nothing but the engine; so do the
 * suites of the runtimes that run against stand-ins (Kubernetes, the runtime API, the cloud
 * providers), each looking only at what its own stand-in or API server labelled. They all run side
 * by side, the conformance files first (test/sequencer.ts), so that the short stand-in files fill
 * the workers while the long ones run. Every other file runs alone afterwards, as many of them
 * count processes or containers machine-wide.
 */
/**
 * Suites that touch only their own sandboxes: the conformance files, the stand-in suites, and the
 * slowest of the others that look only at what they made (containers by their own session, label
 * or pid, their own temporary directories) and spend most of their time waiting on timers and
 * servers. Not here: test/docker/ownership.test.ts counts what one reaper pass removes, and any
 * DockerRuntime starting beside it runs a pass of its own; test/package.test.ts packs the package,
 * which rebuilds dist/ and payload/ under the feet of every runtime image built beside it.
 */
const PARALLEL_SUITES = [
  "test/conformance/*.test.ts",
  "test/kubernetes/**/*.test.ts",
  "test/remote/**/*.test.ts",
  "test/providers/**/*.test.ts",
  "test/docker/lifecycle.test.ts",
  // Its reaper pass judges only a lease in a temp dir of its own (the dead owner's).
  "test/docker/snapshot.test.ts",
  // Its sandbox, copies and snapshot are its own session's; its reaper pass removes only dead owners'.
  "test/promise/snapshot.test.ts",
  // One sandbox of its own session; no reaper pass (a gateway is reaped only when two minutes old).
  "test/docker/egressTools.test.ts",
  "test/docker/container.test.ts",
  "test/docker/tools.test.ts",
  "test/docker/vscode.test.ts",
  "test/layers/localVscode.test.ts",
  "test/layers/vocabulary.test.ts",
  "test/cli/run.test.ts",
  "test/executor/agentSkills.test.ts",
  "test/server/exposure.test.ts"
]

export default defineConfig({
  test: {
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Called once per group: conformance files first in the parallel one, no change in the other.
    sequence: { sequencer: SlowestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "parallel",
          include: PARALLEL_SUITES,
          maxWorkers: 5,
          // How many concurrent cases of one file run at once (the real-cluster tests' cases, which
          // wait on pods: scripts/kubernetes/test-real.sh); a project does not take `--maxConcurrency`.
          maxConcurrency: Number(process.env["EFFECT_SANDBOX_TEST_CONCURRENCY"] ?? 5),
          sequence: { groupOrder: 0 }
        }
      },
      {
        extends: true,
        test: {
          name: "rest",
          include: ["test/**/*.test.ts"],
          exclude: PARALLEL_SUITES,
          fileParallelism: false,
          sequence: { groupOrder: 1 }
        }
      }
    ]
  }
})
