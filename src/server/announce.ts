/**
 * The line the server prints on stdout once it listens, so whoever started it
 * learns the OS-assigned port:
 *   effect-sandbox-server listening {"host":"127.0.0.1","port":41237}
 */
export const LISTENING_PREFIX = "effect-sandbox-server listening "

export const listeningLine = (host: string, port: number): string =>
  `${LISTENING_PREFIX}${JSON.stringify({ host, port })}\n`
