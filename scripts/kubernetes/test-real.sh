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
# EFFECT_SANDBOX_K8S_TEST_CLUSTER: what this cluster is known not to do (live.test.ts, known gaps).
export EFFECT_SANDBOX_K8S_LIVE=1 EFFECT_SANDBOX_K8S_IMAGE="$image" EFFECT_SANDBOX_K8S_TEST_CLUSTER=1.20
export EFFECT_SANDBOX_K8S_CONNECT=${EFFECT_SANDBOX_K8S_CONNECT:-portForward,direct}
# Arguments given (a file, a -t pattern): those cases, six at a time.
if [ $# -gt 0 ]; then
  exec vitest run --sequence.concurrent --maxConcurrency 6 "$@"
fi
# The cases with time bounds (a server dying at start reported within 10 s, a reaped orphan gone
# within a minute) run first, a few at a time, away from the load of the action conformance; then
# the rest, many at a time: each case spends most of its time waiting on a pod's start and removal.
vitest run test/kubernetes/live.test.ts -t "hosted lifecycle" --sequence.concurrent --maxConcurrency "${K8S_BOUNDED_CONCURRENCY:-4}"
exec vitest run test/kubernetes/live.test.ts test/kubernetes/real -t "^(?!.*hosted lifecycle)" \
  --sequence.concurrent --maxConcurrency "${K8S_CONCURRENCY:-12}"
