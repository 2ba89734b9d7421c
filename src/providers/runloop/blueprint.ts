/**
 * The Dockerfile of the Runloop blueprint: the runtime image with a `/workspace` the devbox user
 * owns and that user as the image's (internal/userImage.ts). docs/runtimes/runloop.md builds the
 * runtime image, pushes it and makes the blueprint from this.
 */
import { userWorkspaceDockerfile } from "../../layers/internal/userImage.ts"

/** The blueprint's Dockerfile on top of `runtimeImage` (the devbox user: Runloop's uid 1000 `user` unless told). */
export const blueprintDockerfile = (
  runtimeImage: string,
  user: { readonly user?: string; readonly userId?: number } = {}
): string => userWorkspaceDockerfile(runtimeImage, { userId: user.userId ?? 1000, username: user.user ?? "user" })
