/** Every endpoint of the runtime API (spec §14), once: routes register from it, and 405 answers consult it. */
export const API_ENDPOINTS = {
  start: ["POST", "/start"],
  session: ["GET", "/sessions/:sid"],
  runtime: ["GET", "/runtime/:id"],
  pause: ["POST", "/pause"],
  resume: ["POST", "/resume"],
  stop: ["POST", "/stop"],
  list: ["GET", "/list"],
  registryPrefix: ["GET", "/registry_prefix"],
  imageExists: ["GET", "/image_exists"],
  build: ["POST", "/build"],
  buildStatus: ["GET", "/build_status"]
} as const satisfies Record<string, readonly ["GET" | "POST", `/${string}`]>

/** The fixed paths, for 405 answers (a path with a parameter is never "known" as such). */
export const KNOWN_API_PATHS: ReadonlySet<string> = new Set(
  Object.values(API_ENDPOINTS).map(([, path]) => path).filter((path) => !path.includes(":"))
)
