/**
 * RBAC as kube-apiserver's authorizer applies a Role: each request's verb (get, list, watch, create,
 * update, patch, delete, deletecollection), API group and resource (with its subresource:
 * `pods/log`, `pods/portforward`) must match one of the rules, else 403 Forbidden in the
 * apiserver's words. Discovery is open (the `system:discovery` ClusterRole every authenticated
 * user has). `docsRole` reads the Role of docs/runtimes/kubernetes.md, so the tests hold the docs
 * to what the runtime calls.
 */
import { loadAllYaml } from "@kubernetes/client-node"
import { readFileSync } from "node:fs"
import { ApiError } from "./status.ts"

export interface PolicyRule {
  readonly apiGroups: ReadonlyArray<string>
  readonly resources: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
}

/** One request as the authorizer sees it. */
export interface Attributes {
  readonly verb: string
  readonly group: string
  readonly resource: string
  readonly namespace: string | undefined
  readonly name: string | undefined
}

/** The user the stand-in's token stands for when RBAC is on. */
export const RBAC_USER = "system:serviceaccount:agents:effect-sandbox"

/** The verb of a REST request (a GET without a name lists, or watches with `watch=true`). */
export const verbOf = (method: string, named: boolean, watch: boolean): string => {
  switch (method) {
    case "GET":
      return named ? "get" : watch ? "watch" : "list"
    case "POST":
      return "create"
    case "PUT":
      return "update"
    case "PATCH":
      return "patch"
    case "DELETE":
      return named ? "delete" : "deletecollection"
    default:
      return method.toLowerCase()
  }
}

const allows = (rule: PolicyRule, request: Attributes) =>
  (rule.apiGroups.includes("*") || rule.apiGroups.includes(request.group)) &&
  (rule.resources.includes("*") || rule.resources.includes(request.resource)) &&
  (rule.verbs.includes("*") || rule.verbs.includes(request.verb))

/** Throw the apiserver's 403 unless a rule allows the request (the rules are a Role's: none reaches the cluster scope). */
export const authorize = (rules: ReadonlyArray<PolicyRule>, request: Attributes) => {
  if (request.namespace !== undefined && rules.some((rule) => allows(rule, request))) return
  const [plural] = request.resource.split("/")
  const kind = request.group === "" ? plural! : `${plural}.${request.group}`
  const subject = request.name === undefined ? kind : `${kind} "${request.name}"`
  throw new ApiError(
    403,
    "Forbidden",
    `${subject} is forbidden: User "${RBAC_USER}" cannot ${request.verb} resource "${request.resource}" in API group "${request.group}"${
      request.namespace === undefined ? " at the cluster scope" : ` in the namespace "${request.namespace}"`
    }`,
    { ...(request.name === undefined ? {} : { name: request.name }), kind: plural }
  )
}

/** The rules of the Role in docs/runtimes/kubernetes.md (its one `kind: Role` YAML block). */
export const docsRole = (): ReadonlyArray<PolicyRule> => {
  const doc = readFileSync(new URL("../../../docs/runtimes/kubernetes.md", import.meta.url), "utf8")
  const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!)
  const role = blocks.flatMap((block) => loadAllYaml(block)).find((object) => object?.kind === "Role")
  if (role === undefined) throw new Error("docs/runtimes/kubernetes.md has no Role")
  return role.rules as ReadonlyArray<PolicyRule>
}
