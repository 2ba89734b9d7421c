import { defineConfig } from "vitest/config"

/**
 * Three groups, one after the other. The conformance suites (one file per runtime) spend their time
 * waiting on servers and containers, not on the CPU, and share nothing but the engine: they run side
 * by side. So do the suites of the runtimes that run against stand-ins (Kubernetes, the runtime API,
 * the cloud providers): each looks only at what its own stand-in or API server labelled. Every other
 * file runs alone, as many of them count processes or containers machine-wide.
 */
/** Suites that touch only what their own stand-in (or API server) made, found by its label. */
const STAND_IN_SUITES = ["test/kubernetes/**/*.test.ts", "test/remote/**/*.test.ts", "test/providers/**/*.test.ts"]

export default defineConfig({
  test: {
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: "conformance",
          include: ["test/conformance/*.test.ts"],
          maxWorkers: 4,
          sequence: { groupOrder: 0 }
        }
      },
      {
        extends: true,
        test: {
          name: "stand-ins",
          include: STAND_IN_SUITES,
          maxWorkers: 3,
          sequence: { groupOrder: 1 }
        }
      },
      {
        extends: true,
        test: {
          name: "rest",
          include: ["test/**/*.test.ts"],
          exclude: ["test/conformance/*.test.ts", ...STAND_IN_SUITES],
          fileParallelism: false,
          sequence: { groupOrder: 2 }
        }
      }
    ]
  }
})
