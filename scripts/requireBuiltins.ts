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

/** The module that stands for the built-in `name` (`node:` prefixed), its exports as of this Node. */
const standIn = (name: string): string => {
  const exports: object = require(name)
  const lines = [
    `import { createRequire } from "node:module"`,
    `const m = createRequire(import.meta.url)(${JSON.stringify(name)})`,
    `export default m`
  ]
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(exports))) {
    if (!IDENTIFIER.test(key) || key === "default") continue
    lines.push(
      descriptor.get === undefined
        ? `export const ${key} = m.${key}`
        : `export const ${key} = /* @__PURE__ */ (() => m.${key})()`
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
