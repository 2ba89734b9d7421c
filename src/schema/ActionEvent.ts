/**
 * What `Runtime.runStream` emits: a command's (or cell's) output as it is printed, then the
 * observation, last. Output chunks are the terminal's raw text (carriage returns
 * and all, never cut at 30,000 characters) so a UI can show it live; the
 * observation is what the agent reads (escape sequences handled, trimmed, cut).
 */
import { Schema } from "effect"
import { Observation } from "./Observation.ts"

/** Output of the running command, as it came (secrets already masked). */
export class OutputChunk extends Schema.TaggedClass<OutputChunk>()("Output", {
  text: Schema.String
}) {}

/** The action's observation: always the stream's last element. */
export class FinalObservation extends Schema.TaggedClass<FinalObservation>()("Observation", {
  observation: Observation
}) {}

/** One element of `Runtime.runStream`. */
export const ActionEvent = Schema.Union([OutputChunk, FinalObservation]).pipe(Schema.toTaggedUnion("_tag"))
export type ActionEvent = typeof ActionEvent.Type
