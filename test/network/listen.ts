/** The network tests' servers: listening on a free port of 127.0.0.1, closed with the scope. */
import { Effect } from "effect"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"

/** `server` listening on 127.0.0.1 (its port), closed when the scope ends. */
export const listen = (server: Server) =>
  Effect.acquireRelease(
    Effect.callback<number>((resume) =>
      void server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
    ),
    () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  )
