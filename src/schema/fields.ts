/**
 * Field helpers shared by the action and observation schemas.
 *
 * OpenHands events are Python dataclasses whose fields all have defaults; a
 * field missing from wire JSON takes its default, and our constructors accept
 * the same omissions. `withDefault` gives a field both behaviours at once.
 */
import { Effect, Schema } from "effect"

/** A field that may be omitted both when constructing and when decoding. */
export const withDefault = <S extends Schema.Top & Schema.WithoutConstructorDefault>(schema: S, value: S["Type"]) => {
  // `withDecodingDefaultType` keeps S's "no constructor default" marker, which TS cannot see through a generic.
  type Decoded = Schema.withDecodingDefaultType<S> & Schema.WithoutConstructorDefault
  const decoded = Schema.withDecodingDefaultType(Effect.succeed(value))(schema) as Decoded
  return Schema.withConstructorDefault<Decoded>(Effect.succeed(value))(decoded)
}

/** OpenHands' ActionSecurityRisk: -1 UNKNOWN, 0 LOW, 1 MEDIUM, 2 HIGH. */
export const SecurityRisk = Schema.Literals([-1, 0, 1, 2])
export type SecurityRisk = typeof SecurityRisk.Type

/** OpenHands' ActionConfirmationStatus, serialised as its string value. */
export const ConfirmationState = Schema.Literals(["confirmed", "rejected", "awaiting_confirmation"])
export type ConfirmationState = typeof ConfirmationState.Type

/** A JSON object with arbitrary values (MCP arguments, DOM snapshots). */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
export type JsonObject = typeof JsonObject.Type

/** The fields every action carries (`thought`, `security_risk`). */
export const actionBase = {
  thought: withDefault(Schema.String, ""),
  securityRisk: withDefault(SecurityRisk, -1)
}

/**
 * A hard timeout in seconds. On the wire it is the top-level `timeout` key, not an arg;
 * when absent the runtime applies `SandboxConfig.timeout` (non-blocking), as OpenHands does.
 */
export const hardTimeout = Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0)))
