#!/usr/bin/env bash
# containerd.sh start|stop|image DIR: a private containerd + runc for resizelet's
# real-host tests, on a Linux node where you are root (no systemd needed).
#
#   examples/realhost/containerd.sh start /tmp/rl-ctrd
#     installs containerd, runc and busybox-static with apt if missing, writes
#     a private config under DIR (own root, state, sockets, runc root; no
#     registry: a local busybox image is built and imported), starts
#     containerd with setsid and prints, on stdout, the two variables the
#     tests and resizesim need:
#       RESIZELET_CRI_ENDPOINT=unix://DIR/containerd.sock
#       RESIZELET_IMAGE=docker.io/resizelet/busybox:local
#   examples/realhost/containerd.sh image DIR
#     only builds that busybox image, as an OCI layout tar, and prints its
#     path (DIR/image/image.tar): for a containerd started elsewhere, such
#     as inside the cgroup v2 VM.
#   examples/realhost/containerd.sh stop /tmp/rl-ctrd
#     tears everything down, in this order, carrying on past failures: CRI
#     stop/remove of every pod, containerd by its PID, leftover shims that
#     name DIR's socket, runc delete of what is left in DIR's runc root,
#     mounts under DIR, the cgroups the pods left (top-level cgroups named
#     kubepods* or resizelet* that did not exist at start), then DIR.
#
# The facts behind the config are in examples/realhost/README.md §2:
# restrict_oom_score_adj is required where root lacks
# CAP_SYS_RESOURCE, SystemdCgroup=false, no pause image (the sandbox runs the
# local busybox image's "sleep 86400").
set -euo pipefail

IMAGE=docker.io/resizelet/busybox:local
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

log() { echo "containerd.sh: $*" >&2; }

usage() {
	echo "usage: $0 start|stop|image DIR" >&2
	exit 2
}

[[ $# -eq 2 ]] || usage
CMD=$1
DIR=$2
[[ $DIR == /* ]] || DIR="$PWD/$DIR"
SOCK="$DIR/containerd.sock"

install_packages() {
	local missing=()
	command -v containerd >/dev/null || missing+=(containerd)
	command -v runc >/dev/null || missing+=(runc)
	[[ -x /bin/busybox ]] || missing+=(busybox-static)
	[[ ${#missing[@]} -eq 0 ]] && return 0
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=120 "${missing[@]}" >&2; then
		apt-get update -o DPkg::Lock::Timeout=120 >&2
		apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=120 "${missing[@]}" >&2
	fi
}

write_config() {
	cat >"$DIR/config.toml" <<EOF
version = 2
root = "$DIR/root"
state = "$DIR/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$DIR/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$DIR/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$DIR/cni/bin"
    conf_dir = "$DIR/cni/conf"
EOF
}

# build_image writes an OCI image layout tar holding busybox-static and a
# link for each of its applets, with "sleep 86400" as the command, without
# a registry: the config's rootfs.diff_ids is the sha256 of the
# uncompressed layer, which is stored uncompressed.
build_image() {
	local work="$DIR/image" rootfs layout
	rootfs="$work/rootfs"
	layout="$work/layout"
	rm -rf "$work"
	mkdir -p "$rootfs/bin" "$rootfs/dev" "$rootfs/proc" "$rootfs/sys" "$rootfs/tmp" "$rootfs/etc" "$layout/blobs/sha256"
	cp /bin/busybox "$rootfs/bin/busybox"
	local applet
	for applet in $(/bin/busybox --list); do
		[[ $applet == busybox ]] || ln -sf busybox "$rootfs/bin/$applet"
	done
	echo "root:x:0:0:root:/:/bin/sh" >"$rootfs/etc/passwd"
	echo "root:x:0:" >"$rootfs/etc/group"
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$rootfs" -cf "$work/layer.tar" .
	local layer_digest layer_size config_digest config_size manifest_digest manifest_size
	layer_digest=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
	layer_size=$(stat -c %s "$work/layer.tar")
	mv "$work/layer.tar" "$layout/blobs/sha256/$layer_digest"
	printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin"],"Cmd":["sleep","86400"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$layer_digest" >"$work/config.json"
	config_digest=$(sha256sum "$work/config.json" | cut -d' ' -f1)
	config_size=$(stat -c %s "$work/config.json")
	mv "$work/config.json" "$layout/blobs/sha256/$config_digest"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$work/manifest.json"
	manifest_digest=$(sha256sum "$work/manifest.json" | cut -d' ' -f1)
	manifest_size=$(stat -c %s "$work/manifest.json")
	mv "$work/manifest.json" "$layout/blobs/sha256/$manifest_digest"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"local"}}]}' \
		"$manifest_digest" "$manifest_size" "$IMAGE" >"$layout/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
	tar -C "$layout" -cf "$work/image.tar" .
}

# cgroup_mounts prints the mount points of the cgroup hierarchies (v1 and v2).
cgroup_mounts() {
	awk '$0 ~ / - cgroup2? / {print $5}' /proc/self/mountinfo
}

# our_cgroups prints the top-level cgroups (as mount/name) named kubepods*
# or resizelet* that are not in the list taken at start.
our_cgroups() {
	local m d
	for m in $(cgroup_mounts); do
		for d in "$m"/kubepods* "$m"/resizelet*; do
			[[ -d $d ]] || continue
			grep -qxF "$d" "$DIR/cgroups.before" 2>/dev/null || echo "$d"
		done
	done
}

start() {
	if [[ -f $DIR/containerd.pid ]] && kill -0 "$(cat "$DIR/containerd.pid")" 2>/dev/null; then
		log "containerd already running in $DIR (PID $(cat "$DIR/containerd.pid"))"
		exit 1
	fi
	install_packages
	mkdir -p "$DIR"/{root,state,runc,opt,cni/bin,cni/conf}
	: >"$DIR/cgroups.before"
	our_cgroups >"$DIR/cgroups.before" || true
	write_config
	build_image
	setsid containerd --config "$DIR/config.toml" >"$DIR/containerd.log" 2>&1 </dev/null &
	echo $! >"$DIR/containerd.pid"
	local i
	for ((i = 0; i < 300; i++)); do
		if [[ -S $SOCK ]] && ctr -a "$SOCK" version >/dev/null 2>&1; then
			break
		fi
		if ! kill -0 "$(cat "$DIR/containerd.pid")" 2>/dev/null; then
			log "containerd exited; its log:"
			tail -n 30 "$DIR/containerd.log" >&2
			exit 1
		fi
		sleep 0.1
	done
	if ! ctr -a "$SOCK" version >/dev/null 2>&1; then
		log "containerd did not answer on $SOCK within 30s; its log:"
		tail -n 30 "$DIR/containerd.log" >&2
		exit 1
	fi
	ctr -a "$SOCK" -n k8s.io images import "$DIR/image/image.tar" >&2
	log "containerd $(containerd --version | awk '{print $3}') running as PID $(cat "$DIR/containerd.pid") in $DIR"
	echo "RESIZELET_CRI_ENDPOINT=unix://$SOCK"
	echo "RESIZELET_IMAGE=$IMAGE"
}

stop() {
	set +e
	local failed=0 pid
	if [[ ! -d $DIR ]]; then
		log "$DIR does not exist; nothing to stop"
		return 0
	fi
	# 1. CRI: stop and remove every pod (and so its containers).
	if [[ -S $SOCK ]]; then
		if ! (cd "$REPO" && timeout 120 go run ./examples/realhost/cmd/critool -endpoint "unix://$SOCK" stop-all >&2); then
			log "CRI teardown failed; falling back to ctr"
			local id
			for id in $(ctr -a "$SOCK" -n k8s.io tasks list -q 2>/dev/null); do
				ctr -a "$SOCK" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1
				ctr -a "$SOCK" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1
			done
			for id in $(ctr -a "$SOCK" -n k8s.io containers list -q 2>/dev/null); do
				ctr -a "$SOCK" -n k8s.io containers delete "$id" >/dev/null 2>&1
			done
		fi
	fi
	# 2. containerd, by its PID.
	if [[ -f $DIR/containerd.pid ]]; then
		pid=$(cat "$DIR/containerd.pid")
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid"
			for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
		fi
	fi
	# 3. Shims outlive containerd: kill those whose command line names our
	# socket, one PID at a time.
	local cmdline p
	for p in /proc/[0-9]*; do
		cmdline=$( { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue
		if [[ $cmdline == *containerd-shim* && $cmdline == *"$SOCK"* ]]; then
			kill -KILL "${p#/proc/}" 2>/dev/null && log "killed leftover shim ${p#/proc/}"
		fi
	done
	# 4. Containers runc still knows in our runc root (runc root per namespace).
	local root id
	for root in "$DIR"/runc "$DIR"/runc/*; do
		[[ -d $root ]] || continue
		for id in $(runc --root "$root" list -q 2>/dev/null); do
			runc --root "$root" delete -f "$id" >/dev/null 2>&1 || { log "runc delete $id failed"; failed=1; }
		done
	done
	# 5. Mounts under DIR (overlay rootfs, shm), deepest first.
	local mnt
	for mnt in $(awk -v d="$DIR/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
		umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || { log "umount $mnt failed"; failed=1; }
	done
	# 6. The cgroups our pods left, children first.
	local cg
	for cg in $(our_cgroups); do
		while read -r d; do
			rmdir "$d" 2>/dev/null || { log "rmdir $d failed"; failed=1; }
		done < <(find "$cg" -depth -type d 2>/dev/null)
	done
	# 7. The directory, unless something is still mounted in it.
	if awk -v d="$DIR/" 'index($5, d) == 1 {found=1} END {exit !found}' /proc/self/mountinfo; then
		log "mounts remain under $DIR; leaving it"
		failed=1
	else
		rm -rf --one-file-system "$DIR" || failed=1
	fi
	[[ $failed -eq 0 ]] && log "stopped and removed $DIR"
	return $failed
}

case $CMD in
start) start ;;
image)
	[[ -x /bin/busybox ]] || install_packages
	mkdir -p "$DIR"
	build_image
	echo "$DIR/image/image.tar"
	;;
stop) stop ;;
*) usage ;;
esac
