/**
 * The Dockerfiles `/build` refuses: any `ADD` the engine would fetch itself, from the host's
 * network (a URL, or a variable that could be one), written in every form the classic builder
 * parses, directly or as an ONBUILD trigger; and the base images whose triggers it reads.
 */
import { assert, describe, it } from "@effect/vitest"
import { baseImages, instructions, localRegistry, remoteFetch } from "../../src/runtimeApi/dockerfileCheck.ts"

const verdict = (dockerfile: string) => remoteFetch(instructions(dockerfile))

describe("/build Dockerfile check", () => {
  it("refuses ADD of a URL in every form, and lets local sources through", () => {
    const refused = [
      "FROM b\nADD http://127.0.0.1:8000/list /x",
      "FROM b\nadd HTTPS://169.254.169.254/latest/meta-data/ /m",
      "FROM b\nADD --chown=1:1 http://10.0.0.1/ /x",
      "FROM b\nADD [\"http://172.17.0.1:60000/\", \"/x\"]",
      "FROM b\nADD \\\n  http://127.0.0.1/ \\\n  /x",
      "# escape=`\nFROM b\nADD `\n  http://127.0.0.1/ /x",
      "FROM b\nARG U=http://127.0.0.1/\nADD $U /x",
      "FROM b\nADD ${U} /x",
      "FROM b\nONBUILD ADD http://127.0.0.1/ /x",
      "FROM b\nADD local.tar ftp://example/ /x"
    ]
    for (const dockerfile of refused) assert.isDefined(verdict(dockerfile), dockerfile)
    assert.strictEqual(
      verdict("FROM b\nADD http://127.0.0.1:8000/list /x"),
      "ADD http://127.0.0.1:8000/list: the engine would fetch it itself, from the host's network; download it in a RUN step (or COPY it from the context)"
    )
    const allowed = [
      "FROM b\nADD code.tar.gz /opt/\nCOPY --chown=1:1 ./code /code\nRUN curl http://x/ > /y",
      "FROM b\n# ADD http://127.0.0.1/ /x\nRUN echo 'ADD http://x /y'",
      "FROM b\nADD [\"a\", \"b\", \"/dest/\"]"
    ]
    for (const dockerfile of allowed) assert.isUndefined(verdict(dockerfile), dockerfile)
    // A base image's ONBUILD triggers, as the engine stores them.
    assert.isDefined(remoteFetch(instructions(["RUN true", "ADD http://127.0.0.1/ /x"].join("\n"))))
  })

  it("names the images a Dockerfile needs, not stage names or scratch", () => {
    assert.deepStrictEqual(
      baseImages(instructions(
        "FROM --platform=linux/amd64 python:3.12 AS build\nRUN x\nFROM build\nFROM scratch\nFROM debian:bookworm as final\n" +
          "COPY --from=build /a /a\nCOPY --from=0 /b /b\nCOPY --from=busybox:1 /bin/sh /sh"
      )),
      ["python:3.12", "debian:bookworm", "busybox:1"]
    )
  })

  it("refuses pulls from a registry on the host's loopback or at an address", () => {
    for (
      const image of ["localhost:5000/x", "127.0.0.1:5000/x:1", "172.17.0.5:60000/a/b", "[::1]:5000/x", "localhost/x"]
    ) {
      assert.isDefined(localRegistry(image), image)
    }
    for (
      const image of ["debian:bookworm", "ghcr.io/all-hands-ai/runtime:0.59", "registry.example:5000/team/x", "a/b:1"]
    ) {
      assert.isUndefined(localRegistry(image), image)
    }
    assert.strictEqual(
      localRegistry("127.0.0.1:5000/x:1"),
      "127.0.0.1:5000/x:1: the engine would pull it from 127.0.0.1:5000, on the host's network; pull it onto the engine first"
    )
  })
})
