/**
 * Whether the conformance suite can run IPython: the Python must have ipykernel.
 * In CI it must (CI installs python3-ipykernel); on a laptop without it the
 * IPython cases are skipped, and this says why.
 */
import { spawnSync } from "node:child_process"
import { DEFAULT_PYTHON } from "../../src/executor/ActionExecutor.ts"
import { required } from "./requirement.ts"

export const kernelAvailable = (): boolean =>
  required(spawnSync(DEFAULT_PYTHON, ["-c", "import ipykernel, jupyter_client"], { stdio: "ignore" }).status === 0, {
    ci: `IPython tests need ipykernel for ${DEFAULT_PYTHON} in CI: install python3-ipykernel python3-jupyter-client.`,
    skipped: `IPython conformance cases skipped: ${DEFAULT_PYTHON} has no ipykernel (apt install python3-ipykernel).`
  })
