/**
 * The engine's build progress cut into lines (src/engines/docker/streamLines.ts): an event is not a
 * line, so a warning and the step after it in one event are two lines, a line written in two
 * pieces is one, and a last line that no line end followed is not lost. No engine needed.
 */
import { assert, describe, it } from "@effect/vitest"
import { lineSplitter } from "../../src/engines/docker/streamLines.ts"

/** Every line of `events`, pushed one after the other, then the end. */
const linesOf = (events: ReadonlyArray<string>) => {
  const lines = lineSplitter()
  return [...events.flatMap((event) => lines.push(event)), ...lines.end()]
}

describe("the build progress as lines", () => {
  it("cuts one event holding several lines, a warning's included, into its lines", () => {
    assert.deepStrictEqual(
      linesOf([
        "DEPRECATED: The legacy builder is deprecated.\n            Install the buildx component.\n\nStep 1/2 : FROM x\n"
      ]),
      [
        "DEPRECATED: The legacy builder is deprecated.",
        "            Install the buildx component.",
        "",
        "Step 1/2 : FROM x"
      ]
    )
  })

  it("joins a line written in pieces, across events", () => {
    assert.deepStrictEqual(linesOf(["Step 2/2 : RU", "N true\n ---> Running in 59a551d4841d", "\n"]), [
      "Step 2/2 : RUN true",
      " ---> Running in 59a551d4841d"
    ])
  })

  it("ends a line at \\r\\n (even split across two events) and at a lone \\r", () => {
    assert.deepStrictEqual(linesOf(["a\r\nb\r", "\nc\rd\n"]), ["a", "b", "", "c", "d"])
  })

  it("gives the last piece that no line end followed at the end, and nothing more", () => {
    const lines = lineSplitter()
    assert.deepStrictEqual(lines.push("Successfully built 1a7a41be241f"), [])
    assert.deepStrictEqual(lines.end(), ["Successfully built 1a7a41be241f"])
    assert.deepStrictEqual(lines.end(), [])
  })
})
