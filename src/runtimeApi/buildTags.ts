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

/** The 403 for a tag outside the prefix, or nothing when `tag` is under it. */
export const outsidePrefix = (prefix: string, tag: string): ApiError | undefined =>
  canonicalReference(tag).startsWith(`${canonicalPrefix(prefix)}/`) ? undefined : new ApiError({
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
