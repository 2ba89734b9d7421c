/**
 * File order for the parallel group: the conformance suites take minutes each (one sandbox per
 * case), the stand-in suites seconds to a minute. Vitest's own order puts the files it has no
 * timing for (every file on a fresh CI clone) largest first, and a conformance file is a few
 * lines, so the longest work would start last and the run would end on one busy worker. Here the
 * conformance files start first, the slowest of them (the tools image: kernel and browser cases,
 * and the Kubernetes stand-in) before the others; the rest keeps Vitest's order.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** Known to be the longest, in this order; other conformance files follow them. */
const SLOWEST = ["/test/conformance/docker.test.ts", "/test/conformance/kubernetes.test.ts"]

const rank = (file: TestSpecification): number => {
  const slow = SLOWEST.findIndex((suffix) => file.moduleId.endsWith(suffix))
  if (slow !== -1) return slow
  return file.moduleId.includes("/test/conformance/") ? SLOWEST.length : SLOWEST.length + 1
}

export class SlowestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const ordered = await super.sort(files)
    return [...ordered].sort((a, b) => rank(a) - rank(b))
  }
}
