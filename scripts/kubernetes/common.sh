# shellcheck shell=bash
# Shared by build.sh and cluster.sh: where the cached binaries live and how the source package
# version that keys them is found. Sourced, never run.

# Binaries are built once per machine and kept here, one directory per Debian source package
# version, so a session's CI and later sessions on the same machine reuse them.
K8S_CACHE_ROOT=${K8S_CACHE_ROOT:-/var/cache/effect-sandbox/kubernetes}
# The only complete Kubernetes source any reachable registry offers (docs/runtimes/kubernetes.md).
K8S_SOURCE=kubernetes/bookworm

k8s_log() { echo "[$(date +%T)] $*" >&2; }
k8s_die() {
  k8s_log "ERROR: $*"
  exit 1
}

# Debian source package version of kubernetes/bookworm (as in its .dsc name, without epoch),
# read from the local package lists; empty when no deb-src entry offers it.
k8s_source_version() {
  apt-get source --print-uris "$K8S_SOURCE" 2>/dev/null | sed -n "s/^'[^']*' kubernetes_\(.*\)\.dsc .*/\1/p" | head -1
}

# The version must be 1.20.x: the cluster flags, the vendor swap and the CRI version of
# Debian's containerd are known to fit that release only.
k8s_require_120() {
  case "$1" in
    1.20.* | *really1.20.*) ;;
    "") k8s_die "Debian's source package $K8S_SOURCE is not available (apt-get source --print-uris found none): is the deb-src entry there and apt-get update run? scripts/kubernetes/build.sh adds both" ;;
    *) k8s_die "Debian's source package $K8S_SOURCE is version $1, not 1.20.x: these scripts are pinned to Kubernetes 1.20 (docs/runtimes/kubernetes.md, contributors' section)" ;;
  esac
}

# The directory holding one built version: bin/ (server binaries), etcd/ and kubectl/ (unpacked debs).
k8s_version_dir() { echo "$K8S_CACHE_ROOT/$1"; }

K8S_SERVER_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubelet)

# The build recipe's number (build.sh's source patches and flags), recorded in bin/BUILD-INFO:
# binaries of another recipe are rebuilt. Bump it whenever the build changes what it makes.
K8S_RECIPE=3

# Whether $1/bin holds every server binary, built by this recipe.
k8s_built() {
  local b
  for b in "${K8S_SERVER_BINARIES[@]}"; do [ -x "$1/bin/$b" ] || return 1; done
  grep -qx "recipe=$K8S_RECIPE" "$1/bin/BUILD-INFO" 2>/dev/null
}
