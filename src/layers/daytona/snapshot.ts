/**
 * The Dockerfile of the Daytona snapshot: the runtime image DockerRuntime builds from a base image
 * (docs/image-contract.md: Node and the server under /opt/effect-sandbox), plus what a Docker
 * container gets from its runtime and a Daytona sandbox does not: a `/workspace` the sandbox user
 * owns (Docker bind-mounts one), and that user as the image's (Daytona runs the toolbox, and so
 * the server, as the snapshot's user). docs/runtimes/daytona.md builds and pushes it.
 */

/** The snapshot's Dockerfile on top of `runtimeImage` (the sandbox user: uid 1000 `openhands` unless told). */
export const snapshotDockerfile = (
  runtimeImage: string,
  user: { readonly userId?: number; readonly username?: string } = {}
): string =>
  [
    `FROM ${runtimeImage}`,
    "USER root",
    `RUN mkdir -p /workspace && chown ${user.userId ?? 1000}:${user.userId ?? 1000} /workspace`,
    `USER ${user.username ?? "openhands"}`,
    "WORKDIR /workspace",
    ""
  ].join("\n")
