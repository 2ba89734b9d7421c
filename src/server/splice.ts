/**
 * Two sockets joined byte for byte, for the proxies that hand a WebSocket over after its
 * handshake (the VS Code token proxy, the runtime API's VS Code path, the loopback header relay).
 * One rule for all three, so the browser sees the same ending whichever is in front of it:
 * - when one side closes, the other is ended, so what is still on its way arrives (an upstream's
 *   answer that ends with its connection, a 403 or a WebSocket close frame, is not cut short),
 *   and is then destroyed;
 * - an error on either side (a refused connect, a reset) destroys both at once.
 */
import type { Socket } from "node:net"

/** End `socket` after what is buffered for it is flushed, then destroy it. */
const endThenDestroy = (socket: Socket) => () => socket.end(() => socket.destroy())

/**
 * Join `a` and `b` until either closes; `onClosed` runs once both are closed. `b` may still be
 * connecting: what was written to it is sent on connect, and a failed connect closes `a` too.
 */
export const splice = (a: Socket, b: Socket, onClosed: () => void = () => {}): void => {
  const broken = () => {
    a.destroy()
    b.destroy()
  }
  let open = 2
  const closed = () => --open === 0 && onClosed()
  a.on("error", broken).once("close", endThenDestroy(b)).once("close", closed)
  b.on("error", broken).once("close", endThenDestroy(a)).once("close", closed)
  a.pipe(b).pipe(a)
}
