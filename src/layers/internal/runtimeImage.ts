/**
 * Where things are inside every runtime image (layers/docker/imageBuilder.ts makes them): the
 * paths a provisioner's server command names, whether it starts the container itself (Docker) or
 * asks a runtime API to (Remote).
 */

/** The Node binary every runtime image carries: stdio MCP servers written for Node can run with it. */
export const IMAGE_NODE = "/opt/effect-sandbox/bin/node"
/** The bundled action server. */
export const IMAGE_SERVER = "/opt/effect-sandbox/payload/server.mjs"
/** The workspace inside the sandbox (`info.workspace`). */
export const IMAGE_WORKSPACE = "/workspace"
