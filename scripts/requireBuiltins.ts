/**
 * A rolldown plugin for the payload (build-payload.ts): Node's built-in modules are loaded with
 * `require`, not `import`. An ES import of a built-in makes Node build its ES facade, which reads
 * every export, and some exports are getters that load much more: `node:http`'s `WebSocket` loads
 * undici (745 KB of source; ~6 MB of heap and ~150 ms before the server listens), `node:tls`'s
 * `rootCertificates` every root certificate (~3 MB), `node:crypto`'s `webcrypto` (~1.5 MB). Through
 * `require` a getter runs only when read: each built-in becomes a module that requires it once and
 * exports its plain values by name, and each getter behind a pure call, so tree-shaking drops the
 * getters no bundled code reads.
 */
import { createRequire, isBuiltin } from "node:module"
import type { Plugin } from "rolldown"

const PREFIX = "\0require-builtin:"
const require = createRequire(import.meta.url)
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/**
 * Built-ins the server's boot reaches only through libraries that use them later, if ever
 * (`node:tls` for Effect's TLS sockets, `node:readline` for its terminal): ~10 ms of a boot to
 * require. Their stand-ins require them on first use.
 */
const LAZY = new Set(["node:tls", "node:readline"])

/**
 * What a lazy stand-in exports for a function (or class) of the built-in: a proxy that requires
 * the built-in when first called, constructed (as a base class too) or read from.
 */
const LAZY_FUNCTION = `const lazy = (key) => new Proxy(function() {}, {
  apply: (_, self, args) => Reflect.apply(m()[key], self, args),
  construct: (proxy, args, target) => Reflect.construct(m()[key], args, target === proxy ? m()[key] : target),
  get: (_, name) => Reflect.get(m()[key], name),
  has: (_, name) => Reflect.has(m()[key], name)
})`

/** The module that stands for the built-in `name` (`node:` prefixed), its exports as of this Node. */
const standIn = (name: string): string => {
  const exports: object = require(name)
  const lazily = LAZY.has(name)
  const load = `createRequire(import.meta.url)(${JSON.stringify(name)})`
  const lines = [
    `import { createRequire } from "node:module"`,
    ...(lazily
      ? [`let loaded`, `const m = () => (loaded ??= ${load})`, LAZY_FUNCTION, `export default /* @__PURE__ */ m()`]
      : [`const m = ${load}`, `export default m`])
  ]
  const value = lazily ? "m()" : "m"
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(exports))) {
    if (!IDENTIFIER.test(key) || key === "default") continue
    lines.push(
      lazily && typeof descriptor.value === "function"
        ? `export const ${key} = /* @__PURE__ */ lazy(${JSON.stringify(key)})`
        : descriptor.get === undefined && !lazily
        ? `export const ${key} = m.${key}`
        : `export const ${key} = /* @__PURE__ */ (() => ${value}.${key})()`
    )
  }
  return lines.join("\n")
}

/** ES imports of built-ins: node:module (which the stand-ins import) and the ES-only ones (node:test) aside. */
const standsIn = (source: string) =>
  isBuiltin(source) && source !== "module" && source !== "node:module" && !source.startsWith("node:test")

export const requireBuiltins = (): Plugin => ({
  name: "require-builtins",
  resolveId: (source, _importer, { kind }) =>
    !isBuiltin(source)
      ? null
      // A `require` (in bundled CommonJS) wants the module itself, which rolldown's own require gives.
      : kind !== "require-call" && standsIn(source)
      ? { id: PREFIX + (source.startsWith("node:") ? source : `node:${source}`), moduleSideEffects: false }
      : { id: source, external: true },
  load: (id) => id.startsWith(PREFIX) ? standIn(id.slice(PREFIX.length)) : null
})
