/**
 * The Dockerfile of the Daytona snapshot: the runtime image with a `/workspace` the sandbox user
 * owns and that user as the image's (internal/userImage.ts). docs/runtimes/daytona.md builds and
 * pushes it.
 */
import { userWorkspaceDockerfile } from "../internal/userImage.ts"

/** The snapshot's Dockerfile on top of `runtimeImage` (the sandbox user: uid 1000 `openhands` unless told). */
export const snapshotDockerfile = (
  runtimeImage: string,
  user: { readonly userId?: number; readonly username?: string } = {}
): string =>
  userWorkspaceDockerfile(runtimeImage, { userId: user.userId ?? 1000, username: user.username ?? "openhands" })
