/**
 * A provisioner's disconnect watch (services/Provisioner.ts) for a provider that can only be asked,
 * not listened to (E2B, Runloop): `explain` asks whether the sandbox has gone and why, and
 * `stopped` asks it every `every` until it has.
 */
import { type Duration, Effect, Schedule } from "effect"
import type { Disconnect, ProvisionedSandbox } from "../../services/Provisioner.ts"

export const pollDisconnect = (
  explain: Effect.Effect<Disconnect | undefined>,
  every: Duration.Input
): NonNullable<ProvisionedSandbox["disconnect"]> => ({
  stopped: explain.pipe(
    Effect.repeat({ schedule: Schedule.spaced(every), until: (why) => why !== undefined }),
    Effect.asVoid
  ),
  explain
})
