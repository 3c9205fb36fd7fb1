#!/usr/bin/env bash
# apiserver.sh build|start|stop [DIR]: a private Kubernetes control plane of
# v1.35.4 (etcd and kube-apiserver, no scheduler, no controller manager) for
# resizelet's tests on a real API server, on a Linux machine with Go.
#
#   examples/realhost/apiserver.sh build
#     builds kube-apiserver and kubectl of v1.35.4 from their Go modules and
#     etcd from its own (the module in examples/realhost/apiserver), unless
#     the cache has them, and prints the directory that holds the three
#     binaries. Nothing is downloaded as a prebuilt binary. The cache is
#     $RESIZELET_APISERVER_CACHE (default ~/.cache/resizelet/apiserver),
#     one directory per content of that module, Go version and this
#     script, so a warm run builds nothing.
#   examples/realhost/apiserver.sh start /tmp/rl-api
#     builds (as above), generates a CA, a serving certificate for
#     127.0.0.1, a service-account key pair and an admin token under DIR,
#     starts etcd and kube-apiserver with setsid, listening on 127.0.0.1
#     only (ports chosen free), waits until /readyz answers, creates the
#     "default" namespace's ServiceAccount (the ServiceAccount admission
#     plugin refuses pods without one, and no controller manager runs to
#     make it), and prints, on stdout:
#       KUBECONFIG=DIR/kubeconfig   (a cluster admin: group system:masters)
#       KUBECTL=<path of the kubectl binary of the same release>
#   examples/realhost/apiserver.sh stop /tmp/rl-api
#     stops kube-apiserver, then etcd, by their PIDs, and removes DIR.
#
# etcd runs with --unsafe-no-fsync: a test cluster's data need not survive
# a power cut, and fsyncs would make every write wait for the disk.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODULE="$HERE/apiserver"
RELEASE=v1.35.4

log() { echo "apiserver.sh: $*" >&2; }

usage() {
	echo "usage: $0 build | start DIR | stop DIR" >&2
	exit 2
}

# binaries builds the three binaries into the cache unless they are there,
# and prints their directory.
binaries() {
	local cache key dir tmp ldflags pkg
	export PATH="$PATH:/usr/local/go/bin"
	cache=${RESIZELET_APISERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/resizelet/apiserver}
	# The key covers what the binaries are built from and how: the
	# module, the Go version and this script (its flags).
	key=$( (cd "$MODULE" && cat go.mod go.sum etcd/main.go "$HERE/apiserver.sh" && go env GOVERSION) | sha256sum | cut -c1-16)
	dir="$cache/$RELEASE-$key"
	if [[ -x $dir/kube-apiserver && -x $dir/kubectl && -x $dir/etcd ]]; then
		echo "$dir"
		return 0
	fi
	log "building kube-apiserver, kubectl ($RELEASE) and etcd into $dir (a few minutes the first time)"
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/build.XXXXXX")
	# The version stamps are the ones Kubernetes' own build sets, so that
	# the API server's /version and kubectl version say v1.35.4.
	ldflags="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ldflags+=" -X $pkg.gitVersion=$RELEASE -X $pkg.gitMajor=1 -X $pkg.gitMinor=35"
		ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
	done
	# CGO_ENABLED=0, as Kubernetes builds its server binaries.
	if ! (cd "$MODULE" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl ./etcd) >&2; then
		rm -rf "$tmp"
		log "build failed"
		return 1
	fi
	rm -rf "$dir"
	mv "$tmp" "$dir"
	# Builds from an earlier module, Go version or script are not needed
	# again.
	find "$cache" -mindepth 1 -maxdepth 1 -name 'v*-*' ! -name "$RELEASE-$key" -exec rm -rf {} +
	echo "$dir"
}

# free_port prints a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
	local port
	for _ in $(seq 1 100); do
		port=$((20000 + RANDOM % 20000))
		if [[ -z $(ss -Htln "sport = :$port") ]]; then
			echo "$port"
			return 0
		fi
	done
	log "no free port found"
	return 1
}

# certificates writes the CA, the serving certificate, the service-account
# keys and the admin token into DIR.
certificates() {
	local d=$DIR/pki
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=resizelet-test-ca" \
		-keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
		-keyout "$d/apiserver.key" -out "$d/apiserver.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >"$d/apiserver.ext"
	openssl x509 -req -in "$d/apiserver.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 3650 -extfile "$d/apiserver.ext" -out "$d/apiserver.crt" 2>/dev/null
	openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
	openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
	TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
	printf '%s,admin,admin,"system:masters"\n' "$TOKEN" >"$d/tokens.csv"
	chmod 600 "$d"/*.key "$d/tokens.csv"
}

kubeconfig() {
	cat >"$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: resizelet
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $DIR/pki/ca.crt
users:
- name: admin
  user:
    token: $TOKEN
contexts:
- name: resizelet
  context: {cluster: resizelet, user: admin}
current-context: resizelet
EOF
	chmod 600 "$DIR/kubeconfig"
}

running() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
	local bin etcd_port peer_port
	if running "$DIR/kube-apiserver.pid"; then
		log "already running in $DIR"
		bin=$(binaries)
		echo "KUBECONFIG=$DIR/kubeconfig"
		echo "KUBECTL=$bin/kubectl"
		return 0
	fi
	command -v openssl >/dev/null || { log "openssl is needed"; return 1; }
	bin=$(binaries)
	mkdir -p "$DIR"
	certificates
	etcd_port=$(free_port)
	peer_port=$(free_port)
	API_PORT=$(free_port)
	setsid "$bin/etcd" --name resizelet --data-dir "$DIR/etcd" --unsafe-no-fsync \
		--listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
		--listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "resizelet=http://127.0.0.1:$peer_port" \
		>"$DIR/etcd.log" 2>&1 </dev/null &
	echo $! >"$DIR/etcd.pid"
	setsid "$bin/kube-apiserver" \
		--etcd-servers "http://127.0.0.1:$etcd_port" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
		--tls-cert-file "$DIR/pki/apiserver.crt" --tls-private-key-file "$DIR/pki/apiserver.key" \
		--client-ca-file "$DIR/pki/ca.crt" --token-auth-file "$DIR/pki/tokens.csv" \
		--authorization-mode RBAC \
		--service-account-issuer https://kubernetes.default.svc \
		--service-account-key-file "$DIR/pki/sa.pub" --service-account-signing-key-file "$DIR/pki/sa.key" \
		--service-cluster-ip-range 10.96.0.0/16 --cert-dir "$DIR/pki" --profiling=false \
		>"$DIR/kube-apiserver.log" 2>&1 </dev/null &
	echo $! >"$DIR/kube-apiserver.pid"
	kubeconfig
	local i
	for i in $(seq 1 240); do
		for p in etcd kube-apiserver; do
			if ! running "$DIR/$p.pid"; then
				log "$p exited; the end of $DIR/$p.log:"
				tail -n 20 "$DIR/$p.log" >&2
				return 1
			fi
		done
		if "$bin/kubectl" --kubeconfig "$DIR/kubeconfig" get --raw /readyz >/dev/null 2>&1; then
			break
		fi
		if [[ $i -eq 240 ]]; then
			log "kube-apiserver not ready after 120s; the end of $DIR/kube-apiserver.log:"
			tail -n 20 "$DIR/kube-apiserver.log" >&2
			return 1
		fi
		sleep 0.5
	done
	# The ServiceAccount admission plugin needs the namespace's "default"
	# ServiceAccount, which the controller manager would create.
	for i in $(seq 1 20); do
		"$bin/kubectl" --kubeconfig "$DIR/kubeconfig" create serviceaccount default -n default >/dev/null 2>&1 && break
		"$bin/kubectl" --kubeconfig "$DIR/kubeconfig" get serviceaccount default -n default >/dev/null 2>&1 && break
		sleep 0.5
	done
	log "kube-apiserver $("$bin/kubectl" --kubeconfig "$DIR/kubeconfig" version -o json 2>/dev/null | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -n 1) on https://127.0.0.1:$API_PORT (PID $(cat "$DIR/kube-apiserver.pid")), etcd on 127.0.0.1:$etcd_port, in $DIR"
	echo "KUBECONFIG=$DIR/kubeconfig"
	echo "KUBECTL=$bin/kubectl"
}

# stop_pid stops the process in pidfile $1: SIGTERM, then SIGKILL after 15s.
stop_pid() {
	local pid i
	[[ -f $1 ]] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 1 150); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	log "PID $pid did not stop in 15s; killing it"
	kill -9 "$pid" 2>/dev/null || true
}

stop() {
	stop_pid "$DIR/kube-apiserver.pid"
	stop_pid "$DIR/etcd.pid"
	rm -rf "$DIR"
}

[[ $# -ge 1 ]] || usage
case $1 in
build)
	[[ $# -eq 1 ]] || usage
	binaries
	;;
start | stop)
	[[ $# -eq 2 ]] || usage
	DIR=$2
	[[ $DIR == /* ]] || DIR="$PWD/$DIR"
	"$1"
	;;
*) usage ;;
esac
