import { defineConfig } from "vitest/config"
import { SlowestFirst } from "./test/sequencer.ts"

/**
 * Three groups, one after the other. The conformance suites (one file per runtime) spend their time
 * waiting on servers and containers, not on the CPU, and share nothing but the engine; so do the
 * suites of the runtimes that run against stand-ins (Kubernetes, the runtime API, the cloud
 * providers), each looking only at what its own stand-in or API server labelled. They all run side
 * by side, the conformance files first (test/sequencer.ts), so that the short stand-in files fill
 * the workers while the long ones run. Then the other files that look only at what they made run
 * two at a time (each has about a core, as it would alone on a two-core machine), and last, one at
 * a time, the files that need the machine to themselves (ALONE below). Only the paired files share
 * their workers' processes; the others each start in a fresh one.
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

/**
 * Files that need the machine to themselves, each for the reason beside it: they count processes or
 * containers machine-wide, plant a dead owner's sandbox or count what a reaper pass removed, rebuild
 * or remove what other files use, or bound a wait to about a second (a no-change timeout of 1 s
 * while a command must complete, an answer within 1 s), which a busy neighbour could break. Any
 * other file not in PARALLEL_SUITES runs beside one other such file: a new file that does any of
 * these belongs here.
 */
const ALONE = [
  // `npm pack` runs `prepare`, which rebuilds dist/ and payload/ under every runtime beside it.
  "test/package.test.ts",
  // Plant dead owners' sandboxes and stale leases, and count what one reaper pass removes.
  "test/docker/ownership.test.ts",
  "test/docker/hostileLabels.test.ts",
  // Removes every stray egress gateway on the engine, a neighbour's mid-start among them.
  "test/docker/egress.test.ts",
  // Rebuilds the shared runtime image's tag and looks for its dangling images engine-wide.
  "test/docker/image.test.ts",
  // Lists every image on the engine, then inspects each.
  "test/docker/startProgress.test.ts",
  // Counts `sleep 30` and LocalRuntime's servers machine-wide.
  "test/layers/LocalRuntime.test.ts",
  // Counts this process's lease watchdogs (one per owner process): it needs a process no earlier
  // file has started one in (the paired files share their workers' processes).
  "test/docker/leaseWatchdog.test.ts",
  // A wait of about a second or less: a lease stale after 400 ms, a kill seen 100 ms later, a
  // 0.5 s window for a pid file, a 1.5 s demo loop, output seen 0.8 s before the end, answers or
  // interrupts within 1 s, `/alive` latencies, a 1 s no-change timeout while a command completes.
  "test/docker/ownerLease.test.ts",
  "test/executor/shell/cgroup.test.ts",
  "test/promise/sandbox.test.ts",
  "test/examples.test.ts",
  "test/cli/shell.test.ts",
  "test/server/endpoints.test.ts",
  "test/executor/interruption.test.ts",
  "test/layers/interruption.test.ts",
  "test/executor/browserInterruption.test.ts",
  "test/executor/browserFileViewer.test.ts",
  "test/server/mcpProxyInterruption.test.ts",
  "test/executor/fileSafety.test.ts",
  "test/server/fileSafety.test.ts",
  "test/server/concurrency.test.ts",
  "test/server/limits.test.ts",
  "test/executor/shell/terminal.test.ts",
  "test/client/semantics.test.ts",
  "test/docker/warmPool.test.ts",
  "test/layers/observability.test.ts",
  "test/telemetry/otlp.test.ts"
]

export default defineConfig({
  test: {
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Called once per group: conformance files first in the parallel one, no change in the others.
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
          name: "paired",
          // Each worker runs its files in one process, one after another: a fresh process per file
          // spent more of the group's time importing the sources than running its tests (151 s
          // against 89 s for the group). Their state per process is what they made themselves; a
          // file that counts what its process started goes to ALONE.
          isolate: false,
          include: ["test/**/*.test.ts"],
          exclude: [...PARALLEL_SUITES, ...ALONE],
          maxWorkers: 2,
          sequence: { groupOrder: 1 }
        }
      },
      {
        extends: true,
        test: {
          name: "alone",
          include: ALONE,
          fileParallelism: false,
          sequence: { groupOrder: 2 }
        }
      }
    ]
  }
})
