/**
 * A registry stand-in for the tests: the Registry HTTP API v2 (what `docker pull` asks: `/v2/`, a
 * manifest, blobs) on 127.0.0.1, serving one image of the engine exported by `docker save`, so a
 * pull succeeds on a machine with no registry (the engine speaks plain HTTP to 127.0.0.0/8). The
 * layers are served as `docker save` wrote them, uncompressed (an OCI manifest says so), under their
 * diff ids, with one layer more on top: a file of random bytes, so that the image is new to the
 * engine and its pull downloads something (layers the engine has are not downloaded or reported).
 */
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

interface Blob {
  readonly path: string
  readonly size: number
}

/** The size of the layer added on top. */
const ADDED_BYTES = 3_000_000

const sha256 = (data: Buffer | string) => `sha256:${createHash("sha256").update(data).digest("hex")}`

/** A tar of one file of `size` random bytes (a 512-byte header, the data padded to 512, two empty blocks). */
const randomLayer = (size: number) => {
  const header = Buffer.alloc(512)
  header.write("effect-sandbox-test-layer", 0)
  header.write("0000644\0", 100)
  header.write("0000000\0", 108)
  header.write("0000000\0", 116)
  header.write(`${size.toString(8).padStart(11, "0")}\0`, 124)
  header.write("00000000000\0", 136)
  header.write("0", 156)
  header.write("ustar\0", 257)
  header.write("00", 263)
  header.fill(" ", 148, 156)
  const checksum = header.reduce((sum, byte) => sum + byte, 0)
  header.write(`${checksum.toString(8).padStart(6, "0")}\0 `, 148)
  return Buffer.concat([header, randomBytes(size), Buffer.alloc((512 - (size % 512)) % 512), Buffer.alloc(1024)])
}

/** `docker save` of `image` plus a random layer, unpacked in `dir`: the manifest and blobs by digest. */
const exported = (image: string, dir: string) => {
  const saved = spawnSync("sh", ["-c", `docker save "$0" | tar -x -C "$1"`, image, dir], { encoding: "utf8" })
  if (saved.status !== 0) throw new Error(`docker save ${image} failed: ${saved.stderr}`)
  const [entry] = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Array<
    { readonly Config: string; readonly Layers: ReadonlyArray<string> }
  >
  const config = JSON.parse(readFileSync(join(dir, entry!.Config), "utf8")) as {
    readonly rootfs: { readonly diff_ids: Array<string> }
    readonly history?: Array<unknown>
  }
  const added = randomLayer(ADDED_BYTES)
  const addedPath = join(dir, "added.tar")
  writeFileSync(addedPath, added)
  const paths = [...entry!.Layers.map((layer) => join(dir, layer)), addedPath]
  const diffIds = [...config.rootfs.diff_ids, sha256(added)]
  const newConfig = JSON.stringify({
    ...config,
    rootfs: { type: "layers", diff_ids: diffIds },
    history: [...(config.history ?? []), { created_by: "effect-sandbox test: a layer the engine lacks" }]
  })
  const configPath = join(dir, "config.json")
  writeFileSync(configPath, newConfig)
  const configDigest = sha256(newConfig)
  const blobs = new Map<string, Blob>([[configDigest, { path: configPath, size: Buffer.byteLength(newConfig) }]])
  const layers = paths.map((path, i) => {
    const blob = { path, size: statSync(path).size }
    blobs.set(diffIds[i]!, blob)
    return { digest: diffIds[i]!, size: blob.size }
  })
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: {
      mediaType: "application/vnd.oci.image.config.v1+json",
      digest: configDigest,
      size: blobs.get(configDigest)!.size
    },
    layers: layers.map((layer) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar", ...layer }))
  })
  // What a pull downloads: every layer, or only the added one where the engine knows the others'
  // digests from an earlier pull (it skips a layer it has only when it knows the digest it is under).
  const allBytes = layers.reduce((sum, layer) => sum + layer.size, 0)
  return { blobs, manifest, bytes: [added.length, allBytes], addedLayer: diffIds.at(-1)! }
}

/** Remove the engine's images that hold `layer` (built on the pulled image, then the pulled image). */
const removeImagesWith = (layer: string) => {
  const ids = spawnSync("docker", ["image", "ls", "-aq", "--no-trunc"], { encoding: "utf8" }).stdout.split("\n")
    .filter((id) => id !== "")
  if (ids.length === 0) return
  const images = JSON.parse(
    spawnSync("docker", ["image", "inspect", ...new Set(ids)], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
      .stdout || "[]"
  ) as Array<{ readonly Id: string; readonly RootFS: { readonly Layers?: Array<string> } }>
  const holding = images.filter((image) => image.RootFS.Layers?.includes(layer) === true)
    // Children first: an image with more layers is built on one with fewer.
    .sort((a, b) => (b.RootFS.Layers?.length ?? 0) - (a.RootFS.Layers?.length ?? 0))
  for (const image of holding) spawnSync("docker", ["rmi", "-f", image.Id], { stdio: "ignore" })
}

/**
 * A registry serving `image` and a random layer as `<host>/effect-sandbox-test/pulled:<pid>`
 * (`reference`; `bytes`: what its pull may download), in the scope: closed and its files removed with
 * it, and every image holding the added layer (the pulled one, runtime images built on it).
 */
export const registryServing = (image: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = mkdtempSync(join(tmpdir(), "effect-sandbox-registry-"))
      const { addedLayer, blobs, bytes, manifest } = exported(image, dir)
      const server = createServer((request, response) => {
        const url = request.url ?? ""
        if (url === "/v2/") return void response.writeHead(200, { "Content-Type": "application/json" }).end("{}")
        if (/^\/v2\/.+\/manifests\/[^/]+$/.test(url)) {
          response.writeHead(200, {
            "Content-Type": "application/vnd.oci.image.manifest.v1+json",
            "Content-Length": Buffer.byteLength(manifest)
          })
          return void response.end(request.method === "HEAD" ? undefined : manifest)
        }
        const blob = blobs.get(/^\/v2\/.+\/blobs\/(sha256:[0-9a-f]{64})$/.exec(url)?.[1] ?? "")
        if (blob === undefined) return void response.writeHead(404).end()
        response.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": blob.size })
        if (request.method === "HEAD") return void response.end()
        createReadStream(blob.path).pipe(response)
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const reference = `127.0.0.1:${(server.address() as AddressInfo).port}/effect-sandbox-test/pulled:${process.pid}`
      return { server, dir, reference, bytes, addedLayer }
    }),
    ({ addedLayer, dir, server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.close(() => resolve())
          // The engine keeps its connections open: closed, or `close` would wait for them.
          server.closeAllConnections()
        })
      ).pipe(
        Effect.andThen(Effect.sync(() => {
          rmSync(dir, { recursive: true, force: true })
          removeImagesWith(addedLayer)
        }))
      )
  ).pipe(Effect.map(({ bytes, reference }) => ({ bytes, reference })))
