/**
 * Which tags `/build` may write, decided before the engine is asked: a name Docker takes, under the
 * registry prefix as the engine resolves names (`debian` is `docker.io/library/debian`), and over
 * an existing image only when /build's own label names the tag.
 */
import { assert, describe, it } from "@effect/vitest"
import { API_TAGS_LABEL, canonicalReference, madeByApi, refusedTag } from "../../src/runtimeApi/buildTags.ts"

const verdict = (prefix: string, tag: string) => {
  const refused = refusedTag(prefix, tag)
  return refused === undefined ? "ok" : refused.status
}

describe("/build tags", () => {
  it("resolves names as the engine does", () => {
    assert.strictEqual(canonicalReference("debian"), "docker.io/library/debian:latest")
    assert.strictEqual(canonicalReference("index.docker.io/library/debian:12"), "docker.io/library/debian:12")
    assert.strictEqual(canonicalReference("effect-sandbox/runtime:x"), "docker.io/effect-sandbox/runtime:x")
    assert.strictEqual(canonicalReference("localhost:5000/a/b"), "localhost:5000/a/b:latest")
  })

  it("takes tags under the prefix only, however they are spelled", () => {
    const cases: ReadonlyArray<readonly [string, string, "ok" | number]> = [
      ["effect-sandbox", "effect-sandbox/runtime:oh_v0.59_abc", "ok"],
      ["effect-sandbox", "docker.io/effect-sandbox/runtime:x", "ok"],
      ["effect-sandbox/", "effect-sandbox/runtime:x", "ok"],
      ["registry.example/team", "registry.example/team/runtime:x", "ok"],
      ["effect-sandbox", "debian:bookworm", 403],
      ["effect-sandbox", "docker.io/library/debian:bookworm", 403],
      ["effect-sandbox", "postgres:16", 403],
      // DockerRuntime's own repository shares the prefix's first characters, not its namespace.
      ["effect-sandbox", "effect-sandbox-runtime:0123456789abcdef", 403],
      ["effect-sandbox", "localhost/effect-sandbox/runtime:x", 403],
      ["registry.example/team", "registry.example/team-b/runtime:x", 403],
      ["registry.example/team", "team/runtime:x", 403],
      ["effect-sandbox", "effect-sandbox/../library/debian:bookworm", 400],
      ["effect-sandbox", "effect-sandbox//runtime:x", 400],
      ["effect-sandbox", "effect-sandbox/-runtime:x", 400]
    ]
    for (const [prefix, tag, expected] of cases) assert.strictEqual(verdict(prefix, tag), expected, `${prefix} ${tag}`)
    assert.strictEqual(
      refusedTag("effect-sandbox", "postgres:16")?.detail,
      "Refusing to tag postgres:16: /build tags images only under this server's registry prefix effect-sandbox"
    )
  })

  it("counts a tag as its own only when /build's label names it", () => {
    const labels = { [API_TAGS_LABEL]: "effect-sandbox/runtime:a docker.io/effect-sandbox/runtime:b" }
    assert.isTrue(madeByApi(labels, "effect-sandbox/runtime:a"))
    assert.isTrue(madeByApi(labels, "effect-sandbox/runtime:b"))
    assert.isFalse(madeByApi(labels, "effect-sandbox/runtime:c"))
    assert.isFalse(madeByApi({}, "effect-sandbox/runtime:a"))
    assert.isFalse(madeByApi(null, "effect-sandbox/runtime:a"))
    assert.isFalse(madeByApi({ [API_TAGS_LABEL]: "" }, "effect-sandbox/runtime:latest"))
  })
})
