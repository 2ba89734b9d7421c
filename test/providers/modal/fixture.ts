/**
 * What the Modal tests share: the stand-in's published images (ours: the runtime image the E2B
 * tests build, found by its tag when they built it already; `base`: the base image alone, without
 * the payload or a Node; on request the tools runtime image, for `vscode`), the token pair it accepts, one stand-in per test file (closed after its
 * tests, which must have left no container), and ModalRuntime options pointing the real SDK at it.
 */
import { afterAll, assert, beforeAll } from "@effect/vitest"
import { Redacted } from "effect"
import type { ModalRuntimeOptions } from "../../../src/modal.ts"
import { baseImage } from "../../docker/infra.ts"
import { runtimeImage } from "../e2b/fixture.ts"
import { toolsRuntimeImage } from "../runtimeImages.ts"
import { type Standin, type StandinOptions, startStandin } from "./server.ts"

export const TOKEN_ID = "ak-standin-test"
export const TOKEN_SECRET = "as-standin-test-secret"

/** The published name of the image made from the tools image (code-server: the `vscode` option). */
export const TOOLS_IMAGE = "effect-sandbox-runtime-tools"

/**
 * A stand-in with `effect-sandbox-runtime` (the runtime image, built once) and `base` published;
 * with `tools`, also `TOOLS_IMAGE`: the runtime image Docker's tools tests build (a Modal sandbox
 * runs as root, so that image's user does not matter).
 */
export const startModalStandin = async (options: { readonly tools?: boolean } = {}): Promise<Standin> => {
  // The stand-in serves on localhost, where the SDK warns at every sandbox's first task-router call
  // that it skips certificate verification (Modal's own routers never make it say so): errors only.
  process.env["MODAL_LOGLEVEL"] ??= "error"
  return startStandin({
    tokenId: TOKEN_ID,
    tokenSecret: TOKEN_SECRET,
    images: {
      "effect-sandbox-runtime": await runtimeImage(),
      base: baseImage(),
      ...(options.tools === true ? { [TOOLS_IMAGE]: await toolsRuntimeImage() } : {})
    } satisfies StandinOptions["images"]
  })
}

/** ModalRuntime options for the SDK against `standin`. */
export const standinOptions = (standin: Standin, options: ModalRuntimeOptions = {}): ModalRuntimeOptions => ({
  tokenId: Redacted.make(TOKEN_ID),
  tokenSecret: Redacted.make(TOKEN_SECRET),
  serverUrl: standin.url,
  ...options
})

/**
 * A stand-in for the tests of one file, started before them (building the runtime image the first
 * time) and closed after them, failing the file if a container of it was left: the function it
 * returns gives it in a test.
 */
export const useModalStandin = (options: { readonly tools?: boolean } = {}): () => Standin => {
  let standin: Standin | undefined
  beforeAll(async () => {
    standin = await startModalStandin(options)
  }, 300_000)
  afterAll(async () => {
    if (standin === undefined) return
    const left = await standin.containers()
    await standin.close()
    assert.deepStrictEqual(left, [])
  })
  return () => {
    if (standin === undefined) throw new Error("the Modal stand-in did not start")
    return standin
  }
}
