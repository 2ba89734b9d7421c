/**
 * What the CLI shows while a runtime starts (services/StartProgress.ts), on stderr, since stdout is
 * the commands' output. On a terminal: one line redrawn in place (the phase, its detail, the time
 * since the start began, ticking each second while nothing else happens), cleared once the runtime
 * is ready, log lines printed above it instead of glued to it. Elsewhere (a pipe, a CI log): a
 * plain line at each new phase or build step, never a redrawn byte count.
 */
import { Duration, Effect, Layer, Logger } from "effect"
import { StartProgress, type StartProgressEvent } from "../services/StartProgress.ts"

/** Megabytes, one decimal. */
const megabytes = (bytes: number) => (bytes / 1_000_000).toFixed(1)

/** An event in words: `building the runtime image: step 3 of 12: RUN apt-get update`. */
export const describeStart = (event: StartProgressEvent): string => {
  switch (event.phase) {
    case "pulling-image":
      return `pulling ${event.detail}` +
        (event.bytes === undefined || event.bytes.total === 0
          ? ""
          : `: ${megabytes(event.bytes.done)} of ${megabytes(event.bytes.total)} MB`)
    case "building-image":
      return "building the runtime image" +
        (event.step === undefined ? "" : `: step ${event.step.index} of ${event.step.total}`) + `: ${event.detail}`
    case "creating":
      return `creating ${event.detail}`
    case "starting-server":
      return `starting the action server ${event.detail}`
    case "waiting-for-server":
      return `waiting for ${event.detail}`
    case "ready":
      return `ready: ${event.detail}`
  }
}

/** The time since the start began, as a line starts: `[12.3s]`. */
const stamp = (millis: number) => `[${(millis / 1000).toFixed(1)}s]`

/** ANSI: back to the line's first column and clear it. */
const CLEAR_LINE = "\r\x1b[K"

/** How often the terminal's line is redrawn while its phase goes on. */
const TICK = Duration.seconds(1)

/** A plain line at each new phase or build step. */
const plainLines = (write: (text: string) => void) => {
  let last: string | undefined
  return (event: StartProgressEvent) =>
    Effect.sync(() => {
      const key = `${event.phase} ${event.step?.index ?? ""}`
      if (key === last) return
      last = key
      write(`${stamp(Duration.toMillis(event.elapsed))} ${describeStart(event)}\n`)
    })
}

/** Where the live line is drawn: a terminal's width (0: unknown) and its output. */
export interface Terminal {
  readonly columns: number
  readonly write: (text: string) => void
}

/**
 * The terminal's one line: `show` draws an event (its time then running on, read from `now`),
 * `aside` prints something else above it, `tick` redraws it each second, `clear` removes it for good.
 */
export const liveLine = (stream: Terminal, now: () => number) => {
  let shown: { readonly text: string; readonly began: number } | undefined
  let finished = false
  const draw = () => {
    if (shown === undefined || finished) return
    const line = `${stamp(now() - shown.began)} ${shown.text}`
    // Cut to the terminal's width (80 where it says none): a wrapped line could not be redrawn in place.
    const columns = stream.columns > 0 ? stream.columns : 80
    stream.write(CLEAR_LINE + line.slice(0, columns - 1))
  }
  const erase = () => {
    if (shown !== undefined && !finished) stream.write(CLEAR_LINE)
  }
  return {
    show: (event: StartProgressEvent) =>
      Effect.sync(() => {
        if (event.phase === "ready") {
          erase()
          finished = true
          return
        }
        shown = { text: describeStart(event), began: now() - Duration.toMillis(event.elapsed) }
        draw()
      }),
    aside: (print: () => void) => {
      erase()
      print()
      draw()
    },
    /** Redraw each `TICK` until cleared (the time runs on while a phase does). */
    tick: Effect.sync(draw).pipe(Effect.delay(TICK), Effect.repeat({ until: () => finished })),
    clear: Effect.sync(() => {
      erase()
      finished = true
    })
  }
}

/**
 * The runtime's start shown on stderr: what `layer` needs to show it, for `Layer.provide`. On a
 * terminal, the loggers write above the live line while it is up.
 */
export const startProgressLine: Layer.Layer<never> = Layer.unwrap(Effect.gen(function*() {
  const stderr = process.stderr
  if (stderr.isTTY !== true) {
    return StartProgress.layer(plainLines((text) => stderr.write(text)))
  }
  const line = liveLine({
    get columns() {
      return stderr.columns
    },
    write: (text) => stderr.write(text)
  }, Date.now)
  const loggers = yield* Logger.CurrentLoggers
  const aside = new Set([...loggers].map((logger) => Logger.make((options) => line.aside(() => logger.log(options)))))
  return Layer.mergeAll(
    StartProgress.layer(line.show),
    Layer.succeed(Logger.CurrentLoggers, aside),
    Layer.effectDiscard(Effect.gen(function*() {
      yield* Effect.addFinalizer(() => line.clear)
      yield* Effect.forkScoped(line.tick)
    }))
  )
}))
