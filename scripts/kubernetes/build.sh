#!/usr/bin/env bash
# Builds the Kubernetes 1.20 server binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet) from Debian bookworm's source package, once per machine, and unpacks
# etcd and kubectl from Debian's binary packages beside them. Idempotent: installs only missing
# apt pieces, and reuses the cached binaries when they are there (a cold build is ~9 min on two
# idle cores). Prints the version directory on stdout; the log goes to stderr.
#   scripts/kubernetes/build.sh
# Cache: $K8S_CACHE_ROOT/<source package version>/{bin,etcd,kubectl}; never committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

[ "$(id -u)" = 0 ] || k8s_die "build.sh needs root (apt-get, $K8S_CACHE_ROOT)"

# Build pieces (Go 1.19 is the compiler 1.20 fits; the Go reflect2/json-iterator sources replace
# the vendored ones) and the runtime pieces cluster.sh starts.
packages=(golang-1.19-go make rsync golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev
  containerd runc containernetworking-plugins iptables conntrack openssl catatonit curl iproute2 jq procps)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done

# Debian's source entries are not configured by default: derive one from the binary entries.
src_list=/etc/apt/sources.list.d/effect-sandbox-src.sources
updated=
if [ -z "$(k8s_source_version)" ] && [ ! -f "$src_list" ]; then
  [ -f /etc/apt/sources.list.d/debian.sources ] ||
    k8s_die "no /etc/apt/sources.list.d/debian.sources to derive a deb-src entry from: add one for bookworm by hand"
  k8s_log "adding the deb-src entry $src_list"
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$src_list"
  apt-get update -qq
  updated=1
fi
if [ "${#missing[@]}" -gt 0 ]; then
  k8s_log "installing: ${missing[*]}"
  [ -n "$updated" ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

version=$(k8s_source_version)
k8s_require_120 "$version"
dir=$(k8s_version_dir "$version")
mkdir -p "$dir"
# One build per machine at a time: a second caller waits and then reuses the first one's result.
exec 9>"$dir/.lock"
flock 9

# etcd and kubectl from Debian's binary packages, unpacked rather than installed: etcd-server's
# install script starts a daemon, and kubernetes-client conflicts with other packages' kubectl.
unpack() { # package target-dir
  [ -d "$dir/$2" ] && return 0
  local tmp
  tmp=$(mktemp -d "$dir/.deb.XXXXXX")
  (cd "$tmp" && apt-get download -qq "$1" >/dev/null)
  dpkg -x "$tmp"/"$1"_*.deb "$tmp/root"
  mv "$tmp/root" "$dir/$2"
  rm -rf "$tmp"
}
unpack etcd-server etcd
unpack kubernetes-client kubectl

if k8s_built "$dir"; then
  k8s_log "reusing the binaries in $dir/bin (recipe $K8S_RECIPE, built $(sed -n 's/^built=//p' "$dir/bin/BUILD-INFO"))"
  echo "$dir"
  exit 0
fi

k8s_log "building Kubernetes $version from source under $dir/src (cold: ~9 min on two idle cores)"
rm -rf "$dir/src"
mkdir -p "$dir/src"
cd "$dir/src"
apt-get source -qq --download-only "$K8S_SOURCE" >/dev/null
mkdir tree
tar xzf kubernetes_*.orig.tar.gz -C tree --strip-components=1
cd tree

# Kubernetes 1.20 vendors reflect2 v1.0.1, which crashes at start on Go >= 1.18: use Debian's.
rm -rf vendor/github.com/modern-go/reflect2 vendor/github.com/json-iterator/go
cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 vendor/github.com/modern-go/
cp -r /usr/share/gocode/src/github.com/json-iterator/go vendor/github.com/json-iterator/

# The in-tree cloud credential providers are linked into the kubelet even with
# -tags=providerless, and the AWS one asks the cloud metadata address 169.254.169.254 for
# credentials at start. Images here come from Docker, never a registry: drop them all, so the
# kubelet cannot contact that address whatever its environment says.
plugins=cmd/kubelet/app/plugins.go
grep -q 'pkg/credentialprovider/aws"' "$plugins" || k8s_die "$plugins no longer imports the AWS credential provider: check the source by hand"
sed -i -E '/_ "k8s.io\/kubernetes\/pkg\/credentialprovider\/(aws|azure|gcp)"/d' "$plugins"

# The controller-manager's hostpath provisioner (the test cluster's storage class) makes each
# volume's directory 0750 root, and hostPath volumes ignore fsGroup, so a pod's non-root user
# could not write its workspace; real storage gets fsGroup's ownership. Make the directories
# 0777, as the common local-path provisioner does.
hostpath=pkg/volume/hostpath/host_path.go
mkdir_line='return pv, os.MkdirAll(pv.Spec.HostPath.Path, 0750)'
grep -qF "$mkdir_line" "$hostpath" || k8s_die "$hostpath no longer makes volumes with '$mkdir_line': check the source by hand"
sed -i "s|$mkdir_line|if err := os.MkdirAll(pv.Spec.HostPath.Path, 0777); err != nil { return pv, err }; return pv, os.Chmod(pv.Spec.HostPath.Path, 0777)|" "$hostpath"

# A 1.20 kubelet deletes a stopped pod from the API only once its sandbox is removed, which its
# container GC does in a pass a minute (ContainerGCPeriod): every release then waited up to 70 s,
# where a current kubelet (1.22 on) confirms seconds after the grace. Pass every 5 s instead, so
# the test bed deletes pods at a current kubelet's pace.
gc_line='ContainerGCPeriod = time.Minute'
grep -qF "$gc_line" pkg/kubelet/kubelet.go || k8s_die "pkg/kubelet/kubelet.go no longer sets '$gc_line': check the source by hand"
sed -i "s|$gc_line|ContainerGCPeriod = 5 * time.Second|" pkg/kubelet/kubelet.go

export PATH=/usr/lib/go-1.19/bin:$PATH
export GOCACHE=$dir/src/go-cache
start=$(date +%s)
nice make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler cmd/kubelet" GOFLAGS=-tags=providerless
seconds=$(($(date +%s) - start))

out=_output/local/bin/linux/amd64
if grep -aq 'pkg/credentialprovider/aws' "$out/kubelet"; then
  k8s_die "the kubelet still links the AWS credential provider"
fi
rm -rf "$dir/bin.tmp"
mkdir -p "$dir/bin.tmp"
for b in "${K8S_SERVER_BINARIES[@]}"; do cp "$out/$b" "$dir/bin.tmp/"; done
printf 'version=%s\nrecipe=%s\nbuilt=%s\nbuild_seconds=%s\ngo=%s\n' "$version" "$K8S_RECIPE" "$(date -u +%FT%TZ)" \
  "$seconds" "$(go version)" >"$dir/bin.tmp/BUILD-INFO"
# Swapped in whole: a running cluster keeps the old files it has open.
rm -rf "$dir/bin.old"
[ ! -d "$dir/bin" ] || mv "$dir/bin" "$dir/bin.old"
mv "$dir/bin.tmp" "$dir/bin"
rm -rf "$dir/bin.old"
# The source tree and Go cache (~2.2 GB) are not needed once the binaries are kept.
cd /
rm -rf "$dir/src"
k8s_log "built in $seconds s: $dir/bin"
echo "$dir"
