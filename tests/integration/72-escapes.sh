#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Escape attempts from inside a container under the "restricted" policy
# (runc), each checked against what the kernel really does:
#   1. a nested cgroup made inside the container (cgroup namespace and a
#      writable cgroup2 mount) with the process moved into it: still policed;
#   2. detaching or replacing our programs with bpf() as uid 65534 without
#      capabilities, as uid 0 with runc's default capabilities, and with
#      CAP_NET_ADMIN: refused, programs unchanged (a host-root control shows
#      the same tool does detach when privileged);
#   3. setsockopt/getsockopt through io_uring (IORING_OP_URING_CMD,
#      SOCKET_URING_OP_*SOCKOPT): policed like the syscalls;
#   4. the i386 compat ABI (a -m32 binary, int $0x80 from a 64-bit one, an
#      io_uring ring made by a 32-bit process): the kernel skips the cgroup
#      sockopt hooks, so the gap is real; examples/seccomp-no-compat.json
#      closes it (runc kills such a process with SIGSYS), and the x32 ABI
#      too: a 64-bit binary's x32 setsockopt number is killed before the
#      kernel looks at the number (this host's kernel has x32 off, which
#      seccomp runs before; it does not even exec an -mx32 binary);
#   5. a socket made outside the container and passed in over SCM_RIGHTS:
#      the policy follows the socket's creation cgroup, not the caller.
#
# Modules: `attach.c`, `cg.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ESCAPE=$CT_BUILD/tests/escape
[ -x "$ESCAPE" ] || tap_skip_all "$ESCAPE not built (run make test-progs)"
# The -m32 builds exist where gcc-multilib is installed (make check).
HAVE32=1
[ -x "$CT_BUILD/tests/escape32" ] && [ -x "$CT_BUILD/tests/sockcheck32" ] || HAVE32=0
ct_setup runc
for p in escape escape32 sockcheck32; do
	[ -x "$CT_BUILD/tests/$p" ] || continue
	cp "$CT_BUILD/tests/$p" "$CT_ROOTFS/bin/$p" ||
		{ echo "Bail out! cannot copy $p into the rootfs"; exit 1; }
done
SHARE=$CT_TMP/share
mkdir -p "$SHARE" "$CT_ROOTFS/share"
SECCOMP=$CT_TOP/examples/seccomp-no-compat.json
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
RESTRICTED=(-a sockopt-hook.io/policy=restricted)
tap_diag "kernel $(uname -r)"

# val KEY TEXT: the value of the first "KEY=value" line of TEXT.
val()
{
	sed -n "s/^$1=//p" <<<"$2" | head -n 1
}

# The container gets its own cgroup namespace and a writable cgroup2 mount
# at /sys/fs/cgroup/unified (runc mounts only the v1 hierarchies on hybrid
# hosts): the most a runtime could delegate.
NESTED='.linux.namespaces += [{"type": "cgroup"}] |
	.mounts += [{"destination": "/sys/fs/cgroup/unified", "type": "cgroup2",
		     "source": "cgroup2", "options": ["rw", "nosuid", "nodev", "noexec"]}]'
# shellcheck disable=SC2016 # $dir is a jq variable
SHARED='.mounts += [{"destination": "/share", "type": "bind", "source": $dir,
		     "options": ["rbind", "rw"]}]'

# start NAME [ct_bundle options...] -- JQ-FILTER: a detached container
# running sleep; sets ID, CG and PROGS (our programs on its cgroup).
start()
{
	local name=$1 filter

	shift
	filter=${*: -1}
	ID=$(ct_id "$name")
	CG=
	ct_up --jq "$filter" --arg dir "$SHARE" --slurpfile sec "$SECCOMP" \
		"${@:1:$#-2}" "$name" -- sleep 600 || return 1
	CG=$CT_CG
	PROGS=$(ct_our_progs "$CG")
}

inside()
{
	timeout 30 runc exec "$ID" "$@" 2>&1
}

# prog_ids CGROUP: ids of our programs attached to it, sorted.
prog_ids()
{
	timeout 20 bpftool -j cgroup show "$1" 2>/dev/null |
		jq -r '[.[]? | select(.name | startswith("sh_")) | .id] | sort | join(" ")'
}

# ---- 1. A nested cgroup inside the container --------------------------------

if start nested "${RESTRICTED[@]}" -- "$NESTED"; then
	out=$(inside sh -c 'grep " /sys/fs/cgroup/unified " /proc/self/mountinfo')
	tap_like "$out" ' rw,.* - cgroup2 ' "nested: cgroup2 is mounted read-write inside the container"
	# shellcheck disable=SC2016 # expanded by the container's shell
	out=$(inside sh -c '
		d=/sys/fs/cgroup/unified
		mkdir $d/escape && echo $$ >$d/escape/cgroup.procs &&
			echo "cg1=$(grep ^0:: /proc/self/cgroup)" &&
			sockcheck set-mark 5 | sed s/^/l1_/ &&
			mkdir $d/escape/deeper && echo $$ >$d/escape/deeper/cgroup.procs &&
			echo "cg2=$(grep ^0:: /proc/self/cgroup)" &&
			sockcheck set-mark 5 | sed s/^/l2_/ &&
			sockcheck rcvbuf 4194304 | sed s/^/l2_/ &&
			sockcheck socket inet6 stream | sed s/^/l2_/')
	tap_diag "$out"
	tap_is "$(val cg1 "$out")" "0::/escape" "nested: the container made cgroup /escape (in its namespace) and moved itself in"
	tap_is "$(val l1_setsockopt "$out")" EPERM "nested: setsockopt(SO_MARK) in the child cgroup gives EPERM"
	tap_is "$(val cg2 "$out")" "0::/escape/deeper" "nested: and a grandchild, /escape/deeper"
	tap_is "$(val l2_setsockopt "$out")" EPERM "nested: setsockopt(SO_MARK) in the grandchild gives EPERM"
	rcv=$(val l2_rcvbuf "$out")
	[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -le 131072 ]
	tap_ok $? "nested: SO_RCVBUF is still clamped in the grandchild (got $rcv)"
	tap_is "$(val l2_socket_inet6_stream "$out")" EPERM "nested: socket(AF_INET6) is still denied in the grandchild"
	tap_is "$(ct_our_progs "$CG/escape/deeper" effective)" "$PROGS" \
		"nested: bpftool (effective) on the grandchild lists the container's programs, inherited"
	tap_is "$(ct_our_progs "$CG/escape/deeper")" "" \
		"nested: nothing is attached to the grandchild itself"

	# ---- 2. Detaching or replacing our programs with bpf() --------------
	ids=$(prog_ids "$CG")
	set_id=$(timeout 20 bpftool -j cgroup show "$CG" 2>/dev/null |
		jq -r '.[]? | select(.name == "sh_setsockopt") | .id')
	tap_diag "programs on $CG: $ids (sh_setsockopt is $set_id)"
	# attempt LABEL UID CAPS-JSON: runs escape bpf inside with exactly
	# that user and those capabilities (runc exec --process).
	attempt()
	{
		local label=$1 proc=$CT_TMP/proc-$2.json out

		jq -n --argjson uid "$2" --argjson caps "$3" --arg id "$set_id" '{
			terminal: false, user: {uid: $uid, gid: $uid}, cwd: "/",
			args: ["escape", "bpf", "/sys/fs/cgroup/unified", $id],
			env: ["PATH=/bin"], noNewPrivileges: true,
			capabilities: {bounding: $caps, effective: $caps,
				       permitted: $caps, inheritable: [], ambient: []}}' \
			>"$proc"
		out=$(timeout 30 runc exec --process "$proc" "$ID" 2>&1)
		tap_diag "$label: $(tr '\n' ' ' <<<"$out")"
		if [ "$4" = query-ok ]; then
			tap_like "$(val query "$out")" '^ok:[0-9]+$' "bpf, $label: BPF_PROG_QUERY is allowed (CAP_NET_ADMIN), ids are visible"
		else
			tap_is "$(val query "$out")" EPERM "bpf, $label: BPF_PROG_QUERY gives EPERM"
		fi
		tap_is "$(val get_fd "$out")" EPERM "bpf, $label: BPF_PROG_GET_FD_BY_ID of our program gives EPERM"
		tap_is "$(val load "$out")" EPERM "bpf, $label: BPF_PROG_LOAD of a replacement gives EPERM"
		[ -n "$(val detach "$out")" ] && [ "$(val detach "$out")" != ok ]
		tap_ok $? "bpf, $label: BPF_PROG_DETACH is refused ($(val detach "$out"))"
		[ -n "$(val replace "$out")" ] && [ "$(val replace "$out")" != ok ]
		tap_ok $? "bpf, $label: BPF_PROG_ATTACH with BPF_F_REPLACE is refused ($(val replace "$out"))"
		tap_is "$(prog_ids "$CG")" "$ids" "bpf, $label: the cgroup still has exactly our programs"
	}
	attempt "uid 65534, no capabilities" 65534 '[]'
	attempt "uid 0, runc default capabilities" 0 \
		'["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]'
	attempt "uid 0 with CAP_NET_ADMIN and CAP_NET_RAW" 0 \
		'["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NET_ADMIN", "CAP_NET_RAW"]' query-ok
	tap_is "$(val setsockopt "$(inside sockcheck set-mark 5)")" EPERM \
		"bpf: after the attempts setsockopt(SO_MARK) still gives EPERM"

	# Control: the same tool as host root does detach, so a refusal
	# above is the kernel's, not a broken probe.
	out=$(timeout 30 "$ESCAPE" bpf "$CG" "$set_id" 2>&1)
	tap_diag "host root: $(tr '\n' ' ' <<<"$out")"
	tap_is "$(val get_fd "$out") $(val detach "$out")" "ok ok" \
		"bpf, control: host root gets the fd and detaches our setsockopt program"
	tap_is "$(val setsockopt "$(inside sockcheck set-mark 5)")" ok \
		"bpf, control: then setsockopt(SO_MARK) in the container works"
	ct_delete runc "$ID"
fi

# ---- 3. io_uring -------------------------------------------------------------

out=$(timeout 30 "$ESCAPE" uring-set mark 5 2>&1)
tap_is "$(tr '\n' ' ' <<<"$out")" "uring_setsockopt=ok value=5 " \
	"io_uring, control on the host: URING_CMD setsockopt(SO_MARK, 5) works on this kernel"
if start uring -- '.'; then
	tap_is "$(jq -r '.linux.seccomp' "$CT_TMP/bundles/uring/config.json")" null \
		"io_uring: the container has no seccomp profile (runc's default spec), so io_uring is available"
	out=$(inside escape uring-set mark 5)
	tap_is "$(val uring_setsockopt "$out")" ok "io_uring, control: without a policy it sets SO_MARK in a container"
	ct_delete runc "$ID"
fi
if start uring-restricted "${RESTRICTED[@]}" -- '.'; then
	out=$(inside escape uring-set mark 5)
	tap_diag "$out"
	tap_is "$(val uring_setsockopt "$out")" EPERM "io_uring: URING_CMD setsockopt(SO_MARK) gives EPERM"
	out=$(inside escape uring-set rcvbuf 4194304)
	tap_diag "$out"
	rcv=$(val value "$out")
	[ "$(val uring_setsockopt "$out")" = ok ] && [[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -le 131072 ]
	tap_ok $? "io_uring: URING_CMD setsockopt(SO_RCVBUF, 4 MiB) is clamped (reads back $rcv)"
	out=$(inside escape uring-get-mark)
	tap_is "$(val uring_getsockopt "$out")" EPERM "io_uring: URING_CMD getsockopt(SO_MARK) gives EPERM"
	ct_delete runc "$ID"
fi

# ---- 4. The i386 compat ABI -------------------------------------------------

if [ "$HAVE32" = 0 ]; then
	tap_skip "compat: the i386 ABI" "no -m32 build of sockcheck/escape (gcc-multilib)"
elif start compat "${RESTRICTED[@]}" -- '.'; then
	tap_is "$(val setsockopt "$(inside sockcheck set-mark 5)")" EPERM \
		"compat: the 64-bit sockcheck gets EPERM for SO_MARK"
	out=$(inside sockcheck32 all)
	tap_diag "sockcheck32 all:" "$out"
	tap_is "$(val setsockopt "$out")" ok "compat gap: the -m32 sockcheck sets SO_MARK (the kernel skips cgroup/setsockopt)"
	rcv=$(val rcvbuf "$out")
	[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -gt 131072 ]
	tap_ok $? "compat gap: SO_RCVBUF is not clamped (reads back $rcv)"
	tap_is "$(val cc "$out")" cubic "compat gap: TCP_CONGESTION is not forced"
	tap_is "$(val mark "$out")" 7 "compat gap: getsockopt(SO_MARK) is not denied (reads the mark 7 that sock_create set)"
	tap_is "$(val socket_inet6_stream "$out")" EPERM "compat: cgroup/sock_create still applies (socket(AF_INET6) gives EPERM)"
	out=$(inside escape int80-set-mark 6)
	tap_is "$(val int80_setsockopt "$out")" ok \
		"compat gap: a 64-bit binary sets SO_MARK through int \$0x80, no 32-bit binary needed"
	out=$(inside escape32 uring-set mark 7)
	tap_is "$(val uring_setsockopt "$out")" ok \
		"compat gap: an io_uring ring made by a 32-bit process sets SO_MARK (the kernel passes compat to do_sock_setsockopt)"
	ct_delete runc "$ID"
fi

# shellcheck disable=SC2016 # $sec is a jq variable
if [ "$HAVE32" = 0 ]; then
	tap_skip "seccomp-no-compat" "no -m32 build of sockcheck/escape (gcc-multilib)"
elif start seccomp "${RESTRICTED[@]}" -- '.linux.seccomp = $sec[0]'; then
	tap_like "$(grep '^Seccomp:' "/proc/$CT_PID/status")" '2$' \
		"seccomp-no-compat: the container runs under a seccomp filter"
	out=$(inside sockcheck all)
	tap_is "$(val setsockopt "$out") $(val 'done' "$out")" "EPERM ok" \
		"seccomp-no-compat: the 64-bit sockcheck runs and gets EPERM"
	for cmd in "sockcheck32 set-mark 5" "escape int80-set-mark 6" "escape32 uring-set mark 7" \
		"escape x32-set-mark 6"; do
		# shellcheck disable=SC2086
		out=$(inside $cmd)
		rc=$?
		[ "$rc" = 159 ] && ! grep -q '=ok$' <<<"$out"
		tap_ok $? "seccomp-no-compat: '$cmd' is killed by SIGSYS (exit $rc, want 159) before any compat syscall" ||
			tap_diag "$out"
	done
	ct_delete runc "$ID"
fi

# ---- 5. A socket passed over SCM_RIGHTS ------------------------------------

if start scm "${RESTRICTED[@]}" -- "$SHARED"; then
	"$ESCAPE" fd-serve "$SHARE/host.sock" >"$CT_TMP/serve.out" 2>&1 &
	CT_PIDS+=($!)
	ct_wait_for "$CT_TMP/serve.out" '^serve=ok' 50
	out=$(inside escape fd-take /share/host.sock 5)
	tap_diag "host socket in the container: $(tr '\n' ' ' <<<"$out")"
	tap_is "$(val received "$out") $(val setsockopt "$out")" "ok ok" \
		"SCM_RIGHTS: setsockopt(SO_MARK) inside the container on a socket the host made is allowed"
	wait "${CT_PIDS[-1]}"
	tap_is "$(val server_mark "$(cat "$CT_TMP/serve.out")")" 5 \
		"SCM_RIGHTS: the host sees mark 5 on its socket"
	tap_is "$(val setsockopt "$(inside sockcheck set-mark 5)")" EPERM \
		"SCM_RIGHTS: the same container's own socket still gets EPERM"

	timeout 30 runc exec "$ID" escape fd-serve /share/ct.sock >"$CT_TMP/ct-serve.out" 2>&1 &
	CT_PIDS+=($!)
	ct_wait_for "$CT_TMP/ct-serve.out" '^serve=ok' 50
	out=$(timeout 30 "$ESCAPE" fd-take "$SHARE/ct.sock" 5 2>&1)
	tap_diag "container socket on the host: $(tr '\n' ' ' <<<"$out")"
	tap_is "$(val received "$out") $(val setsockopt "$out")" "ok EPERM" \
		"SCM_RIGHTS: host root gets EPERM for SO_MARK on a socket the container made (the policy follows the socket)"
	wait "${CT_PIDS[-1]}"
	ct_delete runc "$ID"
fi

ct_check_same "after all containers are deleted, BPF programs, hook state and cgroups are as before" \
	"$BASE"
tap_done
