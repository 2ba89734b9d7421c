/**
 * The layout rules of issue 21: every import in src/ points down (no module reaches itself again
 * through its imports, type-only ones included, as a circle means two concepts that are really one
 * or a shared piece that wants its own module), and the public entries (`src/index.ts` and every
 * subpath in package.json "exports") publish nothing from a folder named `internal`.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"

const root = resolve(import.meta.dirname, "..")
const src = join(root, "src")

/**
 * The specifiers of a module's static `import ... from`, `import "..."`, `export ... from` and
 * `import("...")` forms. A scan rather than a parse (the TypeScript here is the native compiler,
 * without a JavaScript API): a statement starts a line and its clause holds only names, braces,
 * commas and `*`, so an `export const` or a comment that says "from" is not taken for one.
 */
const STATIC_FORM = /^\s*(?:import|export)\s[\w$*{},\s]*?\bfrom\s*["']([^"']+)["']/gm
const BARE_IMPORT = /^\s*import\s*["']([^"']+)["']/gm
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g

const specifiers = (text: string, forms: ReadonlyArray<RegExp>): Array<string> =>
  forms.flatMap((form) => Array.from(text.matchAll(form), (match) => match[1]!))

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith(".ts") ? [path] : []
  })

/** The file a relative specifier names (`./x.ts`, or `./x.js` as the build rewrites it). */
const resolveSpecifier = (from: string, specifier: string): string => {
  const path = resolve(dirname(from), specifier)
  const candidate = path.endsWith(".js") ? `${path.slice(0, -3)}.ts` : path
  if (!existsSync(candidate)) throw new Error(`${relative(root, from)} imports ${specifier}, which is not a file`)
  return candidate
}

const relativeEdges = (file: string, forms: ReadonlyArray<RegExp>): Array<string> =>
  specifiers(readFileSync(file, "utf8"), forms)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => resolveSpecifier(file, specifier))

/** src/'s import graph: each module and the modules it imports. */
const importGraph = (): Map<string, Array<string>> =>
  new Map(sourceFiles(src).map((file) => [file, relativeEdges(file, [STATIC_FORM, BARE_IMPORT, DYNAMIC_IMPORT])]))

/**
 * The graph's circles, one per strongly connected component of more than one module (or a module
 * that imports itself), each as its modules' paths from the repository root. Tarjan's algorithm.
 */
const importCircles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<Array<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const circles: Array<Array<string>> = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) {
      circles.push(component.map((file) => relative(root, file)).sort())
    }
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return circles
}

/** The public entries: src/index.ts and the source of every subpath in package.json "exports". */
const publicEntries = (): Array<string> => {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports: Record<string, string | { default?: string }>
  }
  return Object.values(manifest.exports)
    .map((target) => (typeof target === "string" ? target : target.default))
    .filter((target): target is string => target?.startsWith("./dist/src/") === true)
    .map((target) => join(root, target.slice("./dist/".length).replace(/\.js$/, ".ts")))
}

/** `export ... from` forms only: what a module publishes of another one's. */
const REEXPORT = /^\s*export\s[\w$*{},\s]*?\bfrom\s*["']([^"']+)["']/gm
/** An `export { a, b }` without `from`, which may publish names the module imported. */
const LOCAL_EXPORT = /^\s*export\s+(?:type\s+)?\{([^}]*)\}\s*(?:$|;)/gm
const IMPORT_CLAUSE = /^\s*import\s+(?:type\s+)?([\w$*{},\s]*?)\s*\bfrom\s*["']([^"']+)["']/gm

const inInternalFolder = (file: string): boolean => relative(src, file).split(sep).slice(0, -1).includes("internal")

/**
 * The modules in an `internal` folder whose names an entry publishes: followed through re-exports
 * (`export ... from`) and through `export { name }` of a name the module imported.
 */
const publishedInternals = (entry: string): Array<string> => {
  const seen = new Set<string>()
  const found = new Set<string>()
  const walk = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    if (inInternalFolder(file)) {
      found.add(relative(root, file))
      return
    }
    const text = readFileSync(file, "utf8")
    const exportedNames = new Set(
      Array.from(text.matchAll(LOCAL_EXPORT), (match) => match[1]!)
        .flatMap((list) => list.split(","))
        .map((name) => name.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!)
        .filter((name) => name !== "")
    )
    const sources = [
      ...relativeEdges(file, [REEXPORT]),
      ...Array.from(text.matchAll(IMPORT_CLAUSE))
        .filter(([, clause]) => clause!.split(/[\s{},*]+/).some((name) => exportedNames.has(name)))
        .map(([, , specifier]) => specifier!)
        .filter((specifier) => specifier.startsWith("."))
        .map((specifier) => resolveSpecifier(file, specifier))
    ]
    for (const next of sources) walk(next)
  }
  walk(entry)
  return Array.from(found).sort()
}

describe("layout", () => {
  it("the import graph of src/ has modules and edges (the scan reads the imports)", () => {
    const graph = importGraph()
    assert.isAbove(graph.size, 100)
    assert.include(
      graph.get(join(src, "index.ts"))!.map((file) => relative(root, file)),
      "src/services/Runtime.ts"
    )
  })

  it("finds a circle, type-only imports included", () => {
    const a = join(src, "a.ts")
    const b = join(src, "b.ts")
    const c = join(src, "c.ts")
    assert.deepStrictEqual(
      importCircles(new Map([[a, [b]], [b, [c]], [c, [a]]])),
      [["src/a.ts", "src/b.ts", "src/c.ts"]]
    )
    assert.deepStrictEqual(importCircles(new Map([[a, [b, c]], [b, [c]], [c, []]])), [])
    assert.deepStrictEqual(
      specifiers("import type { X } from \"./x.ts\"\nexport type * from \"./y.ts\"\n", [STATIC_FORM]),
      ["./x.ts", "./y.ts"]
    )
  })

  it("src/ has no import circles", () => {
    assert.deepStrictEqual(importCircles(importGraph()), [])
  })

  it("the public entries are src/index.ts and every subpath", () => {
    const entries = publicEntries().map((file) => relative(root, file))
    assert.include(entries, "src/index.ts")
    assert.include(entries, "src/docker.ts")
    for (const entry of entries) assert.isTrue(existsSync(join(root, entry)), entry)
  })

  it("no public entry exports anything from an internal folder", () => {
    const published = publicEntries().flatMap((entry) =>
      publishedInternals(entry).map((internal) => `${relative(root, entry)} -> ${internal}`)
    )
    assert.deepStrictEqual(published, [])
  })
})
