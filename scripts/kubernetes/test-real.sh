#!/usr/bin/env bash
# `npm run test:kubernetes-real`: the real-cluster tests (test/kubernetes/live.test.ts and
# test/kubernetes/real/) on the cluster `scripts/kubernetes/cluster.sh up` brought up, as the
# test namespace's service account (the docs' Role). Copies the runtime image into the cluster
# first. Fails when no cluster is up. Extra arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/../.."
cluster_env=$(scripts/kubernetes/cluster.sh env) || {
  echo "no real cluster is up: run scripts/kubernetes/build.sh and scripts/kubernetes/cluster.sh up first (docs/runtimes/kubernetes.md, contributors' section)" >&2
  exit 1
}
set -a
eval "$cluster_env"
set +a
image=$(node scripts/kubernetes/runtime-image.ts)
scripts/kubernetes/cluster.sh import "$image"
export EFFECT_SANDBOX_K8S_LIVE=1 EFFECT_SANDBOX_K8S_IMAGE="$image"
export EFFECT_SANDBOX_K8S_CONNECT=${EFFECT_SANDBOX_K8S_CONNECT:-portForward,direct}
# Arguments given (a file, a -t pattern): those cases, six at a time.
if [ $# -gt 0 ]; then
  EFFECT_SANDBOX_TEST_CONCURRENCY=6 exec vitest run "$@"
fi

# Without: two steps, each a pattern of cases (live.test.ts runs its cases concurrently, blocks
# included, at most EFFECT_SANDBOX_TEST_CONCURRENCY at once (vitest.config.ts); the namespace's
# quota admits 32 pods, and the node's two cores the CPU requests of 40). K8S_STEPS picks some
# (comma-separated, in that order); .ci/run runs both, `alone` first.
steps=${K8S_STEPS:-alone,shared}
status=0
for step in ${steps//,/ }; do
  case "$step" in
    # A server dying at start must be reported within 10 s of the start: its pods alone on the
    # machine, so that what is measured is the runtime's, not a queue of other work.
    alone) vitest run test/kubernetes/live.test.ts -t "hosted lifecycle.*dies at start" || status=$? ;;
    # The rest: the action conformance and the hosted lifecycle in both modes, the missing image and
    # the runtime API's backend. Its pace is the kubelet's (pods made and deleted) and, at 24 cases
    # at once, the CPU's too: on a machine half as fast as the one that took 24 in 273 s, every case
    # took a minute, and kernels, browsers and commands missed their time-outs. 12 at once.
    shared)
      EFFECT_SANDBOX_TEST_CONCURRENCY=${K8S_CONCURRENCY:-12} vitest run test/kubernetes/live.test.ts \
        test/kubernetes/real -t "^(?!.*hosted lifecycle.*dies at start)" || status=$?
      ;;
    *) echo "K8S_STEPS: unknown step '$step' (alone, shared)" >&2; exit 2 ;;
  esac
done
exit "$status"
