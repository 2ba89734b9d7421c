import { defineConfig } from "vitest/config"

/**
 * Two groups, one after the other. The conformance suites (one file per runtime) spend their time
 * waiting on servers and containers, not on the CPU, and share nothing but the engine: they run side
 * by side. Every other file runs alone, as many of them count processes or containers machine-wide.
 */
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
          name: "rest",
          include: ["test/**/*.test.ts"],
          exclude: ["test/conformance/*.test.ts"],
          fileParallelism: false,
          sequence: { groupOrder: 1 }
        }
      }
    ]
  }
})
