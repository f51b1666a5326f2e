# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2016,SC2086
#
# The hook on a kernel with SK_BPF_BYPASS_PROT_MEM: probe says the bypass
# is supported; a container's cgroup is charged for TCP memory before
# prestart and bypassed after it (the accept()ed side too) while a process
# outside stays charged; the bypass with a mark and a priority, and the
# full restricted policy with and without it.
#
# Sourced by run.sh after the sysctl checks (so the sysctl is 0 here).
# They need /bin/oci-sockopt-hook in the image; run-vm-suite.sh adds
# build/oci-sockopt-hook when it exists.
#
# Path chosen: no runtime in the guest. As runc does, we make the
# container's cgroup, park its "init" in it (a shell blocked on a fifo) and
# call the hook with a genuine OCI state on stdin and a bundle whose
# config.json carries the annotations. Workloads then join that cgroup the
# way `runc exec` does. Checks:
#  - probe --json says the bypass is supported;
#  - memacct in the container's cgroup before prestart: charged (> 32);
#    after prestart: bypassed (<= 10), also on the accept()ed side;
#  - at the same time a process outside that cgroup, in the same netns,
#    is still charged (the host-network pod case);
#  - pressure scenario: none inside the container, pressure outside;
#  - poststop: records and programs gone, the cgroup is charged again;
#  - a policy combining the bypass with mark and priority (one
#    sock_create program): bypassed, SO_MARK 7, SO_PRIORITY 2; the
#    accept()ed side is bypassed and keeps the mark (not the priority);
#  - the full "restricted" policy (socket, setsockopt, getsockopt) with
#    sockcheck, alone and together with the bypass.


# hook_measure_case NAME MEMACCT-ARGS...: before/with/outside figures
hook_measure_case() {
	_n=$1
	shift
	MCG=$CGROOT/ct-before mboth "$@"
	x_before=$M_X s_before=$M_S pages=$M_PAGES
	MCG=$CGROOT/ct1 mboth "$@"
	x_with=$M_X s_with=$M_S
	MCG=$CGROOT/outside mboth "$@"
	x_out=$M_X s_out=$M_S
	figure "hook $_n: 32 pages exact no-hook=${x_before:-na}" \
		"hook=${x_with:-na} outside=${x_out:-na};" \
		"${pages:-?} pages sockstat no-hook=${s_before:-error}" \
		"hook=${s_with:-error} outside=${s_out:-error}"
	if [ -n "$x_before$x_with$x_out" ]; then
		check_charged "hook $_n, 32 pages exact, no hook" "$x_before"
		check_bypassed "hook $_n, 32 pages exact, in the hooked cgroup" "$x_with"
		check_charged "hook $_n, 32 pages exact, outside, same netns" "$x_out"
	else
		tap_skip "hook $_n, 32 pages, exact" "kcore not readable, no exact counter"
	fi
	check_charged "hook $_n, ${pages:-?} pages sockstat, no hook" "$s_before"
	check_bypassed "hook $_n, ${pages:-?} pages sockstat, in the hooked cgroup" "$s_with"
	check_charged "hook $_n, ${pages:-?} pages sockstat, outside, same netns" "$s_out"
}

# hook_pressure NAME CGROUP: the pressure scenario run in CGROUP
hook_pressure() {
	line=$(sh -c 'echo $$ >"$0/cgroup.procs" && exec memacct pressure "$@"' \
		"$2" -n 200 -b 262144 -t 5 -m "1000 1000 1000" 2>&1)
	echo "# $line"
	p=$(kv pressures "$line")
	figure "pressure $1: pressures=${p:-error} mem=$(kv mem "$line")" \
		"queued=$(kv queued "$line") of $(kv sent "$line") sent"
	P_COUNT=$p
}

hook_scenarios() {
	if out=$("$HOOK" probe --json 2>&1); then
		echo "$out" | sed 's/^/#   probe: /'
		tap_check "probe --json: bypass_prot_mem is true on $(uname -r)" \
			sh -c 'echo "$0" | grep -q "\"bypass_prot_mem\": *true"' "$out"
	else
		echo "$out" | sed 's/^/#   probe: /'
		tap_ok 1 "probe --json failed"
	fi

	mkdir -p "$CGROOT/ct-before" "$CGROOT/outside"
	if ! ct_start ct1; then
		tap_ok 1 "hook: cannot start the container process"
		return
	fi
	ct_bundle ct1 '"sockopt-hook.io/bypass-prot-mem":"true"'
	if ! hook prestart ct1 creating; then
		tap_ok 1 "hook prestart with bypass-prot-mem=true"
		ct_stop ct1
		return
	fi
	tap_ok 0 "hook prestart with bypass-prot-mem=true (pid $CT_PID, cgroup /ct1)"
	show_progs "$CGROOT/ct1"

	each_case hook_measure_case

	hook_pressure "in the hooked cgroup" "$CGROOT/ct1"
	tap_check "pressure in the hooked cgroup: TCPMemoryPressures ${P_COUNT:-error} = 0" \
		test "${P_COUNT:-1}" -eq 0
	hook_pressure "outside, same netns" "$CGROOT/outside"
	tap_check "pressure outside the hooked cgroup: TCPMemoryPressures ${P_COUNT:-error} > 0" \
		test "${P_COUNT:-0}" -gt 0

	ct_stop ct1
	hook poststop ct1 stopped
	tap_check "poststop: no record left in /run/oci-sockopt-hook" \
		sh -c '! ls /run/oci-sockopt-hook/ 2>/dev/null | grep -q ct1'
	show_progs "$CGROOT/ct1"
	MCG=$CGROOT/ct1 mrun -p tcp -f 4 -P 32
	if [ -n "$M_EXACT" ]; then
		check_charged "after poststop, the cgroup is charged again" "$M_EXACT"
	else
		MCG=$CGROOT/ct1 mrun -p tcp -f 4
		check_charged "after poststop, the cgroup is charged again" "$M_GROWTH"
	fi
	rmdir "$CGROOT/ct1" "$CGROOT/ct-before" "$CGROOT/outside" 2>/dev/null
}

# check_mark NAME WANT_MARK WANT_PRIORITY: from the last mrun
check_mark() {
	_m=$(kv mark "$M_LINE")
	_p=$(kv priority "$M_LINE")
	tap_check "$1: SO_MARK ${_m:-error} = $2, SO_PRIORITY ${_p:-error} = $3" \
		test "$_m" = "$2" -a "$_p" = "$3"
}

# bypass combined with mark and priority in one sock_create program
marked_scenario() {
	ct_run ct2 '"sockopt-hook.io/policy":"bypass-marked"' || return
	for args in "-p tcp -f 4" "-p tcp -f 6 -a" "-p udp -f 4" "-p udp -f 6"; do
		MCG=$CGROOT/ct2 mbest $args
		check_bypassed "bypass-marked, $args" "$M_BEST"
		case $args in
		*-a)
			# accept()ed children copy the listener's mark but not
			# its priority (kernel behaviour, also for a priority
			# set with setsockopt on 6.18)
			_m=$(kv mark "$M_LINE")
			tap_diag "accept()ed child: SO_PRIORITY $(kv priority "$M_LINE") (listener 2)"
			tap_check "bypass-marked, $args: accept()ed child SO_MARK ${_m:-error} = 7" \
				test "$_m" = 7
			;;
		*) check_mark "bypass-marked, $args" 7 2 ;;
		esac
	done
	ct_end ct2
}

# the full restricted policy, and restricted together with the bypass
restricted_scenario() {
	if ! command -v sockcheck >/dev/null; then
		tap_skip "restricted policy" "sockcheck not in the image (make test-progs)"
		return
	fi
	for ann in '"sockopt-hook.io/policy":"restricted"' \
		'"sockopt-hook.io/policy":"restricted","sockopt-hook.io/bypass-prot-mem":"true"'; do
		ct_run ct3 "$ann" || continue
		in_cg "$CGROOT/ct3" sockcheck all >/tmp/sc.out 2>&1
		sed 's/^/#   sockcheck: /' /tmp/sc.out
		n=restricted
		case $ann in *bypass*) n="restricted+bypass" ;; esac
		sc_is setsockopt EPERM "$n: setsockopt(SO_MARK)"
		rcv=$(sed -n 's/^rcvbuf=//p' /tmp/sc.out)
		tap_check "$n: SO_RCVBUF 4 MiB reads back ${rcv:-missing} <= 131072" \
			test "${rcv:-999999999}" -le 131072
		sc_is cc reno "$n: TCP_CONGESTION cubic"
		sc_is socket_inet6_stream EPERM "$n: socket(AF_INET6, SOCK_STREAM)"
		sc_is socket_inet6_dgram EPERM "$n: socket(AF_INET6, SOCK_DGRAM)"
		sc_is socket_inet_raw EPERM "$n: socket(AF_INET, SOCK_RAW)"
		sc_is socket_inet_stream ok "$n: socket(AF_INET, SOCK_STREAM)"
		sc_is keepalive 1 "$n: SO_KEEPALIVE"
		sc_is mark EPERM "$n: getsockopt(SO_MARK)"
		MCG=$CGROOT/ct3 mbest -p tcp -f 4
		case $n in
		*bypass) check_bypassed "$n: tcp/v4" "$M_BEST" ;;
		*) check_charged "$n: tcp/v4" "$M_BEST" ;;
		esac
		ct_end ct3
	done
}

# progs_of ID: our programs on the container's cgroup, by name
progs_of() {
	bpftool cgroup show "$CGROOT/$1" 2>/dev/null | awk '/ sh_/ { print $NF }' |
		sort | tr '\n' ' '
}

# A policy not preloaded starts on the generic programs, the bypass one
# too; `apply` puts its own copies in place, then turns the bypass off,
# each swap atomic.
generic_scenario() {
	_cfg=$HOOK_CFG
	export OCI_SOCKOPT_HOOK_PIN_DIR=/sys/fs/bpf/vm-generic
	echo '{"policies": {}}' >/tmp/none.json
	_out=$("$HOOK" --config /tmp/none.json preload 2>&1)
	echo "$_out" | sed 's/^/#   preload: /'
	tap_check "generic: preload pins 8 generic programs (the bypass ones too)" \
		sh -c 'echo "$0" | grep -q "generic programs: 8 pinned"' "$_out"
	ct_run ct4 '"sockopt-hook.io/policy":"bypass-marked"' || return
	tap_check "generic: bypass-marked starts on sh_gen_sock_bp ($(progs_of ct4))" \
		test "$(progs_of ct4)" = "sh_gen_sock_bp "
	MCG=$CGROOT/ct4 mbest -p tcp -f 4
	check_bypassed "generic: bypass-marked, tcp/v4" "$M_BEST"
	check_mark "generic: bypass-marked, tcp/v4" 7 2
	"$HOOK" --config "$_cfg" preload >/dev/null 2>&1
	_out=$("$HOOK" --config "$_cfg" apply 2>&1)
	echo "$_out" | sed 's/^/#   apply: /'
	tap_check "apply: sh_sock_bypass in its place ($(progs_of ct4))" \
		test "$(progs_of ct4)" = "sh_sock_bypass "
	MCG=$CGROOT/ct4 mbest -p tcp -f 4
	check_bypassed "apply: bypass-marked on its own copy, tcp/v4" "$M_BEST"
	_out=$("$HOOK" --config /guest/config-nobypass.json apply 2>&1)
	echo "$_out" | sed 's/^/#   apply: /'
	tap_check "apply of bypass_prot_mem false: bypass-prot-mem on -> off" \
		sh -c 'echo "$0" | grep -q "bypass-prot-mem on -> off; sock_create replaced"' "$_out"
	tap_check "apply: sh_sock_create in its place ($(progs_of ct4))" \
		test "$(progs_of ct4)" = "sh_sock_create "
	MCG=$CGROOT/ct4 mbest -p tcp -f 4
	check_charged "apply: bypass off, tcp/v4" "$M_BEST"
	check_mark "apply: bypass off, the mark stays" 7 2
	ct_end ct4
	"$HOOK" preload --unpin >/dev/null 2>&1
	unset OCI_SOCKOPT_HOOK_PIN_DIR
}

if [ -x "$HOOK" ]; then
	hook_scenarios
	marked_scenario
	restricted_scenario
	if [ -r /guest/config-nobypass.json ]; then
		generic_scenario
	else
		tap_skip "generic programs and apply" "no /guest/config-nobypass.json (jq missing on the host)"
	fi
	unset MCG
else
	tap_skip "hook scenarios" "$HOOK not in the image (build it with make)"
fi
