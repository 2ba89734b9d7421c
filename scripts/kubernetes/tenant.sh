#!/usr/bin/env bash
# The test namespace of the real cluster, as a user's would be: a ResourceQuota and a LimitRange
# (the pods' requests and limits meet real admission), and a service account bound to exactly the
# Role docs/runtimes/kubernetes.md tells users to create, read from the page itself, so the tests
# (which run as that account) fail with a 403 wherever the page's Role is short.
#   tenant.sh RUN_DIR   (called by cluster.sh up; KUBECTL and ADMIN_KUBECONFIG in the environment)
# Writes RUN_DIR/tenant.kubeconfig and prints the variables the tests read.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"
run_dir=$1
docs=$here/../../docs/runtimes/kubernetes.md
kubectl() { "$KUBECTL" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }

# The page's namespace, `agents`, is the test namespace: the Role applies as written.
NAMESPACE=agents
ACCOUNT=effect-sandbox

# The first yaml block after the page's "A Role with exactly what the runtime calls".
role=$(awk '/^\*\*1\. A Role with exactly what the runtime calls\*\*/ { found = 1 }
  found && /^```yaml$/ { inside = 1; next }
  inside && /^```$/ { exit }
  inside { print }' "$docs")
grep -q '^kind: Role$' <<<"$role" || k8s_die "no Role found in $docs under '**1. A Role with exactly what the runtime calls**'"
grep -q "namespace: $NAMESPACE" <<<"$role" || k8s_die "the Role in $docs is not in namespace $NAMESPACE"

kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: $NAMESPACE}
---
# Room for a test run's sessions (twenty cases at once, each a pod and a PVC, plus those still going)
# on a two-core node: 32 pods at the runtime's default CPU limit of 2 and memory limit of 2Gi.
apiVersion: v1
kind: ResourceQuota
metadata: {name: sandboxes, namespace: $NAMESPACE}
spec:
  hard:
    pods: "32"
    requests.cpu: "3"
    limits.cpu: "64"
    requests.memory: 20Gi
    limits.memory: 72Gi
    persistentvolumeclaims: "32"
    requests.storage: 80Gi
---
# Defaults for what a pod leaves out (a quota on limits.cpu refuses a pod without one), and caps.
apiVersion: v1
kind: LimitRange
metadata: {name: sandboxes, namespace: $NAMESPACE}
spec:
  limits:
  - type: Container
    default: {cpu: "1", memory: 2Gi}
    defaultRequest: {cpu: 100m, memory: 256Mi}
    max: {cpu: "2", memory: 4Gi}
  - type: PersistentVolumeClaim
    max: {storage: 4Gi}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: $ACCOUNT, namespace: $NAMESPACE}
---
$role
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: $ACCOUNT, namespace: $NAMESPACE}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: effect-sandbox}
subjects:
- {kind: ServiceAccount, name: $ACCOUNT, namespace: $NAMESPACE}
EOF

# 1.20 gives every service account a token Secret once the controller-manager sees it.
secret=
for ((i = 0; i < 240; i++)); do
  secret=$(kubectl -n $NAMESPACE get serviceaccount $ACCOUNT -o 'jsonpath={.secrets[0].name}' 2>/dev/null || true)
  [ -n "$secret" ] && break
  sleep 0.25
done
[ -n "$secret" ] || k8s_die "service account $NAMESPACE/$ACCOUNT got no token Secret in 60 s (controller-manager: $run_dir/log/kcm.log)"
token=$(kubectl -n $NAMESPACE get secret "$secret" -o 'jsonpath={.data.token}' | base64 -d)

(
  umask 077
  cat >"$run_dir/tenant.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$run_dir/pki/ca.crt"}
users:
- name: $ACCOUNT
  user: {token: "$token"}
contexts:
- name: local
  context: {cluster: local, user: $ACCOUNT, namespace: $NAMESPACE}
current-context: local
EOF
)
echo "KUBECONFIG=$run_dir/tenant.kubeconfig"
echo "EFFECT_SANDBOX_K8S_NAMESPACE=$NAMESPACE"
