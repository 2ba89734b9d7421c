/**
 * One command from the moment it is sent to the shell until its observation: its output, how it
 * ends (`done`: the prompt, or the shell exiting), and what its observations so far were. Its
 * transitions are methods, each named for what happened.
 */
import { Deferred, Exit } from "effect"
import { CommandOutput, type Segment } from "./commandOutput.ts"
import type { PromptMetadata } from "./prompt.ts"

/** How a command ended: bash printed its prompt, or bash itself exited. */
export type Completion =
  | { readonly _tag: "Prompt"; readonly metadata: PromptMetadata }
  | { readonly _tag: "Exited"; readonly exitCode: number }

/** Receives a command's output text as it arrives. */
export type OutputListener = (text: string) => void

export class RunningCommand {
  readonly output: CommandOutput
  readonly done = Deferred.makeUnsafe<Completion>()
  /** The shell's count of forks refused by the process limit when the command started. */
  readonly limitHits: number
  /** The waiting caller's listener, while one waits. */
  #listener: OutputListener | null = null
  /** An observation already returned part of its output (so later ones get the "Below is..." prefix). */
  #shownPart = false
  #lastChange = Date.now()

  constructor(spillPath: string, limitHits: number) {
    this.output = new CommandOutput(spillPath)
    this.limitHits = limitHits
  }

  get ended(): boolean {
    return Deferred.isDoneUnsafe(this.done)
  }

  /** When its output last changed (or a caller started waiting): the no-change timeout counts from here. */
  get lastChange(): number {
    return this.#lastChange
  }

  /** The command printed `text`. */
  printed(text: string): void {
    this.output.append(text)
    if (this.#listener !== null) {
      this.#listener(text)
      this.output.markDelivered()
    }
    this.#lastChange = Date.now()
  }

  /**
   * A caller waits for it now, seeing its output through `listener`: first what was printed since
   * the last observation while no caller listened, so a step's chunks are its whole segment.
   */
  awaited(listener: OutputListener | null): void {
    this.#lastChange = Date.now()
    this.#listener = listener
    if (listener !== null) this.output.deliver(listener)
  }

  /** The caller stopped waiting. */
  unwatched(): void {
    this.#listener = null
  }

  /**
   * The output since the last observation, for the one being made: the listener is detached in
   * the same step, so text printed after it goes to the next observation's chunks, not this one's.
   */
  takeSegment(): Segment {
    this.#listener = null
    return this.output.takeSegment()
  }

  /** It ended (the first completion counts). */
  complete(completion: Completion): void {
    Deferred.doneUnsafe(this.done, Exit.succeed(completion))
  }

  /** Part of its output is being shown: whether an earlier part was (OpenHands' "Below is..." prefix then). */
  showPart(): boolean {
    const before = this.#shownPart
    this.#shownPart = true
    return before
  }
}
