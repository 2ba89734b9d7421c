/**
 * IPython cells with OpenHands' semantics (spec §2.6, §2.7): before each cell the
 * kernel's cwd follows the shell's and added environment variables are applied;
 * output is stream text, `text/plain` results and PNG images (as data URLs);
 * errors are the traceback without colour codes; a timeout interrupts the
 * kernel; a dead kernel is restarted and the observation says its state is lost.
 */
import { Deferred, Effect, type Scope } from "effect"
import type { IPythonRunCellAction } from "../../schema/Action.ts"
import { RuntimeStartError } from "../../schema/errors.ts"
import { IPythonRunCellObservation } from "../../schema/Observation.ts"
import { removeInFinalizer } from "../cleanup.ts"
import { withTimeout } from "../deadline.ts"
import type { EnvStore } from "../env.ts"
import { pythonFloat } from "../shell/messages.ts"
import { isDeath, KernelProcess } from "./KernelProcess.ts"
import type { Message } from "./messages.ts"

export interface IPythonOptions {
  readonly python: string
  readonly stateDir: string
  /** The shell's working directory, which the kernel follows. */
  readonly cwd: () => string
  readonly env: EnvStore
  readonly baseEnv: Readonly<Record<string, string>>
  readonly marker: string
  /** Run after every kernel start (e.g. agent_skills' import); an exception fails the start. */
  readonly initCode?: string
}

export interface IPython {
  /** `onOutput` sees the cell's text (prints, results, tracebacks) as the kernel sends it. */
  readonly run: (
    action: IPythonRunCellAction,
    onOutput?: (text: string) => void
  ) => Effect.Effect<IPythonRunCellObservation, RuntimeStartError>
  /** Waits for the first start: why the kernel cannot run cells, or undefined when it can. */
  readonly unavailable: Effect.Effect<string | undefined>
}

export const NO_OUTPUT = "[Code executed successfully with no output]"
export const KERNEL_RESTARTED = "[The IPython kernel died and was restarted: its variables and imports are lost.]"
const READY_TIMEOUT_MS = 30_000
const INTERRUPT_GRACE_MS = 5_000
/** SIGINT reaches the cell only once the kernel runs it: resent at this interval until it ends. */
const INTERRUPT_RESEND_MS = 250
// OpenHands strips \x1b[<n>(;<n>){0,2}m; we strip every CSI sequence.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g

/** What one cell printed and displayed. */
export interface CellOutput {
  readonly text: string
  /** `data:image/png;base64,...` URLs. */
  readonly images: ReadonlyArray<string>
}

/** The text and images of a cell's messages (an exception's traceback is text). */
export const collectOutput = (messages: ReadonlyArray<Message>): CellOutput => {
  let text = ""
  const images: Array<string> = []
  for (const { content, header } of messages) {
    switch (header.msg_type) {
      case "stream":
        text += String(content["text"] ?? "")
        break
      case "execute_result":
      case "display_data": {
        const data = (content["data"] ?? {}) as Record<string, unknown>
        // IPython's base64 carries line breaks; a data URL must not.
        if (typeof data["image/png"] === "string") {
          images.push(`data:image/png;base64,${data["image/png"].replace(/\s/g, "")}`)
        } else if (typeof data["text/plain"] === "string") {
          text += `${data["text/plain"]}\n`
        }
        break
      }
      case "error":
        text += `${((content["traceback"] ?? []) as Array<string>).join("\n")}\n`
        break
    }
  }
  return { text: text.replace(ANSI, ""), images }
}

/** The kernel runs, but the code it must run at start (`initCode`) raised. */
class StartupCodeError extends Error {}

/**
 * Interrupt the kernel (KeyboardInterrupt, resent while it has not reached the code) until the
 * request `running` ends, and return its messages; a kernel that does not stop within the grace
 * period (the code catches KeyboardInterrupt, or blocks in C) is killed (null): the next cell
 * restarts it, and nothing the interrupted code started keeps running.
 */
const stop = async (k: KernelProcess, running: Promise<Array<Message>>): Promise<Array<Message> | null> => {
  const deadline = Date.now() + INTERRUPT_GRACE_MS
  while (Date.now() < deadline) {
    k.interrupt()
    const settled = await withTimeout(running, Math.min(INTERRUPT_RESEND_MS, deadline - Date.now()))
    if (settled !== "timeout") return settled
  }
  k.close()
  return null
}

/** Stop `k` (`close`, already done if it died or was killed at an interruption) and remove its files. */
const closeKernel = (k: KernelProcess) => Effect.sync(() => k.close()).pipe(Effect.andThen(removeInFinalizer(k.dir)))

/**
 * Waits for `wait`, a request the kernel runs (`running`) or a deadline on it. Interrupted
 * (`run`'s fiber, or the HTTP request that carries it), the kernel's request is stopped before
 * the interruption completes, so the interrupted cell does not keep running and the next cell
 * runs at once instead of queueing behind it.
 */
const awaitRequest = <A>(k: KernelProcess, running: Promise<Array<Message>>, wait: Promise<A>) =>
  Effect.promise(() => wait).pipe(Effect.onInterrupt(() => Effect.promise(() => stop(k, running))))

/** Runs setup code silently (cwd, variables, `kernelInitCode`); stopped with an interruption. */
const execute = (k: KernelProcess, code: string) =>
  Effect.suspend(() => {
    const running = k.execute(code, true)
    return awaitRequest(k, running, running)
  })

export const makeIPython = (options: IPythonOptions): Effect.Effect<IPython, never, Scope.Scope> =>
  Effect.gen(function*() {
    let kernel: KernelProcess | null = null
    let interpreter = ""
    let syncedCwd: string | null = null
    let syncedEnv = -1

    const start = Effect.tryPromise({
      try: async () => {
        const started = await KernelProcess.start({
          python: options.python,
          stateDir: options.stateDir,
          cwd: options.cwd(),
          env: { ...options.baseEnv, ...options.env.values },
          marker: options.marker
        })
        kernel = started
        if (!(await started.waitReady(READY_TIMEOUT_MS))) {
          throw new Error(`the kernel did not start (${options.python} -m ipykernel_launcher): ${started.log}`)
        }
        await started.execute("%colors nocolor", true)
        if (options.initCode !== undefined) {
          const init = await started.execute(options.initCode, true)
          if (init.some((m) => m.header.msg_type === "error")) {
            throw new StartupCodeError(`its start-up code failed: ${collectOutput(init).text.trim()}`)
          }
        }
        interpreter = collectOutput(await started.execute("import sys; print(sys.executable)", false)).text.trim()
        syncedCwd = null
        syncedEnv = -1
      },
      catch: (cause) =>
        new RuntimeStartError({
          message: `Cannot start the IPython kernel: ${(cause as Error).message}${
            cause instanceof StartupCodeError ? "" : ". Install ipykernel (Debian: python3-ipykernel)."
          }`
        })
    })

    // Started at once, in the background: the first cell waits for it (OpenHands inits plugins concurrently).
    const ready = yield* Deferred.make<void, RuntimeStartError>()
    yield* start.pipe(Effect.exit, Effect.flatMap((exit) => Deferred.done(ready, exit)), Effect.forkScoped)
    yield* Effect.addFinalizer(() => kernel === null ? Effect.void : closeKernel(kernel))

    /** Apply the shell's cwd and added variables before a cell, as OpenHands does. */
    const sync = Effect.fn("IPython.sync")(function*(k: KernelProcess) {
      if (options.env.generation !== syncedEnv) {
        yield* execute(k, `import os as __es_os\n__es_os.environ.update(${JSON.stringify(options.env.values)})`)
        syncedEnv = options.env.generation
      }
      const cwd = options.cwd()
      if (cwd !== syncedCwd) {
        yield* execute(k, `import os as __es_os\n__es_os.chdir(${JSON.stringify(cwd)})`)
        syncedCwd = cwd
      }
    })

    const runCell = Effect.fn("IPython.runCell")(function*(
      action: IPythonRunCellAction,
      restarted: boolean,
      onOutput: ((text: string) => void) | undefined
    ) {
      const k = kernel!
      yield* sync(k)
      if (action.kernelInitCode !== "") yield* execute(k, action.kernelInitCode)
      const seconds = action.timeout ?? 120
      const running = k.execute(
        action.code,
        false,
        onOutput && ((message) => {
          const { text } = collectOutput([message])
          if (text !== "") onOutput(text)
        })
      )
      let messages = yield* awaitRequest(k, running, withTimeout(running, seconds * 1000))
      let timedOut = false
      if (messages === "timeout") {
        timedOut = true
        messages = (yield* Effect.promise(() => stop(k, running))) ?? []
      }
      const died = isDeath(messages, k)
      const { images, text } = collectOutput(messages)
      let content = text.trimEnd()
      if (timedOut) {
        content = `${content}${content === "" ? "" : "\n"}[Execution timed out (${pythonFloat(seconds)} seconds).]`
      } else if (content === "" && !died) content = NO_OUTPUT
      if (restarted) content = `${KERNEL_RESTARTED}\n${content}`
      if (died) {
        content = `${content}${content === "" ? "" : "\n"}${KERNEL_RESTARTED.replace("was restarted", "stopped")}`
      }
      if (action.includeExtra) {
        content += `\n[Jupyter current working directory: ${
          syncedCwd ?? options.cwd()
        }]\n[Jupyter Python interpreter: ${interpreter}]`
      }
      return new IPythonRunCellObservation({
        content,
        code: action.code,
        imageUrls: images.length === 0 ? null : images
      })
    })

    return {
      unavailable: Deferred.await(ready).pipe(
        Effect.match({ onFailure: (error) => error.message, onSuccess: () => undefined })
      ),
      run: (action, onOutput) =>
        Effect.gen(function*() {
          yield* Deferred.await(ready)
          const restarted = kernel !== null && !kernel.isAlive
          if (restarted) {
            yield* closeKernel(kernel!)
            yield* start
          }
          return yield* runCell(action, restarted, onOutput)
        })
    }
  })
