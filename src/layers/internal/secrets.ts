/**
 * Secret values (given to `addEnvVars` as `Redacted`) must never reach an agent
 * or a log: every string in an observation is masked before it leaves the runtime.
 */
import { copyWith } from "../../schema/copy.ts"
import { CmdOutputMetadata, type Observation } from "../../schema/Observation.ts"

export const MASK = "<redacted>"

export class SecretMask {
  private readonly secrets = new Set<string>()

  add(value: string): void {
    if (value.length > 0) this.secrets.add(value)
  }

  text(text: string): string {
    let masked = text
    for (const secret of this.secrets) masked = masked.replaceAll(secret, MASK)
    return masked
  }

  /** The observation with every string field (and command metadata) masked; the same object when nothing changes. */
  observation<O extends Observation>(observation: O): O {
    if (this.secrets.size === 0) return observation
    const patch: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(observation)) {
      if (typeof value === "string" && key !== "_tag") {
        const masked = this.text(value)
        if (masked !== value) patch[key] = masked
      } else if (value instanceof CmdOutputMetadata) {
        const masked = this.metadata(value)
        if (masked !== value) patch[key] = masked
      }
    }
    return Object.keys(patch).length === 0 ? observation : copyWith(observation, patch as Partial<O>)
  }

  private metadata(metadata: CmdOutputMetadata): CmdOutputMetadata {
    const prefix = this.text(metadata.prefix)
    const suffix = this.text(metadata.suffix)
    return prefix === metadata.prefix && suffix === metadata.suffix
      ? metadata
      : new CmdOutputMetadata({ ...metadata, prefix, suffix })
  }
}
