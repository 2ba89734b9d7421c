/** A tracer that keeps every span it makes, for tests that read what a program would export. */
import { Tracer } from "effect"

export interface RecordingTracer {
  readonly tracer: Tracer.Tracer
  readonly spans: ReadonlyArray<Tracer.Span>
  /** The attributes of each span of `kind`, as plain objects. */
  readonly attributes: (kind: Tracer.SpanKind) => ReadonlyArray<Record<string, unknown>>
  /** Every attribute of every span as one string, to search for what must not be there. */
  readonly everything: () => string
}

export const recordingTracer = (): RecordingTracer => {
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (options) => {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return {
    tracer,
    spans,
    attributes: (kind) => spans.filter((s) => s.kind === kind).map((s) => Object.fromEntries(s.attributes.entries())),
    everything: () => JSON.stringify(spans.map((s) => [...s.attributes.entries()]))
  }
}
