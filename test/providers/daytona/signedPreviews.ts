/**
 * Signed preview URLs, as Daytona's API gives them out (`GET /sandbox/{id}/ports/{port}/signed-preview-url`,
 * apps/api sandbox.service.ts `getSignedPortPreviewUrl`): a token of 16 lowercase letters and
 * digits, kept for `expiresInSeconds` (default 60, 1 s to 24 h, else 400) with the sandbox and the
 * port it opens; the URL is `{port}-{token}.{proxy domain}` (here under `/preview/`). Daytona's
 * proxy lets a request in on a valid token, for that port only.
 */
import { randomInt } from "node:crypto"
import { ApiError, type StandInSandbox } from "./sandboxes.ts"

/** What a token opens, until when. */
export interface SignedPreview {
  readonly sandboxId: string
  readonly port: number
  readonly expiresAt: number
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
const DEFAULT_SECONDS = 60
const LONGEST_SECONDS = 24 * 60 * 60

export class SignedPreviews {
  readonly byToken = new Map<string, SignedPreview>()

  /** A new token for `port` of `sandbox`, answered as Daytona's `SignedPortPreviewUrl` (without its URL). */
  sign(sandbox: StandInSandbox, port: number, expiresInSeconds: string | null) {
    if (port < 1 || port > 65535) throw new ApiError(400, "Invalid port")
    const seconds = expiresInSeconds === null ? DEFAULT_SECONDS : Number(expiresInSeconds)
    if (!(seconds >= 1 && seconds <= LONGEST_SECONDS)) {
      throw new ApiError(400, "expiresInSeconds must be between 1 second and 24 hours")
    }
    const token = Array.from({ length: 16 }, () => ALPHABET[randomInt(ALPHABET.length)]).join("")
    this.byToken.set(token, { sandboxId: sandbox.id, port, expiresAt: Date.now() + seconds * 1000 })
    return { sandboxId: sandbox.id, port, token }
  }

  /** The sandbox a token opens `port` of; refused (as the API answers the proxy) when unknown, expired or for another port. */
  sandboxOf(token: string, port: number): string {
    const signed = this.byToken.get(token)
    if (signed === undefined || signed.port !== port || signed.expiresAt <= Date.now()) {
      throw new ApiError(403, "Invalid or expired token")
    }
    return signed.sandboxId
  }
}
