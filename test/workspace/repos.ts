/** Real git repositories in temporary directories for the workspace set-up tests (no network). */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { dirname, join, normalize } from "node:path"

/** Run git on the host with a fixed identity (the host's global config is never read or written). */
export const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" }
  })

/** A temporary directory removed with the scope. */
export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), prefix))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** A bare repository `<root>/<name>.git` on branch `main` with one commit of `files`. */
export const bareRepo = (root: string, name: string, files: Readonly<Record<string, string>>) => {
  const work = join(root, `${name}-src`)
  mkdirSync(work)
  git(work, "init", "-q", "-b", "main")
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true })
    writeFileSync(join(work, path), content)
  }
  git(work, "add", "-A")
  git(work, "commit", "-q", "-m", "initial")
  git(work, "branch", "feature")
  const bare = join(root, `${name}.git`)
  git(root, "clone", "-q", "--bare", work, bare)
  // For git's "dumb" HTTP protocol: static files are enough to clone.
  git(bare, "update-server-info")
  return bare
}

/**
 * A static file server for `root` that answers 401 unless the request carries Basic `user:token`:
 * git's dumb HTTP protocol, so a clone proves the token was sent. Records every request line.
 */
export const authServer = (root: string, user: string, token: string) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const requests: Array<string> = []
      const expected = `Basic ${Buffer.from(`${user}:${token}`).toString("base64")}`
      const server = createServer((request, response) => {
        requests.push(`${request.method} ${request.url} ${request.headers.authorization ?? ""}`)
        if (request.headers.authorization !== expected) {
          response.writeHead(401, { "www-authenticate": "Basic realm=\"git\"" }).end()
          return
        }
        const path = normalize(join(root, decodeURIComponent(new URL(request.url!, "http://x").pathname)))
        const size = path.startsWith(root) ? statSync(path, { throwIfNoEntry: false }) : undefined
        if (size === undefined || !size.isFile()) {
          response.writeHead(404).end()
          return
        }
        response.writeHead(200, { "content-type": "application/octet-stream" })
        createReadStream(path).pipe(response)
      })
      return new Promise<{ readonly url: string; readonly requests: Array<string>; readonly close: () => void }>(
        (resolve) =>
          server.listen(0, "127.0.0.1", () => {
            const address = server.address() as { port: number }
            resolve({ url: `http://127.0.0.1:${address.port}`, requests, close: () => server.close() })
          })
      )
    }),
    (s) => Effect.sync(s.close)
  )
