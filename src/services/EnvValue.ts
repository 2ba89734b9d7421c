/**
 * An environment value, as `Runtime.addEnvVars` and `Runtime.spawn` take it. Its own module because
 * both services/Runtime.ts and services/Processes.ts (which Runtime imports) name it.
 */
import type { Redacted } from "effect"

/** An environment value: plain, or `Redacted` (never logged, masked in every observation). */
export type EnvValue = string | Redacted.Redacted<string>
