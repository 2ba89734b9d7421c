/**
 * The Dockerfile a cloud provider's image (a Daytona snapshot, a Runloop blueprint) is made from:
 * the runtime image DockerRuntime builds from a base image (docs/image-contract.md: Node and the
 * server under /opt/effect-sandbox), plus what a Docker container gets from its runtime and such a
 * sandbox does not: a `/workspace` the sandbox user owns (Docker bind-mounts one), and that user
 * as the image's, since the provider runs its command API, and so the server, as the image's user.
 */

/** The sandbox user the image is made for (the runtime image must have been built for the same). */
export interface ImageUser {
  readonly userId: number
  readonly username: string
}

/** The Dockerfile on top of `runtimeImage`. */
export const userWorkspaceDockerfile = (runtimeImage: string, user: ImageUser): string =>
  [
    `FROM ${runtimeImage}`,
    "USER root",
    `RUN mkdir -p /workspace && chown ${user.userId}:${user.userId} /workspace`,
    `USER ${user.username}`,
    "WORKDIR /workspace",
    ""
  ].join("\n")
