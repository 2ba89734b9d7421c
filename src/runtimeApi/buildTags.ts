/**
 * Which tags `/build` may write. An API key must not be a way to replace images other owners and
 * the host run (`debian:bookworm`, `postgres:16`, DockerRuntime's `effect-sandbox-runtime:<hash>`),
 * so a build tags only references under the server's registry prefix, compared as the engine
 * resolves them (`debian` is `docker.io/library/debian`), and only tags that are free or that an
 * earlier `/build` made (it names them in a label it sets on the image, which a Dockerfile's own
 * LABEL cannot override). The Docker side of the check is in dockerImages.ts.
 */
import { ApiError } from "./errors.ts"

/** The tags a `/build` gave its image, space-separated; set by the engine's build options, not the Dockerfile. */
export const API_TAGS_LABEL = "effect-sandbox.api-build-tags"

/** `repo[:tag]` split at the tag's colon (a registry's port colon comes before the last `/`). */
export const splitReference = (reference: string) => {
  const colon = reference.lastIndexOf(":")
  return colon > reference.lastIndexOf("/") ? { repo: reference.slice(0, colon), tag: reference.slice(colon + 1) } : {
    repo: reference,
    tag: "latest"
  }
}

/** The repository as the engine stores it: `debian` is `docker.io/library/debian`, `a/b` is `docker.io/a/b`. */
const canonicalRepository = (repo: string) => {
  const slash = repo.indexOf("/")
  const first = slash < 0 ? "" : repo.slice(0, slash)
  const hasDomain = first.includes(".") || first.includes(":") || first === "localhost"
  const domain = !hasDomain || first === "index.docker.io" ? "docker.io" : first
  const path = hasDomain ? repo.slice(slash + 1) : repo
  return domain === "docker.io" && !path.includes("/") ? `${domain}/library/${path}` : `${domain}/${path}`
}

/** `reference` as the engine resolves it: canonical repository and explicit tag. */
export const canonicalReference = (reference: string) => {
  const { repo, tag } = splitReference(reference)
  return `${canonicalRepository(repo)}:${tag}`
}

/** The namespace a registry prefix stands for (`effect-sandbox` is `docker.io/effect-sandbox`). */
const canonicalPrefix = (prefix: string) => canonicalRepository(`${prefix.replace(/\/+$/, "")}/x`).slice(0, -2)

/**
 * Why `prefix` cannot be the server's registry prefix, if it cannot: one that stands for Docker
 * Hub's official images would let `/build` replace them all.
 */
export const unsafeRegistryPrefix = (prefix: string): string | undefined =>
  canonicalPrefix(prefix) === "docker.io/library" || prefix.replace(/\/+$/, "") === ""
    ? `--registry-prefix ${prefix} would let /build replace Docker Hub's official images (debian, postgres, ...): ` +
      "choose a namespace of your own, such as effect-sandbox or registry.example/team"
    : undefined

/**
 * Docker's grammar of a tagged name (distribution/reference): an optional registry host, path
 * components of lower-case letters and digits joined by `.`, `_`, `__` or dashes (so never `..`),
 * and a tag.
 */
const DOMAIN = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d+)?$/
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/
const TAG = /^\w[\w.-]{0,127}$/

const wellFormed = (reference: string) => {
  const { repo, tag } = splitReference(reference)
  const parts = repo.split("/")
  const domain = parts.length > 1 && (parts[0]!.includes(".") || parts[0]!.includes(":") || parts[0] === "localhost")
  return repo.length <= 255 && TAG.test(tag) && (!domain || DOMAIN.test(parts[0]!)) &&
    parts.slice(domain ? 1 : 0).every((part) => COMPONENT.test(part))
}

/** Why `/build` may not write `tag` whatever the engine holds: not a name Docker takes (400), outside the prefix (403). */
export const refusedTag = (prefix: string, tag: string): ApiError | undefined =>
  !wellFormed(tag)
    ? new ApiError({ status: 400, detail: `Refusing to tag ${tag}: not an image name Docker accepts (repository:tag)` })
    : canonicalReference(tag).startsWith(`${canonicalPrefix(prefix)}/`)
    ? undefined
    : new ApiError({
      status: 403,
      detail: `Refusing to tag ${tag}: /build tags images only under this server's registry prefix ${prefix}`
    })

/** True when the image labels say an earlier `/build` made `tag`. */
export const madeByApi = (labels: Readonly<Record<string, string>> | null | undefined, tag: string) =>
  (labels?.[API_TAGS_LABEL] ?? "").split(" ").some((made) =>
    made !== "" && canonicalReference(made) === canonicalReference(tag)
  )

/** The 409 for a tag the engine has that `/build` did not make. */
export const notOurs = (tag: string) =>
  new ApiError({
    status: 409,
    detail: `Refusing to tag ${tag}: the engine already has this tag and this server's /build did not make it`
  })
