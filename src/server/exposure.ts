/**
 * Safe by default (DESIGN principle 10): the server listens on loopback unless told otherwise,
 * and refuses to listen anywhere else without a session key, since it runs any command it
 * is sent. Refusing beats generating a key: a generated key printed on a console is easy to
 * miss and lands in logs, and whoever exposes the server must hand the key to its clients
 * anyway (DockerRuntime passes `--host 0.0.0.0` and a key explicitly).
 */
/** `localhost`, `127.0.0.0/8` or `::1` (as a plain or IPv4-mapped address). */
export const isLoopback = (host: string): boolean => {
  const address = host.replace(/^\[(.*)\]$/, "$1").toLowerCase()
  return address === "localhost" || address === "::1" || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(address)
}

/** Why the server must not listen on `host` with `key`, or undefined when it may. */
export const exposureRefusal = (host: string, keyed: boolean): string | undefined =>
  isLoopback(host) || keyed
    ? undefined
    : `Refusing to listen on ${host} without a session key: anyone who can reach it could run commands. ` +
      "Set SESSION_API_KEY, or listen on 127.0.0.1 (the default)."
