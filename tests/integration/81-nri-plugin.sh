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
#    createRuntime and poststop hooks at nri.hook_path with --config;
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
#    the plugin's log.
# shellcheck source-path=SCRIPTDIR
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
. "$here/../lib/tap.sh"
# shellcheck source=../lib/container.sh
. "$here/../lib/container.sh"

PY=/usr/bin/python3
FAKE=$CT_TOP/tests/nri/fake_runtime.py
PROTOS=$CT_BUILD/nri/src
tap_require_cmd "$PY" jq
"$PY" -c 'import grpc_tools.protoc' 2>/dev/null ||
	tap_skip_all "$PY has no grpc_tools (python3-grpc-tools)"
[ -r "$PROTOS/nri/pkg/api/api.proto" ] ||
	tap_bail "$PROTOS/nri/pkg/api/api.proto missing (make all)"

ct_init_host
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
tap_done
