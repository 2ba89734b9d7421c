/**
 * How every hosted runtime's action server is made to die at start with a real option: the `env`
 * option reaches the server's environment, and the server refuses a limit that is not a positive
 * integer (src/executor/limits.ts) before it listens.
 */
export const DYING_SERVER_ENV = { EFFECT_SANDBOX_MAX_PROCESSES: "0" }

/** The line the server prints as it exits (with code 1). */
export const DYING_SERVER_OUTPUT = "EFFECT_SANDBOX_MAX_PROCESSES must be a positive integer, not \"0\""
