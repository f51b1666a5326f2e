#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The pod sandbox is policed. A socket is policed by
# the cgroup it was created in; a "pod" under runc, a pause sandbox
# (tests/progs/pause as uid 65535, no capability) and an app container in
# its pid and network namespaces (uid 65535, no capability, policy
# restricted), where the app traces the pause process, makes it call
# socket() and takes the socket with pidfd_getfd()
# (tests/attacks/sandbox_ptrace):
#  - sandbox_policy "" (the old behaviour): the socket escapes the app's
#    policy: AF_INET6 opens under socket.deny, SO_RCVBUF 4 MiB reads back
#    exactly what the kernel keeps with no policy (8 MiB here: twice the
#    request, capped by net.core.rmem_max) under the 65536 clamp, the
#    congestion control is not forced;
#  - the default (built-in @deny-sockets), the sandbox seen by the hook as
#    CRI-O runs it (its own prestart/poststop): socket() in the sandbox
#    gives EPERM; the sandbox's record names the policy; poststop releases;
#  - the same with the sandbox as containerd 2.x runs it (no hook for it:
#    containerd builds the sandbox spec without the handler's base spec):
#    the app's prestart polices the sandbox it joins, and a reaper
#    releases the sandbox's record when the sandbox goes;
#  - a sandbox_policy of the operator's that allows sockets and clamps
#    SO_RCVBUF to 16384: the socket made in the sandbox obeys it, not the
#    app's policy: AF_INET6 opens, SO_RCVBUF 4 MiB reads back exactly
#    32768, the congestion control is not forced;
#  - in every case the pause process is left as it was: the state it had
#    before it was traced (S), no tracer;
#  - an ephemeral debug container with a target (kubectl debug --target),
#    as containerd builds it: the sandbox's IPC and network namespaces, the
#    target container's pid namespace: policed like its pod (restricted
#    holds in it, the sandbox is policed), not refused;
#  - a sandbox-id that is not the cgroup of the pid the app joins: the
#    app is refused with one line; so is one that is only a part of its
#    name ("sb" of <prefix>-plant-sb, as "crio" of crio-<id>.scope); with
#    CRI-O's keys a pod's copy of io.kubernetes.cri.sandbox-id is not the
#    sandbox's id, CRI-O's io.kubernetes.cri-o.SandboxID is;
#  - explain shows a sandbox's policy, validate warns about "".
#
# Modules: `prestart.c`, `policy.c`, `config.c`, `bundle.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

ct_setup runc
[ -x "$CT_ROOTFS/bin/pause" ] || tap_skip_all "tests/progs/pause not built (make test-progs)"
[ -x "$CT_ROOTFS/bin/sandbox_ptrace" ] ||
	tap_skip_all "tests/attacks/sandbox_ptrace not built (make test-progs)"
BASE=$(ct_snapshot)
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
LOG=$CT_TMP/hook.log
ON=$(ct_config on ". + {log_file: \"$LOG\", log_level: \"debug\"}")
OFF=$(ct_config off ". + {log_file: \"$LOG\", sandbox_policy: \"\"}")
# shellcheck disable=SC2016 # $log is jq's
SBCLAMP=$(ct_config sbclamp '. + {log_file: $log, sandbox_policy: "sbclamp"} |
	.policies.sbclamp = {setsockopt: [{level: "SOL_SOCKET", option: "SO_RCVBUF", action: "clamp", max: 16384}]}' \
	--arg log "$LOG")
CRI_NS=io.kubernetes.cri
CRIO=io.kubernetes.cri-o
POD_UID=65535

# As a pod's processes run: the pause image's uid, no capability at all.
UNPRIVILEGED='.process.user = {"uid": '$POD_UID', "gid": '$POD_UID'} |
	.process.capabilities = {"bounding": [], "effective": [], "permitted": [],
				 "inheritable": [], "ambient": []}'

# sandbox NAME CONFIG STYLE: starts a pause sandbox; STYLE crio (the hook
# runs at its prestart and poststop, CRI-O's type key) or containerd (no
# hook: containerd's type key). Sets SB_ID, SB_PID and SB_CG.
sandbox()
{
	local name=$1 cfg=$2 style=$3 b

	if [ "$style" = crio ]; then
		b=$(ct_bundle -c "$cfg" -a "$CRIO.ContainerType=sandbox" \
			-a "io.kubernetes.pod.namespace=shop" -a "io.kubernetes.pod.name=$name" \
			"$name" -- pause)
	else
		b=$(ct_bundle -c "$cfg" -a "$CRI_NS.container-type=sandbox" \
			-a "$CRI_NS.sandbox-namespace=shop" -a "$CRI_NS.sandbox-name=$name" \
			"$name" -- pause) && ct_jq "$b" 'del(.hooks)'
	fi
	ct_jq "$b" "$UNPRIVILEGED" || return 1
	SB_ID=$(ct_id "$name")
	SB_PID='' SB_CG=
	ct_start_ok "$name: the pause sandbox ($style style) starts" runc "$SB_ID" "$b" || return 1
	SB_PID=$CT_PID
	SB_CG=$CT_CG
}

# app NAME CONFIG STYLE SANDBOX-ID WANT: runs sandbox_ptrace in an app
# container that joins the sandbox's pid and network namespaces, under
# policy restricted; prints the runtime's exit code, then its output.
# STYLE crio-ids: CRI-O's keys with its own SandboxID ($SB_ID) and a pod's
# copy of containerd's sandbox-id, SANDBOX-ID.
app()
{
	local name=$1 cfg=$2 style=$3 sid=$4 want=$5 b

	if [ "$style" = crio ]; then
		b=$(ct_bundle -c "$cfg" -a "$CRIO.ContainerType=container" \
			-a "io.kubernetes.container.name=app" \
			-a sockopt-hook.io/policy=restricted "$name" -- sandbox_ptrace 1 "$want")
	elif [ "$style" = crio-ids ]; then
		b=$(ct_bundle -c "$cfg" -a "$CRIO.ContainerType=container" \
			-a "io.kubernetes.container.name=app" -a "$CRIO.SandboxID=$SB_ID" \
			-a "$CRI_NS.sandbox-id=$sid" \
			-a sockopt-hook.io/policy=restricted "$name" -- sandbox_ptrace 1 "$want")
	else
		b=$(ct_bundle -c "$cfg" -a "$CRI_NS.container-type=container" \
			-a "$CRI_NS.container-name=app" -a "$CRI_NS.sandbox-id=$sid" \
			-a "$CRI_NS.sandbox-namespace=shop" -a "$CRI_NS.sandbox-name=$name" \
			-a sockopt-hook.io/policy=restricted "$name" -- sandbox_ptrace 1 "$want")
	fi
	# shellcheck disable=SC2016 # $pid is jq's
	ct_jq "$b" "$UNPRIVILEGED"' |
		.linux.namespaces |= map(if .type == "pid" or .type == "network" or .type == "ipc"
			then . + {"path": "/proc/\($pid)/ns/\(if .type == "network" then "net" else .type end)"}
			else . end)' --arg pid "$SB_PID" || return 1
	ct_run runc "$(ct_id "$name")" "$b"
	echo "$CT_RC"
	cat "$CT_OUT" "$CT_ERR"
}

# attack DESCRIPTION NAME CONFIG STYLE WANT: the app's TAP lines, relayed.
attack()
{
	local out rc

	out=$(app "$2" "$3" "$4" "$SB_ID" "$5")
	rc=$(head -n1 <<<"$out")
	tap_relay "$1" "$rc" <<<"$(tail -n +2 <<<"$out")"
	tap_ok "$rc" "$1: the app container ran the attack to the end (exit $rc)" ||
		tap_diag "$out"
}

# state_policy ID: "<policy> <policy_source>" from status --json, or "none".
state_policy()
{
	"$HOOK" status --json 2>/dev/null |
		jq -r --arg id "$1" '[.[] | select(.id == $id) | "\(.policy) \(.policy_source)"] | first // "none"'
}

# --- 1. sandbox_policy "": the way out, as it was ------------------------

if sandbox open-sb "$OFF" crio; then
	tap_is "$(ct_our_progs "$SB_CG")" "" "sandbox_policy \"\": nothing attached to the sandbox's cgroup"
	attack "sandbox_policy \"\"" open-app "$OFF" crio escapes
	ct_delete runc "$(ct_id open-app)"
	ct_delete runc "$SB_ID"
fi

# --- 2. the default, the hook run for the sandbox (CRI-O) ----------------

if sandbox crio-sb "$ON" crio; then
	tap_is "$(ct_our_progs "$SB_CG")" "cgroup_inet_sock_create sh_sock_create" \
		"built-in sandbox_policy: sock_create attached to the sandbox's cgroup"
	tap_is "$(state_policy "$SB_ID")" "@deny-sockets sandbox_policy" \
		"status: the sandbox's record names @deny-sockets, from sandbox_policy"
	tap_like "$("$HOOK" status "$SB_ID" 2>&1)" "pod: +crio-sb" \
		"status: the sandbox's record names its pod (from CRI-O's keys)"
	attack "sandbox policed by its own prestart (CRI-O)" crio-app "$ON" crio EPERM
	ct_delete runc "$(ct_id crio-app)"
	ct_delete runc "$SB_ID"
	tap_is "$(state_policy "$SB_ID")" none "poststop released the sandbox's record"
fi

# --- 3. the default, no hook for the sandbox (containerd 2.x) ------------

if sandbox ctrd-sb "$ON" containerd; then
	tap_is "$(ct_our_progs "$SB_CG")" "" "containerd style: the sandbox starts with nothing attached (no hook ran)"
	: >"$LOG"
	attack "sandbox policed by the app's prestart (containerd)" ctrd-app "$ON" containerd EPERM
	tap_is "$(ct_our_progs "$SB_CG")" "cgroup_inet_sock_create sh_sock_create" \
		"containerd style: sock_create is on the sandbox's cgroup after the app's prestart"
	tap_is "$(state_policy "$SB_ID")" "@deny-sockets sandbox_policy" \
		"containerd style: the sandbox has a record of its own"
	ct_delete runc "$(ct_id ctrd-app)"
	# A second container of the pod finds the sandbox policed.
	out=$(app ctrd-app2 "$ON" containerd "$SB_ID" EPERM)
	tap_is "$(head -n1 <<<"$out")" 0 "containerd style: a second app container starts (sandbox already policed)" ||
		tap_diag "$out"
	tap_is "$(grep -c 'attached 1 program' "$LOG")" 1 \
		"the sandbox's program was attached once for both containers" || tap_diag "$(cat "$LOG")"
	ct_delete runc "$(ct_id ctrd-app2)"
	ct_delete runc "$SB_ID"
	for _ in $(seq 1 50); do
		[ "$(state_policy "$SB_ID")" = none ] && break
		sleep 0.1
	done
	tap_is "$(state_policy "$SB_ID")" none \
		"containerd style: the reaper released the sandbox's record when the sandbox went"
fi

# --- 3b. a sandbox policy of the operator's that allows sockets ----------

if sandbox clamp-sb "$SBCLAMP" crio; then
	tap_is "$(ct_our_progs "$SB_CG")" "cgroup_setsockopt sh_setsockopt" \
		"sandbox_policy sbclamp: only setsockopt attached to the sandbox's cgroup"
	attack "sandbox policed by its own policy, not the app's" clamp-app "$SBCLAMP" crio clamp:16384
	ct_delete runc "$(ct_id clamp-app)"
	ct_delete runc "$SB_ID"
fi

# --- 3c. an ephemeral container with a target (kubectl debug --target) ---

# containerd's WithPodNamespaces: the target's pid namespace, the
# sandbox's IPC, UTS and network namespaces, the pod's annotations.
# ns_paths PID-OF-PID-NS PID-OF-OTHERS: the jq filter for linux.namespaces.
ns_paths()
{
	echo '.linux.namespaces |= map(if .type == "pid" then . + {"path": "/proc/'"$1"'/ns/pid"}
		elif .type == "network" then . + {"path": "/proc/'"$2"'/ns/net"}
		elif .type == "ipc" or .type == "uts" then . + {"path": "/proc/'"$2"'/ns/\(.type)"}
		else . end)'
}

if sandbox debug-sb "$ON" containerd; then
	# The target: a pod container with a pid namespace of its own (no
	# shareProcessNamespace), started detached.
	b=$(ct_bundle -c "$ON" -a "$CRI_NS.container-type=container" \
		-a "$CRI_NS.container-name=target" -a "$CRI_NS.sandbox-id=$SB_ID" \
		-a "$CRI_NS.sandbox-namespace=shop" -a "$CRI_NS.sandbox-name=debug-sb" \
		-a sockopt-hook.io/policy=restricted debug-target -- sleep 600) &&
		ct_jq "$b" "$UNPRIVILEGED | $(ns_paths self "$SB_PID") |
			.linux.namespaces |= map(if .type == \"pid\" then del(.path) else . end)"
	ct_start_ok "debug: the target container starts" runc "$(ct_id debug-target)" "$b"
	TARGET_PID=$CT_PID
	: >"$LOG"
	b=$(ct_bundle -c "$ON" -a "$CRI_NS.container-type=container" \
		-a "$CRI_NS.container-name=debugger" -a "$CRI_NS.sandbox-id=$SB_ID" \
		-a "$CRI_NS.sandbox-namespace=shop" -a "$CRI_NS.sandbox-name=debug-sb" \
		-a sockopt-hook.io/policy=restricted debug-eph -- \
		/bin/sh -c 'ps -o pid,args; sockcheck set-mark 5; sockcheck socket inet6 stream; echo done=ok') &&
		ct_jq "$b" "$(ns_paths "$TARGET_PID" "$SB_PID")"
	ct_run runc "$(ct_id debug-eph)" "$b"
	[ "$CT_RC" = 0 ] && grep -q '^done=ok' "$CT_OUT"
	tap_ok $? "debug: the ephemeral container with the target's pid namespace starts, not refused" ||
		ct_diag_run "$b"
	grep -q 'sleep 600' "$CT_OUT"
	tap_ok $? "debug: it sees the target's processes (the target's pid namespace)" ||
		tap_diag "$(cat "$CT_OUT")"
	tap_is "$(grep -E '^(setsockopt|socket_inet6_stream)=' "$CT_OUT" | tr '\n' ' ')" \
		"setsockopt=EPERM socket_inet6_stream=EPERM " \
		"debug: policed like its pod (restricted: SO_MARK and AF_INET6 give EPERM)"
	tap_is "$(ct_our_progs "$SB_CG")" "cgroup_inet_sock_create sh_sock_create" \
		"debug: the sandbox (found through the IPC namespace) is policed"
	ct_delete runc "$(ct_id debug-eph)"
	ct_delete runc "$(ct_id debug-target)"
	ct_delete runc "$SB_ID"
	for _ in $(seq 1 50); do
		[ "$(state_policy "$SB_ID")" = none ] && break
		sleep 0.1
	done
	tap_is "$(state_policy "$SB_ID")" none \
		"debug: the reaper released the sandbox's record when the sandbox went"
fi

# --- 4. a sandbox-id that does not match ---------------------------------

if sandbox liar-sb "$ON" containerd; then
	out=$(app liar-app "$ON" containerd "$CT_PREFIX-not-the-sandbox" EPERM)
	[ "$(head -n1 <<<"$out")" != 0 ]
	tap_ok $? "a sandbox-id that is not the cgroup of the pid the app joins: the app is refused" ||
		tap_diag "$out"
	tap_like "$out" "pod sandbox $CT_PREFIX-not-the-sandbox: pid [0-9]+, whose namespaces the container joins, is in cgroup /$SB_ID, not the sandbox's" \
		"the refusal is one line naming the sandbox-id and the cgroup"
	tap_is "$(ct_our_progs "$SB_CG")" "" "nothing was attached to the sandbox"
	ct_delete runc "$(ct_id liar-app)"
	ct_delete runc "$SB_ID"
fi

# --- 4b. a short id planted by the pod -----------------------------------
# An id that is only a part of the sandbox cgroup's name ("sb" of
# <prefix>-plant-sb, as "crio" or "scope" of every crio-<id>.scope) names
# no sandbox. Under CRI-O, which copies every pod annotation, a copied
# io.kubernetes.cri.sandbox-id is not the sandbox's id: CRI-O's own
# io.kubernetes.cri-o.SandboxID is.

if sandbox plant-sb "$ON" containerd; then
	out=$(app plant-app "$ON" containerd sb EPERM)
	[ "$(head -n1 <<<"$out")" != 0 ]
	tap_ok $? "containerd style, sandbox-id 'sb' (a part of the sandbox cgroup's name): the app is refused" ||
		tap_diag "$out"
	tap_like "$out" "pod sandbox sb: pid [0-9]+, whose namespaces the container joins, is in cgroup /$SB_ID, not the sandbox's" \
		"the refusal names the id and the cgroup"
	tap_is "$(ct_our_progs "$SB_CG") / $(state_policy sb)" " / none" \
		"nothing attached to the sandbox, no record under the planted id"
	ct_delete runc "$(ct_id plant-app)"
	out=$(app plant-crio "$ON" crio-ids sb EPERM)
	rc=$(head -n1 <<<"$out")
	tap_relay "CRI-O keys, a copied sandbox-id 'sb'" "$rc" <<<"$(tail -n +2 <<<"$out")"
	tap_ok "$rc" "CRI-O keys and a pod's io.kubernetes.cri.sandbox-id 'sb': the app runs (exit $rc)" ||
		tap_diag "$out"
	tap_is "$(state_policy "$SB_ID") / $(state_policy sb)" "@deny-sockets sandbox_policy / none" \
		"the sandbox is policed under CRI-O's own SandboxID, nothing under the copy"
	ct_delete runc "$(ct_id plant-crio)"
	ct_delete runc "$SB_ID"
	for _ in $(seq 1 50); do
		[ "$(state_policy "$SB_ID")" = none ] && break
		sleep 0.1
	done
	tap_is "$(state_policy "$SB_ID")" none "the reaper released the sandbox's record"
fi

# --- 5. explain and validate ---------------------------------------------

B=$(ct_bundle -a "$CRI_NS.container-type=sandbox" -a sockopt-hook.io/policy=bulk explain-sb -- pause)
json=$("$HOOK" --config "$ON" explain --json --bundle "$B" 2>&1)
tap_ok "$(jq -e '.sandbox and .policy == {"name": "@deny-sockets", "source": "sandbox_policy"} and .programs == ["sock_create"] and .socket.deny == [{"family": "AF_INET"}, {"family": "AF_INET6"}]' <<<"$json" >/dev/null; echo $?)" \
	"explain: a sandbox gets @deny-sockets from sandbox_policy, whatever the pod's annotations" ||
	tap_diag "$json"
text=$("$HOOK" --config "$OFF" explain --bundle "$B" 2>&1)
tap_like "$text" 'pod sandbox container: not policed \(sandbox_policy is ""\)' \
	"explain with sandbox_policy \"\": the sandbox is not policed"
json=$("$HOOK" validate --json "$OFF" 2>/dev/null)
tap_ok "$(jq -e '.valid and .sandbox_policy == null and any(.warnings[]; test("^sandbox_policy is \"\": pod sandboxes are not policed"))' <<<"$json" >/dev/null; echo $?)" \
	"validate: sandbox_policy \"\" is valid, with a warning" || tap_diag "$json"
OWN=$(ct_config own '. + {sandbox_policy: "setonly"}')
json=$("$HOOK" validate --json "$OWN" 2>/dev/null)
tap_ok "$(jq -e '.valid and .sandbox_policy == "setonly" and any(.warnings[]; test("^sandbox_policy .setonly. lets the pause container create AF_INET or AF_INET6 sockets"))' <<<"$json" >/dev/null; echo $?)" \
	"validate: a sandbox_policy that lets the pause process make sockets: a warning" || tap_diag "$json"
BAD=$(ct_config bad '. + {sandbox_policy: "nope"}')
out=$("$HOOK" validate "$BAD" 2>&1)
tap_like "$out" "sandbox_policy: names unknown policy 'nope'" "validate: an unknown sandbox_policy is refused, naming its path"
BAD=$(ct_config bad2 '.defaults.policy = "@deny-sockets"')
out=$("$HOOK" validate "$BAD" 2>&1)
tap_like "$out" "defaults.policy: names the built-in sandbox policy '@deny-sockets': only sandbox_policy may" \
	"validate: only sandbox_policy may name the built-in"

ct_check_same "after the pods: BPF programs, hook state and cgroups are as before" "$BASE"
tap_done
