#!/usr/bin/env bash
# A single-node Kubernetes 1.20 on 127.0.0.1, for the real-cluster tests (docs/runtimes/kubernetes.md,
# contributors' section), from the binaries scripts/kubernetes/build.sh caches.
#   cluster.sh up             etcd, kube-apiserver, controller-manager, scheduler, a private
#                             containerd and a kubelet; the test namespace (tenant.sh); prints env
#   cluster.sh down           stop everything by recorded PID and undo every host change
#   cluster.sh import IMAGE…  copy images from the Docker engine into the cluster's containerd
#   cluster.sh env            the variables the tests read (KUBECONFIG: the test account's)
#   cluster.sh check          no cluster process holds a socket off this machine
#   cluster.sh memory         resident memory of each cluster process
#   cluster.sh audit          what the test account called (the Role's verbs in use)
# State lives under $K8S_RUN (default /run/effect-sandbox-k8s), removed by `down`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"

R=${K8S_RUN:-/run/effect-sandbox-k8s}
P=$R/pki
L=$R/log
PODCIDR=10.244.0.0/24
SERVICECIDR=10.96.0.0/24
BR=esk8s0
TAG=effect-sandbox-k8s
SOCK=$R/containerd/containerd.sock
# Every address a cluster process may hold a socket on: loopback, and the pods on this host's bridge.
LOCAL_ADDRESSES='^(127\.0\.0\.1|\[?::1\]?|\[?::ffff:127\.0\.0\.1\]?|10\.244\.0\.[0-9]+|\*|0\.0\.0\.0|\[?::\]?)$'
# The ports the cluster listens on, all on 127.0.0.1: etcd, apiserver, kubelet, kubelet healthz,
# controller-manager, scheduler.
PORTS=(2379 2380 6443 10250 10248 10257 10259)
# Paths the kubelet, the controller-manager and the CNI plugins create outside $R (some are
# hard-coded in 1.20): those absent before `up` are removed by `down`.
OUTSIDE_PATHS=(/var/lib/kubelet /var/lib/cni /run/netns /var/log/pods /var/log/containers /tmp/hostpath_pv)
# Kernel settings the kubelet (panic, overcommit) and the bridge plugin (forwarding) set.
SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory net.ipv4.ip_forward)
# Chains the CNI firewall and portmap plugins make, by table.
CNI_CHAINS=(filter:CNI-FORWARD filter:CNI-ADMIN nat:CNI-HOSTPORT-DNAT nat:CNI-HOSTPORT-SETMARK nat:CNI-HOSTPORT-MASQ)
# Nothing the cluster runs may leave the machine: proxies that refuse (Go never proxies loopback),
# so an image pull or any other outbound HTTP fails at once instead of reaching a network.
NO_EGRESS=(HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9
  https_proxy=http://127.0.0.1:9 NO_PROXY= no_proxy= AWS_EC2_METADATA_DISABLED=true)

binaries() {
  local version
  version=${K8S_VERSION:-$(k8s_source_version)}
  k8s_require_120 "$version"
  V=$(k8s_version_dir "$version")
  BIN=$V/bin
  ETCD=$V/etcd/usr/bin/etcd
  KUBECTL=$V/kubectl/usr/bin/kubectl
  k8s_built "$V" ||
    k8s_die "no binaries of build recipe $K8S_RECIPE in $BIN: run scripts/kubernetes/build.sh first (a cold build takes ~9 min)"
  [ -x "$ETCD" ] && [ -x "$KUBECTL" ] || k8s_die "no etcd or kubectl under $V: run scripts/kubernetes/build.sh first"
}

kubectl() { "$KUBECTL" --kubeconfig "$R/admin.kubeconfig" "$@"; }
ctr_() { ctr --address "$SOCK" -n k8s.io "$@"; }

# The component's last log lines, for an error naming it.
last_lines() { tail -n 25 "$L/$1.log" 2>/dev/null | sed "s/^/  $1| /" >&2 || true; }

start() { # name command...
  local name=$1
  shift
  setsid nohup "$@" >"$L/$name.log" 2>&1 </dev/null &
  echo $! >"$R/pids/$name"
}

# Wait until `command` succeeds; past `seconds`, fail naming the component with its last log lines
# (or at once when its process died).
await() { # seconds component description command...
  local seconds=$1 component=$2 what=$3 pid
  shift 3
  for ((i = 0; i < seconds * 4; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    pid=$(cat "$R/pids/$component" 2>/dev/null || true)
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      last_lines "$component"
      k8s_die "$component exited while waiting for $what (log: $L/$component.log)"
    fi
    sleep 0.25
  done
  last_lines "$component"
  k8s_die "$component: no $what after $seconds s (log: $L/$component.log)"
}

cert() { # name CN O SAN EKU
  local name=$1 cn=$2 org=$3 san=$4 eku=$5 subject
  subject="/CN=$cn"
  [ -n "$org" ] && subject="/O=$org/CN=$cn"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subject" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 -sha256 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
}

kubeconfig() { # file certificate-name
  cat >"$R/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$P/ca.crt"}
users:
- name: $2
  user: {client-certificate: "$P/$2.crt", client-key: "$P/$2.key"}
contexts:
- name: local
  context: {cluster: local, user: $2}
current-context: local
EOF
}

# A CA, the apiserver's serving certificate (Go checks SANs only), one client certificate per
# component, the service-account key pair, one kubeconfig per component.
pki() {
  mkdir -p "$P"
  (
    cd "$P"
    openssl req -x509 -new -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 365 -sha256 \
      -subj "/CN=$TAG-ca" -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature 2>/dev/null
    cert apiserver kube-apiserver "" \
      "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.96.0.1" \
      serverAuth
    cert admin kubernetes-admin system:masters "" clientAuth
    cert kcm system:kube-controller-manager "" "" clientAuth
    cert sched system:kube-scheduler "" "" clientAuth
    cert kubelet system:node:localhost system:nodes "" clientAuth
    cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters "" clientAuth
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
  kubeconfig admin admin
  kubeconfig kcm kcm
  kubeconfig sched sched
  kubeconfig kubelet kubelet
}

# The pod sandbox image without a registry: catatonit as /pause, one layer, a docker-archive.
pause_image() {
  local d sha_layer sha_config
  d=$(mktemp -d "$R/pause.XXXXXX")
  mkdir "$d/rootfs"
  cp /usr/bin/catatonit "$d/rootfs/pause"
  tar -C "$d/rootfs" --owner=0 --group=0 --numeric-owner -cf "$d/layer.tar" pause
  sha_layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause","-P"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$sha_layer" >"$d/config.json"
  sha_config=$(sha256sum "$d/config.json" | cut -d' ' -f1)
  mv "$d/config.json" "$d/$sha_config.json"
  printf '[{"Config":"%s.json","RepoTags":["local/pause:1"],"Layers":["layer.tar"]}]' "$sha_config" >"$d/manifest.json"
  tar -C "$d" -cf - manifest.json "$sha_config.json" layer.tar | ctr_ images import - >/dev/null
  rm -rf "$d"
}

# Pods on their own bridge with no default route; the firewall plugin (Docker's FORWARD policy is
# DROP) and rules of ours that refuse traffic leaving the pod range or reaching the host from it.
network_up() {
  mkdir -p "$R/cni/net.d" "$R/cni/ipam"
  cat >"$R/cni/net.d/10-$BR.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$BR",
  "plugins": [
    {"type": "bridge", "bridge": "$BR", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$PODCIDR"}]], "dataDir": "$R/cni/ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "firewall", "backend": "iptables"}
  ]
}
EOF
  # The bridge is ours before the plugin reuses it: without IPv6 on it, no pod reaches the
  # host's services by a link-local address (the rules below are IPv4).
  ip link add "$BR" type bridge
  sysctl -q -w "net.ipv6.conf.$BR.disable_ipv6=1"
  ip link set "$BR" up
  local entry table chain
  for entry in "${CNI_CHAINS[@]}"; do
    table=${entry%%:*} chain=${entry#*:}
    iptables -w -t "$table" -S "$chain" >/dev/null 2>&1 || echo "$entry" >>"$R/created-chains"
  done
  # The firewall plugin evaluates CNI-ADMIN first inside its CNI-FORWARD.
  iptables -w -N CNI-ADMIN 2>/dev/null || true
  iptables -w -A CNI-ADMIN -s $PODCIDR ! -d $PODCIDR -m comment --comment $TAG -j REJECT
  iptables -w -A CNI-ADMIN -d $PODCIDR ! -s $PODCIDR -m comment --comment $TAG -j REJECT
  iptables -w -I FORWARD 1 -s $PODCIDR ! -d $PODCIDR -m comment --comment $TAG -j REJECT
  iptables -w -I INPUT 1 -i $BR -m conntrack ! --ctstate ESTABLISHED,RELATED -m comment --comment $TAG -j REJECT
}

containerd_up() {
  mkdir -p "$R/containerd/root" "$R/containerd/state" "$R/containerd/certs.d/docker.io" "$R/runc"
  # Images come from Docker (`import`); a pull of a missing one goes nowhere and fails at once.
  cat >"$R/containerd/certs.d/docker.io/hosts.toml" <<EOF
server = "http://127.0.0.1:9"
EOF
  cat >"$R/containerd/config.toml" <<EOF
version = 2
root = "$R/containerd/root"
state = "$R/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$R/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/local/pause:1"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  # root here lacks CAP_SYS_RESOURCE: runc cannot give the pause container oom_score_adj -998
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$R/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$R/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$R/containerd/certs.d"
EOF
  start containerd env "${NO_EGRESS[@]}" containerd --config "$R/containerd/config.toml"
  await 30 containerd "answer on $SOCK" ctr --address "$SOCK" version
  pause_image
}

kubelet_up() {
  mkdir -p "$R/kubelet" "$R/volume-plugins"
  cat >"$R/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
cgroupDriver: cgroupfs
failSwapOn: false
makeIPTablesUtilChains: false
authentication:
  x509: {clientCAFile: "$P/ca.crt"}
  webhook: {enabled: false}
  anonymous: {enabled: false}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
clusterDomain: cluster.local
serializeImagePulls: false
kubeAPIQPS: 50
kubeAPIBurst: 100
eventRecordQPS: 50
eventBurst: 100
EOF
  # build.sh removes the cloud credential providers; the variable closes the AWS one in any build.
  # K8S_KUBELET_V=3 makes the kubelet say why it keeps a deleted pod ("is terminated, but ...").
  start kubelet env "${NO_EGRESS[@]}" "$BIN/kubelet" --config "$R/kubelet.yaml" --kubeconfig "$R/kubelet.kubeconfig" \
    --container-runtime=remote --container-runtime-endpoint="unix://$SOCK" --image-service-endpoint="unix://$SOCK" \
    --hostname-override=localhost --root-dir="$R/kubelet" --cert-dir="$R/kubelet/pki" \
    --volume-plugin-dir="$R/volume-plugins" --runtime-request-timeout=2m --v=${K8S_KUBELET_V:-1}
}

control_plane_up() {
  # Every request of the test account, to compare what the runtime calls with what the docs'
  # Role grants (`cluster.sh audit`).
  cat >"$R/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  users: ["system:serviceaccount:agents:effect-sandbox"]
- level: None
EOF
  start etcd "$ETCD" --name default --data-dir "$R/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster default=http://127.0.0.1:2380 --log-level=warn
  await 30 etcd "health answer on 127.0.0.1:2379" curl -sf http://127.0.0.1:2379/health
  start apiserver env "${NO_EGRESS[@]}" "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 --insecure-port=0 \
    --endpoint-reconciler-type=none \
    --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
    --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range=$SERVICECIDR --authorization-mode=Node,RBAC --allow-privileged=true \
    --enable-admission-plugins=NodeRestriction,LimitRanger,ResourceQuota \
    --kubelet-client-certificate="$P/apiserver-kubelet-client.crt" --kubelet-client-key="$P/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=Hostname,InternalIP --cert-dir="$R/apiserver-certs" \
    --audit-policy-file="$R/audit-policy.yaml" --audit-log-path="$L/audit.log" --v=1
  await 90 apiserver "/readyz" kubectl get --raw /readyz
  start kcm env "${NO_EGRESS[@]}" "$BIN/kube-controller-manager" --kubeconfig="$R/kcm.kubeconfig" \
    --authentication-kubeconfig="$R/kcm.kubeconfig" --authorization-kubeconfig="$R/kcm.kubeconfig" \
    --bind-address=127.0.0.1 --port=0 --leader-elect=false --cert-dir="$R/kcm-certs" \
    --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" --use-service-account-credentials=true \
    --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" \
    --enable-hostpath-provisioner=true --flex-volume-plugin-dir="$R/volume-plugins" --v=1
  start scheduler env "${NO_EGRESS[@]}" "$BIN/kube-scheduler" --kubeconfig="$R/sched.kubeconfig" \
    --authentication-kubeconfig="$R/sched.kubeconfig" --authorization-kubeconfig="$R/sched.kubeconfig" \
    --bind-address=127.0.0.1 --port=0 --leader-elect=false --cert-dir="$R/sched-certs" --v=1
}

# Every socket of a cluster process (and its children: shims) is on loopback or the pod bridge.
check() {
  [ -d "$R/pids" ] || k8s_die "no cluster is up ($R/pids is missing)"
  local pids=() pid bad
  for f in "$R"/pids/*; do
    pid=$(cat "$f")
    pids+=("$pid")
    while read -r child; do pids+=("$child"); done < <(pgrep -P "$pid" 2>/dev/null || true)
  done
  bad=$(ss -H -tunap 2>/dev/null | while read -r _net _state _rq _sq local peer process; do
    for pid in "${pids[@]}"; do
      case "$process" in *"pid=$pid,"*)
        for address in "${local%:*}" "${peer%:*}"; do
          [[ "$address" =~ $LOCAL_ADDRESSES ]] || echo "$local -> $peer $process"
        done
        ;;
      esac
    done
  done)
  [ -z "$bad" ] || k8s_die "cluster processes hold sockets off this machine: $bad"
  k8s_log "every cluster socket is on 127.0.0.1/::1 or the pod bridge"
}

# The pods' shims of this containerd only: their command line names its socket.
shim_pids() {
  local p
  for p in /proc/[0-9]*; do
    case "$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")" in *containerd-shim*"-address $SOCK "*) echo "${p#/proc/}" ;; esac
  done
}

# Resident memory of each cluster process and of the pods' shims, in MiB.
memory() {
  [ -d "$R/pids" ] || k8s_die "no cluster is up ($R/pids is missing)"
  local total=0 kib f name pid children
  for f in "$R"/pids/*; do
    name=$(basename "$f") pid=$(cat "$f")
    children=$(pgrep -d, -P "$pid" || true)
    kib=$(ps -o rss= -p "$pid${children:+,$children}" 2>/dev/null | awk '{s += $1} END {print s + 0}')
    printf '%-12s %6d MiB\n' "$name" $((kib / 1024))
    total=$((total + kib))
  done
  kib=$(shim_pids | xargs -r ps -o rss= -p | awk '{s += $1} END {print s + 0}')
  printf '%-12s %6d MiB\n' shims $((kib / 1024))
  printf '%-12s %6d MiB\n' total $(((total + kib) / 1024))
}

# What the test account called, by API group, resource, subresource, verb and answer, with counts.
audit() {
  [ -f "$L/audit.log" ] || k8s_die "no audit log ($L/audit.log): is a cluster up?"
  jq -r '[.objectRef.apiGroup // "core", .objectRef.resource // .requestURI, .objectRef.subresource // "-", .verb,
    .responseStatus.code] | @tsv' "$L/audit.log" | sort | uniq -c
}

env_() {
  [ -f "$R/tenant.env" ] || k8s_die "no cluster is up (no $R/tenant.env): run '$0 up'"
  cat "$R/tenant.env"
}

import_() {
  [ -S "$SOCK" ] || k8s_die "no cluster is up (no containerd socket $SOCK): run '$0 up'"
  local image ref
  for image in "$@"; do
    docker image inspect "$image" >/dev/null 2>&1 || k8s_die "no image $image on the Docker engine"
    # The name as containerd (and the kubelet) spell it: docker.io/library/name:tag.
    case "$image" in
      */*) case "${image%%/*}" in *.* | *:* | localhost) ref=$image ;; *) ref=docker.io/$image ;; esac ;;
      *) ref=docker.io/library/$image ;;
    esac
    if ctr_ images ls -q | grep -qxF "$ref"; then
      k8s_log "$image is in the cluster already"
      continue
    fi
    k8s_log "importing $image"
    docker save "$image" | ctr_ images import - >/dev/null
  done
}

up() {
  binaries
  if [ -e "$R/pids" ]; then
    kubectl get --raw /readyz >/dev/null 2>&1 && [ -f "$R/tenant.env" ] &&
      kubectl get node localhost >/dev/null 2>&1 && {
      k8s_log "the cluster is already up"
      env_
      return 0
    }
    k8s_die "$R holds a cluster that does not answer: run '$0 down' first"
  fi
  local port
  for port in "${PORTS[@]}"; do
    if ss -Hltn "sport = :$port" | grep -q .; then
      k8s_die "port $port is in use ($(ss -Hltnp "sport = :$port" | awk '{print $NF}' | head -1)): the cluster needs ${PORTS[*]} on 127.0.0.1"
    fi
  done
  ip link show "$BR" >/dev/null 2>&1 && k8s_die "the bridge $BR exists: a cluster was not torn down ('$0 down')"
  local t0
  t0=$(date +%s%N)
  mkdir -p "$R/pids" "$L"
  sysctl -n "${SYSCTLS[@]}" >"$R/sysctl.saved"
  local path
  for path in "${OUTSIDE_PATHS[@]}"; do [ -e "$path" ] || echo "$path" >>"$R/created-paths"; done
  k8s_log "certificates"
  pki
  k8s_log "etcd, kube-apiserver, controller-manager, scheduler"
  control_plane_up
  k8s_log "pod network, containerd, kubelet"
  network_up
  containerd_up
  kubelet_up
  # The default class binds a claim once a pod uses it (WaitForFirstConsumer, the default class
  # of the big clouds' clusters): the scheduler waits for the volume instead of calling the pod
  # unschedulable while its claim is unbound.
  kubectl apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
EOF
  await 120 kubelet "node localhost Ready" kubectl wait --for=condition=Ready node/localhost --timeout=2s
  k8s_log "the test namespace"
  KUBECTL=$KUBECTL ADMIN_KUBECONFIG=$R/admin.kubeconfig "$here/tenant.sh" "$R" >"$R/tenant.env" ||
    k8s_die "the test namespace could not be made (above)"
  echo "EFFECT_SANDBOX_K8S_ADMIN_KUBECONFIG=$R/admin.kubeconfig" >>"$R/tenant.env"
  check
  k8s_log "cluster up in $((($(date +%s%N) - t0) / 1000000)) ms"
  env_
}

killpid() { # name
  local f="$R/pids/$1" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

network_down() {
  local v
  for v in /sys/class/net/*/master; do
    [ -e "$v" ] && [ "$(basename "$(readlink "$v")")" = "$BR" ] && ip link del "$(basename "$(dirname "$v")")"
  done
  ip link del "$BR" 2>/dev/null
  while iptables -w -D FORWARD -s $PODCIDR ! -d $PODCIDR -m comment --comment $TAG -j REJECT 2>/dev/null; do :; done
  while iptables -w -D INPUT -i $BR -m conntrack ! --ctstate ESTABLISHED,RELATED -m comment --comment $TAG -j REJECT 2>/dev/null; do :; done
  while iptables -w -D CNI-ADMIN -s $PODCIDR ! -d $PODCIDR -m comment --comment $TAG -j REJECT 2>/dev/null; do :; done
  while iptables -w -D CNI-ADMIN -d $PODCIDR ! -s $PODCIDR -m comment --comment $TAG -j REJECT 2>/dev/null; do :; done
  [ -f "$R/created-chains" ] || return 0
  # The plugins' jumps into chains we made, then the chains themselves; chains that were there
  # before `up` (another user of CNI on this host) are left as they are.
  if grep -qx filter:CNI-FORWARD "$R/created-chains"; then
    while iptables -w -D FORWARD -m comment --comment "CNI firewall plugin rules" -j CNI-FORWARD 2>/dev/null; do :; done
  fi
  if grep -qx nat:CNI-HOSTPORT-DNAT "$R/created-chains"; then
    for c in PREROUTING OUTPUT; do
      while iptables -w -t nat -D $c -m comment --comment "CNI portfwd requiring masquerade" -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT 2>/dev/null; do :; done
      while iptables -w -t nat -D $c -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT 2>/dev/null; do :; done
    done
  fi
  if grep -qx nat:CNI-HOSTPORT-MASQ "$R/created-chains"; then
    while iptables -w -t nat -D POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j CNI-HOSTPORT-MASQ 2>/dev/null; do :; done
  fi
  local entry table chain
  while read -r entry; do
    table=${entry%%:*} chain=${entry#*:}
    iptables -w -t "$table" -F "$chain" 2>/dev/null
    iptables -w -t "$table" -X "$chain" 2>/dev/null
  done <"$R/created-chains"
}

down() {
  [ -d "$R" ] || {
    k8s_log "no cluster is up: nothing to do"
    return 0
  }
  binaries
  set +e
  local t0
  t0=$(date +%s)
  if [ -f "$R/pids/apiserver" ] && [ -f "$R/pids/kubelet" ] && kubectl get --raw /readyz >/dev/null 2>&1; then
    k8s_log "deleting pods"
    kubectl delete pods --all-namespaces --all --grace-period=0 --force --wait=false >/dev/null 2>&1
    for ((i = 0; i < 120; i++)); do [ -z "$(kubectl get pods -A -o name 2>/dev/null)" ] && break; sleep 0.5; done
    # The kubelet stops the sandboxes (CNI DEL, network namespaces) once their pods are gone.
    for ((i = 0; i < 60; i++)); do [ -z "$(ctr_ tasks ls -q 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  k8s_log "stopping kubelet, scheduler, controller-manager"
  killpid kubelet
  killpid scheduler
  killpid kcm
  if [ -S "$SOCK" ]; then
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
    for ((i = 0; i < 40; i++)); do
      for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete "$t" >/dev/null 2>&1; done
      [ -z "$(ctr_ tasks ls -q 2>/dev/null)" ] && break
      sleep 0.25
    done
  fi
  k8s_log "stopping containerd, apiserver, etcd"
  killpid containerd
  # Shims of this containerd only: their command line names its socket.
  shim_pids | xargs -r kill -KILL 2>/dev/null
  killpid apiserver
  killpid etcd
  k8s_log "unmounting, network, cgroups, kernel settings"
  grep -E " ($R|/run/netns/cni-|/tmp/hostpath_pv)" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
  for n in /run/netns/cni-*; do [ -e "$n" ] && rm -f "$n"; done
  network_down
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h/kubepods" ] && find "$h/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  if [ -f "$R/sysctl.saved" ]; then
    mapfile -t saved <"$R/sysctl.saved"
    for ((i = 0; i < ${#SYSCTLS[@]}; i++)); do sysctl -q -w "${SYSCTLS[$i]}=${saved[$i]}"; done
  fi
  if [ -f "$R/created-paths" ]; then
    while read -r path; do rm -rf "$path"; done <"$R/created-paths"
  fi
  if grep -q " $R" /proc/mounts; then
    k8s_log "WARNING: mounts left under $R: $(grep " $R" /proc/mounts | awk '{print $2}' | tr '\n' ' ')"
    return 1
  fi
  rm -rf "$R"
  k8s_log "down in $(($(date +%s) - t0)) s"
}

case "${1:-}" in up | down | import | check)
  [ "$(id -u)" = 0 ] || k8s_die "cluster.sh $1 needs root (iptables, mounts, sysctls, the containerd socket)"
  ;;
esac
case "${1:-}" in
  up) up ;;
  down) down ;;
  import)
    shift
    binaries
    import_ "$@"
    ;;
  env) env_ ;;
  check) check ;;
  memory) memory ;;
  audit) audit ;;
  *)
    echo "usage: $0 up|down|import IMAGE...|env|check|memory|audit" >&2
    exit 2
    ;;
esac
