# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The end-to-end policy checks for one runtime: a "restricted" container, a
# container without annotations and a "setonly" container, each run
# detached so the host can inspect its cgroup and sockets, then deleted
# and compared with the host state from before. Source tap.sh and
# container.sh first, then call policy_suite RUNTIME [STAGE].

PORT=4000

# out_val KEY: the value sockcheck printed for KEY in the last container.
out_val()
{
	sed -n "s/^$1=//p" "$CT_OUT" | head -n 1
}

# start_listener RT NAME ARGS...: starts a container that runs its checks
# and then keeps a TCP listener open. Sets CG to its cgroup v2 directory.
start_listener()
{
	local rt=$1 name=$2 bundle

	shift 2
	bundle=$(ct_bundle -r "$rt" "$@" "$name" -- /bin/sh -c \
		"sockcheck all; sockcheck listen $PORT 120")
	ct_start_ok "$rt $name: container starts" "$rt" "$(ct_id "$name")" \
		"$bundle" '^listen='
	CG=$CT_CG
	[ -n "$CG" ] || return 1
	tap_diag "container init $CT_PID is in cgroup $CG"
}

# check_own_cgroup RT NAME: the container has a cgroup of its own.
check_own_cgroup()
{
	local procs

	procs=$(cat "$CG/cgroup.procs" 2>/dev/null)
	if [ -n "$CG" ] && [ "$CG" != "$CT_CG2" ] && [ "$procs" = "$CT_PID" ]; then
		tap_ok 0 "$1 $2: container is alone in a non-root cgroup"
		return
	fi
	tap_ok 1 "$1 $2: container is alone in a non-root cgroup"
	tap_diag "cgroup '$CG' holds:" "$procs" "container init: $CT_PID"
}

# delete_and_compare RT NAME BEFORE
delete_and_compare()
{
	ct_delete "$1" "$(ct_id "$2")"
	ct_check_same "$1 $2: after delete, BPF programs, hook state and cgroups are as before" \
		"$3"
}

check_restricted()
{
	local rt=$1 stage=$2 name=$3 rcv flags

	start_listener "$rt" "$name" -s "$stage" \
		-a sockopt-hook.io/policy=restricted || return
	tap_is "$(out_val setsockopt)" EPERM "$rt $name: setsockopt(SO_MARK) gives EPERM"
	rcv=$(out_val rcvbuf)
	[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -le 131072 ]
	tap_ok $? "$rt $name: SO_RCVBUF of 4 MiB reads back <= 131072 (got $rcv)"
	tap_is "$(out_val cc)" reno "$rt $name: TCP_CONGESTION cubic reads back reno"
	tap_is "$(out_val socket_inet6_stream)" EPERM "$rt $name: socket(AF_INET6, SOCK_STREAM) gives EPERM"
	tap_is "$(out_val socket_inet6_dgram)" EPERM "$rt $name: socket(AF_INET6, SOCK_DGRAM) gives EPERM"
	tap_is "$(out_val socket_inet_raw)" EPERM "$rt $name: socket(AF_INET, SOCK_RAW) gives EPERM"
	tap_is "$(out_val socket_inet_stream)" ok "$rt $name: socket(AF_INET, SOCK_STREAM) still works"
	tap_is "$(out_val keepalive)" 1 "$rt $name: SO_KEEPALIVE still works"
	tap_is "$(out_val mark)" EPERM "$rt $name: getsockopt(SO_MARK) gives EPERM"
	tap_is "$(ct_fwmark "$CT_PID" "$PORT")" 0x7 "$rt $name: new sockets carry mark 7 (ss from the host)"
	check_own_cgroup "$rt" "$name"
	tap_is "$(ct_our_progs "$CG")" "cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt" "$rt $name: bpftool cgroup show lists our sock_create, setsockopt and getsockopt programs"
	flags=$(timeout 20 bpftool -j cgroup show "$CG" 2>/dev/null |
		jq -r '[.[]? | select(.name | startswith("sh_")) | .attach_flags] | unique | join(",")')
	tap_is "$flags" multi "$rt $name: attached with BPF_F_ALLOW_MULTI"
}

check_plain()
{
	local rt=$1 name=plain rcv

	start_listener "$rt" "$name" || return
	tap_is "$(out_val setsockopt)" ok "$rt $name: setsockopt(SO_MARK) works"
	rcv=$(out_val rcvbuf)
	[[ $rcv =~ ^[0-9]+$ ]] && [ "$rcv" -gt 131072 ]
	tap_ok $? "$rt $name: SO_RCVBUF of 4 MiB reads back > 131072 (got $rcv)"
	tap_is "$(out_val cc)" cubic "$rt $name: TCP_CONGESTION cubic reads back cubic"
	tap_is "$(out_val socket_inet6_stream)" ok "$rt $name: socket(AF_INET6, SOCK_STREAM) works"
	tap_is "$(out_val socket_inet_raw)" ok "$rt $name: socket(AF_INET, SOCK_RAW) works"
	tap_is "$(out_val keepalive)" 1 "$rt $name: SO_KEEPALIVE works"
	tap_is "$(out_val mark)" 0 "$rt $name: getsockopt(SO_MARK) reads 0"
	tap_is "$(ct_fwmark "$CT_PID" "$PORT")" none "$rt $name: new sockets carry no mark"
	tap_is "$(ct_our_progs "$CG" effective)" "" "$rt $name: bpftool cgroup show (effective) lists no program of ours"
}

check_setonly()
{
	local rt=$1 name=setonly

	start_listener "$rt" "$name" -a sockopt-hook.io/policy=setonly || return
	tap_is "$(out_val setsockopt)" EPERM "$rt $name: setsockopt(SO_MARK) gives EPERM"
	tap_is "$(out_val socket_inet6_stream)" ok "$rt $name: socket(AF_INET6) works"
	tap_is "$(out_val mark)" 0 "$rt $name: getsockopt(SO_MARK) reads 0"
	check_own_cgroup "$rt" "$name"
	tap_is "$(ct_our_progs "$CG")" "cgroup_setsockopt sh_setsockopt" \
		"$rt $name: exactly one program of ours, attach type setsockopt"
}

# policy_suite RUNTIME [STAGE...]: the restricted checks run once per stage
# (default prestart). If the script defines extra_checks, it is called last
# with RUNTIME and the host state from before.
policy_suite()
{
	local rt=$1 before stage name

	shift
	ct_setup "$rt"
	before=$(ct_snapshot)
	for stage in "${@:-prestart}"; do
		name=restricted
		[ "$stage" = prestart ] || name=restricted-$stage
		check_restricted "$rt" "$stage" "$name"
		delete_and_compare "$rt" "$name" "$before"
	done
	check_plain "$rt"
	delete_and_compare "$rt" plain "$before"
	check_setonly "$rt"
	delete_and_compare "$rt" setonly "$before"
	if declare -F extra_checks >/dev/null; then
		extra_checks "$rt" "$before"
	fi
	tap_done
}
