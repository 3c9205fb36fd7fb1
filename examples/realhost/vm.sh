#!/usr/bin/env bash
# vm.sh: run a static program on real cgroup v2, inside a small qemu VM.
#
# The host's cpu and memory controllers may be bound to cgroup v1 (as on
# this project's CI machines), so cgroup v2 needs its own kernel. This
# script boots Debian's cloud kernel with an initramfs holding busybox, the
# program and an /init that mounts cgroup2 on /sys/fs/cgroup, runs the
# program as root and powers off.
#
#   examples/realhost/vm.sh kernel DIR
#     downloads (apt-get download, never install) the kernel package that
#     linux-image-cloud-amd64 depends on, extracts only boot/vmlinuz-* into
#     DIR and prints RESIZELET_VM_KERNEL=DIR/vmlinuz-... on stdout.
#   examples/realhost/vm.sh run [-s] [-e NAME=VALUE]... [-C DIR]... KERNEL PROGRAM [ARG]...
#     runs PROGRAM (a static binary, e.g. CGO_ENABLED=0 go test -c) with ARGs
#     in the VM with the environment variables given by -e, in /work, which
#     holds a copy of each DIR given by -C (by its base name). The program's
#     output is printed on stdout, and vm.sh exits with the program's exit
#     status. The VM has 2 CPUs and VM_MEMORY MiB (default 512), which
#     must hold the unpacked initramfs too. With -s, systemd is the VM's
#     init (the host's systemd and dbus-daemon, with the libraries they
#     load): it mounts what the busybox /init would, starts the system bus,
#     and runs the program as the service resizelet-program.service.
#
# Streams are kept apart with three serial ports: ttyS0 the kernel console
# (kept in a log file, shown on failure), ttyS1 the program's output (in raw
# mode, or every newline would become CRLF), ttyS2 only the exit status.
# qemu runs under a timeout (VM_TIMEOUT, default 300 s), and a run that
# times out is retried once, never one that failed.
set -euo pipefail

log() { echo "vm.sh: $*" >&2; }
die() {
	log "$*"
	exit 1
}

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed 's/^# \{0,1\}//' | grep -v '^set -euo' >&2
	exit 2
}

kernel() {
	local dir=$1 pkg deb
	mkdir -p "$dir"
	command -v dpkg-deb >/dev/null || die "needs dpkg-deb (Debian or Ubuntu)"
	pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')
	if [[ -z $pkg ]]; then
		apt-get update -o DPkg::Lock::Timeout=120 >&2
		pkg=$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
	fi
	[[ -n $pkg ]] || die "cannot find the package linux-image-cloud-amd64 depends on"
	if ! ls "$dir"/vmlinuz-* >/dev/null 2>&1; then
		(cd "$dir" && apt-get download "$pkg" >&2)
		deb=$(ls "$dir"/"$pkg"_*.deb | head -n1)
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --strip-components=2 --wildcards './boot/vmlinuz-*'
		rm -f "$deb"
	fi
	echo "RESIZELET_VM_KERNEL=$(ls "$dir"/vmlinuz-* | head -n1)"
}

# build_initramfs DIR PROGRAM ARGS... writes DIR/initrd.gz.
build_initramfs() {
	local dir=$1 prog=$2
	shift 2
	local root="$dir/root"
	rm -rf "$root"
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,work,run}
	cp /bin/busybox "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	cp "$prog" "$root/payload"
	chmod +x "$root/payload"
	local d
	for d in "${COPY_DIRS[@]}"; do
		cp -a "$d" "$root/work/$(basename "$d")"
	done
	{
		echo '#!/bin/sh'
		local e
		for e in "${VM_ENV[@]}"; do
			printf 'export %q\n' "$e"
		done
		printf 'exec /payload'
		printf ' %q' "$@"
		echo
	} >"$root/run.sh"
	cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# devtmpfs has no /dev/fd or /dev/std*; a booted system gets them from udev
# (or systemd-tmpfiles), and crun reads its update's resources from /dev/stdin.
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mkdir -p /dev/shm
mount -t tmpfs -o size=256m tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
stty -F /dev/ttyS1 raw -echo
stty -F /dev/ttyS2 raw -echo
export PATH=/bin HOME=/tmp TMPDIR=/tmp
cd /work
sh /run.sh >/dev/ttyS1 2>&1
echo "exit=$?" >/dev/ttyS2
sync
poweroff -f
EOF
	chmod +x "$root/init"
	if [[ $SYSTEMD == true ]]; then
		add_systemd "$root"
	fi
	(cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$dir/initrd.gz"
}

# copy_with_libs ROOT FILE... copies each FILE, and the shared libraries ldd
# names for it, to the same paths below ROOT.
copy_with_libs() {
	local root=$1 f lib
	shift
	for f in "$@"; do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
		for lib in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*'); do
			[[ -e $root$lib ]] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
}

# add_systemd ROOT makes systemd the init of the initramfs at ROOT: the
# host's systemd (merged /usr, as Debian 12 has it), dbus-daemon and
# systemctl with their libraries, the users dbus needs, and a target that
# starts only the system bus and resizelet-program.service, which runs the
# program as the busybox /init does (the mounts are systemd's). /init
# becomes systemd; the busybox one is kept as /busybox-init.
add_systemd() {
	local root=$1
	[[ -x /usr/lib/systemd/systemd ]] || die "-s needs the host's systemd (apt-get install systemd)"
	command -v dbus-daemon >/dev/null || die "-s needs the host's dbus-daemon (apt-get install dbus)"
	mkdir -p "$root/usr/lib" "$root/usr/lib64" "$root/usr/bin" "$root/usr/share" "$root/etc/systemd/system" "$root/var/lib" "$root/root"
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	cp -a /usr/lib/systemd "$root/usr/lib/systemd"
	cp -a /usr/share/dbus-1 "$root/usr/share/dbus-1"
	copy_with_libs "$root" /usr/lib/systemd/systemd /usr/lib/systemd/systemd-journald /usr/bin/systemctl \
		/usr/bin/systemd-run /usr/bin/busctl /usr/bin/dbus-daemon
	cp /etc/os-release "$root/etc/os-release" 2>/dev/null || cp /usr/lib/os-release "$root/etc/os-release"
	printf 'root:x:0:0:root:/root:/bin/sh\nmessagebus:x:100:101::/nonexistent:/bin/false\n' >"$root/etc/passwd"
	printf 'root:x:0:\nmessagebus:x:101:\n' >"$root/etc/group"
	echo 5e0f1a7e2b3c4d5e6f708192a3b4c5d6 >"$root/etc/machine-id"
	mv "$root/init" "$root/busybox-init"
	cat >"$root/program.sh" <<'EOF'
#!/bin/sh
/bin/busybox --install -s /bin
stty -F /dev/ttyS1 raw -echo
stty -F /dev/ttyS2 raw -echo
export PATH=/usr/bin:/bin HOME=/tmp TMPDIR=/tmp
cd /work
sh /run.sh >/dev/ttyS1 2>&1
echo "exit=$?" >/dev/ttyS2
sync
/bin/busybox poweroff -f
EOF
	chmod +x "$root/program.sh"
	cat >"$root/etc/systemd/system/resizelet-program.service" <<'EOF'
[Unit]
Description=the program vm.sh runs
Requires=dbus.socket
After=dbus.socket

[Service]
Type=oneshot
ExecStart=/bin/sh /program.sh
EOF
	cat >"$root/etc/systemd/system/resizelet.target" <<'EOF'
[Unit]
Description=the VM of vm.sh -s
Requires=dbus.socket resizelet-program.service
AllowIsolate=yes
EOF
	ln -s resizelet.target "$root/etc/systemd/system/default.target"
	ln -s /usr/lib/systemd/systemd "$root/init"
}

# boot KERNEL DIR runs the VM once; it returns 124 on a timeout.
boot() {
	local kernel=$1 dir=$2 accel=(-accel tcg,thread=multi -cpu max)
	if grep -qwE 'vmx|svm' /proc/cpuinfo && [[ -w /dev/kvm ]]; then
		accel=(-accel kvm -cpu host)
	fi
	: >"$dir/console.log"
	: >"$dir/out.raw"
	: >"$dir/status"
	timeout "${VM_TIMEOUT:-300}" qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
		-m "${VM_MEMORY:-512}" -smp 2 "${accel[@]}" \
		-kernel "$kernel" -initrd "$dir/initrd.gz" -append "console=ttyS0 panic=-1 quiet" \
		-serial "file:$dir/console.log" -serial "file:$dir/out.raw" -serial "file:$dir/status" &
	local vm=$! rc=0
	# A guest whose CPUs lock up under emulation does not recover (seen in
	# CI: "soft lockup - CPU#1 stuck for 574s! [runc:151]" until the
	# timeout): once the kernel's watchdog reports a lockup of a minute,
	# the attempt ends as a timed-out one, for run to retry at once.
	while kill -0 "$vm" 2>/dev/null; do
		if grep -qE 'soft lockup - CPU#[0-9]+ stuck for ([6-9][0-9]|[0-9]{3,})s' "$dir/console.log" 2>/dev/null; then
			log "the guest's CPUs locked up (the kernel's soft lockup watchdog on the console): stopping this attempt"
			kill "$vm" 2>/dev/null || true
			wait "$vm" 2>/dev/null || true
			return 124
		fi
		sleep 2
	done
	wait "$vm" || rc=$?
	return "$rc"
}

run() {
	VM_ENV=()
	COPY_DIRS=()
	SYSTEMD=false
	while [[ $# -gt 0 ]]; do
		case $1 in
		-s) SYSTEMD=true; shift ;;
		-e) VM_ENV+=("$2"); shift 2 ;;
		-C) COPY_DIRS+=("$(cd "$2" && pwd)"); shift 2 ;;
		*) break ;;
		esac
	done
	[[ $# -ge 2 ]] || usage
	local kernel=$1 prog=$2
	shift 2
	[[ -f $kernel ]] || die "no kernel at $kernel (run: $0 kernel DIR)"
	[[ -f $prog ]] || die "no program at $prog"
	command -v qemu-system-x86_64 >/dev/null || die "needs qemu-system-x86_64 (apt-get install qemu-system-x86)"
	[[ -x /bin/busybox ]] || die "needs /bin/busybox (apt-get install busybox-static)"
	local dir rc=0 attempt
	dir=$(mktemp -d /tmp/resizelet-vm.XXXXXX)
	VM_DIR=$dir
	trap 'rm -rf "$VM_DIR"' EXIT
	build_initramfs "$dir" "$prog" "$@"
	for attempt in 1 2; do
		rc=0
		boot "$kernel" "$dir" || rc=$?
		[[ $rc -eq 124 && $attempt -eq 1 ]] || break
		log "the VM timed out after ${VM_TIMEOUT:-300}s; the end of its console and of the program's output:"
		tail -n 20 "$dir/console.log" >&2
		tail -n 40 "$dir/out.raw" >&2
		log "retrying once"
	done
	cat "$dir/out.raw"
	if [[ $rc -eq 124 ]]; then
		log "the VM timed out twice; the end of its console:"
		tail -n 40 "$dir/console.log" >&2
		return 124
	fi
	local status
	status=$(tr -d '\r' <"$dir/status" | sed -n 's/^exit=\([0-9]*\).*/\1/p' | head -n1)
	if [[ -z $status ]]; then
		log "the program reported no exit status (qemu exit $rc); the end of the console:"
		tail -n 40 "$dir/console.log" >&2
		return 1
	fi
	return "$status"
}

[[ $# -ge 1 ]] || usage
case $1 in
kernel)
	[[ $# -eq 2 ]] || usage
	kernel "$2"
	;;
run)
	shift
	run "$@"
	;;
*) usage ;;
esac
