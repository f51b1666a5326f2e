# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC1091,SC2016,SC2086
#
# The compat ABIs on a kernel that takes x32 syscalls: the x32 and i386
# ABIs skip the cgroup setsockopt/getsockopt programs while sock_create
# still applies, the native ABI is policed, and examples/seccomp-no-compat.json
# under runc kills the -mx32 and -m32 binaries and the x32 numbers with
# SIGSYS before they set anything.
#
# Run by /init as VM_SCRIPT in the second boot of run-vm-suite.sh
# (Debian's amd64 flavour, which builds x32 in but off, booted with
# syscall.x32=y). Prints TAP.
#  1. the rig: x32 is on (an -mx32 binary runs), the hook is there;
#  2. the "restricted" policy (SO_MARK set and get denied, SO_RCVBUF
#     clamped to 65536, TCP_CONGESTION forced to reno, AF_INET6 and
#     SOCK_RAW refused at creation) on a container's cgroup: the native
#     sockcheck is policed; the -mx32 sockcheck, as the -m32 one, is not
#     (the kernel runs cgroup setsockopt/getsockopt programs only when
#     not in_compat_syscall(), which is true for x32 as for i386), while
#     cgroup/sock_create, run for every ABI, still refuses AF_INET6; a
#     64-bit binary calling the x32 numbers (__X32_SYSCALL_BIT + 541, 542)
#     sets and reads SO_MARK the same way;
#  3. examples/seccomp-no-compat.json under runc (the host's, in the
#     image): the -mx32 and -m32 binaries and the 64-bit binary's x32
#     numbers are killed by SIGSYS (exit 159) before any compat syscall
#     runs; the native sockcheck runs and is policed.
. /guest/lib.sh

X32_DIR=/tmp/x32
SECCOMP=/guest/seccomp-no-compat.json

# val KEY FILE: the first "KEY=value" of FILE
val() { sed -n "s/^$1=//p" "$2" | head -n 1; }

# probe NAME CMD...: CMD in the container's cgroup, its lines to
# /tmp/NAME.out (shown)
probe() {
	_n=$1
	shift
	in_cg "$CGROOT/x32" "$@" >"/tmp/$_n.out" 2>&1
	sed "s/^/#   $_n: /" "/tmp/$_n.out"
}

# is NAME KEY WANT DESCRIPTION
is() {
	_v=$(val "$2" "/tmp/$1.out")
	tap_check "$4: $2=${_v:-missing} (want $3)" test "$_v" = "$3"
}

rig() {
	tap_diag "uname -r: $(uname -r), cmdline: $(cat /proc/cmdline)"
	tap_check "the kernel was booted with syscall.x32=y" \
		grep -qw 'syscall.x32=y' /proc/cmdline
	for p in sockcheck sockcheckx32 sockcheck32 escape; do
		tap_check "$p is in the image" command -v $p
	done
	sockcheckx32 keepalive >/tmp/x32-alone.out 2>&1
	sed 's/^/#   x32 alone: /' /tmp/x32-alone.out
	tap_check "an -mx32 binary runs here (x32 syscalls are on)" \
		test "$(val keepalive /tmp/x32-alone.out)" = 1
	tap_check "the hook is in the image" test -x "$HOOK"
}

policed() {
	ct_run x32 '"sockopt-hook.io/policy":"restricted"' || return
	probe native sockcheck all
	is native setsockopt EPERM "native: setsockopt(SO_MARK) is denied"
	is native mark EPERM "native: getsockopt(SO_MARK) is denied"
	is native cc reno "native: TCP_CONGESTION cubic is forced to reno"
	_r=$(val rcvbuf /tmp/native.out)
	tap_check "native: SO_RCVBUF 4 MiB reads back ${_r:-missing} <= 131072" \
		test "${_r:-999999999}" -le 131072
	is native socket_inet6_stream EPERM "native: socket(AF_INET6) is refused"
	for abi in x32 i386; do
		case $abi in
		x32) probe $abi sockcheckx32 all ;;
		i386) probe $abi sockcheck32 all ;;
		esac
		is $abi setsockopt ok "$abi gap: setsockopt(SO_MARK) runs no cgroup program"
		is $abi mark 7 "$abi gap: getsockopt(SO_MARK) is not denied (the mark 7 sock_create set)"
		is $abi cc cubic "$abi gap: TCP_CONGESTION is not forced"
		_r=$(val rcvbuf /tmp/$abi.out)
		tap_check "$abi gap: SO_RCVBUF 4 MiB is not clamped (reads back ${_r:-missing})" \
			test "${_r:-0}" -gt 131072
		is $abi socket_inet6_stream EPERM "$abi: cgroup/sock_create still refuses socket(AF_INET6)"
		is $abi "done" ok "$abi: sockcheck ran to its end"
	done
	probe x32nr escape x32-set-mark 6
	is x32nr x32_setsockopt ok "x32 gap: a 64-bit binary sets SO_MARK through the x32 number"
	is x32nr x32_mark 6 "x32 gap: and reads it back through the x32 getsockopt"
	is x32nr mark EPERM "x32nr: the same socket's native getsockopt(SO_MARK) is denied"
	ct_end x32
}

# seccomp_bundle ID ARGS: a runc bundle on X32_DIR/rootfs with the hook as
# prestart and poststop, the restricted policy and the example's filter
seccomp_bundle() {
	mkdir -p "$X32_DIR/$1"
	cat >"$X32_DIR/$1/config.json" <<EOF
{"ociVersion":"1.0.2",
 "process":{"terminal":false,"user":{"uid":0,"gid":0},"args":[$2],
  "env":["PATH=/bin"],"cwd":"/","noNewPrivileges":true},
 "root":{"path":"$X32_DIR/rootfs","readonly":true},
 "hostname":"$1",
 "mounts":[{"destination":"/proc","type":"proc","source":"proc"},
  {"destination":"/dev","type":"tmpfs","source":"tmpfs","options":["nosuid","mode=755"]}],
 "hooks":{
  "prestart":[{"path":"$HOOK","args":["oci-sockopt-hook","--config","$HOOK_CFG","prestart"]}],
  "poststop":[{"path":"$HOOK","args":["oci-sockopt-hook","--config","$HOOK_CFG","poststop"]}]},
 "annotations":{"sockopt-hook.io/policy":"restricted"},
 "linux":{"namespaces":[{"type":"pid"},{"type":"network"},{"type":"ipc"},
  {"type":"uts"},{"type":"mount"}],"cgroupsPath":"/x32ct/$1",
  "seccomp":$(cat "$SECCOMP")}}
EOF
}

# in_seccomp ID ARGS: runs the bundle to its end; exit status in SC_RC,
# output in X32_DIR/ID.out
in_seccomp() {
	seccomp_bundle "$1" "$2"
	(cd "$X32_DIR/$1" && runc run "$1" >"$X32_DIR/$1.out" 2>&1 </dev/null)
	SC_RC=$?
	sed "s/^/#   $1: /" "$X32_DIR/$1.out"
	runc delete --force "$1" >/dev/null 2>&1
}

seccomp() {
	if ! command -v runc >/dev/null || [ ! -r "$SECCOMP" ]; then
		tap_skip "seccomp-no-compat" "runc or $SECCOMP not in the image"
		return
	fi
	mkdir -p "$X32_DIR/rootfs/bin" "$X32_DIR/rootfs/proc" "$X32_DIR/rootfs/dev"
	for p in sockcheck sockcheckx32 sockcheck32 escape; do
		cp "$(command -v $p)" "$X32_DIR/rootfs/bin/$p"
	done
	in_seccomp sc-native '"/bin/sockcheck","set-mark","5"'
	tap_check "seccomp-no-compat: the native sockcheck runs (exit $SC_RC) and gets EPERM" \
		sh -c '[ "$0" = 0 ] && grep -qx "setsockopt=EPERM" "$1"' "$SC_RC" "$X32_DIR/sc-native.out"
	for c in 'x32bin:"/bin/sockcheckx32","set-mark","5"' \
		'i386bin:"/bin/sockcheck32","set-mark","5"' \
		'x32nr:"/bin/escape","x32-set-mark","6"'; do
		in_seccomp "sc-${c%%:*}" "${c#*:}"
		tap_check "seccomp-no-compat: ${c%%:*} (${c#*:}) is killed by SIGSYS (exit $SC_RC, want 159) before it sets anything" \
			sh -c '[ "$0" = 159 ] && ! grep -q "=ok$" "$1"' "$SC_RC" "$X32_DIR/sc-${c%%:*}.out"
	done
	_left=$(find /run/oci-sockopt-hook -maxdepth 1 -name '*sc-*' 2>/dev/null | wc -l)
	tap_check "seccomp-no-compat: no record of those containers is left" test "$_left" = 0
}

rig
if [ -x "$HOOK" ]; then
	policed
	seccomp
else
	tap_skip "x32 against the policy" "$HOOK not in the image"
fi
tap_done
