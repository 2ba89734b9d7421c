#!/usr/bin/env node
/**
 * `effect-sandbox-server <port> [options]`: the action server's entry point (serverMain.ts). Only
 * V8's compile cache is turned on here, before the server's modules are read: an ES module's
 * imports are all compiled before its first line runs, so the server itself is imported after.
 */
import { enableServerCompileCache } from "./compileCache.ts"

enableServerCompileCache()
await import("./serverMain.ts")
