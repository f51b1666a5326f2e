#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `oci-sockopt-hook nri`, the process, against a runtime played by
# tests/nri/fake_runtime.py with NRI's own messages (stubs made here from
# the .proto files the plugin is built from). The node suite
# (tests/node/scenarios/80-nri.sh) runs it against containerd 2.x; this
# covers what containerd never sends:
#  - a whole session: registration as 50-oci-sockopt-hook, the
#    subscription, a split Synchronize, CreateContainer: the pod's key
#    that applies, not another container's, not a forged node.* key, our
#    createRuntime and poststop hooks at nri.hook_path with --config and
#    the plugin's state, pin and keys directories in their environment;
#  - a malformed request, a 5 MiB frame, an 8 MiB ttrpc message, a refused
#    registration: each ends the session with its one line, the plugin
#    connects again (no crash, no restart), then serves a session;
#  - while registered: features says sockopt-hook.io/nri=true, nri.status
#    names the runtime, a second copy refuses to register (exit 1, one
#    line); SIGTERM: exit 0, nri.status gone, nri=false;
#  - pre-registered, as containerd runs /opt/nri/plugins/NN-name (fd 3, no
#    argument): a session, then exit 0 when the connection closes; a bad
#    NRI_PLUGIN_SOCKET is one line and exit 1;
#  - an operator config that does not load: the hook for every container
#    (it then refuses them with the config's reason), and the reason in
#    the plugin's log;
#  - nri.attach "plugin" under containerd: subscribed to StartContainer,
#    containers get only the poststop hook; at StartContainer the plugin
#    attaches to a real runc-created container (runc create: cgroup made,
#    init waiting) the programs the hook attaches in hook mode (the same
#    ids and kinds in the record); a policy it refuses is an error reply
#    (code 7, the hook's reason), with no record and no program left;
#    poststop and gc release what it attached; under CRI-O, which only
#    logs a StartContainer error, the hook as in hook mode;
#  - the config and pins the plugin keeps between containers: a config
#    changed between two starts gives the second the new policy, pins a
#    new preload replaced give the next ones the new programs, and the
#    config is read, and the pins checked, only for those changes.
#
# Modules: `cmd_nri.c`, `nri_plugin.c`, `nri_deliver.c`, `nri_status.c`, `ttrpc_mux.c`
# Root: yes
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

PY=/usr/bin/python3
FAKE=$CT_TOP/tests/nri/fake_runtime.py
PROTOS=$CT_BUILD/nri/src
ct_require runc
tap_require_cmd "$PY" bpftool
"$PY" -c 'import grpc_tools.protoc' 2>/dev/null ||
	tap_skip_all "$PY has no grpc_tools (python3-grpc-tools)"
[ -r "$PROTOS/nri/pkg/api/api.proto" ] ||
	tap_bail "$PROTOS/nri/pkg/api/api.proto missing (make all)"

ct_init
export OCI_SOCKOPT_HOOK_STATE_DIR=$CT_STATE_DIR
STUBS=$CT_TMP/nri-py
SOCK=$CT_TMP/nri.sock
mkdir -p "$STUBS"
"$PY" -m grpc_tools.protoc -I "$PROTOS/nri/pkg/api" --python_out="$STUBS" api.proto &&
	"$PY" -m grpc_tools.protoc -I "$PROTOS/ttrpc" --python_out="$STUBS" \
		request.proto proto/status.proto
tap_ok $? "NRI and ttrpc stubs for the fake runtime, from $(tr '\n' ' ' <"$PROTOS/VERSIONS")"

CFG=$(ct_config nri ".nri = {hook_path: \"$HOOK\"}")
export FAKE_POD_ANNOTATIONS='{"sockopt-hook.io/policy": "restricted",
	"sockopt-hook.io/policy.db": "bulk", "node.sockopt-hook.io/nri": "forged",
	"node.sockopt-hook.io/runtime-handler": "sockopt"}'
export FAKE_HOLD=$CT_TMP/hold
PLUGIN_PID=

# wait_for SECS CMD...: poll CMD every 0.1 s until it succeeds
wait_for() {
	local end=$((SECONDS + $1))

	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

# plugin_start CONFIG LOG: the plugin on $SOCK, in the background
plugin_start() {
	"$HOOK" --config "$1" nri --socket "$SOCK" 2>"$2" &
	PLUGIN_PID=$!
	CT_PIDS+=("$PLUGIN_PID")
}

features_nri() { "$HOOK" --config "$CFG" features 2>/dev/null | sed -n 's|^sockopt-hook.io/nri=||p'; }
# shellcheck disable=SC2317 # called through wait_for
registered() { [ "$(features_nri)" = true ]; }

# --- sessions, good and bad, on one plugin process ---------------------------

: >"$FAKE_HOLD"
"$PY" "$FAKE" --stubs "$STUBS" serve "$SOCK" ok malformed oversized-frame \
	oversized-message refused hold >"$CT_TMP/fake.out" 2>"$CT_TMP/fake.err" &
FAKE_PID=$!
CT_PIDS+=("$FAKE_PID")
wait_for 10 test -S "$SOCK"
plugin_start "$CFG" "$CT_TMP/plugin.log"
# five sessions, then the sixth held open (its line comes when it ends)
wait_for 20 bash -c "[ \$(wc -l <'$CT_TMP/fake.out') -ge 5 ]" && wait_for 10 registered
tap_ok $? "the fake runtime served five connections of one plugin process, then a sixth it holds" ||
	tap_diag "$(cat "$CT_TMP/fake.out" "$CT_TMP/fake.err" "$CT_TMP/plugin.log")"
line() { sed -n "$1p" "$CT_TMP/fake.out"; }
ok1=$(line 1)
tap_is "$(jq -c '[.register.idx, .register.name]' <<<"$ok1")" '["50","oci-sockopt-hook"]' \
	"registered as 50-oci-sockopt-hook"
tap_is "$(jq -c '[.events, .other_events]' <<<"$ok1")" \
	'[["CreateContainer","RemovePodSandbox","RunPodSandbox"],0]' \
	"subscribed to CreateContainer, RunPodSandbox, RemovePodSandbox only"
tap_is "$(jq -c .sync_more <<<"$ok1")" '[true,false]' "a split Synchronize answered part by part"
tap_is "$(jq -cS .annotations <<<"$ok1")" \
	'{"node.sockopt-hook.io/nri":"delivered","sockopt-hook.io/policy":"restricted"}' \
	"CreateContainer: the pod's key for web and the mark; not db's key, not the pod's node.* keys"
tap_is "$(jq -c '.hooks' <<<"$ok1")" \
	"{\"prestart\":[],\"create_runtime\":[[\"$HOOK\",\"oci-sockopt-hook\",\"--config\",\"$CFG\",\"createRuntime\"]],\"poststop\":[[\"$HOOK\",\"oci-sockopt-hook\",\"--config\",\"$CFG\",\"poststop\"]]}" \
	"CreateContainer: createRuntime and poststop hooks at nri.hook_path, with --config"
want_env=$(jq -cn --arg s "$CT_STATE_DIR" --arg p "$OCI_SOCKOPT_HOOK_PIN_DIR" --arg k "$OCI_SOCKOPT_HOOK_KEYS_CGROUP" \
	'["OCI_SOCKOPT_HOOK_STATE_DIR=" + $s, "OCI_SOCKOPT_HOOK_PIN_DIR=" + $p, "OCI_SOCKOPT_HOOK_KEYS_CGROUP=" + $k] |
	{create_runtime: [.], poststop: [.]}')
tap_is "$(jq -c '.hook_env' <<<"$ok1")" "$want_env" \
	"CreateContainer: both hooks get the plugin's state, pin and keys directories"
n=2
for kind in malformed oversized-frame oversized-message refused; do
	out=$(line $n)
	n=$((n + 1))
	after=$(jq -r '.closed_after // "never"' <<<"$out")
	[[ $after =~ ^[0-9.]+$ ]]
	tap_ok $? "$kind: the plugin closed the connection (after ${after} s)" || tap_diag "$out"
done
log=$(cat "$CT_TMP/plugin.log")
tap_like "$log" 'nri: NRI session ended: malformed ttrpc request from the runtime' "malformed: one line in the log"
tap_like "$log" 'nri: NRI session ended: mux frame longer than 4 MiB \(connection 1: 5242880 bytes\)' "5 MiB frame: one line"
tap_like "$log" 'nri: NRI session ended: ttrpc message longer than 4 MiB \(connection 1: 8388608 bytes\)' "8 MiB message: one line"
tap_like "$log" 'nri: NRI session ended: the runtime refused to register plugin 50-oci-sockopt-hook \(status code 3\)' "refused: one line"
tap_is "$(grep -c 'connected to' <<<"$log")" 6 "the plugin connected again after each (6 connections)"
tap_check "the plugin process is still running (never crashed)" kill -0 "$PLUGIN_PID"

# --- while registered ---------------------------------------------------------

tap_is "$(features_nri)" true "features: sockopt-hook.io/nri=true while registered"
tap_is "$("$HOOK" --config "$CFG" --json features 2>/dev/null | jq -c '[.wiring.nri, .wiring.nri_runtime]')" \
	'[true,"fake 0.8.0"]' "features --json: wiring.nri, and the runtime it is registered with"
st=$(cat "$CT_STATE_DIR/nri.status")
tap_is "$(jq -c '[.registered, .runtime, .runtime_version, .name, .mode, .pid]' <<<"$st")" \
	"[true,\"fake\",\"0.8.0\",\"50-oci-sockopt-hook\",\"socket\",$PLUGIN_PID]" "nri.status: registered with fake 0.8.0"
out=$("$HOOK" --config "$CFG" nri --socket "$SOCK" 2>&1)
rc=$?
tap_is "$rc $(wc -l <<<"$out")" "1 1" "a second copy exits 1 with one line"
tap_like "$out" "^oci-sockopt-hook: nri: another oci-sockopt-hook nri \\(pid $PLUGIN_PID\\) holds $CT_STATE_DIR/nri.lock: refusing to register a second copy" \
	"it names the running copy and the lock"
rm -f "$FAKE_HOLD"
wait_for 10 bash -c "! kill -0 $FAKE_PID 2>/dev/null"
tap_is "$(jq -c '[.kind, .annotations."sockopt-hook.io/policy"]' <<<"$(line 6)")" '["hold","restricted"]' \
	"the held session was as good as the first" || tap_diag "$(line 6)"
wait_for 10 bash -c "grep -q 'waiting for the runtime' '$CT_TMP/plugin.log'"
tap_ok $? "the runtime gone: the plugin waits for its socket"
tap_is "$(jq -c '[.registered, .containers, .hooked]' "$CT_STATE_DIR/nri.status")" '[false,1,1]' \
	"nri.status after it: not registered, that session's one container given the hook"
tap_is "$(features_nri)" false "features: nri=false while not registered"
tap_is "$("$HOOK" --config "$CFG" --json features 2>/dev/null | jq -c '[.wiring.nri, .wiring.nri_runtime]')" \
	'[false,null]' "features --json: wiring.nri false, no runtime"
kill -TERM "$PLUGIN_PID"
wait_for 5 bash -c "! kill -0 $PLUGIN_PID 2>/dev/null"
wait "$PLUGIN_PID"
tap_is "$?" 0 "SIGTERM: the plugin exits 0"
tap_check "nri.status removed" test ! -e "$CT_STATE_DIR/nri.status"

# --- pre-registered, as containerd runs /opt/nri/plugins/50-oci-sockopt-hook ----

export FAKE_PLUGIN_ENV="{\"OCI_SOCKOPT_HOOK_CONFIG\": \"$CFG\", \"OCI_SOCKOPT_HOOK_STATE_DIR\": \"$CT_STATE_DIR\"}"
out=$("$PY" "$FAKE" --stubs "$STUBS" exec ok -- "$HOOK" 2>"$CT_TMP/prereg.err")
tap_is "$(jq -c '[.register.idx, .register.name, .annotations."sockopt-hook.io/policy", .exit]' <<<"$out")" \
	'["50","oci-sockopt-hook","restricted",0]' \
	"pre-registered (fd 3, no argument): a session, then exit 0 when the runtime closes" ||
	tap_diag "$out" "$(cat "$CT_TMP/prereg.err")"
out=$(NRI_PLUGIN_SOCKET=abc "$HOOK" --config "$CFG" 2>&1)
rc=$?
tap_is "$rc: $out" "1: oci-sockopt-hook: nri: NRI_PLUGIN_SOCKET='abc' is not an open socket: a pre-registered plugin gets one from the runtime" \
	"a bad NRI_PLUGIN_SOCKET: one line, exit 1"

# --- an operator config that does not load -------------------------------------

BAD=$CT_TMP/configs/bad.json
echo '{"defaults": {"polcy": "x"}}' >"$BAD"
export FAKE_POD_ANNOTATIONS='{}'
"$PY" "$FAKE" --stubs "$STUBS" serve "$SOCK" ok >"$CT_TMP/fake2.out" 2>&1 &
CT_PIDS+=("$!")
wait_for 10 test -S "$SOCK"
plugin_start "$BAD" "$CT_TMP/plugin2.log"
wait_for 10 test -s "$CT_TMP/fake2.out"
out=$(cat "$CT_TMP/fake2.out")
tap_is "$(jq -c '[(.hooks.create_runtime | length), (.hooks.poststop | length)]' <<<"$out")" "[1,1]" \
	"invalid config, a pod without keys: the hook still goes to the container (it refuses with the reason)" ||
	tap_diag "$out"
tap_like "$(cat "$CT_TMP/plugin2.log")" "defaults.polcy" "the plugin's log names the config's error"
kill -TERM "$PLUGIN_PID"
wait "$PLUGIN_PID"

# --- nri.attach "plugin": the plugin attaches at StartContainer ---------------

PCFG=$(ct_config nri-plugin ".nri = {hook_path: \"$HOOK\", attach: \"plugin\", bundle_dir: \"$CT_TMP/bundles\"}")
# the pod asks; the bundle's annotations (as containerd writes them from
# the plugin's adjustment) say which policy each container gets
export FAKE_POD_ANNOTATIONS='{"sockopt-hook.io/policy": "restricted"}'

# created NAME [KEY=VALUE...]: a runc container created (init waiting for
# start) from a bundle with only the poststop hook, as containerd's would
# be after the plugin's CreateContainer; prints its init's pid
created() {
	local name=$1 id dir a=()

	shift
	for kv in "$@"; do a+=(-a "$kv"); done
	id=$(ct_id "$name")
	dir=$(ct_bundle -c "$PCFG" -s createRuntime "${a[@]}" "$id" -- sleep 300) &&
		jq 'del(.hooks.createRuntime)' "$dir/config.json" >"$dir/c.json" &&
		mv "$dir/c.json" "$dir/config.json" || return 1
	CT_IDS+=("runc $id")
	runc create --bundle "$dir" "$id" </dev/null >/dev/null 2>"$CT_TMP/$id.err" || return 1
	runc state "$id" | jq -r .pid
}

p_ok=$(created p-ok sockopt-hook.io/policy=restricted)
p_bad=$(created p-bad sockopt-hook.io/policy=nosuch)
p_gc=$(created p-gc sockopt-hook.io/policy=restricted)
tap_ok $? "three runc containers created, their inits waiting" || tap_diag "$(cat "$CT_TMP"/*p-*.err)"
FAKE_START=$(jq -cn --arg a "$(ct_id p-ok)" --arg pa "$p_ok" --arg b "$(ct_id p-bad)" --arg pb "$p_bad" \
	--arg c "$(ct_id p-gc)" --arg pc "$p_gc" \
	'[{id: $a, pid: $pa}, {id: $b, pid: $pb}, {id: $c, pid: $pc}]')
export FAKE_START
"$PY" "$FAKE" --stubs "$STUBS" serve "$SOCK" start >"$CT_TMP/fake3.out" 2>&1 &
CT_PIDS+=("$!")
wait_for 10 test -S "$SOCK"
plugin_start "$PCFG" "$CT_TMP/plugin3.log"
wait_for 20 test -s "$CT_TMP/fake3.out"
out=$(head -n1 "$CT_TMP/fake3.out")
tap_is "$(jq -c '.events' <<<"$out" 2>/dev/null)" '["CreateContainer","RemovePodSandbox","RunPodSandbox","StartContainer"]' \
	"attach plugin, containerd: subscribed to StartContainer too" ||
	tap_diag "$(cat "$CT_TMP/fake3.out" "$CT_TMP/plugin3.log")"
tap_is "$(jq -c '[.containers[].hooks]' <<<"$out")" \
	"$(jq -cn '[range(3) | {create_runtime: [], poststop: ["poststop"]}]')" \
	"CreateContainer: only the poststop hook, no createRuntime hook to exec"
tap_is "$(jq -c '.containers[0] | [.code, .message]' <<<"$out")" '[0,""]' "StartContainer of p-ok answered ok"
# restricted's programs, as bpftool names them
RESTRICTED_PROGS="cgroup_getsockopt sh_getsockopt
cgroup_inet_sock_create sh_sock_create
cgroup_setsockopt sh_setsockopt"
cg=$(ct_cgroup_of "$p_ok") && [ -d "$cg" ]
tap_ok $? "p-ok's cgroup: $cg" || tap_diag "$(cat "/proc/$p_ok/cgroup")"
plugin_progs=$(ct_our_progs "$cg")
tap_is "$plugin_progs" "$RESTRICTED_PROGS" "the plugin attached restricted's programs to p-ok's cgroup before its start" ||
	tap_diag "$(cat "$CT_TMP/plugin3.log")"
rec=$(ct_record "$(ct_id p-ok)" 2>/dev/null)
tap_is "$(jq -r '[.id, .policy, .pid] | map(tostring) | join(" ")' <<<"$rec")" \
	"$(ct_id p-ok) restricted $p_ok" "the plugin wrote p-ok's record (id, policy, pid)"
tap_is "$(jq -c '.containers[1].code' <<<"$out")" 7 "StartContainer of p-bad (an unknown policy): refused, code 7"
tap_like "$(jq -r '.containers[1].message' <<<"$out")" "^oci-sockopt-hook: .*nosuch" \
	"the refusal's message is the hook's reason, naming the policy"
cg=$(ct_cgroup_of "$p_bad") && [ -d "$cg" ] && [ -z "$(ct_our_progs "$cg")" ]
tap_ok $? "p-bad: its cgroup ($cg) has no program of ours"
tap_check "p-bad: no record" test ! -e "$CT_STATE_DIR/$(ct_id p-bad).json"
# the same container in hook mode: the createRuntime hook attaches
hdir=$(ct_bundle -c "$PCFG" -s createRuntime -a sockopt-hook.io/policy=restricted "$(ct_id h-ok)" -- sleep 300)
CT_IDS+=("runc $(ct_id h-ok)")
runc create --bundle "$hdir" "$(ct_id h-ok)" </dev/null >/dev/null 2>"$CT_TMP/h-ok.err"
tap_ok $? "the same container in hook mode: created through the createRuntime hook" || tap_diag "$(cat "$CT_TMP/h-ok.err")"
h_pid=$(runc state "$(ct_id h-ok)" | jq -r .pid)
cg=$(ct_cgroup_of "$h_pid") && [ -d "$cg" ]
h_progs=$(ct_our_progs "$cg")
[ -n "$h_progs" ] && [ "$h_progs" = "$plugin_progs" ]
tap_ok $? "hook mode attached the same programs (types, names) to $cg" ||
	tap_diag "hook mode: $h_progs" "plugin: $plugin_progs"
hrec=$(ct_record "$(ct_id h-ok)" 2>/dev/null)
progs() { jq -c '[.programs[] | {id, attach, name}]'; }
p_progs=$(progs <<<"$rec")
[ "$(jq length <<<"$p_progs")" -gt 0 ] && [ "$(progs <<<"$hrec")" = "$p_progs" ]
tap_ok $? "the records hold the same program ids and kinds ($(jq length <<<"$p_progs") programs)" ||
	tap_diag "$rec" "$hrec"
runc delete -f "$(ct_id p-ok)" >/dev/null 2>&1
tap_check "poststop (the hook the plugin added) released p-ok's record" test ! -e "$CT_STATE_DIR/$(ct_id p-ok).json"
tap_check "p-gc: policed by the plugin (its record)" test -e "$CT_STATE_DIR/$(ct_id p-gc).json"
jq 'del(.hooks.poststop)' "$CT_TMP/bundles/$(ct_id p-gc)/config.json" >"$CT_TMP/gc.json" &&
	mv "$CT_TMP/gc.json" "$CT_TMP/bundles/$(ct_id p-gc)/config.json"
runc delete -f "$(ct_id p-gc)" >/dev/null 2>&1
"$HOOK" --config "$PCFG" gc >/dev/null 2>&1
tap_check "no poststop: gc released p-gc's record" test ! -e "$CT_STATE_DIR/$(ct_id p-gc).json"
runc delete -f "$(ct_id p-bad)" >/dev/null 2>&1
runc delete -f "$(ct_id h-ok)" >/dev/null 2>&1
# CRI-O only logs a StartContainer error: the hook as in hook mode
FAKE_RUNTIME=cri-o FAKE_START="[{\"id\": \"$(printf 'c%.0s' {1..64})\", \"pid\": 1}]" \
	"$PY" "$FAKE" --stubs "$STUBS" serve "$SOCK" start >"$CT_TMP/fake4.out" 2>&1 &
CT_PIDS+=("$!")
wait_for 20 test -s "$CT_TMP/fake4.out"
out=$(cat "$CT_TMP/fake4.out")
tap_is "$(jq -c '[.events, .containers[0].hooks, .containers[0].code]' <<<"$out")" \
	'[["CreateContainer","RemovePodSandbox","RunPodSandbox"],{"create_runtime":["createRuntime"],"poststop":["poststop"]},0]' \
	"attach plugin under cri-o: no StartContainer subscription, the createRuntime hook as in hook mode" ||
	tap_diag "$out"
tap_like "$(cat "$CT_TMP/plugin3.log")" "cri-o.* does not fail a start on the plugin's error: containers get the hook" \
	"the plugin's log says why"
kill -TERM "$PLUGIN_PID"
wait "$PLUGIN_PID"
# --- attach plugin: the config and pins it keeps between containers ---------

ct_mount_bpffs || tap_bail "cannot mount a BPF filesystem"
KCFG=$(ct_config nri-kept ".nri = {hook_path: \"$HOOK\", attach: \"plugin\", bundle_dir: \"$CT_TMP/bundles\"}")
"$HOOK" --config "$KCFG" preload >/dev/null 2>"$CT_TMP/preload.err"
tap_ok $? "preloaded: restricted's programs pinned in a BPF filesystem of the test's" ||
	tap_diag "$(cat "$CT_TMP/preload.err")"
# pin_ids: the ids of the programs pinned now, sorted
pin_ids() {
	local f

	for f in "$CT_PIN_DIR"/*; do bpftool -j prog show pinned "$f" | jq .id; done | sort -n | jq -sc .
}
rec_ids() { ct_record "$(ct_id "$1")" 2>/dev/null | jq -c '[.programs[].id] | sort'; }
pins1=$(pin_ids)
k=()
for n in 1 2 3 4; do
	ann=sockopt-hook.io/policy=restricted
	[ $n = 2 ] && ann=sockopt-hook.io/policy=fresh
	k[n]=$(created "k$n" "$ann") || break
done
tap_ok $? "four runc containers created, their inits waiting" || tap_diag "$(cat "$CT_TMP"/*k?.err)"
# before k2: a policy the config did not have; before k3: the pins
# replaced (a new preload, new program ids); the sleeps let the stamps of
# the config be told apart from a later write
FAKE_START=$(jq -cn --arg c "$KCFG" --arg h "$HOOK" \
	--arg a "$(ct_id k1)" --arg pa "${k[1]}" --arg b "$(ct_id k2)" --arg pb "${k[2]}" \
	--arg c3 "$(ct_id k3)" --arg pc "${k[3]}" --arg d "$(ct_id k4)" --arg pd "${k[4]}" \
	'[{id: $a, pid: $pa},
	  {id: $b, pid: $pb, before: "jq \".policies.fresh = .policies.restricted | .annotations.allow_policies += [\\\"fresh\\\"]\" \($c) >\($c).new && mv \($c).new \($c) && sleep 1.1"},
	  {id: $c3, pid: $pc, before: "\($h) --config \($c) preload --unpin >/dev/null && \($h) --config \($c) preload >/dev/null"},
	  {id: $d, pid: $pd}]')
export FAKE_START
sleep 1.1
"$PY" "$FAKE" --stubs "$STUBS" serve "$SOCK" start >"$CT_TMP/fake5.out" 2>&1 &
CT_PIDS+=("$!")
wait_for 10 test -S "$SOCK"
plugin_start "$KCFG" "$CT_TMP/plugin5.log"
wait_for 30 test -s "$CT_TMP/fake5.out"
out=$(head -n1 "$CT_TMP/fake5.out")
tap_is "$(jq -c '[.containers[].code]' <<<"$out" 2>/dev/null)" '[0,0,0,0]' \
	"StartContainer of k1 to k4 answered ok" || tap_diag "$out" "$(cat "$CT_TMP/plugin5.log")"
tap_is "$(ct_record "$(ct_id k2)" 2>/dev/null | jq -r .policy)" fresh \
	"the config changed after k1: k2 has the policy only the new config has"
ids1=$(rec_ids k1) ids3=$(rec_ids k3) pins3=$(pin_ids)
# all of A's ids among B's
among() { jq -en --argjson a "$1" --argjson b "$2" '($a | length) > 0 and ($a - $b | length) == 0' >/dev/null; }
among "$ids1" "$pins1"
tap_ok $? "k1 has programs pinned first ($ids1)"
among "$ids3" "$pins3" && ! among "$ids3" "$pins1" && [ "$(rec_ids k4)" = "$ids3" ] &&
	[ "$(jq -c --argjson a "$ids3" '. - $a' <<<"$ids1")" = "$ids1" ]
tap_ok $? "the pins replaced after k2: k3 and k4 have new pinned programs ($ids3), none of k1's" ||
	tap_diag "pinned first $pins1" "pinned then $pins3" "k3 $ids3" "k4 $(rec_ids k4)"
kill -TERM "$PLUGIN_PID"
wait "$PLUGIN_PID"
tap_like "$(cat "$CT_TMP/plugin5.log")" \
	"the operator config read 2 times for the plugin's attaches, pins checked $(($(jq length <<<"$ids1") * 2)) times" \
	"four starts: the config read for k1 and again after it changed, the pins checked for k1 and after they were replaced" ||
	tap_diag "$(grep 'so far' "$CT_TMP/plugin5.log")"
for n in 1 2 3 4; do runc delete -f "$(ct_id "k$n")" >/dev/null 2>&1; done
"$HOOK" --config "$KCFG" preload --unpin >/dev/null 2>&1
tap_done
