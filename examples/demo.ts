/**
 * `npm start`: a short, real session on the default (in-process) runtime:
 * a command, a file write, an edit, a read, and the status stream.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Duration, Effect, Redacted, Stream } from "effect"
import { CliRuntime, CmdRunAction, FileEditAction, Runtime } from "../src/index.ts"

const show = (title: string, text: string) =>
  Console.log(`\n── ${title} ${"─".repeat(Math.max(0, 60 - title.length))}\n${text}`)

const program = Effect.gen(function*() {
  const rt = yield* Runtime
  yield* rt.status.pipe(
    Stream.runForEach((status) => Console.log(`[status] ${status}`)),
    Effect.forkScoped
  )
  yield* Console.log(`workspace: ${rt.info.workspace}`)

  const uname = yield* rt.runCommand("uname -sr && echo \"shell: $BASH_VERSION\"")
  yield* show("run: uname", uname._tag === "CmdOutputObservation" ? uname.agentText : uname.content)

  const path = `${rt.info.workspace}/hello.py`
  yield* rt.write({ path, content: "def greet(name):\n    return 'Hello ' + name\n\nprint(greet('world'))" })
  yield* show("write + run hello.py", (yield* rt.runCommand("python3 hello.py")).content)

  const edited = yield* rt.edit(
    new FileEditAction({ path, command: "str_replace", oldStr: "'Hello ' + name", newStr: "f'Hello, {name}!'" })
  )
  yield* show("edit: str_replace", edited.content)
  if (edited._tag === "FileEditObservation") yield* show("edit: diff", edited.diff ?? "")

  yield* show("read hello.py", (yield* rt.read(path)).content)

  yield* rt.addEnvVars({ API_TOKEN: Redacted.make("tok-123-secret") })
  yield* show("secrets are masked", (yield* rt.runCommand("echo \"token is $API_TOKEN\"")).content)

  const slow = yield* rt.runCommand(
    new CmdRunAction({ command: "for i in 1 2 3; do echo tick $i; sleep 1; done", timeout: 1.5 })
  )
  yield* show("hard timeout (1.5 s)", slow._tag === "CmdOutputObservation" ? slow.agentText : slow.content)
  yield* rt.runCommand(new CmdRunAction({ command: "C-c", isInput: true }))

  const [elapsed] = yield* Effect.timed(rt.runCommand("echo hi"))
  yield* Console.log(`\necho round trip: ${Duration.toMillis(elapsed).toFixed(2)} ms (OpenHands: 635 ms median)`)
}).pipe(Effect.scoped)

program.pipe(Effect.provide(CliRuntime.layer()), NodeRuntime.runMain)
