#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `make check-fresh`: the README's two commands, `make demo` and `make
# check`, each run as root in a Debian 12 root filesystem where they never
# ran and where none of our dependencies is installed. The base system
# (mmdebstrap, variant minbase, from the mirror this machine's apt sources
# name) is cached under build/fresh/; each command gets its own fresh
# extraction of it, a clean clone of HEAD, and its own mount namespace
# with a fresh /run, the host's /proc, /sys and /dev, and the host's
# /run/lock, so that the suites inside take the same machine-wide lock as
# those on the host.
#
#   tests/fresh/run.sh [demo] [check]     (default: both, in that order)
#
# Asserted for each: exit 0; no error printed before deps.sh installs the
# packages; no /run/oci-sockopt-hook in the fresh root afterwards, and the
# host's unchanged; no process left running in the fresh root. For check,
# also the suites' summary: 0 failed, 0 skipped. Logs (each line with the
# seconds since the start) stay in build/fresh/; everything else is
# removed. FRESH_KEEP=1 keeps the fresh roots for a post-mortem.
# shellcheck source-path=SCRIPTDIR
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
FRESH=$top/build/fresh
SUITE=bookworm
# A machine's base install lacks make; whoever types `make demo` has it.
BASE_PKGS="make"
BASE=$FRESH/$SUITE-minbase.tar

say() { printf '== %s\n' "$*"; }
die() {
	printf 'check-fresh: %s\n' "$*" >&2
	exit 1
}

# inside ROOT TARGET: runs in the new mount namespace. Mounts what a booted
# machine has, makes ROOT the namespace's root (pivot_root, not chroot:
# `runc exec` joins a container's mount namespace, which puts it at that
# namespace's root, and under a chroot that is the host's /), runs
# `make TARGET`, reports whether the real state dir appeared, and
# unmounts in reverse.
inside()
{
	local root=$1 target=$2 rc=1 i prefix=$1 mounted=()

	mnt() {
		mount "$@" || return 1
		mounted+=("${*: -1}")
	}
	echo "check-fresh: mount namespace $(readlink /proc/self/ns/mnt)"
	# pivot_root needs the new root to be a mount point.
	if mnt --bind "$root" "$root" &&
		mnt -t proc proc "$root/proc" &&
		mnt --rbind /sys "$root/sys" &&
		mnt --rbind /dev "$root/dev" &&
		mnt -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$root/run" &&
		mkdir -p "$root/run/lock" &&
		mnt --bind /run/lock "$root/run/lock" &&
		mkdir -p "$root/.host" && cd "$root" && pivot_root . .host; then
		# From here on the mounts are named from the fresh root; the
		# host's tree, still busy with the host's processes, is only
		# detached from this namespace.
		prefix=$root
		mounted=("${mounted[@]:1}")
		cd / && umount -R -l /.host && rmdir /.host &&
			in_fresh_root "$target"
		rc=$?
	else
		echo "check-fresh: cannot set up the fresh root's file systems" >&2
		prefix=
	fi
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R "${mounted[i]#"$prefix"}" || {
			echo "check-fresh: ${mounted[i]#"$prefix"} busy: lazy unmount" >&2
			grep -E " ${mounted[i]#"$prefix"}(/| )" /proc/self/mountinfo >&2
			umount -R -l "${mounted[i]#"$prefix"}"
		}
	done
	return "$rc"
}

# in_fresh_root TARGET: make TARGET as root with a login's environment,
# then whether the real state dir appeared.
in_fresh_root()
{
	local rc

	/usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/sh -c "cd /root/oci-sockopt-hook && exec make $1" </dev/null
	rc=$?
	echo "check-fresh: make $1 exited $rc"
	if [ -e /run/oci-sockopt-hook ]; then
		echo "check-fresh: FAIL: /run/oci-sockopt-hook exists in the fresh root:"
		ls -la /run/oci-sockopt-hook
	else
		echo "check-fresh: ok: no /run/oci-sockopt-hook in the fresh root"
	fi
	return "$rc"
}

if [ "${1:-}" = --inside ]; then
	inside "$2" "$3"
	exit
fi

[ "$(id -u)" = 0 ] || die "needs root (chroot, mounts)"
for cmd in mmdebstrap unshare chroot git; do
	command -v "$cmd" >/dev/null || die "needs $cmd (scripts/deps.sh check installs it)"
done
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(demo check)
for t in "${targets[@]}"; do
	case $t in demo | check) ;; *) die "unknown target '$t' (demo, check)" ;; esac
done
mkdir -p "$FRESH" || exit 1

# apt_source LABEL: the first URI of the system's apt sources whose Release
# has that label (Debian, Debian-Security).
apt_source()
{
	# shellcheck disable=SC2016 # apt's format string
	apt-get indextargets --format '$(LABEL)|$(TARGET_OF)|$(REPO_URI)' 2>/dev/null |
		awk -F'|' -v l="$1" '$1 == l && $2 == "deb" { sub("/$", "", $3); print $3; exit }'
}

# The base system: built once, from the sources this machine uses, with
# the same suites a Debian 12 install has (updates, security).
build_base()
{
	local mirror security start
	# shellcheck source=../vm/unstable-apt.sh
	. "$top/tests/vm/unstable-apt.sh"
	mirror=$(unstable_mirror) || die "no Debian mirror in the apt sources"
	security=$(apt_source Debian-Security)
	local lists=("deb $mirror $SUITE main" "deb $mirror $SUITE-updates main")
	[ -n "$security" ] && lists+=("deb $security $SUITE-security main")
	say "mmdebstrap $SUITE (minbase + $BASE_PKGS) into $BASE"
	start=$SECONDS
	mmdebstrap --variant=minbase --format=tar --include="$BASE_PKGS" --quiet \
		"$SUITE" "$BASE.tmp" "${lists[@]}" >"$FRESH/mmdebstrap.log" 2>&1 || {
		cat "$FRESH/mmdebstrap.log" >&2
		rm -f "$BASE.tmp"
		die "mmdebstrap failed"
	}
	mv "$BASE.tmp" "$BASE"
	say "mmdebstrap: $((SECONDS - start))s"
}
[ -s "$BASE" ] || build_base

# The host's state dir, as it is before: compared at the end.
# The directory and its entries; not "..", which is /run, and changes
# with whatever else runs on the host.
host_state() { ls -lA --time-style=+%s /run/oci-sockopt-hook 2>&1; stat -c '%A %U %Y' /run/oci-sockopt-hook 2>&1; }
host_before=$(host_state)

# fresh_root TARGET: a new extraction with a clean clone of HEAD in
# /root/oci-sockopt-hook and the host's resolver. Prints the root.
fresh_root()
{
	local root=$FRESH/root-$1

	rm -rf "$root" && mkdir -p "$root" || return 1
	tar -C "$root" --numeric-owner -xpf "$BASE" || return 1
	git clone -q --no-hardlinks "$top" "$root/root/oci-sockopt-hook" || return 1
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" || return 1
	# How this machine reaches its mirror (a proxy, or a snapshot mirror
	# whose Release files this machine's clock finds expired): the same
	# apt Acquire settings, or the VM suite cannot read unstable.
	grep -l 'Acquire::' /etc/apt/apt.conf.d/* 2>/dev/null |
		xargs -r cp -t "$root/etc/apt/apt.conf.d/" || return 1
	# No daemon that a package starts may outlive the chroot (on a booted
	# machine systemd would run it; here nothing would stop it).
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" &&
		chmod 0755 "$root/usr/sbin/policy-rc.d" || return 1
	echo "$root"
}

# left_in NS: processes in mount namespace NS (mnt:[N]).
left_in()
{
	local p

	[ -n "$1" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
	done
}

# stamp: each line with the seconds since the run started.
stamp()
{
	local start=$SECONDS line

	while IFS= read -r line; do
		printf '[%5d] %s\n' $((SECONDS - start)) "$line"
	done
}

# check_demo LOG: the demo's container column and its ending, as README.md
# shows them (the demo exits 0 even when runc exec fails: it prints).
check_demo()
{
	local want bad=0

	for want in 'set-mark 5 .* container: setsockopt=EPERM$' \
		'rcvbuf 4194304 .* container: rcvbuf=131072$' \
		'cc cubic .* container: cc=reno$' \
		'socket inet6 stream .* container: socket_inet6_stream=EPERM$' \
		'keepalive .* container: keepalive=1$' \
		'state records left: 0$' 'cgroup /.* is gone, and with it our programs$'; do
		grep -Eq "$want" "$1" && continue
		echo "FAIL: the demo did not print /$want/"
		bad=1
	done
	return $bad
}

# check_log TARGET LOG: what the log must (not) show.
check_log()
{
	local target=$1 log=$2 head bad=0

	# Everything make printed before deps.sh reported what it installs.
	head=$(sed -n '/deps\.sh: installing/q; p' "$log")
	grep -q '\] deps\.sh: installing' "$log" || {
		echo "FAIL: deps.sh installed nothing: the fresh root was not fresh"
		bad=1
	}
	if grep -Eiq 'pkg-config|not found|no such file|error|warning' <<<"$head"; then
		echo "FAIL: make printed errors before the dependencies were installed:"
		grep -Ei 'pkg-config|not found|no such file|error|warning' <<<"$head" | sed 's/^/    /'
		bad=1
	fi
	grep -q 'check-fresh: ok: no /run/oci-sockopt-hook' "$log" || {
		echo "FAIL: the fresh root has a /run/oci-sockopt-hook"
		bad=1
	}
	[ "$target" = demo ] && { check_demo "$log" || bad=1; }
	if [ "$target" = check ] &&
		! grep -Eq '^\[ *[0-9]+\] [0-9]+ passed, 0 failed, 0 skipped \([0-9]+ checks skipped\)$' "$log"; then
		echo "FAIL: the suites' summary is not 'N passed, 0 failed, 0 skipped (K checks skipped)':"
		grep -E '^\[ *[0-9]+\] ([0-9]+ passed|FAIL|SKIP)' "$log" | sed 's/^/    /'
		bad=1
	fi
	return $bad
}

# run_fresh TARGET: one command in its own fresh root.
run_fresh()
{
	local target=$1 root log rc pids

	log=$FRESH/$target.log
	say "make $target in a fresh $SUITE root (log $log)"
	root=$(fresh_root "$target") || die "cannot make the fresh root for $target"
	unshare --mount --propagation private -- "$0" --inside "$root" "$target" 2>&1 |
		stamp >"$log"
	rc=${PIPESTATUS[0]}
	tail -n 3 "$log"
	pids=$(left_in "$(sed -n 's/^\[ *[0-9]*\] check-fresh: mount namespace //p' "$log")")
	if [ -n "$pids" ]; then
		echo "FAIL: processes left running in the fresh root:" | tee -a "$log"
		# shellcheck disable=SC2086 # one pid a word
		ps -o pid,args -p $pids | tee -a "$log"
		# They were started by this run, inside its root: end them.
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null
		rc=1
	fi
	check_log "$target" "$log" | tee -a "$log"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	if grep -q " ${root}[/ ]" /proc/self/mountinfo; then
		echo "FAIL: mounts left under $root" | tee -a "$log"
		rc=1
	elif [ "${FRESH_KEEP:-0}" != 1 ]; then
		# Each suite's own log, for a failure the summary does not explain.
		rm -rf "$FRESH/$target-logs"
		[ -d "$root/root/oci-sockopt-hook/build/tests/logs" ] &&
			cp -r "$root/root/oci-sockopt-hook/build/tests/logs" "$FRESH/$target-logs"
		rm -rf "$root"
	fi
	if [ "$rc" = 0 ]; then
		say "PASS make $target"
	else
		say "FAIL make $target (log $log)"
	fi
	return "$rc"
}

failed=0
for t in "${targets[@]}"; do
	run_fresh "$t" || failed=$((failed + 1))
done
if [ "$(host_state)" != "$host_before" ]; then
	echo "FAIL: the host's /run/oci-sockopt-hook changed during the run:"
	diff <(echo "$host_before") <(host_state)
	failed=$((failed + 1))
else
	echo "ok: the host's /run/oci-sockopt-hook is as it was before"
fi
echo "check-fresh: ${#targets[@]} commands, $failed failed"
[ "$failed" = 0 ]
